#include "chakra/replay/replay.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <unordered_map>

#include "chakra/astra/feeder.h"
#include "chakra/format/io.h"
#include "chakra/sim/resources.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"

namespace chakra::replay {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return b <= a ? 0 : static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

std::optional<OpKind> collective_kind(int64_t comm_type) {
  switch (static_cast<CommType>(comm_type)) {
    case CommType::AllReduce: return OpKind::AllReduce;
    case CommType::AllGather: return OpKind::AllGather;
    case CommType::ReduceScatter:
    case CommType::ReduceScatterBlock: return OpKind::ReduceScatter;
    case CommType::AllToAll: return OpKind::AllToAll;
    case CommType::Broadcast: return OpKind::Broadcast;
    case CommType::Barrier: return OpKind::Barrier;
    default: return std::nullopt;
  }
}

// What a node does in the replay.
struct Step {
  enum class Kind : uint8_t { Instant, Spin, Comm } kind = Kind::Instant;
  uint64_t spin_ns = 0;
  CommOp op;
  // A collective: its group's index in RankPlan::group_order and its place in that order.
  uint32_t group_index = 0, turn = 0;
};

// This rank's trace, read whole and checked before any replayed communication.
struct RankPlan {
  uint32_t trace_rank = 0;
  std::string file, bytes;
  Trace trace;
  bool lanes = false;
  std::vector<Step> steps;  // by node position
  // Node ids to positions: a table where the ids are dense (as writers number them), else a map.
  std::vector<uint32_t> dense;
  std::unordered_map<uint64_t, uint32_t> sparse;
  uint32_t position_of(uint64_t id) const { return dense.empty() ? sparse.at(id) : dense[id]; }
  std::map<int, std::vector<uint64_t>> group_order;  // per group (-1: all), its collectives' ids ascending
  std::map<int, std::vector<uint32_t>> groups;       // group -> trace ranks, as the trace and files say
};

std::string where(const RankPlan& p, uint32_t n) {
  return p.file + ": node " + std::to_string(p.trace.id(n)) + " (" + std::string(p.trace.name(n)) + ")";
}

// Reads and checks this rank's trace: every node it will run is one the layer can run, with
// groups, peers, tags and sizes in range.
RankPlan plan_rank(const ReplayOptions& o, uint32_t trace_rank, const std::vector<uint32_t>& layer_rank_of,
                   int max_tag) {
  RankPlan p;
  p.trace_rank = trace_rank;
  p.file = sim::npu_trace_file(o.prefix, trace_rank);
  p.bytes = read_file(p.file, o.read.input);
  p.trace = read_et(memory_input({reinterpret_cast<const uint8_t*>(p.bytes.data()), p.bytes.size()}, p.file), o.read);
  const Trace& t = p.trace;
  for (uint32_t a = 0; a < t.metadata_attrs().size(); ++a)
    if (t.metadata_attr(a).name() == kReplayLanesAttr) p.lanes = t.metadata_attr(a).as_bool().value_or(false);
  if (!o.comm_group_file.empty())
    for (auto& [id, members] : astra::load_comm_groups(o.comm_group_file)) p.groups[id] = members;
  p.steps.resize(t.size());
  for (uint32_t n = 0; n < t.size(); ++n) {
    FeederNode node(&t, n);
    Step& s = p.steps[n];
    const NodeType type = node.type();
    if (type == NodeType::Metadata) {
      if (auto g = astra::metadata_process_groups(node.inputs_values(), o.trace_ranks, where(p, n)))
        for (auto& [id, members] : *g) p.groups[id] = members;
      continue;
    }
    if (type == NodeType::Invalid) continue;
    if (type == NodeType::Comp || type == NodeType::MemLoad || type == NodeType::MemStore || node.is_cpu_op()) {
      s.kind = Step::Kind::Spin;
      s.spin_ns = static_cast<uint64_t>(double(node.duration_micros()) * 1000.0 * o.compute_scale);
      continue;
    }
    if (type != NodeType::CommColl && type != NodeType::CommSend && type != NodeType::CommRecv)
      throw Error(where(p, n) + ": node type " + std::to_string(int(type)) + " is not one a replay runs");
    s.kind = Step::Kind::Comm;
    const int64_t size = node.comm_size().value_or(0);
    if (size < 0) throw Error(where(p, n) + ": comm_size " + std::to_string(size) + " is negative");
    s.op.bytes = static_cast<uint64_t>(size);
    if (type == NodeType::CommColl) {
      const int64_t ct = node.comm_type().value_or(-1);
      auto kind = collective_kind(ct);
      if (!kind)
        throw Error(where(p, n) + ": collective type " + std::to_string(ct) + " (" + std::string(comm_type_name(ct)) +
                    ") is not one a replay runs (all-reduce, all-gather, reduce-scatter, all-to-all, broadcast, "
                    "barrier)");
      s.op.kind = *kind;
      const std::string_view pg = node.pg_name().value_or("");
      if (pg.empty() || pg == "0") {
        s.op.group = -1;
      } else {
        bool number = pg.size() <= 9 && pg.find_first_not_of("0123456789") == std::string_view::npos;
        if (!number) throw Error(where(p, n) + ": pg_name '" + std::string(pg) + "' is not a group number");
        s.op.group = std::stoi(std::string(pg));
      }
      p.group_order[s.op.group].push_back(t.id(n));
    } else {
      const bool send = type == NodeType::CommSend;
      const std::optional<int64_t> peer = send ? node.comm_dst() : node.comm_src();
      if (!peer || *peer < 0 || *peer >= int64_t(o.trace_ranks))
        throw Error(where(p, n) + ": " + (send ? "comm_dst" : "comm_src") + " is " +
                    (peer ? std::to_string(*peer) : std::string("missing")) + "; the workload has " +
                    std::to_string(o.trace_ranks) + " ranks");
      if (layer_rank_of[*peer] == UINT32_MAX)
        throw Error(where(p, n) + ": its peer, rank " + std::to_string(*peer) + ", is not replayed (--ranks)");
      s.op.kind = send ? OpKind::Send : OpKind::Recv;
      s.op.peer = layer_rank_of[*peer];
      const int64_t tag = node.comm_tag().value_or(0);
      if (tag < 0 || tag > max_tag)
        throw Error(where(p, n) + ": comm_tag " + std::to_string(tag) + " is outside the tags this MPI has (0.." +
                    std::to_string(max_tag) + ")");
      s.op.tag = static_cast<int>(tag);
    }
    if (s.op.bytes > o.max_buffer_bytes)
      throw Error(where(p, n) + ": comm_size " + format_bytes(s.op.bytes) +
                  " is larger than the largest buffer allowed (" + format_bytes(o.max_buffer_bytes) +
                  "; --max-buffer)");
  }
  // Each collective's turn in its group (ids ascending), looked up once here, not per poll.
  uint64_t max_id = 0;
  for (uint32_t n = 0; n < t.size(); ++n) max_id = std::max(max_id, t.id(n));
  if (max_id < uint64_t{4} * t.size() + 1024) p.dense.assign(max_id + 1, UINT32_MAX);
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (p.dense.empty())
      p.sparse[t.id(n)] = n;
    else
      p.dense[t.id(n)] = n;
  }
  uint32_t index = 0;
  for (auto& [g, ids] : p.group_order) {
    std::sort(ids.begin(), ids.end());
    for (uint32_t k = 0; k < ids.size(); ++k) {
      Step& s = p.steps[p.position_of(ids[k])];
      s.group_index = index, s.turn = k;
    }
    ++index;
  }
  return p;
}

