// The importers' functions, declared from importers.def: sniff_<function> (importers.cpp) and
// open_<function> (import_opens.cpp). Private to core/src/app.
#pragma once

#include <string>
#include <string_view>

#include "chakra/app/importers.h"

namespace chakra::importer_functions {

#define CHAKRA_IMPORTER(kind, function, sniff_order, name, what)                   \
  std::string sniff_##function(std::string_view file_name, std::string_view head); \
  std::string open_##function(Workspace& workspace, WorkspaceFile& file);
#include "chakra/app/importers.def"
#undef CHAKRA_IMPORTER

}  // namespace chakra::importer_functions
