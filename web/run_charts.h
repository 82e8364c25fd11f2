// What the Simulation and Analysis views draw of a run or of the measured traces. Private to web/.
#pragma once

#include "runs.h"

namespace chakra_web {

// The network's load: per dimension, and the busiest links of a congestion-aware run.
void draw_network_load(const SimRun& run, const Platform& platform);

// Collectives by type and size over `n` ranks (or NPUs of a run: `simulated`), as nccl-tests
// reports their bandwidths: a chart titled `title` (`save`: its picture is asked for) and a table.
void draw_collective_buckets(const std::vector<chakra::CollectiveBucket>& buckets, uint32_t n, bool simulated,
                             const std::string& title, Platform& platform, bool save);

}  // namespace chakra_web
