// The linker's parts (chakra/pytorch/trace_link.h is the whole): the Kineto trace as the linker
// reads it, sync dependencies and blocked time, the host execution trace, pairing the two; each in
// core/src/pytorch/link/<part>.cpp. Private to the pytorch layer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chakra/format/io.h"
#include "chakra/format/json_pull.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/progress.h"
#include "chakra/trace/column.h"
#include "chakra/trace/string_pool.h"
#include "pytorch/host_stalls.h"
#include "pytorch/python_json.h"

namespace chakra::link {

using pyjson::Number;
// Keys and names are compared as views ("cat"sv): std::string == const char* measures the literal
// and compares out of line, 8% of a link's instructions.
using namespace std::string_view_literals;

// A parsed key against a literal, inline: in the readers' long per-event loops `key == "x"sv`
// compared out of line, 4% of a link's instructions.
template <size_t N>
inline bool is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

// host node index → its output node id (link_traces), or the Kineto op itself (kineto_activity).
using HostOut = std::function<int64_t(int32_t)>;

// ---------------------------------------------------------------- the Kineto (device) trace: reading its events,
// exclusive times, threads, launches

constexpr int32_t kNone = -1;

constexpr std::string_view kProcessAnnotation = "[pytorch|profiler|execution_trace|process]";

constexpr std::string_view kThreadAnnotation = "[pytorch|profiler|execution_trace|thread]";

// ---------------------------------------------------------------- the Kineto (device) trace

// GpuMemset and MemsetLaunch (the runtime call that enqueued it) are kept for kineto_activity
// only; the linker, like the reference, links kernels and memcpys and leaves memsets out.
enum class OpKind : uint8_t { Other, Cpu, Launch, Gpu, GpuMemset, MemsetLaunch, Annotation };

// Kineto "tid"s are ints, or strings in some vintages; strings get keys of their own.
using TidKey = int64_t;

constexpr TidKey kStringTid = int64_t{1} << 62;

struct KinetoOp {
  Number ts, dur;
  TidKey tid = 0;
  int64_t external_id = -1, ev_idx = -1, correlation = -1, rf_id = 0;
  bool has_rf = false;
  OpKind kind = OpKind::Other;
  StrId name = 0, cat = 0;
  // ph, args.stream and args["Process Group Name"] rendered as JSON and interned, as id + 1;
  // 0 = absent (null).
  uint32_t ph = 0, stream = 0, pg_name = 0;
  int32_t host = kNone;          // host node linked to this op so far
  int32_t other_thread = kNone;  // latest CPU op of another thread before this op's group
};

struct ThreadSpan {
  Number start, end;
  uint64_t first_order = 0;  // file position of the event that set `start` (dict order)
};

// CUDA/HIP calls that make a CPU thread (or a stream) wait for GPU work: the sync dependencies.
enum class SyncKind : uint8_t { Device, Stream, Event, StreamWait };

struct SyncCall {
  SyncKind kind;
  TidKey tid;
  Number ts, end;
  int64_t correlation;
};

// What a newer Kineto's cuda_sync event adds to its runtime call (joined by correlation).
struct SyncDetail {
  int64_t stream = -1;              // the stream synchronised, or the one that waits (Stream Wait Event)
  int64_t wait_stream = -1;         // Event Sync / Stream Wait Event: the stream the event was recorded on
  int64_t record_correlation = -1;  // ... and the cudaEventRecord call that recorded it
};

struct Device {
  std::string name;
  StringPool strings;
  // Cpu, Launch and Gpu events, sorted by ts (stable). A Column: a large trace's millions of ops
  // grow in place (remapped), where a vector's doubling held them twice while it copied.
  Column<KinetoOp> ops;
  std::vector<int32_t> cpu;  // Cpu ops in ts order
  std::vector<int32_t> gpu;  // Gpu ops in ts order
  // Exclusive duration of each op, parallel to ops, once compute_exclusive has run (the linker's;
  // 16 bytes an op that kineto_activity does without); until then, and for ops added after it,
  // the op's duration.
  std::vector<Number> exclusive;
  Number exclusive_of(int32_t op) const {
    return static_cast<size_t>(op) < exclusive.size() ? exclusive[op] : ops[op].dur;
  }
  std::unordered_map<int64_t, int32_t> launch_by_correlation;
  std::unordered_map<int64_t, int32_t> cpu_by_rf;  // the reference's rf map: last op wins
  std::vector<TidKey> cpu_tids;                    // in order of first appearance
  std::unordered_map<TidKey, std::vector<int32_t>> cpu_by_tid;
  // Per thread, parallel to cpu_by_tid: the position of the nearest earlier op that ends no
  // sooner than this one (-1: none), so innermost_cpu_op's walk back skips, in one jump, the ops
  // that end before the one it leaves (a monotonic stack; the walk was linear, a third of a
  // link's time on a 24k-event trace).
  std::unordered_map<TidKey, std::vector<int32_t>> ends_no_sooner_before;
  std::vector<int32_t> candidates;  // Cpu ops + synthetic annotations, ts order (find_closest_op)
  struct Step {
    StrId name;
    Number begin, end;
    TidKey tid = 0;
  };
  std::vector<Step> profiler_steps;  // ProfilerStep#N annotations
  bool any_rf = false;
  uint64_t duplicate_correlations = 0;
  std::vector<SyncCall> sync_calls;
  // Every CUDA/HIP runtime and driver call (launches and syncs too): what a host stall's thread
  // was doing (host_stalls.h).
  struct RuntimeCall {
    TidKey tid;
    Number ts, end;
    StrId name;
  };
  std::vector<RuntimeCall> runtime_calls;
  std::unordered_map<int64_t, SyncDetail> sync_detail;  // by correlation
  std::unordered_map<int64_t, Number> event_records;    // cudaEventRecord ts by correlation
  // Who recorded it: the rank its distributedInfo states, the process ids of its CPU ops.
  std::optional<uint32_t> stated_rank;
  std::vector<int64_t> cpu_pids;
  KinetoCategories* categories = nullptr;  // when set: events counted per category
};

// Kineto before PyTorch 1.9 used other category names for the same events.
std::string_view modern_category(std::string_view cat);

// Python's int(x) of an args value (ints, floats, numeric strings); nullopt otherwise.
std::optional<int64_t> read_int_like(JsonPull& p, std::string& scratch);

// An interned args.stream value as a number; -1 if it is not an integer.
int64_t parse_stream(const Device& d, uint32_t stream);

void load_device(ByteSource& in, Device& d, Progress* progress);

// Exclusive duration of each CPU op: its duration minus the merged spans of the ops it fully
// contains on its thread, with the reference's scan order and Python arithmetic.
void compute_exclusive(Device& d, std::vector<std::string>& warnings);

// For the first op of each group of a thread (a gap of more than 1 ms after the previous op),
// the latest CPU op of any other thread that started before it; later ops of the group inherit
// it. Ties go to the first thread in order of appearance and the first op at that time.
void compute_inter_thread(Device& d);

// The CPU op that launched each GPU op: the launch call with the same correlation gives the
// thread and time; then the latest CPU op of that thread before the call, preferring one with
// the GPU op's External id (NCCL kernels skip "nccl:coalesced" wrappers). Without a shared
// External id the reference falls back to the latest op started before the call, often a
// sibling that already ended; `innermost` takes the innermost op still running at the call
// instead (Kineto before PyTorch 2.0 gave kernels their correlation as External id).
std::vector<int32_t> find_launchers(Device& d, bool innermost, uint64_t* orphans);

// ---------------------------------------------------------------- sync dependencies, blocked time and host stalls

// ---------------------------------------------------------------- sync dependencies

// For every synchronising call: the GPU nodes it waits for, and the node that waits. The waiter
// is the first host-linked CPU op its thread starts after the call returns, or for
// cudaStreamWaitEvent the next GPU op launched on the waiting stream. What a stream has to finish
// is its last GPU op launched before the call (before the event's record call for event waits):
// a stream runs in launch order, so that op ends after all earlier ones.
struct SyncDeps {
  // Waiting node id → node ids: GPU ops, or another thread's last op (add_cross_thread_blocked).
  std::unordered_map<int64_t, std::vector<int64_t>> of;
  // Host node id → µs of its own time spent inside calls that block the CPU thread until GPU
  // work finishes (device/stream/event syncs, copies to pageable host memory).
  std::unordered_map<int64_t, double> blocked;
  // Host node id → when it was blocked: [begin, end) in µs on the profiler's clock (sorted when
  // written).
  std::unordered_map<int64_t, std::vector<std::pair<double, double>>> blocked_spans;
  // The same spans by thread, for finding host stalls (time blocked so is never one).
  std::vector<std::pair<TidKey, std::pair<double, double>>> thread_blocked;
  uint64_t calls = 0, resolved = 0, edges = 0;
  uint64_t unidentified = 0;  // event waits whose event is unknown (no cuda_sync event)
  uint64_t inferred = 0;      // stream waits without one, resolved by the launch-order rule
  uint64_t no_waiter = 0;     // no linked op after the call on its thread (or stream)
  uint64_t thread_waits = 0;  // dependencies on the end of work handed to another thread