// The groups every rank knows of, agreed over the control channel: each rank sends what its
// files say; the same group defined two ways is an error.
std::map<int, std::vector<uint32_t>> agree_groups(CommLayer& comm, const std::map<int, std::vector<uint32_t>>& mine,
                                                  std::string& error) {
  std::string text;
  for (const auto& [id, members] : mine) {
    text += std::to_string(id);
    for (uint32_t m : members) text += " " + std::to_string(m);
    text += "\n";
  }
  std::map<int, std::vector<uint32_t>> all;
  const std::vector<std::string> texts = comm.all_gather_text(text);
  for (size_t r = 0; r < texts.size(); ++r) {
    for (std::string_view line : Split(texts[r], '\n')) {
      if (line.empty()) continue;
      std::vector<uint32_t> members;
      int id = 0;
      bool first = true;
      for (std::string_view word : Split(line, ' ')) {
        if (first)
          id = std::stoi(std::string(word)), first = false;
        else
          members.push_back(static_cast<uint32_t>(std::stoul(std::string(word))));
      }
      auto [it, added] = all.emplace(id, members);
      if (!added && it->second != members && error.empty())
        error = "communicator group " + std::to_string(id) + " has different members on different ranks (rank " +
                std::to_string(r) + "'s trace or groups file disagrees with an earlier rank's)";
    }
  }
  return all;
}

