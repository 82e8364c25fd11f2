// Analyses of a rank's GPU work as HolisticTraceAnalysis (HTA) defines them, on any trace with
// measured times: a Kineto trace on its own, a linked and converted PyTorch trace, any .et whose
// GPU ops carry start_time_micros, and a simulated run's spans (the what-if). Temporal breakdown,
// time per kernel kind and their overlaps, communication/computation overlap, per-name
// statistics, idle time per stream, launch delays. Definitions and where they differ from HTA:
// core/docs/analyses.md. Times are in the source's unit: µs for traces, ns for simulations.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/format/json_writer.h"
#include "chakra/sim/simulate.h"
#include "chakra/trace/schema.h"  // GpuKind
#include "chakra/trace/trace.h"

namespace chakra {

// One GPU op: a node that is not a CPU op (is_cpu_op false), names its "stream" and has a
// start time (start_time_micros 0 means none was recorded).
struct GpuOp {
  uint64_t start = 0, end = 0;
  int64_t stream = 0;
  uint32_t node = 0;
  GpuKind kind = GpuKind::Computation;
  // The CPU op that launched it (see gpu_ops_of), or UINT32_MAX when the trace does not say.
  uint32_t launch_node = UINT32_MAX;
  uint64_t launch_start = 0, launch_duration = 0;
};

// The trace's GPU ops by start (ties in node order). A GPU op's launch is its data dependency
// that is a CPU op (Kineto traces record it by correlation id; converted traces give the
// operator that launched it). When the trace has two or more iterations (CPU ops named
// ProfilerStep#N), only ops launched before the last one began are kept: the last iteration is
// incomplete, and HTA leaves it out the same way. O(n log n).
std::vector<GpuOp> gpu_ops_of(const Trace& trace);

struct GpuAnalysis {
  uint64_t ops = 0;
  // Temporal breakdown (HTA's get_temporal_breakdown): `span` runs from the first GPU op's start
  // to the last one's end; `idle` is the part of it no GPU op covers, `compute` the part covered
  // by computation kernels, `non_compute` the rest.
  uint64_t span = 0, idle = 0, compute = 0, non_compute = 0;
  // Communication kernels' merged time, and the part of it computation kernels overlap (HTA's
  // get_comm_comp_overlap is overlapped / communication).
  uint64_t communication = 0, comm_overlapped = 0;
  // Time during which exactly the kinds in each set run ([bit k] = GpuKind k), sets 1..7 (HTA's
  // kernel type table, "COMPUTATION overlapping COMMUNICATION" and so on).
  uint64_t by_kinds[1 << kGpuKinds] = {};
  // Per name: count and durations; sorted by sum, descending (ties by name).
  struct Name {
    std::string name;
    GpuKind kind = GpuKind::Computation;
    uint64_t count = 0, sum = 0, min = 0, max = 0;
    double mean = 0, stddev = 0;  // sample standard deviation (0 for one op), as pandas
  };
  std::vector<Name> names;
  // Names counted as computation only because no pattern knows them (is_known_compute_kernel):
  // listed, so that a kernel of an unknown communication library does not pass silently as
  // compute. In `names` order.
  std::vector<std::string> unknown_kernels;
  // Gaps between consecutive ops of a stream (HTA's get_idle_time_breakdown): waiting for the
  // host when the next op's launch began after the previous op ended; kernel wait when the gap
  // is shorter than kKernelWaitMicros; other otherwise. Streams in order of first op.
  static constexpr uint64_t kKernelWaitMicros = 30;
  struct StreamIdle {
    int64_t stream = 0;
    uint64_t host_wait = 0, kernel_wait = 0, other = 0;
    uint64_t host_wait_gaps = 0, kernel_wait_gaps = 0, other_gaps = 0;
  };
  std::vector<StreamIdle> idle_by_stream;

  // Each GPU op whose launch is known (HTA's get_cuda_kernel_launch_stats), in start order: the
  // launch call's duration, the op's, the time from the call's start to the op's start, and the
  // launch delay, from the call's end to the op's start (0 when the op started first). HTA's
  // "launch_delay" is since_call + cpu_duration instead (see core/docs/analyses.md). On converted
  // traces the "call" is the operator that launched the op.
  struct Launch {
    uint32_t node = 0;
    uint64_t cpu_duration = 0, gpu_duration = 0;
    int64_t since_call = 0;
    uint64_t delay = 0;
  };
  std::vector<Launch> launches;