  // `waiter` waits for node `on`: a sync_dep entry, once. False when it was there already.
  bool add(int64_t waiter, int64_t on) {
    std::vector<int64_t>& list = of[waiter];
    if (std::find(list.begin(), list.end(), on) != list.end()) return false;
    list.push_back(on);
    return true;
  }
};

// Thread `tid`'s CPU ops (by start) and where those starting before `t` end (`or_at`: also
// those starting at `t`); empty for an unknown thread.
struct ThreadOps {
  std::span<const int32_t> ops;
  size_t split = 0;
};

// The innermost CPU op of thread `tid` whose span holds [ts, end), or kNone.
int32_t innermost_cpu_op(const Device& d, TidKey tid, Number ts, Number end);

// The first host-linked CPU op thread `tid` starts at or after `end` (a Kineto index), or kNone.
int32_t first_linked_cpu_op_after(const Device& d, TidKey tid, Number end);

// Time a thread spends blocked while another thread runs work it handed over (autograd: the
// main thread waits inside one op while the engine's thread runs the backward pass). `deps`
// pairs each op that has an inter-thread dependency with the op it depends on (Kineto
// indices); its span is waiting time of the innermost op of the depended-on thread around it.
// Per waiting op: from the first such span's start to the last one's end, at most its
// exclusive time.
// The wait ends when the handed-over work does, so the waiting thread's next op depends on the
// last op each working thread finished before the wait ended (a `sync_dep`). Without it the
// replay lets the main thread run on after the backward pass's first ops: the reference's
// inter_thread_dep points at the other thread's op before a group's start, not at its end.
void add_cross_thread_blocked(const Device& d, const std::vector<std::pair<int32_t, int32_t>>& deps,
                              const HostOut& host_out, SyncDeps& r);

// `gpu_out[op]`: output id of a GPU op's node (-1: not written); `host_out(i)`: host node i's.
SyncDeps compute_sync_deps(const Device& d, const std::vector<int64_t>& gpu_out, const HostOut& host_out);

// Each waiter's dependencies in ascending order, and their count.
void sort_sync_deps(SyncDeps& r);

// What find_host_stalls reads of a Kineto trace, whose sync dependencies `sync` found when its
// threads were blocked: StallInputs::cpu parallel to d.cpu, StallInputs::gpu to d.gpu.
StallInputs stall_inputs(const Device& d, const SyncDeps& sync);

// The host stalls of a Kineto trace (host_stalls.h). HostStall::op indexes d.cpu, HostStall::gpu d.gpu.
inline std::vector<HostStall> find_stalls(const Device& d, const SyncDeps& sync) {
  return find_host_stalls(stall_inputs(d, sync));
}

// ---------------------------------------------------------------- the host execution trace

// ---------------------------------------------------------------- the host execution trace

struct HostNode {
  int64_t id = 0;
  int64_t parent = 0;  // ctrl_deps (or 1.0.1's parent)
  int64_t rf_id = 0, tid = 0;
  bool has_parent = false, has_ctrl_deps = false, parent_is_null = false, has_rf = false;
  StrId name = 0;
  uint64_t begin = 0, end = 0;  // the node's JSON text
};

// The whole (decompressed) input: a regular file (or bytes in memory) shown in place, with no
// copy and no fresh pages; anything else read into one buffer without zero-filling it first.
struct WholeInput {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<ByteSource> source;  // kept open while its bytes are mapped
  std::unique_ptr<char, Free> bytes;
  std::string_view text;