struct Running {
  uint32_t position;
  bool timer;
  Clock::time_point deadline;
  CommLayer::Request request;
};

// Walks the plan's graph: issues what is ready when its lane or slot is free and, for a
// collective, when it is its group's next one; polls the layer; spins the clock for compute.
class Walker {
 public:
  Walker(RankPlan& plan, CommLayer& comm, const ReplayOptions& o,
         const std::map<int, std::vector<uint32_t>>& group_sizes)
      : p_(plan), comm_(comm), o_(o), sizes_(group_sizes), resources_(plan.lanes) {
    FeederOptions fo;
    fo.gate = DepKind::Both;
    fo.read = o.read;
    feeder_ = std::make_unique<Feeder>(
        memory_input({reinterpret_cast<const uint8_t*>(p_.bytes.data()), p_.bytes.size()}, p_.file), fo);
    next_turn_.assign(p_.group_order.size(), 0);
    result_.times.assign(p_.trace.size(), {UINT64_MAX, UINT64_MAX});
  }

  // Runs to the end; false on a timeout (stuck() says where) or a stop.
  bool run(Clock::time_point t0) {
    t0_ = t0;
    // The clock, the stop flag and the stall check are looked at once per kIdleChecks idle turns:
    // a clock read costs more than a test of a request, and a 1 KiB all-reduce takes a few of those.
    constexpr uint32_t kIdleChecks = 64;
    uint32_t idle_turns = 0;
    Clock::time_point idle_since;
    std::vector<uint64_t> fresh;
    while (!feeder_->finished()) {
      feeder_->take_all(fresh);
      if (!fresh.empty()) {  // both ascending: merged
        const size_t before = waiting_.size();
        waiting_.insert(waiting_.end(), fresh.begin(), fresh.end());
        std::inplace_merge(waiting_.begin(), waiting_.begin() + before, waiting_.end());
      }
      const bool started = !waiting_.empty() && start_ready();
      if (poll() || started) {
        idle_turns = 0;
        continue;
      }
      if (++idle_turns % kIdleChecks != 0) continue;
      const Clock::time_point now = Clock::now();
      if (idle_turns == kIdleChecks) idle_since = now;
      if (running_.empty() && waiting_.empty() && feeder_->stalled())
        throw Error(p_.file + ": the trace cannot finish: " + feeder_->stall_report());
      if (o_.stop && o_.stop->load()) return false;
      if (ns_between(idle_since, now) > uint64_t(o_.timeout_seconds * 1e9)) return false;
    }
    return true;
  }

