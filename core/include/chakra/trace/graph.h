// Dependency structure of a trace: node ids resolved to node positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "chakra/trace/trace.h"

namespace chakra {

// Maps node ids to positions. Built in O(n), with O(1) look-ups, when the ids lie within a
// few times the node count of each other (as every Chakra writer numbers them); otherwise
// searched, and built in O(n) when ids ascend, O(n log n) when not.
class IdIndex {
 public:
  explicit IdIndex(const Trace& trace);

  // Position of the first node (in file order) with this id.
  std::optional<uint32_t> find(uint64_t id) const;
  // Ids that occur more than once, each once, ascending.
  const std::vector<uint64_t>& duplicate_ids() const { return duplicates_; }
  bool ascending() const { return ascending_; }

 private:
  // Ids spanning a range of at most a few times the node count (the usual case): a table from
  // id - first_id_ to position (kNone where no node has it), one load per look-up; ids looked up
  // by binary search instead were a third of validation's time on large traces.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint64_t first_id_ = 0;
  std::vector<uint32_t> dense_;
  bool ascending_ = true;
  const Trace* trace_ = nullptr;                       // sparse ids, strictly ascending: searched in place
  std::vector<std::pair<uint64_t, uint32_t>> sorted_;  // sparse ids otherwise: (id, position), by id
  std::vector<uint64_t> duplicates_;
};

enum class DepKind : uint8_t { Data = 1, Ctrl = 2, Both = 3 };

// For each node, the positions of the nodes it depends on (compressed rows). References to ids
// that are not in the trace are dropped and counted.
struct DepGraph {
  std::vector<uint32_t> offsets;  // size n+1
  std::vector<uint32_t> targets;
  uint64_t dangling = 0;

  static DepGraph build(const Trace& trace, const IdIndex& index, DepKind kinds);
  uint32_t size() const { return static_cast<uint32_t>(offsets.size() - 1); }
  std::span<const uint32_t> deps(uint32_t n) const {
    return {targets.data() + offsets[n], offsets[n + 1] - offsets[n]};
  }
};

// Dependency cycles: the number of strongly connected components that contain one (more than
// one node, or a node depending on itself), and for the first `max_examples` of them a concrete
// cycle p0 → p1 → … → pk (each depends on the next; pk depends on p0).
struct CycleReport {
  uint64_t components = 0;
  std::vector<std::vector<uint32_t>> examples;
};
CycleReport find_cycles(const DepGraph& graph, size_t max_examples);

// The same edges pointing the other way: for each node, the nodes that depend on it.
DepGraph reverse(const DepGraph& graph);

// Positions reachable from `from` along `graph`'s edges (with the dependency graph: everything
// `from` waits for, its ancestors; with reverse(): its descendants), `from` excluded, in
// breadth-first order, at most `max_nodes` of them.
std::vector<uint32_t> reachable(const DepGraph& graph, uint32_t from, size_t max_nodes = SIZE_MAX);

// The chain of dependencies with the largest summed duration (duration_micros): the lower bound
// on the trace's run time on unlimited resources. Nodes on dependency cycles are left out.
struct CriticalPath {
  std::vector<uint32_t> nodes;  // first to last
  uint64_t duration_micros = 0;
};
CriticalPath critical_path(const Trace& trace, const DepGraph& graph);

// Measured PyTorch traces (nodes carry is_cpu_op): for a GPU op, the host ops it depends on (the
// op that launched it); for a host op, the GPU ops that depend on it (the kernels it launched).
// Positions, ascending, each once; empty for a node without is_cpu_op. `dependants` is
// reverse(deps).
std::vector<uint32_t> launch_peers(const Trace& trace, const DepGraph& deps, const DepGraph& dependants, uint32_t n);

}  // namespace chakra
