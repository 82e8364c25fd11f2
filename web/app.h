// State and UI of the browser app, independent of the platform loop in main.cpp. All trace work
// is done by the core; this file only arranges it on screen.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chakra/summary.h"
#include "chakra/trace.h"
#include "chakra/validate.h"

namespace chakra_web {

struct LoadedTrace {
  std::string name;
  uint64_t bytes = 0;
  double load_ms = 0;
  chakra::Trace trace;
  chakra::TraceSummary summary;
  chakra::ValidationReport report;
};

class App {
 public:
  // Decodes a dropped or picked file (.et, plain or gzip). On failure the error is kept for
  // display and returned; nothing is added.
  bool load(std::span<const uint8_t> bytes, const std::string& name);
  void draw();
  // Machine-readable state for tests: {"version", "files": [{name, nodes, errors, ...}], "error"}.
  std::string status_json() const;

 private:
  void draw_file(const LoadedTrace& t);

  std::vector<std::unique_ptr<LoadedTrace>> files_;
  std::string last_error_;
};

}  // namespace chakra_web
