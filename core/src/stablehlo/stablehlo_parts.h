// What the parts of the StableHLO model share (stablehlo*.cpp). Private to the stablehlo layer.
#pragma once

#include <string_view>

#include "chakra/stablehlo/stablehlo.h"

namespace chakra::stablehlo {

// The last part of a dotted name ("stablehlo.add" -> "add").
std::string_view short_name(std::string_view name);

// One op at the device's peaks: seconds of FLOPs (wave-scaled for matmuls and convolutions) and
// of bytes at full HBM bandwidth, before the efficiency model divides them.
struct PeakCost {
  double flop_s = 0, byte_s = 0;
  bool gemm = false;
  uint8_t kernels = 0;
};
PeakCost peak_cost(const Analysis& a, const ExecOp& op, const DeviceSpec& d);
// The one place the efficiency model acts (op_cost and calibrate's loss).
OpCost under_model(const PeakCost& p, const EfficiencyModel& m);

}  // namespace chakra::stablehlo
