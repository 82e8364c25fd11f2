// The replay model's CPU costs (core/docs/pytorch-replay.md, rules 1b and 1c), computed from the
// host ET's measured times. Private to the pytorch layer.
#pragma once

#include <cstdint>
#include <vector>

#include "pytorch/host_et_reader.h"

namespace chakra::convert {

// Bits of interleaved_cpu_costs' `waits`, per node: it has sync or inter-thread dependencies;
// a node of another thread (or a GPU op) depends on it through one.
constexpr uint8_t kWaits = 1, kWaitedFor = 2;

// The replay model's CPU costs. A thread runs its ops one after the other in `chain` order (a
// pre-order walk of its call tree), each for its duration, so a parent's own time has to be
// charged where it was spent: the stretch before its first child to the parent itself, each
// stretch between two children (and after the last, and the gap to the next top-level op) to
// the op that runs just before it, less the times the thread was blocked (`blocked_spans`).
// An op's node may end before its stretch does (at a launch or a block: see the loop), the
// rest then going to the next op. `launch_cut`: per CPU op, the latest measured start of a GPU
// op it launched (NaN: none). NaN for an op without the times (it then costs its exclusive
// less its blocked time); all NaN when a node has blocked time without its spans (linked by an
// older chakra). `blocked` is in node order, as parsed.
std::vector<double> interleaved_cpu_costs(const Column<HostNode>& nodes, const std::vector<uint32_t>& parent_pos,
                                          const std::vector<std::vector<uint32_t>>& chains,
                                          const std::vector<BlockedSpan>& blocked,
                                          const std::vector<double>& launch_cut, const std::vector<uint8_t>& waits);

}  // namespace chakra::convert
