// Projecting a measured (or synthetic) workload to more ranks (`chakra project`): data
// parallelism first. The N traced ranks become one replica; M / N replicas are laid out as blocks
// (new rank = k · N + r for replica k of rank r), each a copy of the traced ranks with the same
// compute, memory and per-rank gradient sizes. Data-parallel groups grow across the replicas
// (the same id, M / N times the members), so the ring or tree the simulator builds for them grows
// and its time with it; every other group (tensor, pipeline, expert, context, single-rank) stays
// inside its replica, copied under a new id per replica; sends and receives keep their peers
// inside the replica; collectives without a group (the whole world) span all M ranks.
//
// Which groups are data-parallel: given (`dp_ids`), or inferred from evidence in the traces and
// said (plan_data_parallel; core/docs/sharing.md has the rule, its evidence and its limits).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/trace/trace.h"

namespace chakra::synth {

// Process groups: id → member ranks (the type of astra::CommGroups, which this layer cannot name).
using Groups = std::map<int, std::vector<uint32_t>>;

// Groups congruent to each other (same size, same spacing of members): a family, such as the
// tensor-parallel groups. The collectives without a group (the whole world) are a family too.
// What a member issues in its group, per rank of the traced step.
struct GroupClass {
  std::vector<int> ids;                // empty: the collectives without a group (the whole world)
  uint32_t size = 0, stride = 0;       // members per group; spacing of sorted members (0: irregular)
  std::map<int32_t, double> per_rank;  // comm_type -> collectives a member issues in its group
  // Its all-reduces, reduces, reduce-scatters and all-gathers (what gradient synchronisation
  // uses): per rank, their bytes, and how many carry flat (1-D) buffers, tensors of 2+
  // dimensions (an example kept), or no recorded shape.
  double syncs_per_rank = 0, sync_bytes_per_rank = 0;
  uint64_t smallest = 0, largest = 0;
  uint64_t flat = 0, shaped = 0, unshaped = 0;
  std::string shaped_example;
  bool partitions = false;    // every traced rank is in exactly one of its groups
  bool members_agree = true;  // in each group, every member issues the same such collectives in order
  bool data_parallel = false;
  std::string verdict;  // why it is or is not data-parallel, for the explanation
  bool world() const { return ids.empty(); }
};

struct Plan {
  uint32_t from = 0, to = 0;
  std::vector<GroupClass> classes;
  std::string explanation;  // what was inferred or given, and from what, for the user
  int max_group_id = 0;
  std::map<int, bool> data_parallel;  // group id -> whether it grows
  uint32_t factor() const { return to / from; }
  // The id group `id` has in replica k (k = 0 keeps it; data-parallel groups keep it always).
  int group_in_replica(int id, uint32_t replica) const;
};

// Classes `groups` into families and marks the data-parallel one: the groups in `dp_ids` when
// given (all of a family's groups or none; 0 names the collectives issued without a group, the
// whole world, as in a plain data-parallel run; an empty list or an id not in `groups` is an error);
// else inferred, first of these that applies:
//  - traces chakra synth made (their metadata names the command): its --dp layout, runs of dp
//    consecutive ranks; --dp 1 (no gradient traffic to grow) is refused;
//  - traces recording the shapes of collectives' tensors (converted PyTorch traces): the one
//    family whose all-reduces, reduce-scatters and all-gathers all carry flat buffers (gradient
//    buckets), 64 KiB or more per rank; one carrying a tensor of 2+ dimensions moves
//    activations (tensor parallelism) and is never data-parallel;
//  - otherwise by count: among families issuing only those collectives, the one issuing at
//    most half as many per rank as any other (gradients are synchronised once a step,
//    activations in every layer); one such family alone is not enough.
// A data-parallel family must hold every traced rank exactly once, its members issuing the same
// collectives. The world's collectives grow whatever is chosen, so reductions there must be the
// data-parallel ones. Without such evidence, or with two candidates, chakra::Error says what
// each family issues and asks for --groups. Traces are the N ranks in order. Also throws when M
// is not a multiple of N or for a group naming a rank beyond N.
Plan plan_data_parallel(const std::vector<const Trace*>& ranks, const Groups& groups, uint32_t to,
                        const std::optional<std::vector<int>>& dp_ids = std::nullopt);

// The command in the metadata of a trace chakra synth made ("generator": "chakra synth ..."),
// empty for any other trace; and the value of one of its options (nullopt when absent).
std::string synth_command(const Trace& trace);
std::optional<uint64_t> command_option(std::string_view command, std::string_view option);
std::string command_word(std::string_view command, std::string_view option);  // its value as text, "" when absent

// Rank `new_rank`'s trace from `trace`, a copy of rank new_rank mod N: its pg_name, comm_src and
// comm_dst, and a METADATA node's process groups, rewritten in place for its replica.
void project_rank(Trace& trace, const Plan& plan, uint32_t new_rank);
// The process groups a PyTorch trace's METADATA nodes list (chakra convert keeps them there):
// for traces without a comm-group file.
Groups metadata_groups(const Trace& trace);
// The projected groups (ids as group_in_replica gives them).
Groups projected_groups(const Plan& plan, const Groups& groups);

}  // namespace chakra::synth
