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

// A workload given as a folder of per-rank traces or as their PREFIX: the prefix, how many ranks
// (files PREFIX.<rank>.et or .et.gz from 0 on) and the folder's groups file ("" none or a prefix).
struct WorkloadFiles {
  std::string prefix, comm_group;
  uint32_t ranks = 0;
};
// chakra::Error naming `workload` when it has no rank 0.
WorkloadFiles find_workload(const std::string& workload);

// The options and help of `chakra replay` (and chakra-replay).
void add_replay_options(Args& args);
// Reads them (a workload folder or PREFIX, --ranks, --compute, --timeout, --out, ...); usage
// errors fail through `args`, a missing workload is a chakra::Error naming it.
ReplayRequest replay_request(const Args& args);

}  // namespace cli
