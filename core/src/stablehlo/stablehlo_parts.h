// What the parts of the StableHLO model share (stablehlo*.cpp). Private to the stablehlo layer.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

#include "chakra/stablehlo/stablehlo.h"

namespace chakra::stablehlo {

// The last part of a dotted name ("stablehlo.add" -> "add").
std::string_view short_name(std::string_view name);

// What an op is (stablehlo_ops.cpp): whether `s` is one of `set`; a return of any dialect; the
// collective a name is, if any; its class (`callee`: a custom call's target).
bool in(std::string_view s, std::initializer_list<std::string_view> set);
bool is_return(std::string_view name);
std::optional<CollectiveKind> collective_kind(std::string_view name);
OpClass classify(std::string_view name, std::string_view callee);
// Kernels before fusion (one per op that computes or moves bytes), and after XLA-style fusion.
void count_kernels(Analysis& a);
void fuse_elementwise(Analysis& a);

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
