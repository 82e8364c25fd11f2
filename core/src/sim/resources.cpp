#include "chakra/sim/resources.h"

#include <algorithm>

namespace chakra::sim {

std::optional<int64_t> NodeResources::lane_of(const FeederNode& node) {
  const NodeType type = node.type();
  if (type == NodeType::Invalid || type == NodeType::Metadata || type == NodeType::MemLoad ||
      type == NodeType::MemStore)
    return std::nullopt;
  if (node.is_cpu_op()) return node.int_attr(NodeAttr::tid).value_or(-1) * 2;
  return node.int_attr(NodeAttr::stream).value_or(-1) * 2 + 1;
}

bool NodeResources::free_for(const FeederNode& node) const {
  if (lanes_) {
    auto lane = lane_of(node);
    return !lane || std::find(busy_lanes_.begin(), busy_lanes_.end(), *lane) == busy_lanes_.end();
  }
  if (node.is_cpu_op()) return cpu_ == 0;
  if (node.type() == NodeType::Comp) return comp_ == 0;
  return comm_ == 0 || node.type() == NodeType::CommRecv;
}

void NodeResources::occupy(const FeederNode& node, int delta) {
  if (lanes_) {
    if (auto lane = lane_of(node)) {
      if (delta > 0)
        busy_lanes_.push_back(*lane);
      else
        busy_lanes_.erase(std::find(busy_lanes_.begin(), busy_lanes_.end(), *lane));
    }
    return;
  }
  if (node.is_cpu_op())
    cpu_ += delta;
  else if (node.type() == NodeType::Comp)
    comp_ += delta;
  else if (node.type() != NodeType::CommRecv)
    comm_ += delta;
}

}  // namespace chakra::sim
