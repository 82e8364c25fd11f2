// Projecting a measured (or synthetic) workload to more ranks (`chakra project`): data
// parallelism first. The N traced ranks become one replica; M / N replicas are laid out as blocks
// (new rank = k · N + r for replica k of rank r), each a copy of the traced ranks with the same
// compute, memory and per-rank gradient sizes. Data-parallel groups grow across the replicas
// (the same id, M / N times the members), so the ring or tree the simulator builds for them grows
// and its time with it; every other group (tensor, pipeline, expert, context, single-rank) stays
// inside its replica, copied under a new id per replica; sends and receives keep their peers
// inside the replica; collectives without a group (the whole world) span all M ranks.
//
// Which groups are data-parallel: given (`roles`), or inferred from the traces (infer_roles).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chakra/trace/trace.h"

namespace chakra::project {

// Process groups: id → member ranks (the type of sim::CommGroups, which this layer cannot name).
using Groups = std::map<int, std::vector<uint32_t>>;

// Groups congruent to each other (same size, same spacing of members), and what the traces do
// in them.
struct GroupClass {
  std::vector<int> ids;
  uint32_t size = 0, stride = 0;     // members per group; spacing of sorted members (0: irregular)
  double collectives_per_rank = 0;   // collectives a member issues in its group
  bool reductions_only = true;       // all-reduce, reduce-scatter, all-gather (no all-to-all)
  bool data_parallel = false;
};

struct Plan {
  uint32_t from = 0, to = 0;
  std::vector<GroupClass> classes;
  std::string explanation;  // what was inferred or given, for the user
  int max_group_id = 0;
  std::map<int, bool> data_parallel;  // group id → whether it grows
  uint32_t factor() const { return to / from; }
  // The id group `id` has in replica k (k = 0 keeps it; data-parallel groups keep it always).
  int group_in_replica(int id, uint32_t replica) const;
};

// Classes `groups` and marks the data-parallel ones: those listed in `dp_ids` when given; else
// the only class of groups larger than one rank; else, among classes whose collectives are all
// reductions, the one issuing the fewest per rank (gradients are synchronised a few times per
// step, tensor-parallel activations in every layer), the larger spacing on a tie. Traces are the
// N ranks in order. Throws chakra::Error when M is not a multiple of N, for a group naming a rank
// beyond N, or when nothing can be data-parallel.
Plan plan_data_parallel(const std::vector<const Trace*>& ranks, const Groups& groups, uint32_t to,
                        const std::optional<std::vector<int>>& dp_ids = std::nullopt);

// Rank `new_rank`'s trace from `trace`, a copy of rank new_rank mod N: its pg_name, comm_src and
// comm_dst, and a METADATA node's process groups, rewritten in place for its replica.
void project_rank(Trace& trace, const Plan& plan, uint32_t new_rank);
// The process groups a PyTorch trace's METADATA nodes list (chakra convert keeps them there):
// for traces without a comm-group file.
Groups metadata_groups(const Trace& trace);
// The projected groups (ids as group_in_replica gives them).
Groups projected_groups(const Plan& plan, const Groups& groups);

}  // namespace chakra::project
