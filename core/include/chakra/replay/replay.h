// Replaying a workload's traces on real machines (`chakra replay`, core/docs/replay.md): every
// process of a job is one rank; it reads its trace whole, checks it, then walks its graph in
// dependency order under the simulator's lane rules (chakra/sim/resources.h), issuing each
// collective, send and receive through a communication layer (MPI today: replay/mpi_comm.h)
// and spinning for each compute node's duration. It records when every node started and ended,
// so the replay is written as traces with measured times that analyze, diff, simulate and the
// page read like any measured run.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "chakra/astra/config.h"
#include "chakra/format/et_io.h"
#include "chakra/trace/trace.h"

namespace chakra::replay {

// What the communication layer runs. All-gather's bytes are each rank's input (its output is
// size × bytes), reduce-scatter's and all-to-all's the whole buffer, as ASTRA-sim reads comm_size.
enum class OpKind : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Barrier, Send, Recv };
inline constexpr int kOpKinds = 8;
const char* op_kind_name(OpKind k);  // "all_reduce", ..., "barrier", "send", "recv"

struct CommOp {
  OpKind kind = OpKind::Barrier;
  int group = -1;      // a communicator group of add_group; -1: every rank
  uint64_t bytes = 0;  // comm_size
  uint32_t peer = 0;   // send, recv: the other rank (of the layer); broadcast: the root's place in the group
  int tag = 0;         // send, recv
};

// One process's side of a job's communication. Replayed traffic and the layer's own control
// messages (agreement, reports) never share a channel.
class CommLayer {
 public:
  using Request = uint32_t;
  virtual ~CommLayer() = default;
  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;
  virtual int max_tag() const = 0;
  // Collective over every rank: each calls it for the same groups in the same order. `members`:
  // the layer's ranks in ring order.
  virtual void add_group(int id, std::span<const uint32_t> members) = 0;
  // Allocates and touches buffers for `operations` operations sending up to `send_bytes` and
  // receiving up to `recv_bytes` before the replay, so that no timed operation pays for first
  // touches of its memory.
  virtual void prepare(uint64_t send_bytes, uint64_t recv_bytes, uint32_t operations) = 0;
  // Starts an operation (non-blocking); test() says when it is done, then forgets it.
  virtual Request start(const CommOp& op) = 0;
  virtual bool test(Request r) = 0;
  // A barrier of every rank, on a channel of its own (non-blocking): the replay's end.
  virtual Request start_end_barrier() = 0;
  // Control channel, blocking, every rank calls: every rank's text, in rank order.
  virtual std::vector<std::string> all_gather_text(const std::string& mine) = 0;
  // Ends every rank of the job at once (after a report), with that exit code.
  [[noreturn]] virtual void abort(int code) = 0;
};

struct ReplayOptions {
  std::string prefix;           // trace rank r reads npu_trace_file(prefix, r)
  uint32_t trace_ranks = 0;     // ranks of the workload (its files)
  std::string comm_group_file;  // its communicator groups, "" for none
  // Layer rank i replays trace rank trace_rank_of[i]; empty: the same rank.
  std::vector<uint32_t> trace_rank_of;
  double compute_scale = 1;     // compute, CPU and memory nodes spin k times their duration; 0: skipped
  double timeout_seconds = 60;  // no node finishing on a rank for this long: a deadlock
  // Untimed passes over the whole trace before the timed one: what a training loop's earlier
  // steps and nccl-tests' warm-up iterations do (first collectives set up MPI's and the
  // system's state and take longer).
  uint32_t warmup_passes = 1;
  uint64_t max_buffer_bytes = uint64_t{4} << 30;  // a buffer larger than this is refused
  ReadOptions read;
  std::string out_prefix;                   // each rank writes OUT.<trace rank>.et (and rank 0 the groups), "" none
  std::string description;                  // how it was run, stored in each output trace
  const std::atomic<bool>* stop = nullptr;  // set on Ctrl-C: every rank ends
};

// One collective or message as it ran on one rank.
struct CommRecord {
  OpKind kind;
  uint32_t group_size;  // ranks taking part (2 for a message)
  uint64_t bytes;
  uint64_t ns;
};

struct RankResult {
  uint32_t rank = 0, trace_rank = 0;
  uint64_t nodes = 0;
  uint64_t step_ns = 0;  // first start to last end
  std::vector<CommRecord> comms;
  std::vector<std::pair<uint64_t, uint64_t>> times;  // per node position: start, end (ns since the common start)
};

// How a replay ended, on this rank. The text fields are set on every rank.
struct ReplayOutcome {
  enum class Kind { Finished, BadInput, Deadlock, Interrupted } kind = Kind::Finished;
  std::string message;                     // BadInput, Deadlock: one message for the whole job (every rank's part)
  RankResult mine;                         // Finished
  std::string summary_json, summary_text;  // Finished, on rank 0: over every rank
};

// Replays this process's rank. Reading and checking happen before any replayed communication;
// a bad trace on any rank makes every rank return BadInput with one message naming the rank,
// file and problem. A deadlock is found by the timeout, reported as which node each rank waits
// on, and returned as Deadlock on every rank (whose requests cannot be finished: the caller
// then ends the job with CommLayer::abort).
ReplayOutcome replay(const ReplayOptions& options, CommLayer& comm);

// The collective kinds and sizes (comm_size) a trace runs, each pair once, sorted by kind then
// size: what `chakra calibrate --sizes-of` replays as microbenchmarks. Collectives a replay
// cannot run are left out.
std::vector<std::pair<OpKind, uint64_t>> collective_shapes(const Trace& trace);

// nccl-tests' figures for one collective of `bytes` (comm_size) over `ranks` that took `ns`:
// algorithm bandwidth (its size convention: all-gather counts the output) and bus bandwidth.
struct Bandwidth {
  double algbw_gbs = 0, busbw_gbs = 0;
};
Bandwidth nccl_tests_bandwidth(OpKind kind, uint64_t bytes, uint32_t ranks, uint64_t ns);

// Per collective kind, group size and size over every rank's records: count, median time and
// bandwidths; and per rank the step. JSON and a table.
struct SummaryRow {
  OpKind kind;
  uint32_t ranks;
  uint64_t bytes, count, median_ns;
  Bandwidth bw;
};
std::vector<SummaryRow> summarize(std::span<const RankResult> ranks);
std::string summary_json(std::span<const RankResult> ranks, const std::string& description);
std::string summary_text(std::span<const RankResult> ranks);

// RankResult's comms and step, one line each, for the control channel; and back.
std::string encode_records(const RankResult& r);
RankResult decode_records(std::string_view text);

}  // namespace chakra::replay