  std::string stuck() const {
    std::string out;
    auto name = [&](uint32_t n) {
      const Step& s = p_.steps[n];
      std::string text = "node " + std::to_string(p_.trace.id(n)) + " (" + std::string(p_.trace.name(n)) + ", ";
      if (s.kind == Step::Kind::Comm) {
        text += op_kind_name(s.op.kind);
        if (s.op.kind == OpKind::Send || s.op.kind == OpKind::Recv)
          text += std::string(s.op.kind == OpKind::Send ? " to" : " from") + " rank " + std::to_string(s.op.peer);
        else
          text += s.op.group < 0 ? " of all ranks" : " of group " + std::to_string(s.op.group);
        text += ", " + format_bytes(s.op.bytes);
      } else {
        text += "compute";
      }
      return text + ")";
    };
    for (const Running& r : running_) out += (out.empty() ? "waits on " : "; ") + name(r.position);
    if (running_.empty())
      for (uint64_t id : waiting_) {
        out += (out.empty() ? "cannot start " : "; ") + name(p_.position_of(id));
        if (out.size() > 400) break;
      }
    if (out.empty()) out = "waits for nodes it depends on";
    return out;
  }

  RankResult take_result() {
    result_.nodes = feeder_->nodes_done();
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& [s, e] : result_.times)
      if (s != UINT64_MAX) first = std::min(first, s), last = std::max(last, e);
    result_.step_ns = first == UINT64_MAX ? 0 : last - first;
    return std::move(result_);
  }

 private:
  static bool is_collective(const Step& s) {
    return s.kind == Step::Kind::Comm && s.op.kind != OpKind::Send && s.op.kind != OpKind::Recv;
  }
  bool group_turn(const Step& s) const { return !is_collective(s) || next_turn_[s.group_index] == s.turn; }

  bool start_ready() {
    bool any = false;
    size_t kept = 0;
    for (size_t w = 0; w < waiting_.size(); ++w) {
      const uint64_t id = waiting_[w];
      const uint32_t n = p_.position_of(id);
      const FeederNode node = feeder_->node(id);
      const Step& s = p_.steps[n];
      if (!group_turn(s) || !resources_.free_for(node)) {
        waiting_[kept++] = id;
        continue;
      }
      any = true;
      const Clock::time_point now = Clock::now();
      result_.times[n].first = ns_between(t0_, now);
      if (s.kind == Step::Kind::Instant || (s.kind == Step::Kind::Spin && s.spin_ns == 0)) {
        finish(n, now);  // nothing to wait for (a zero spin waiting for a poll would take an MPI_Test's time)
        continue;
      }
      resources_.occupy(node, +1);
      Running r{n, s.kind == Step::Kind::Spin, now + std::chrono::nanoseconds(s.spin_ns), 0};
      if (!r.timer) {
        if (is_collective(s)) ++next_turn_[s.group_index];
        r.request = comm_.start(s.op);
      }
      running_.push_back(r);
    }
    waiting_.resize(kept);
    return any;
  }

  bool poll() {
    bool any = false;
    std::optional<Clock::time_point> now;  // read only when a timer runs
    for (size_t i = 0; i < running_.size();) {
      const Running& r = running_[i];
      if (r.timer && !now) now = Clock::now();
      const bool done = r.timer ? *now >= r.deadline : comm_.test(r.request);
      if (!done) {
        ++i;
        continue;
      }
      const uint32_t n = r.position;
      running_[i] = running_.back();
      running_.pop_back();
      resources_.occupy(feeder_->node(p_.trace.id(n)), -1);
      finish(n, Clock::now());
      any = true;
    }
    return any;
  }

  void finish(uint32_t n, Clock::time_point at) {
    const uint64_t end = ns_between(t0_, at);
    result_.times[n].second = end;
    const Step& s = p_.steps[n];
    if (s.kind == Step::Kind::Comm) {
      uint32_t ranks = 2;
      if (s.op.kind != OpKind::Send && s.op.kind != OpKind::Recv)
        ranks = s.op.group < 0 ? comm_.size() : static_cast<uint32_t>(sizes_.at(s.op.group).size());
      result_.comms.push_back({s.op.kind, ranks, s.op.bytes, end - result_.times[n].first});
    }
    feeder_->mark_done(p_.trace.id(n));
  }

  RankPlan& p_;
  CommLayer& comm_;
  const ReplayOptions& o_;
  const std::map<int, std::vector<uint32_t>>& sizes_;
  sim::NodeResources resources_;
  std::unique_ptr<Feeder> feeder_;
  std::vector<uint64_t> waiting_;  // taken from the feeder, not started: ascending ids
  std::vector<Running> running_;
  std::vector<uint32_t> next_turn_;  // per group (group_index), the turn of its next collective
  RankResult result_;
  Clock::time_point t0_;
};