  explicit WholeInput(std::unique_ptr<ByteSource> in) {
    const uint64_t left = in->compressed() ? 0 : in->raw_size() - in->raw_position();
    if (left > 0 && in->map(0, left, text) && text.size() == left) {
      source = std::move(in);
      return;
    }
    size_t capacity = std::max<size_t>(left + 1, size_t{1} << 20), size = 0;
    for (;;) {
      if (!bytes || size == capacity) {
        if (bytes) capacity *= 2;
        char* grown = allocate_input_buffer(capacity);
        if (size) std::memcpy(grown, bytes.get(), size);
        bytes.reset(grown);
      }
      size_t got = in->read(reinterpret_cast<uint8_t*>(bytes.get() + size), capacity - size);
      if (got == 0) break;
      size += got;
    }
    text = {bytes.get(), size};
    source = std::move(in);
  }
  std::string_view view() const { return text; }
};

struct Host {
  std::string name;
  std::unique_ptr<WholeInput> input;
  std::string_view text;  // the whole (decompressed) host ET
  StringPool strings;
  std::vector<HostNode> nodes;
  std::string schema;
  std::optional<int64_t> pid;  // the process that recorded it
  // Where each top-level "nodes" array lies in `text`, [begin, end): the writer need not skip
  // them again to find the members after them (a whole pass over the file).
  std::vector<std::pair<size_t, size_t>> node_arrays;
};

// The nodes the reference never links: those not reachable from node 1 through parents that
// are in the trace (it attaches a node to its parent only then, and starts from node 1).
LinkReport::OutsideRoot count_outside_root(const std::vector<HostNode>& nodes,
                                           const std::unordered_map<int64_t, int32_t>& index_of_id);

void load_host(std::unique_ptr<ByteSource> in, Host& h, Progress* progress);

bool is_et_annotation(std::string_view name);

// ---------------------------------------------------------------- pairing host ops with Kineto ops, and the two files
// with each other

// ---------------------------------------------------------------- pairing host ↔ Kineto ops

// host node index → Kineto op index (kNone when unlinked).
using Pairing = std::vector<int32_t>;

Pairing pair_by_rf(const Host& h, const Device& d);

bool same_name(const Host& h, const HostNode& n, const Device& d, const KinetoOp& k);

// Kineto id (External id or Ev Idx) = host rf_id + offset for one offset, checked by names.
// Returns the pairing for the best offset and its number of agreeing names.
Pairing pair_by_offset(const Host& h, const Device& d, const std::vector<int32_t>& window, bool ev_idx, int64_t* offset,
                       uint64_t* agreeing);

// Per thread, host ops in id order against Kineto CPU ops in time order, aligned by name with a
// bounded look-ahead; Kineto threads are assigned to host threads by best agreement. Where the
// Kineto trace holds several iterations, the earliest best-aligned start is taken.
Pairing pair_in_order(const Host& h, const std::vector<int32_t>& by_id, const Device& d,
                      const std::vector<int32_t>& window, uint64_t* matched, Number* window_start);

// Whether the host ET and the Kineto trace are one rank's recording, from what they state: ranks
// (the Kineto trace's distributedInfo, the numbers in both files' names, the caller's) and
// process ids (the host ET's "pid", the Kineto trace's CPU ops'). Any disagreement is an error
// naming both files and values, or with `force` a warning; report.pairing says what agreed.
void check_pairing(const Host& h, const Device& d, const LinkOptions& o, LinkReport& report);

}  // namespace chakra::link
