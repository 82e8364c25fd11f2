// The critical path of a step across ranks: from the node that ends last, back through what each
// node waited for, until the step's start: a dependency on its rank, the previous op of its lane
// (a GPU stream or CPU thread is one op at a time), or, for a collective or a send/recv, the
// peer rank that arrived last, or for a host call that blocks on the GPU (cudaStreamSynchronize,
// cudaMemcpy…) the GPU op it waited for. It runs on measured times (µs) and on simulated ones (ns) alike;
// definitions in core/docs/analyses.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/format/json_writer.h"
#include "chakra/sim/simulate.h"
#include "chakra/trace/trace.h"

namespace chakra {

// One rank's trace with a time for each node (by position). start[n] == kUntimed: the node did
// not run or has no recorded time, and the path never passes through it.
struct RankTimes {
  static constexpr uint64_t kUntimed = UINT64_MAX;
  const Trace* trace = nullptr;
  std::vector<uint64_t> start, end;
};

// Measured times: start_time_micros and duration_micros (a start of 0 means none was recorded).
RankTimes measured_times(const Trace& trace);
// Simulated times of NPU `npu`: its spans' start and end (ns), matched to the trace by node id.
RankTimes simulated_times(const Trace& trace, std::span<const sim::Span> spans, uint32_t npu);

enum class PathKind : uint8_t { Compute, Communication, Memory, Cpu, Waiting };
constexpr int kPathKinds = 5;
const char* path_kind_name(PathKind k);  // "compute", "communication", "memory", "cpu", "waiting"

struct CrossRankPath {
  // How a step was reached from the one after it (the last step: End): the one after depended
  // on it, followed it on its lane, waited for it as a collective's or message's last peer, or
  // was a host call waiting for it (a synchronisation or a copy).
  enum class Via : uint8_t { End, Dependency, Lane, Peer, Sync };
  struct Step {
    uint32_t rank = 0;           // position in the input
    uint32_t node = UINT32_MAX;  // UINT32_MAX: a wait nothing on the path explains
    uint64_t start = 0, duration = 0;
    PathKind kind = PathKind::Waiting;
    Via via = Via::End;
  };
  // First to last. Steps are contiguous (each starts where the previous one ended), from
  // `begin`, the earliest timed start of any rank, to `end`, the latest end: their durations sum
  // to end − begin. Of a collective on the path only the part after its last rank arrived is
  // its own; before that the path runs on the rank that arrived last.
  std::vector<Step> steps;
  uint64_t begin = 0, end = 0;
  uint64_t by_kind[kPathKinds] = {};
  // False when the walk stopped early (a guard against inconsistent times); steps then cover
  // only its last part and the first step is a wait back to `begin`.
  bool complete = true;
  uint64_t step() const { return end - begin; }
};

// The ranks' critical path. The k-th collective of a communicator (pg_name; for GPU ops without
// one, its kernel name) on each rank that has it is one instance, as NCCL requires; a
// communicator whose ranks recorded different counts is not followed across ranks. The k-th
// send from rank a to rank b with a tag meets the k-th receive of b from a with that tag. Lanes:
// the GPU stream ("stream") or CPU thread ("tid") of a node; without them the CPU, compute and
// communication resources of a simulated NPU. O(n log n) in the nodes of all ranks.
CrossRankPath critical_path_across_ranks(std::span<const RankTimes> ranks);

// What-if along the path: the step if every op on it whose name contains `name_part` ran
// `speedup` times faster, other paths ignored (so at most that much faster; a simulation gives
// the exact answer).
uint64_t path_step_if_faster(const CrossRankPath& path, std::span<const RankTimes> ranks, std::string_view name_part,
                             double speedup);

// How the CLI and the page show a path. `rank_ids[i]` names input i (its rank number); `unit`
// is "µs" or "ns". Text: the step, the time by kind, and the `top` longest steps in time order.
std::string critical_path_text(const CrossRankPath& path, std::span<const RankTimes> ranks,
                               std::span<const uint32_t> rank_ids, size_t top, std::string_view unit);
// JSON keys of the object being written: step, begin, end, complete, by_kind {kind: time},
// steps [{rank, node_id, name, kind, via, start, duration, share}] (node_id and name null for a
// wait), every step.
void write_critical_path_json(const CrossRankPath& path, std::span<const RankTimes> ranks,
                              std::span<const uint32_t> rank_ids, JsonWriter& w);

}  // namespace chakra
