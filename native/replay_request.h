// `chakra replay`'s command line, read the same way by `chakra replay` (which hands the run to
// chakra-replay, or submits it to Slurm) and by chakra-replay (one MPI process per rank).
#pragma once

#include <string>

#include "chakra/replay/replay.h"
#include "cli.h"

namespace cli {

struct ReplayRequest {
  chakra::replay::ReplayOptions options;
  std::string summary_json;  // --summary-json, "" none
};

// The options and help of `chakra replay` (and chakra-replay).
void add_replay_options(Args& args);
// Reads them (a workload folder or PREFIX, --ranks, --compute, --timeout, --out, ...); usage
// errors fail through `args`, a missing workload is a chakra::Error naming it.
ReplayRequest replay_request(const Args& args);

}  // namespace cli