  // Communication no computation kernel covers: what a faster network could save.
  uint64_t exposed_communication() const { return communication - comm_overlapped; }
  double overlap_percent() const {
    return communication ? 100.0 * static_cast<double>(comm_overlapped) / static_cast<double>(communication) : 0.0;
  }
};

// O(n log n) in the GPU ops.
GpuAnalysis analyze_gpu(const Trace& trace);
// The same from the trace's GPU ops as gpu_ops_of found them (when a caller needs them too).
GpuAnalysis analyze_gpu(const Trace& trace, const std::vector<GpuOp>& ops);

// The launches in summary, with HTA's cutoffs: ops shorter than a launch call of at most 50
// time units, and delays over 100; the delays' median, 90th percentile and maximum.
struct LaunchSummary {
  size_t launches = 0, short_kernels = 0, delayed = 0;
  uint64_t median = 0, p90 = 0, max = 0;
};
LaunchSummary summarize_launches(const GpuAnalysis& a);

// The temporal breakdown as keys of the JSON object being written: gpu_ops, span, idle, compute,
// non_compute, communication, communication_overlapped, exposed_communication, overlap_percent (the CLI and the page
// write the same).
void write_breakdown_json(const GpuAnalysis& a, JsonWriter& w);

// The same analyses of one NPU of a simulation (times in ns): compute spans are computation,
// collectives and send/recv communication, memory spans memory; CPU spans are left out. Streams
// are the simulator's compute (0) and communication (1) slots; no launches are known. O(n log n).
GpuAnalysis analyze_spans(std::span<const sim::Span> spans, uint32_t npu);

// Collectives of a trace by type and size (a power-of-two bucket: [2^k, 2^(k+1)) bytes): count,
// bytes and time, from COMM_COLL nodes with comm_type, comm_size and a duration. Bandwidths are
// nccl-tests': algorithm bandwidth = bytes / time; bus bandwidth scales it by what each rank of
// `ranks` must move (all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all (n−1)/n; 1
// otherwise). Measured durations include waiting for the last rank, as nccl-tests' do.
struct CollectiveBucket {
  int32_t comm_type = 0;
  uint32_t size_log2 = 0;
  uint64_t count = 0, bytes = 0, micros = 0;
  double algorithm_gbps() const {
    return micros ? static_cast<double>(bytes) / static_cast<double>(micros) / 1e3 : 0.0;
  }
  double bus_gbps(uint32_t ranks) const;
};
// By type, then size. Nodes without a size or a duration are left out. Durations are the
// trace's, or `micros` (per node position) when given: a run's, from simulated_micros.
std::vector<CollectiveBucket> collective_buckets(const Trace& trace, std::span<const uint64_t> micros = {});
// Every rank's together (`micros`: per rank, or empty for the traces' own durations).
std::vector<CollectiveBucket> collective_buckets(std::span<const Trace* const> ranks,
                                                 std::span<const std::vector<uint64_t>> micros = {});
// NPU `npu`'s simulated duration of each node of its trace, in µs (at least 1 for a node that
// took any time; 0 for one that did not run).
std::vector<uint64_t> simulated_micros(const Trace& trace, std::span<const sim::Span> spans, uint32_t npu);

// Stragglers across ranks. The k-th communication kernel of a name on each rank is one instance
// of a collective; its arrival on a rank is the kernel's start (the kernels then wait for the
// last rank). Names whose count differs between ranks are left out and listed. Arrivals are
// compared as recorded: ranks on different hosts need synchronised clocks.
struct Stragglers {
  struct Instance {
    std::string name;
    uint32_t index = 0;             // k: the name's k-th kernel on every rank
    std::vector<uint64_t> arrival;  // per rank (position in the input)
    uint32_t last = 0;              // the rank that arrived last
    uint64_t skew = 0;              // last arrival − first
  };
  std::vector<Instance> instances;  // by skew, descending
  struct Rank {
    uint32_t rank = 0;
    uint64_t last = 0;    // instances it arrived last at
    uint64_t caused = 0;  // Σ skew of those: how long the first rank waited for it
    uint64_t waited = 0;  // Σ over instances of (last arrival − its own)
  };
  std::vector<Rank> ranks;  // by `caused`, descending (ties by rank)
  std::vector<std::string> unmatched;
};
// `ranks[i]` is rank i's trace (GPU ops as gpu_ops_of finds them). O(n log n).
Stragglers find_stragglers(std::span<const Trace* const> ranks);
// What the stragglers need of one rank: per communication kernel name, its kernels' starts in
// order (`ops` as gpu_ops_of gives them). A rank's traces can go once this is taken.
using CommStarts = std::map<std::string, std::vector<uint64_t>, std::less<>>;
CommStarts comm_starts_of(const Trace& trace, const std::vector<GpuOp>& ops);
Stragglers find_stragglers(std::span<const CommStarts* const> ranks);
// Buckets of several ranks summed (by type, then size).
std::vector<CollectiveBucket> sum_buckets(std::span<const std::vector<CollectiveBucket>> per_rank);

// HTA's label of a kind set: kinds in enum order joined by " overlapping ".
std::string gpu_kinds_label(unsigned set);

}  // namespace chakra
