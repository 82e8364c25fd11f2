// Which nodes of one NPU may run at once: the rule the simulator and `chakra replay` share.
// ASTRA-sim's HardwareResource gives an NPU one CPU, one GPU-compute and one GPU-communication
// slot (receives take none); traces that follow the replay model for measured PyTorch runs
// (kReplayLanesAttr) have one lane per CPU thread ("tid") and per GPU stream ("stream") instead.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "chakra/astra/feeder.h"

namespace chakra::sim {

class NodeResources {
 public:
  explicit NodeResources(bool lanes = false) : lanes_(lanes) {}
  void set_lanes(bool lanes) { lanes_ = lanes; }
  bool lanes() const { return lanes_; }

  // Whether `node` could start now.
  bool free_for(const FeederNode& node) const;
  // `node` starts (+1) or ends (-1).
  void occupy(const FeederNode& node, int delta);
  // Nothing runs.
  bool idle() const { return cpu_ == 0 && comp_ == 0 && comm_ == 0 && busy_lanes_.empty(); }

  // The lane of a replay-model node: its CPU thread or GPU stream, kept apart in the low bit;
  // nullopt for nodes that take no lane (METADATA, INVALID, memory accesses).
  static std::optional<int64_t> lane_of(const FeederNode& node);

 private:
  bool lanes_;
  int cpu_ = 0, comp_ = 0, comm_ = 0;
  std::vector<int64_t> busy_lanes_;
};

}  // namespace chakra::sim