// One message for the job from every rank's part (those with nothing to say left out).
std::string job_message(const std::vector<std::string>& parts, const std::string& empty_note) {
  std::string out;
  for (size_t r = 0; r < parts.size(); ++r)
    out += "\n  rank " + std::to_string(r) + ": " + (parts[r].empty() ? empty_note : parts[r]);
  return out;
}

// Writes this rank's trace with the replayed times (µs; time 1 µs is the common start), marked
// as measured by a replay; rank 0 also writes the groups beside them. `written` gets each file
// as it is complete.
void write_replayed_trace(const ReplayOptions& o, RankPlan& p, const RankResult& r,
                          const std::map<int, std::vector<uint32_t>>& groups, bool first_rank,
                          std::vector<std::string>& written) {
  Trace& t = p.trace;
  auto micros = [](uint64_t ns) { return (ns + 500) / 1000; };
  uint64_t first = UINT64_MAX;
  for (uint32_t n = 0; n < t.size(); ++n) {
    const auto [s, e] = r.times[n];
    if (s == UINT64_MAX || e == UINT64_MAX) {
      t.set_times(n, 0, 0);
      continue;
    }
    t.set_times(n, 1 + micros(s), micros(e) - micros(s));
    first = std::min(first, 1 + micros(s));
  }
  t.remove_metadata(kTimesOriginAttr);
  t.set_metadata_string(kReplayedByAttr, o.description);
  if (first != UINT64_MAX) t.set_metadata_uint64(kReplayStartAttr, first);
  if (const auto folder = std::filesystem::path(o.out_prefix).parent_path(); !folder.empty())
    std::filesystem::create_directories(folder);
  const std::string file = o.out_prefix + "." + std::to_string(p.trace_rank) + ".et";
  write_et(t, file);
  written.push_back(file);
  if (first_rank && !groups.empty()) {
    OutputFile f(o.out_prefix + ".comm_group.json");
    f.write(astra::format_comm_groups(groups));
    f.commit();
    written.push_back(o.out_prefix + ".comm_group.json");
  }
}

}  // namespace

