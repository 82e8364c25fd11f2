// Fitting ASTRA-sim's analytical network to replays (`chakra calibrate`, core/docs/replay.md):
// from the median times of collectives replayed over sizes (the summaries of `chakra replay`
// runs of `chakra generate collective` microbenchmarks), the one-dimension network (topology,
// latency, bandwidth), the local memory bandwidth that reductions take, and per collective type
// the algorithm whose simulated times match best, with each measurement's residual.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/astra/config.h"
#include "chakra/replay/replay.h"

namespace chakra::replay {

// One replayed collective kind, size and group: its median time (over `runs` replays when
// calibrate merged repeats).
struct Measurement {
  OpKind kind;
  uint32_t ranks;
  uint64_t bytes, median_ns;
  uint32_t runs = 1;
};

// The "collectives" rows of a replay summary (summary_json); chakra::Error naming `name` when it
// is no such summary.
std::vector<Measurement> summary_measurements(std::string_view summary_json, const std::string& name);

struct Calibration {
  astra::NetworkConfig network;
  astra::SystemConfig system;
  struct Residual {
    Measurement measured;
    uint64_t simulated_ns = 0;
    double error() const;  // (simulated − measured) / measured
  };
  std::vector<Residual> residuals;  // the calibrated simulator run on every measurement
  double rms_error = 0;             // over the residuals' errors
  std::vector<std::string> notes;   // measurements not fitted, and why
};

// Fits the measurements, all of one group size (the NPUs); measurements of the same kind, group
// and size (repeated runs) are fitted as one, their median. chakra::Error when there is nothing
// to fit: no all-reduce, all-gather, reduce-scatter or all-to-all, or groups of several sizes.
Calibration calibrate(std::span<const Measurement> measurements);

// The table of the fit: the network and algorithms chosen, then per measurement measured,
// simulated and error; and the same as JSON.
std::string calibration_text(const Calibration& c);
std::string calibration_json(const Calibration& c);

}  // namespace chakra::replay
