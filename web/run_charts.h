// What the Simulation and Analysis views both draw of a run. Private to web/.
#pragma once

#include "runs.h"

namespace chakra_web {

// The network's load: per dimension, and the busiest links of a congestion-aware run.
void draw_network_load(const SimRun& run, const Platform& platform);

}  // namespace chakra_web