std::vector<std::pair<OpKind, uint64_t>> collective_shapes(const Trace& t) {
  std::vector<std::pair<OpKind, uint64_t>> out;
  for (uint32_t n = 0; n < t.size(); ++n) {
    FeederNode node(&t, n);
    if (node.type() != NodeType::CommColl) continue;
    const std::optional<OpKind> kind = collective_kind(node.comm_type().value_or(-1));
    const int64_t size = node.comm_size().value_or(0);
    if (kind && size > 0) out.emplace_back(*kind, static_cast<uint64_t>(size));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ReplayOutcome replay(const ReplayOptions& o, CommLayer& comm) {
  ReplayOutcome out;
  const uint32_t me = comm.rank(), ranks = comm.size();
  // Which trace rank each layer rank replays, and back.
  std::vector<uint32_t> trace_rank_of = o.trace_rank_of;
  if (trace_rank_of.empty())
    for (uint32_t i = 0; i < ranks; ++i) trace_rank_of.push_back(i);
  std::vector<uint32_t> layer_rank_of(o.trace_ranks, UINT32_MAX);
  std::string setup_error;
  if (trace_rank_of.size() != ranks)
    setup_error = std::to_string(trace_rank_of.size()) + " trace ranks to replay (--ranks) for " +
                  std::to_string(ranks) + " processes: run one process per rank replayed";
  for (uint32_t i = 0; i < trace_rank_of.size() && setup_error.empty(); ++i) {
    if (trace_rank_of[i] >= o.trace_ranks)
      setup_error = "rank " + std::to_string(trace_rank_of[i]) + " is not a rank of the workload (" +
                    std::to_string(o.trace_ranks) + " traces at " + o.prefix + ")";
    else if (layer_rank_of[trace_rank_of[i]] != UINT32_MAX)
      setup_error = "trace rank " + std::to_string(trace_rank_of[i]) + " is replayed twice (--ranks)";
    else
      layer_rank_of[trace_rank_of[i]] = i;
  }

  // Read and check, then agree: every rank or none goes on.
  RankPlan plan;
  std::string error = setup_error;
  if (error.empty()) {
    try {
      plan = plan_rank(o, trace_rank_of[me], layer_rank_of, comm.max_tag());
    } catch (const Error& e) {
      error = e.what();
    } catch (const std::bad_alloc&) {
      error = sim::npu_trace_file(o.prefix, trace_rank_of[me]) + ": out of memory reading it";
    }
  }
  std::vector<std::string> errors = comm.all_gather_text(error);
  std::string group_error;
  const std::map<int, std::vector<uint32_t>> groups =
      agree_groups(comm,
                   std::any_of(errors.begin(), errors.end(), [](auto& e) { return !e.empty(); })
                       ? std::map<int, std::vector<uint32_t>>{}
                       : plan.groups,
                   group_error);
  // A group used here must have every member replayed; the layer's groups are those whose
  // members all are (others are left out, all ranks alike).
  std::map<int, std::vector<uint32_t>> layer_groups;
  for (const auto& [id, members] : groups) {
    std::vector<uint32_t> layer;
    for (uint32_t m : members)
      if (m < layer_rank_of.size() && layer_rank_of[m] != UINT32_MAX) layer.push_back(layer_rank_of[m]);
    if (layer.size() == members.size()) layer_groups[id] = layer;
  }
  if (error.empty() && group_error.empty()) {
    for (const auto& [g, ids] : plan.group_order) {
      if (g < 0) {
        if (o.trace_ranks != ranks)
          error = plan.file + ": collectives of all ranks, but " + std::to_string(ranks) + " of the workload's " +
                  std::to_string(o.trace_ranks) + " ranks are replayed";
      } else if (!groups.count(g)) {
        error = plan.file + ": collectives of group " + std::to_string(g) +
                (o.comm_group_file.empty()
                     ? ", which the trace does not define, and no groups file was given (--comm-group FILE, or the "
                       "workload's folder, whose groups file is found)"
                     : ", which neither the trace nor " + o.comm_group_file + " defines");
      } else if (!layer_groups.count(g)) {
        error = plan.file + ": collectives of group " + std::to_string(g) + ", some of whose ranks are not replayed";
      } else if (std::find(groups.at(g).begin(), groups.at(g).end(), plan.trace_rank) == groups.at(g).end()) {
        error = plan.file + ": collectives of group " + std::to_string(g) + ", which rank " +
                std::to_string(plan.trace_rank) + " is not a member of";
      }
      if (!error.empty()) break;
    }
  }
  errors = comm.all_gather_text(error.empty() ? group_error : error);
  if (std::any_of(errors.begin(), errors.end(), [](auto& e) { return !e.empty(); })) {
    out.kind = ReplayOutcome::Kind::BadInput;
    out.message = "the workload cannot be replayed; nothing ran:" + job_message(errors, "read and checked");
    return out;
  }
  for (const auto& [id, members] : layer_groups) comm.add_group(id, members);

  // Replay, from a common start (the control channel's exchange is the barrier), with buffers
  // for the largest operation ready.
  uint64_t send = 0, recv = 0;
  for (const Step& s : plan.steps) {
    if (s.kind != Step::Kind::Comm) continue;
    const uint64_t group = s.op.group < 0 ? ranks : layer_groups.at(s.op.group).size();
    send = std::max(send, s.op.bytes);
    recv = std::max(recv, s.op.kind == OpKind::AllGather ? s.op.bytes * group : s.op.bytes);
  }
  comm.prepare(send, recv, 2);
  std::unique_ptr<Walker> walker;
  for (uint32_t pass = 0; pass <= o.warmup_passes; ++pass) {  // the last one is timed
    walker = std::make_unique<Walker>(plan, comm, o, layer_groups);
    comm.all_gather_text("");
    const Clock::time_point t0 = Clock::now();
    bool finished = false;
    std::string walk_error;
    try {
      finished = walker->run(t0);
    } catch (const Error& e) {
      walk_error = e.what();
    }
    bool all_done = false;
    if (finished) {
      // The others may still run: wait for them as long as a node may take.
      const CommLayer::Request end = comm.start_end_barrier();
      Clock::time_point since = Clock::now();
      while (!(all_done = comm.test(end))) {
        if (o.stop && o.stop->load()) break;
        if (ns_between(since, Clock::now()) > uint64_t(o.timeout_seconds * 1e9)) break;
      }
    }
    if (!all_done) {
      // Some rank did not finish: every rank says where it is, then the job ends.
      const bool stopped = o.stop && o.stop->load();
      const std::string mine = !walk_error.empty() ? walk_error
                               : finished          ? std::string()
                               : stopped           ? "interrupted"
                                                   : walker->stuck();
      const std::vector<std::string> parts = comm.all_gather_text(mine);
      const bool any_stopped =
          std::any_of(parts.begin(), parts.end(), [](const std::string& s) { return s == "interrupted"; });
      const std::string when = pass < o.warmup_passes ? " (in warm-up pass " + std::to_string(pass + 1) + " of " +
                                                            std::to_string(o.warmup_passes) + ")"
                                                      : "";
      out.kind = any_stopped ? ReplayOutcome::Kind::Interrupted : ReplayOutcome::Kind::Deadlock;
      out.message = (any_stopped ? "the replay was interrupted" + when + ":"
                                 : "the replay stopped" + when + ": no rank finished a node for " +
                                       format_number(o.timeout_seconds) + " s (--timeout), a deadlock:") +
                    job_message(parts, "finished its trace, waiting for the others");
      return out;
    }
  }

  out.mine = walker->take_result();
  out.mine.rank = me;
  out.mine.trace_rank = plan.trace_rank;
  std::string write_error;
  std::vector<std::string> files;
  if (!o.out_prefix.empty()) {
    try {
      write_replayed_trace(o, plan, out.mine, groups, me == 0, files);
    } catch (const std::exception& e) {  // chakra::Error, or the file system's
      write_error = e.what();
    }
  }
  const std::vector<std::string> written = comm.all_gather_text(write_error);
  if (std::any_of(written.begin(), written.end(), [](auto& e) { return !e.empty(); })) {
    // Some traces only would look like a whole replay: every rank removes what it wrote.
    std::error_code ignored;
    for (const std::string& f : files) std::filesystem::remove(f, ignored);
    out.kind = ReplayOutcome::Kind::BadInput;
    out.message = "the replay ran, but its traces could not all be written (none are left):" +
                  job_message(written, "written, then removed");
    return out;
  }
  const std::vector<std::string> records = comm.all_gather_text(encode_records(out.mine));
  if (me == 0) {
    std::vector<RankResult> all;
    for (const std::string& text : records) all.push_back(decode_records(text));
    out.summary_json = summary_json(all, o.description);
    out.summary_text = summary_text(all);
  }
  return out;
}

}  // namespace chakra::replay
