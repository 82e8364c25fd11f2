// The simulation engine. Its structure follows ASTRA-sim's analytical build closely, because
// reproducing its numbers to the nanosecond means reproducing the order of its events:
//   - one global event queue, FIFO among events of the same time;
//   - per NPU, "system" events are grouped by time into buckets, and a bucket runs when the
//     first event registered for that time comes up in the global queue;
//   - a collective is cut into chunks (streams) that walk through phases (one per network
//     dimension), each phase run by an algorithm state machine exchanging messages;
//   - the network delivers messages matched by (tag, src, dst, size, sequence number).
// Everything is held in flat vectors indexed by small integers; nothing is O(NPUs^2).
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "chakra/astra/feeder.h"
#include "chakra/format/io.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/trace/schema.h"

namespace chakra::sim {
namespace {

// "FILE: " for messages about a configuration read from FILE; nothing if it came from no file.
std::string source_prefix(const std::string& source) { return source.empty() ? "" : source + ": "; }

constexpr int64_t kCollectiveTags = 500000000;  // tag spaces of the reference's send types
constexpr int64_t kRendezvousTags = 1000000000;
constexpr uint64_t kRendezvousBytes = 8192;

enum class Dir : uint8_t { Clockwise, Anticlockwise };

// The NPUs one algorithm phase runs over, in ring order: arithmetic (a network dimension:
// base + k * stride) or an explicit list (a communicator group).
struct RingView {
  uint32_t n = 0, stride = 1, base = 0;
  const std::vector<uint32_t>* members = nullptr;
  const std::unordered_map<uint32_t, uint32_t>* index_of = nullptr;
  bool local = false;  // communicator-group ring: fixed 10 ns hand-offs, as the reference

  uint32_t at(int64_t k) const {
    k %= n;
    if (k < 0) k += n;
    return members ? (*members)[k] : base + static_cast<uint32_t>(k) * stride;
  }
  uint32_t index(uint32_t npu) const { return members ? index_of->at(npu) : (npu - base) / stride; }
  uint32_t receiver(uint32_t npu, Dir d, int64_t steps = 1) const {
    return at(int64_t(index(npu)) + (d == Dir::Clockwise ? steps : -steps));
  }
  uint32_t sender(uint32_t npu, Dir d) const {
    return at(int64_t(index(npu)) + (d == Dir::Clockwise ? -1 : 1));
  }
};

enum class AlgoKind : uint8_t { Ring, Direct, HalvingDoubling, Tree, Custom };
enum class TreeRole : uint8_t { Root, Intermediate, Leaf };

struct PhaseSpec {
  AlgoKind algo;
  Collective type;
  uint64_t size;       // input bytes of this phase
  uint64_t final_size; // output bytes (the next phase's input)
  int queue;
  Dir dir;
  int window = -1;
  RingView ring;
  // Tree (double binary tree): this NPU's place in the tree picked for this chunk.
  TreeRole role = TreeRole::Leaf;
  int64_t parent = -1, left = -1, right = -1;
  // Custom (Chakra ET algorithm): its trace for this rank, and the group whose ranks it names.
  std::string custom_file;
  int group = -1;
};

struct Packet {
  uint32_t dest, src;
  uint64_t size;
};

enum class TreeState : uint8_t {
  Begin, SendingToParent, WaitingFromParent, End, WaitingTwoChildren, WaitingOneChild,
  SendingToChildren
};

// A chunk of a collective on one NPU and the state of its current phase's algorithm.
struct Stream {
  uint32_t npu = 0, dataset = 0;
  int64_t id = 0;
  int priority = 0;
  std::vector<PhaseSpec> phases;
  uint32_t next_phase = 0;
  int queue = -1;
  bool initialized = false;
  PhaseSpec cur{};
  // packet algorithms (ring, direct, halving-doubling)
  uint64_t msg_size = 0;
  int64_t stream_count = 0, parallel = 1, zero = 0, non_zero = 0, free_packets = 0, received = 0,
          middle = 0;
  bool toggle = false;
  uint32_t receiver = 0, sender = 0;
  int64_t rank_offset = 0;
  double multiplier = 1;
  std::deque<Packet> packets;
  // tree
  TreeState tree_state = TreeState::Begin;
  int reductions = 0;
  // custom algorithm: its nodes, fed like a workload
  std::unique_ptr<Feeder> custom;
};

struct Dataset {
  uint32_t npu;
  uint64_t node;
  uint32_t total, finished = 0;
  Tick created;
  int kind;  // Collective, or kCollectiveTypes for a broadcast
  uint64_t bytes;
};

// Who is told when a message arrives (send side) or is received (recv side).
enum class HandlerKind : uint8_t {
  None, StreamPacket, NodeSent, NodeRecv, RendezvousSend, RendezvousRecv, CustomNode
};
struct Handler {
  HandlerKind kind = HandlerKind::None;
  uint32_t npu = 0;
  uint64_t arg = 0;
};

struct MatchKey {
  int64_t tag;
  uint32_t src, dst;
  uint64_t size, seq;
  bool operator==(const MatchKey&) const = default;
};
struct PairKey {
  int64_t tag;
  uint32_t src, dst;
  uint64_t size;
  bool operator==(const PairKey&) const = default;
};
inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}
struct MatchHash {
  size_t operator()(const MatchKey& k) const {
    return mix(mix(mix(mix(uint64_t(k.tag), k.src), k.dst), k.size), k.seq);
  }
};
struct PairHash {
  size_t operator()(const PairKey& k) const {
    return mix(mix(mix(uint64_t(k.tag), k.src), k.dst), k.size);
  }
};

struct MatchEntry {
  Handler send, recv;
  bool has_recv = false, arrived = false;
};
struct PairCounters {
  uint64_t sends = 0, recvs = 0;
};

struct Message {
  MatchKey key;
  std::vector<uint32_t> route;  // congestion-aware: devices from source to destination
  std::vector<uint8_t> hop_dim;  // dimension of each hop's link
  uint32_t hop = 0;
};

struct Link {
  bool busy = false;
  uint8_t dim = 0;
  std::deque<uint32_t> pending;
};

enum class EventKind : uint8_t { SysBucket, Arrival, Hop, LinkFree, HandlerNow };
struct Event {
  Tick time;
  uint64_t seq;
  EventKind kind;
  uint32_t a;
  uint64_t b;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

enum class CallKind : uint8_t { Bundle, NodeDone, DatasetDone, CustomDone, PhaseDone };
struct SysCall {
  CallKind kind;
  bool processing;  // Bundle: a reduction follows the hand-off
  uint32_t obj;     // stream or dataset
  uint64_t arg;     // Bundle: bytes; NodeDone: node id
};

struct Running {
  Tick start;
  SpanKind kind;
};

struct Rendezvous {
  uint32_t npu, peer;
  int64_t tag;
  uint64_t size;
  Handler handler;
};

struct QueueLevel {
  uint32_t first_queue = 0, count = 1;
  uint32_t allocator = 0, first_allocator = 0, last_allocator = 0;
};

struct Group {
  std::vector<uint32_t> members;
  std::unordered_map<uint32_t, uint32_t> index_of;
  int64_t first_stream_id;  // the reference numbers a group's streams from id * 10^6
};

struct Npu {
  std::string file;
  // The whole trace, read at start (thousands of NPUs must not hold thousands of open files);
  // the feeder reads from it, so it is declared first and outlives the feeder.
  std::unique_ptr<const std::string> bytes;
  std::unique_ptr<Feeder> feeder;
  int cpu_busy = 0, comp_busy = 0, comm_busy = 0;
  Tick gpu_time = 0;
  bool finished = false;
  Tick finish = 0;
  std::vector<std::pair<Tick, uint32_t>> buckets;  // pending system-event buckets by time
  // system layer
  std::vector<std::vector<uint32_t>> queues;
  std::vector<int> running;
  std::vector<QueueLevel> levels;
  int priority_counter = 0;
  int64_t streams_created = 0;
  std::map<int, int64_t> group_streams;
  std::vector<uint32_t> tree_counter;  // per (collective type, dimension)
  std::map<int, int> runtime_groups;   // pg_name -> group index, from METADATA nodes
  // workload bookkeeping
  std::unordered_map<uint64_t, Running> in_flight;
  std::vector<std::pair<Tick, Tick>> intervals[4];  // busy time: compute, comm, cpu, memory
  uint64_t nodes = 0;
};

// Slots reused through a free list: indices stay valid while in use, and nothing is allocated
// per use in the steady state.
template <class T>
class Pool {
 public:
  uint32_t add(T v) {
    if (free_.empty()) {
      items_.push_back(std::move(v));
      return static_cast<uint32_t>(items_.size() - 1);
    }
    uint32_t i = free_.back();
    free_.pop_back();
    items_[i] = std::move(v);
    return i;
  }
  void release(uint32_t i) { free_.push_back(i); }
  T& operator[](uint32_t i) { return items_[i]; }
  const T& operator[](uint32_t i) const { return items_[i]; }

 private:
  std::vector<T> items_;
  std::vector<uint32_t> free_;
};

// Length of the union of intervals.
Tick union_length(std::vector<std::pair<Tick, Tick>>& v) {
  std::sort(v.begin(), v.end());
  Tick total = 0, cur_b = 0, cur_e = 0;
  bool open = false;
  for (auto [b, e] : v) {
    if (!open || b > cur_e) {
      if (open) total += cur_e - cur_b;
      cur_b = b, cur_e = e, open = true;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (open) total += cur_e - cur_b;
  return total;
}

std::string node_label(const FeederNode& n) {
  return "node " + std::to_string(n.id()) + " (" + std::string(n.name()) + ")";
}

// Names a node for error messages: "FILE: node ID (NAME)", built only when an error is raised
// (nodes are issued on the hot path).
struct Where {
  const std::string& file;
  const FeederNode& node;
  std::string operator()() const { return file + ": " + node_label(node); }
};

// Double binary tree over positions 0..n-1 (in-order numbering, as the reference builds it):
// the "max" tree's root is the last position, the "min" tree's the first; each root has a
// single child, the root of a complete tree over the remaining positions.
struct Tree {
  std::vector<int32_t> parent, left, right;
};
void build_subtree(Tree& t, int32_t lo, int32_t count, int32_t parent, bool is_left) {
  if (count <= 0) return;
  int32_t mid = lo + count / 2;
  t.parent[mid] = parent;
  if (parent >= 0) (is_left ? t.left[parent] : t.right[parent]) = mid;
  build_subtree(t, lo, count / 2, mid, true);
  build_subtree(t, mid + 1, count / 2, mid, false);
}
Tree make_tree(uint32_t n, bool root_max) {
  Tree t;
  t.parent.assign(n, -1), t.left.assign(n, -1), t.right.assign(n, -1);
  int32_t root = root_max ? int32_t(n) - 1 : 0;
  int32_t lo = root_max ? 0 : 1;
  // the complete subtree has n - 1 = 2^k - 1 positions; its root hangs left (max) or right (min)
  int32_t count = int32_t(n) - 1;
  int32_t mid = lo + count / 2;
  if (count > 0) {
    t.parent[mid] = root;
    (root_max ? t.left[root] : t.right[root]) = mid;
    build_subtree(t, lo, count / 2, mid, true);
    build_subtree(t, mid + 1, count / 2, mid, false);
  }
  return t;
}

class Engine {
 public:
  Engine(const SimInputs& in, const SimOptions& o) : in_(in), o_(o), net_(in.network) {
    const SystemConfig& s = in.system;
    n_npus_ = static_cast<uint32_t>(net_.total_npus());
    if (n_npus_ == 0) throw Error("the network has no NPUs");
    dims_ = static_cast<uint32_t>(net_.npus.size());
    strides_.resize(dims_ + 1, 1);
    for (uint32_t d = 0; d < dims_; ++d) strides_[d + 1] = strides_[d] * net_.npus[d];
    for (uint32_t d = 0; d < dims_; ++d)
      bw_bpns_.push_back(net_.bandwidth[d] * (1 << 30) / (1'000'000'000));
    // The reference scales endpoint-delay only when the key is present and keeps the product
    // in an int (its truncation is kept; past an int the conversion would be undefined).
    const double scaled_delay = s.endpoint_delay * o.injection_scale;
    if (!(scaled_delay < 2147483648.0))
      throw Error(source_prefix(in.system_source) + "endpoint-delay x injection scale (" +
                  std::to_string(scaled_delay) + " ns) does not fit ASTRA-sim's int");
    endpoint_delay_ = static_cast<Tick>(static_cast<int>(scaled_delay));
    local_mem_bw_ = s.local_mem_bw * 1000000000;
    peak_perf_ = s.peak_perf * 1000000000000;
    closed_form_ = o.backend == Backend::CongestionUnaware && !o.rendezvous && !o.every_message;
    threshold_ = static_cast<int>(std::ceil(double(s.active_chunks_per_dimension) / o.queues_per_dim));
    for (int t = 0; t < kCollectiveTypes; ++t)
      if (s.algorithms[t].size() > dims_)
        throw Error(source_prefix(in.system_source) + "the system configuration lists " + std::to_string(s.algorithms[t].size()) +
                    " " + collective_name(Collective(t)) + " algorithms for a " +
                    std::to_string(dims_) + "-dimensional network");
    for (const auto& [id, members] : in.groups) {
      Group g;
      g.members = members;
      for (uint32_t i = 0; i < members.size(); ++i) {
        if (members[i] >= n_npus_)
          throw Error(source_prefix(in.groups_source) + "communicator group " + std::to_string(id) + " names NPU " +
                      std::to_string(members[i]) + " but the network has " +
                      std::to_string(n_npus_));
        g.index_of[members[i]] = i;
      }
      g.first_stream_id = int64_t(id) * 1000000;
      group_index_[id] = static_cast<int>(groups_.size());
      groups_.push_back(std::move(g));
    }
    if (o.backend == Backend::CongestionAware) {
      switch_base_.resize(dims_ + 1, n_npus_);
      for (uint32_t d = 0; d < dims_; ++d)
        switch_base_[d + 1] = switch_base_[d] + n_npus_ / net_.npus[d];
    }
    open_traces();
  }

  SimResult run() {
    for (uint32_t n = 0; n < n_npus_; ++n) workload_step(n);
    constexpr uint64_t kCheckEvery = 1u << 12;
    uint64_t since_check = 0, events_standing_still = 0, nodes_at_check = 0;
    Tick time_at_check = 0;
    while (!queue_.empty()) {
      Event e = queue_.top();
      queue_.pop();
      now_ = e.time;
      ++result_.events;
      dispatch(e);
      if (++since_check < kCheckEvery) continue;
      since_check = 0;
      report_progress(o_.progress, "simulate", nodes_run_, o_.expected_nodes);
      // An empty queue ends a deadlocked run; a run that keeps making events while neither
      // its clock nor its finished nodes move is stopped too, instead of spinning.
      if (now_ != time_at_check || nodes_run_ != nodes_at_check) {
        time_at_check = now_, nodes_at_check = nodes_run_, events_standing_still = 0;
      } else if ((events_standing_still += kCheckEvery) >= o_.max_events_without_progress &&
                 o_.max_events_without_progress > 0) {
        throw Error(in_.workload + ".*.et: no progress: " + std::to_string(events_standing_still) +
                    " events at " + std::to_string(now_) + " ns without the clock advancing or a node finishing (" +
                    std::to_string(nodes_run_) + " nodes finished, " + std::to_string(queue_.size()) +
                    " events pending)");
      }
    }
    return finish();
  }

 private:
  // ---------------------------------------------------------------- setup

  void open_traces() {
    npus_.resize(n_npus_);
    FeederOptions fo;
    fo.gate = DepKind::Both;
    fo.dangling_is_error = true;
    fo.read = in_.read;
    fo.read.progress = nullptr;  // the run reports its own progress
    for (uint32_t n = 0; n < n_npus_; ++n) {
      Npu& p = npus_[n];
      p.file = in_.workload + "." + std::to_string(n) + ".et";
      if (in_.encoded_traces) {
        if (in_.encoded_traces->size() != n_npus_)
          throw Error(in_.workload + ": " + std::to_string(in_.encoded_traces->size()) + " traces for a network of " +
                      std::to_string(n_npus_) + " NPUs");
        p.bytes = std::make_unique<const std::string>((*in_.encoded_traces)[n]);
      } else {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(p.file, ec))
          throw Error(p.file + ": workload file of NPU " + std::to_string(n) +
                      " does not exist (the network has " + std::to_string(n_npus_) + " NPUs)");
        p.bytes = std::make_unique<const std::string>(read_file(p.file, in_.read.input));
      }
      p.feeder = std::make_unique<Feeder>(
          memory_input({reinterpret_cast<const uint8_t*>(p.bytes->data()), p.bytes->size()}, p.file, in_.read.input),
          fo);
      uint32_t total_queues = dims_ * o_.queues_per_dim;
      p.queues.resize(total_queues);
      p.running.assign(total_queues, 0);
      for (uint32_t d = 0; d < dims_; ++d) {
        QueueLevel l;
        l.first_queue = d * o_.queues_per_dim;
        l.count = o_.queues_per_dim;
        l.last_allocator = l.count / 2;
        p.levels.push_back(l);
      }
      p.tree_counter.assign(kCollectiveTypes * dims_, 0);
    }
  }

  // ---------------------------------------------------------------- events

  // The clock is 64-bit nanoseconds (584 years). Hostile or broken inputs (a size of 2^62 bytes
  // on a slow link) go past it; wrapping around would give silently wrong times, and converting
  // such a double to an integer is undefined.
  [[noreturn]] void clock_overflow() const {
    throw Error(in_.workload + ".*.et: simulated time passed 2^64 ns (584 years): a duration or size in "
                "the traces or configuration is beyond any real run");
  }
  Tick to_tick(double ns) const {
    if (!(ns < 18446744073709549568.0)) clock_overflow();  // the largest double below 2^64; NaN too
    return ns > 0 ? static_cast<Tick>(ns) : 0;
  }

  void schedule(Tick t, EventKind k, uint32_t a, uint64_t b = 0) {
    if (t < now_) clock_overflow();  // now_ + delay wrapped around
    queue_.push(Event{t, seq_++, k, a, b});
  }

  void dispatch(const Event& e) {
    switch (e.kind) {
      case EventKind::SysBucket: run_bucket(e.a, e.time); break;
      case EventKind::Arrival: arrived(e.a); break;
      case EventKind::Hop: hop_arrived(e.a); break;
      case EventKind::LinkFree: link_free(e.b); break;
      case EventKind::HandlerNow: {
        Handler h = handlers_[e.a];
        handlers_.release(e.a);
        invoke(h);
        break;
      }
    }
  }

  // A system event on NPU n after `delay` ns (the reference's Sys::register_event).
  void register_call(uint32_t n, Tick delay, SysCall c) {
    Tick t = now_ + delay;
    Npu& p = npus_[n];
    for (auto& [time, idx] : p.buckets)
      if (time == t) {
        buckets_[idx].push_back(c);
        return;
      }
    uint32_t idx;
    if (!free_buckets_.empty()) {
      idx = free_buckets_.back();
      free_buckets_.pop_back();
    } else {
      idx = static_cast<uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    buckets_[idx].push_back(c);
    p.buckets.emplace_back(t, idx);
    schedule(t, EventKind::SysBucket, n);
  }

  void run_bucket(uint32_t n, Tick t) {
    uint32_t idx = UINT32_MAX;
    for (auto& [time, i] : npus_[n].buckets)
      if (time == t) idx = i;
    if (idx == UINT32_MAX) return;
    for (size_t i = 0; i < buckets_[idx].size(); ++i) {
      SysCall c = buckets_[idx][i];
      switch (c.kind) {
        case CallKind::Bundle: bundle_done(c); break;
        case CallKind::NodeDone: node_done(n, c.arg); break;
        case CallKind::DatasetDone: dataset_step(c.obj); break;
        case CallKind::CustomDone: custom_node_done(c.obj, c.arg); break;
        case CallKind::PhaseDone: proceed(c.obj); break;
      }
    }
    auto& b = npus_[n].buckets;
    for (size_t i = 0; i < b.size(); ++i)
      if (b[i].first == t) {
        b[i] = b.back();
        b.pop_back();
        break;
      }
    buckets_[idx].clear();
    free_buckets_.push_back(idx);
  }

  // ---------------------------------------------------------------- network

  uint32_t coord(uint32_t npu, uint32_t d) const { return (npu / strides_[d]) % net_.npus[d]; }

  Tick unaware_delay(uint32_t src, uint32_t dst, uint64_t bytes) const {
    uint32_t d = 0;
    while (d < dims_ && coord(src, d) == coord(dst, d)) ++d;
    if (d == dims_) return 0;
    int64_t s = coord(src, d), t = coord(dst, d), n = net_.npus[d];
    int hops = 1;
    switch (net_.topology[d]) {
      case TopologyKind::Ring: {
        int64_t cw = t - s;
        if (cw < 0) cw += n;
        hops = static_cast<int>(std::min(cw, n - cw));
        break;
      }
      case TopologyKind::FullyConnected: hops = 1; break;
      case TopologyKind::Switch: hops = 2; break;
    }
    double link = hops * net_.latency[d];
    double serial = static_cast<double>(bytes) / bw_bpns_[d];
    return to_tick(link + serial);
  }

  void net_send(uint32_t src, uint32_t dst, uint64_t bytes, int64_t tag, Handler on_arrival) {
    PairCounters& c = counters_[PairKey{tag, src, dst, bytes}];
    MatchKey key{tag, src, dst, bytes, c.sends++};
    MatchEntry& e = matches_[key];
    e.send = on_arrival;
    uint32_t m;
    if (!free_messages_.empty()) {
      m = free_messages_.back();
      free_messages_.pop_back();
    } else {
      m = static_cast<uint32_t>(messages_.size());
      messages_.emplace_back();
    }
    messages_[m].key = key;
    if (o_.backend == Backend::CongestionUnaware) {
      schedule(now_ + unaware_delay(src, dst, bytes), EventKind::Arrival, m);
    } else {
      route(messages_[m], src, dst);
      messages_[m].hop = 0;
      if (messages_[m].route.size() < 2) {
        schedule(now_, EventKind::Arrival, m);
      } else {
        link_send(m);
      }
    }
  }

  void net_recv(uint32_t npu, uint32_t src, uint64_t bytes, int64_t tag, Handler on_receive) {
    PairKey pk{tag, src, npu, bytes};
    PairCounters& c = counters_[pk];
    MatchKey key{tag, src, npu, bytes, c.recvs++};
    auto it = matches_.find(key);
    if (it != matches_.end() && it->second.arrived) {
      matches_.erase(it);
      forget_pair(pk);
      schedule(now_, EventKind::HandlerNow, handlers_.add(on_receive));
      return;
    }
    MatchEntry& e = it != matches_.end() ? it->second : matches_[key];
    e.recv = on_receive;
    e.has_recv = true;
  }

  // Sequence counters of a (tag, src, dst, size) stream are dropped once every send met its
  // receive and nothing is in flight, so long runs do not accumulate them.
  void forget_pair(const PairKey& pk) {
    auto it = counters_.find(pk);
    if (it == counters_.end() || it->second.sends != it->second.recvs) return;
    // Messages of one pair arrive in the order sent (same route, same delay), so no entry of
    // the pair is pending once its newest one is gone.
    uint64_t last = it->second.sends;
    if (last > 0 && matches_.count(MatchKey{pk.tag, pk.src, pk.dst, pk.size, last - 1})) return;
    counters_.erase(it);
  }

  void arrived(uint32_t m) {
    MatchKey key = messages_[m].key;
    free_messages_.push_back(m);
    ++result_.messages;
    auto it = matches_.find(key);
    if (it == matches_.end()) throw Error("internal error: a message arrived that nobody sent");
    MatchEntry e = it->second;
    if (e.has_recv) {
      matches_.erase(it);
      forget_pair(PairKey{key.tag, key.src, key.dst, key.size});
      invoke(e.send);
      invoke(e.recv);
    } else {
      it->second.arrived = true;
      invoke(e.send);
    }
  }

  // Congestion-aware routing: dimension by dimension, lowest first (the reference only has one
  // dimension); within a dimension as the reference routes (Ring: shorter way, ties clockwise;
  // Switch: via the switch; FullyConnected: direct).
  void route(Message& msg, uint32_t src, uint32_t dst) {
    msg.route.clear();
    msg.hop_dim.clear();
    msg.route.push_back(src);
    uint32_t cur = src;
    for (uint32_t d = 0; d < dims_; ++d) {
      int64_t s = coord(cur, d), t = coord(dst, d), n = net_.npus[d];
      if (s == t) continue;
      uint32_t base = cur - static_cast<uint32_t>(s) * strides_[d];
      switch (net_.topology[d]) {
        case TopologyKind::Ring: {
          int64_t cw = t - s;
          if (cw < 0) cw += n;
          int64_t step = (n - cw < cw) ? -1 : 1;
          for (int64_t c = s; c != t;) {
            c = (c + step + n) % n;
            msg.route.push_back(base + static_cast<uint32_t>(c) * strides_[d]);
            msg.hop_dim.push_back(static_cast<uint8_t>(d));
          }
          break;
        }
        case TopologyKind::FullyConnected:
          msg.route.push_back(base + static_cast<uint32_t>(t) * strides_[d]);
          msg.hop_dim.push_back(static_cast<uint8_t>(d));
          break;
        case TopologyKind::Switch: {
          uint32_t group = (cur % strides_[d]) + (cur / strides_[d + 1]) * strides_[d];
          msg.route.push_back(switch_base_[d] + group);
          msg.route.push_back(base + static_cast<uint32_t>(t) * strides_[d]);
          msg.hop_dim.push_back(static_cast<uint8_t>(d));
          msg.hop_dim.push_back(static_cast<uint8_t>(d));
          break;
        }
      }
      cur = msg.route.back();
    }
  }

  void link_send(uint32_t m) {
    Message& msg = messages_[m];
    uint64_t key = (uint64_t(msg.route[msg.hop]) << 32) | msg.route[msg.hop + 1];
    Link& l = links_[key];
    l.dim = msg.hop_dim[msg.hop];
    if (l.busy) {
      l.pending.push_back(m);
    } else {
      transmit(key, l, m);
    }
  }

  void transmit(uint64_t key, Link& l, uint32_t m) {
    l.busy = true;
    double bytes = static_cast<double>(messages_[m].key.size);
    double serial = bytes / bw_bpns_[l.dim];
    schedule(now_ + to_tick(net_.latency[l.dim] + serial), EventKind::Hop, m);
    schedule(now_ + to_tick(serial), EventKind::LinkFree, 0, key);
  }

  void hop_arrived(uint32_t m) {
    Message& msg = messages_[m];
    ++msg.hop;
    if (msg.hop + 1 == msg.route.size()) {
      arrived(m);
    } else {
      link_send(m);
    }
  }

  void link_free(uint64_t key) {
    Link& l = links_[key];
    l.busy = false;
    if (!l.pending.empty()) {
      uint32_t m = l.pending.front();
      l.pending.pop_front();
      transmit(key, l, m);
    }
  }

  void invoke(const Handler& h) {
    switch (h.kind) {
      case HandlerKind::None: break;
      case HandlerKind::StreamPacket: algo_packet(h.arg); break;
      case HandlerKind::CustomNode: custom_node_done(uint32_t(h.arg >> 32), h.arg & 0xffffffffu); break;
      case HandlerKind::NodeSent:
      case HandlerKind::NodeRecv: node_done(h.npu, h.arg); break;
      case HandlerKind::RendezvousSend: {
        Rendezvous r = rendezvous_[h.arg];
        rendezvous_.release(static_cast<uint32_t>(h.arg));
        net_send(r.npu, r.peer, r.size, r.tag, r.handler);
        break;
      }
      case HandlerKind::RendezvousRecv: {
        Rendezvous r = rendezvous_[h.arg];
        rendezvous_.release(static_cast<uint32_t>(h.arg));
        net_recv(r.npu, r.peer, r.size, r.tag, r.handler);
        break;
      }
    }
  }

  // The system layer's send/recv (front_end_sim_send/recv): tag spaces and rendezvous.
  static int64_t wire_tag(int64_t tag, bool collective) {
    return collective ? tag % (kRendezvousTags - kCollectiveTags) + kCollectiveTags
                      : tag % kCollectiveTags;
  }
  void sys_send(uint32_t npu, uint32_t dst, uint64_t bytes, int64_t tag, bool collective,
                Handler h) {
    tag = wire_tag(tag, collective);
    if (!o_.rendezvous) return net_send(npu, dst, bytes, tag, h);
    uint32_t r = rendezvous_.add({npu, dst, tag, bytes, h});
    net_recv(npu, dst, kRendezvousBytes, tag + kRendezvousTags,
             Handler{HandlerKind::RendezvousSend, npu, r});
  }
  void sys_recv(uint32_t npu, uint32_t src, uint64_t bytes, int64_t tag, bool collective,
                Handler h) {
    tag = wire_tag(tag, collective);
    if (!o_.rendezvous) return net_recv(npu, src, bytes, tag, h);
    uint32_t r = rendezvous_.add({npu, src, tag, bytes, h});
    net_send(npu, src, kRendezvousBytes, tag + kRendezvousTags,
             Handler{HandlerKind::RendezvousRecv, npu, r});
  }

  // ---------------------------------------------------------------- algorithms

  Tick handoff_delay(const Stream& s) const { return s.cur.ring.local ? 10 : endpoint_delay_; }

  Tick reduction_delay(uint64_t bytes) const {
    if (!(local_mem_bw_ > 0))
      throw Error("a collective needs a local reduction but the system configuration sets no "
                  "'local-mem-bw'");
    // one write and two reads of the message, each truncated (as the reference)
    Tick one = to_tick(static_cast<double>(bytes) / local_mem_bw_ * 1e9);
    if (one > UINT64_MAX / 3) clock_overflow();
    return one + one + one;
  }

  // A packet bundle handed to/from the memory accelerator; `processing` adds a reduction.
  void bundle(Stream& s, uint32_t stream, bool processing, uint64_t bytes, bool usual = false) {
    Tick d = usual ? endpoint_delay_ : handoff_delay(s);
    register_call(s.npu, d, SysCall{CallKind::Bundle, processing, stream, bytes});
  }

  void bundle_done(const SysCall& c) {
    if (c.processing) {
      register_call(streams_[c.obj].npu, reduction_delay(c.arg),
                    SysCall{CallKind::Bundle, false, c.obj, c.arg});
      return;
    }
    algo_general(c.obj);
  }

  int64_t non_zero_count(const Stream& s) const {
    switch (s.cur.algo) {
      case AlgoKind::Ring: return (int64_t(s.cur.ring.n) - 1) * s.parallel;
      case AlgoKind::Direct:
        return s.cur.ring.local ? (int64_t(s.cur.ring.n) - 1) * s.parallel : s.parallel;
      case AlgoKind::HalvingDoubling:
        return static_cast<int64_t>(std::log2(double(s.cur.ring.n)) - 1 * s.parallel);
      case AlgoKind::Tree:
      case AlgoKind::Custom: break;
    }
    return 0;
  }

  void start_phase_state(Stream& s) {
    const PhaseSpec& p = s.cur;
    int64_t n = p.ring.n;
    s.zero = s.non_zero = s.free_packets = s.received = 0;
    s.toggle = false;
    s.packets.clear();
    s.parallel = 1;
    s.tree_state = TreeState::Begin;
    s.reductions = 0;
    switch (p.algo) {
      case AlgoKind::Ring:
      case AlgoKind::Direct:
        s.stream_count = p.type == Collective::AllReduce  ? 2 * (n - 1)
                         : p.type == Collective::AllToAll ? n * (n - 1) / 2
                                                          : n - 1;
        s.msg_size = p.type == Collective::AllGather ? p.size : p.size / n;
        s.receiver = p.ring.receiver(s.npu, p.dir);
        s.sender = p.ring.sender(s.npu, p.dir);
        if (p.algo == AlgoKind::Direct) {
          s.middle = n - 1;
          s.parallel = p.window == -1 ? n - 1 : std::min<int64_t>(p.window, n - 1);
          if (p.type == Collective::AllToAll) s.stream_count = n - 1;
        }
        break;
      case AlgoKind::HalvingDoubling: {
        int64_t steps = static_cast<int64_t>(std::log2(double(n)));
        s.stream_count = p.type == Collective::AllReduce ? 2 * steps : steps;
        s.msg_size = p.type == Collective::AllGather ? p.size : p.size / 2;
        s.rank_offset = p.type == Collective::AllGather ? n / 2 : 1;
        s.multiplier = p.type == Collective::AllGather ? 0.5 : 2;
        hd_pick_partner(s);
        break;
      }
      case AlgoKind::Tree:
      case AlgoKind::Custom: break;
    }
  }

  Dir hd_direction(const Stream& s) const {
    if (s.rank_offset == 0) return Dir::Clockwise;
    return (s.cur.ring.index(s.npu) / s.rank_offset) % 2 == 0 ? Dir::Clockwise
                                                              : Dir::Anticlockwise;
  }
  void hd_pick_partner(Stream& s) {
    s.receiver = s.cur.ring.receiver(s.npu, hd_direction(s), s.rank_offset);
    s.sender = s.receiver;
  }

  // After each packet: direct moves on to the next peer, halving-doubling to the next partner.
  void advance_peers(Stream& s) {
    const RingView& r = s.cur.ring;
    if (s.cur.algo == AlgoKind::Direct) {
      s.receiver = r.receiver(s.receiver, s.cur.dir);
      if (s.receiver == s.npu) s.receiver = r.receiver(s.receiver, s.cur.dir);
      s.sender = r.sender(s.sender, s.cur.dir);
      if (s.sender == s.npu) s.sender = r.sender(s.sender, s.cur.dir);
    } else if (s.cur.algo == AlgoKind::HalvingDoubling) {
      s.rank_offset = static_cast<int64_t>(s.rank_offset * s.multiplier);
      s.msg_size = static_cast<uint64_t>(s.msg_size / s.multiplier);
      if (s.rank_offset == int64_t(r.n) && s.cur.type == Collective::AllReduce) {
        s.multiplier = 0.5;
        s.rank_offset = static_cast<int64_t>(s.rank_offset * s.multiplier);
        s.msg_size = static_cast<uint64_t>(s.msg_size / s.multiplier);
      }
      hd_pick_partner(s);
    }
  }

  void insert_packet(uint32_t si) {
    Stream& s = streams_[si];
    if (s.zero == 0 && s.non_zero == 0) {
      s.zero = s.parallel;
      s.non_zero = non_zero_count(s);
      s.toggle = !s.toggle;
    }
    bool processing;
    if (s.zero > 0) {
      processing = false;
      --s.zero;
    } else if (s.non_zero > 0) {
      processing = s.cur.type == Collective::ReduceScatter ||
                   (s.cur.type == Collective::AllReduce && s.toggle);
      --s.non_zero;
    } else {
      throw Error("internal error: collective algorithm injected nothing");
    }
    s.packets.push_back(Packet{s.receiver, s.sender, s.msg_size});
    uint64_t bytes = s.msg_size;
    advance_peers(s);
    bundle(s, si, processing, bytes);
  }

  bool packet_ready(uint32_t si) {
    Stream& s = streams_[si];
    if (s.packets.empty() || s.stream_count == 0 || s.free_packets == 0) return false;
    Packet p = s.packets.front();
    sys_send(s.npu, p.dest, p.size, s.id, true, Handler{});
    sys_recv(s.npu, p.src, p.size, s.id, true, Handler{HandlerKind::StreamPacket, s.npu, si});
    Stream& t = streams_[si];
    --t.stream_count;
    t.packets.pop_front();
    --t.free_packets;
    return true;
  }

  void packet_iterate(uint32_t si) {
    Stream& s = streams_[si];
    if (s.stream_count == 0 && s.free_packets == s.parallel) proceed(si);
  }

  void algo_init(uint32_t si) {
    Stream& s = streams_[si];
    s.initialized = true;
    if (s.cur.algo == AlgoKind::Tree) return tree_run(si, false);
    if (s.cur.algo == AlgoKind::Custom) return custom_start(si);
    if (s.cur.algo == AlgoKind::Ring && closed_form_) return ring_join(si);
    for (int64_t i = 0; i < s.parallel; ++i) insert_packet(si);
  }

  void algo_general(uint32_t si) {
    Stream& s = streams_[si];
    if (s.cur.algo == AlgoKind::Tree) return tree_run(si, false);
    ++s.free_packets;
    if (s.cur.algo == AlgoKind::Direct && s.cur.type == Collective::AllReduce &&
        s.stream_count <= s.middle) {
      if (s.received < s.middle) return;
      for (int64_t i = 0, n = s.parallel; i < n; ++i) packet_ready(si);
    } else {
      packet_ready(si);
    }
    packet_iterate(si);
  }

  void algo_packet(uint32_t si) {
    Stream& s = streams_[si];
    if (s.cur.algo == AlgoKind::Tree) return tree_run(si, true);
    ++s.received;
    insert_packet(si);
  }

  // The double-binary-tree all-reduce's state machine (every message carries the whole chunk).
  void tree_run(uint32_t si, bool packet) {
    Stream& s = streams_[si];
    const PhaseSpec& p = s.cur;
    uint64_t bytes = p.size;
    auto send_to = [&](int64_t peer) {
      sys_send(s.npu, static_cast<uint32_t>(peer), bytes, s.id, true, Handler{});
    };
    auto recv_from = [&](int64_t peer) {
      sys_recv(s.npu, static_cast<uint32_t>(peer), bytes, s.id, true,
               Handler{HandlerKind::StreamPacket, s.npu, si});
    };
    switch (p.role) {
      case TreeRole::Leaf:
        switch (s.tree_state) {
          case TreeState::Begin:
            bundle(s, si, false, bytes, true);
            s.tree_state = TreeState::SendingToParent;
            return;
          case TreeState::SendingToParent:
            send_to(p.parent);
            s.tree_state = TreeState::WaitingFromParent;  // before the recv: it may complete now
            recv_from(p.parent);
            return;
          case TreeState::WaitingFromParent:
            bundle(s, si, false, bytes, true);
            s.tree_state = TreeState::End;
            return;
          case TreeState::End: proceed(si); return;
          default: return;
        }
      case TreeRole::Intermediate:
        if (s.tree_state == TreeState::Begin) {
          s.tree_state = TreeState::WaitingTwoChildren;
          recv_from(p.left);
          recv_from(p.right);
        } else if (s.tree_state == TreeState::WaitingTwoChildren && packet) {
          bundle(s, si, true, bytes, true);
          s.tree_state = TreeState::WaitingOneChild;
        } else if (s.tree_state == TreeState::WaitingOneChild && packet) {
          bundle(s, si, true, bytes, true);
          s.tree_state = TreeState::SendingToParent;
        } else if (s.reductions < 1 && !packet) {
          ++s.reductions;
        } else if (s.tree_state == TreeState::SendingToParent) {
          s.tree_state = TreeState::WaitingFromParent;
          send_to(p.parent);
          recv_from(p.parent);
        } else if (s.tree_state == TreeState::WaitingFromParent && packet) {
          bundle(s, si, true, bytes, true);
          s.tree_state = TreeState::SendingToChildren;
        } else if (s.tree_state == TreeState::SendingToChildren) {
          send_to(p.left);
          send_to(p.right);
          proceed(si);
        }
        return;
      case TreeRole::Root: {
        int64_t child = p.left >= 0 ? p.left : p.right;
        if (s.tree_state == TreeState::Begin) {
          s.tree_state = TreeState::WaitingOneChild;
          recv_from(child);
        } else if (s.tree_state == TreeState::WaitingOneChild) {
          bundle(s, si, true, bytes, true);
          s.tree_state = TreeState::SendingToChildren;
        } else if (s.tree_state == TreeState::SendingToChildren) {
          send_to(child);
          proceed(si);
        }
        return;
      }
    }
  }

  // Ring phases on the congestion-unaware network in closed form. Without contention a member's
  // k-th receive completes at max(its own k-th send, its sender's k-th send + network time),
  // and its next send follows after the hand-off (and reduction) delay, so once every member
  // has started the phase all finish times follow from that recurrence: the same numbers as
  // simulating each message (tested against it), at a fraction of the events.
  struct RingGroupKey {
    int64_t tag;
    uint32_t phase, base, stride, n;
    const void* members;
    Dir dir;
    bool operator<(const RingGroupKey& o) const {
      return std::tie(tag, phase, base, stride, n, members, dir) <
             std::tie(o.tag, o.phase, o.base, o.stride, o.n, o.members, o.dir);
    }
  };
  struct RingGroup {
    uint32_t joined = 0;
    std::vector<Tick> start;
    std::vector<uint32_t> stream;
  };

  void ring_join(uint32_t si) {
    const Stream& s = streams_[si];
    const RingView& r = s.cur.ring;
    RingGroupKey key{s.id, s.next_phase, r.base, r.stride, r.n, r.members, s.cur.dir};
    RingGroup& g = ring_groups_[key];
    if (g.start.empty()) g.start.assign(r.n, 0), g.stream.assign(r.n, UINT32_MAX);
    uint32_t idx = r.index(s.npu);
    if (g.stream[idx] != UINT32_MAX)
      throw Error("NPU " + std::to_string(s.npu) + " joined the same collective phase twice "
                  "(stream ids out of step across NPUs)");
    g.start[idx] = now_;
    g.stream[idx] = si;
    if (++g.joined < r.n) return;
    RingGroup done = std::move(g);
    ring_groups_.erase(key);
    ring_solve(done, si);
  }

  void ring_solve(const RingGroup& g, uint32_t any) {
    const Stream& s0 = streams_[any];
    const PhaseSpec& p = s0.cur;
    const RingView& r = p.ring;
    const uint32_t n = r.n;
    const uint64_t msg = s0.msg_size;
    const int64_t steps = s0.stream_count;
    const Tick E = handoff_delay(s0);
    const bool reduces = p.type == Collective::ReduceScatter || p.type == Collective::AllReduce;
    const Tick R = reduces ? reduction_delay(msg) : 0;
    std::vector<uint32_t> prev(n);
    std::vector<Tick> net(n), send(n), recv(n);
    Tick last_start = 0, slowest_net = 0;
    for (uint32_t i = 0; i < n; ++i) {
      prev[i] = p.dir == Dir::Clockwise ? (i + n - 1) % n : (i + 1) % n;
      net[i] = unaware_delay(r.at(prev[i]), r.at(i), msg);
      send[i] = g.start[i] + E;
      last_start = std::max(last_start, g.start[i]);
      slowest_net = std::max(slowest_net, net[i]);
    }
    // Every step adds at most one hop and one handoff: past 2^64 ns the sums below would wrap.
    to_tick(double(last_start) + double(steps + 1) * (double(slowest_net) + double(E) + double(R)));
    for (int64_t k = 0; k < steps; ++k) {
      // the packet inserted on receive k is insert k + 1: a cycle of one local and n - 1
      // received packets; all-reduce reduces in the first cycle only, reduce-scatter always
      int64_t j = k + 1;
      bool received = j % n != 0;
      bool proc = received && (p.type == Collective::ReduceScatter ||
                               (p.type == Collective::AllReduce && (j / n) % 2 == 0));
      Tick d = E + (proc ? R : 0);
      for (uint32_t i = 0; i < n; ++i) recv[i] = std::max(send[i], send[prev[i]] + net[i]);
      for (uint32_t i = 0; i < n; ++i) send[i] = recv[i] + d;
    }
    result_.messages += uint64_t(n) * uint64_t(steps);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t si = g.stream[i];
      register_call(streams_[si].npu, send[i] - now_, SysCall{CallKind::PhaseDone, false, si, 0});
    }
  }

  // A collective algorithm given as Chakra traces (one per rank in the group): its SEND, RECV
  // and COMP nodes run as soon as their dependencies are done; the phase ends with the last.
  void custom_start(uint32_t si) {
    Stream& s = streams_[si];
    auto it = custom_bytes_.find(s.cur.custom_file);
    if (it == custom_bytes_.end()) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(s.cur.custom_file, ec))
        throw Error(s.cur.custom_file + ": custom collective trace does not exist (paths are "
                    "relative to the working directory or the system configuration)");
      it = custom_bytes_.emplace(s.cur.custom_file, read_file(s.cur.custom_file)).first;
    }
    FeederOptions fo;
    fo.gate = DepKind::Both;
    fo.dangling_is_error = true;
    const std::string& bytes = it->second;
    s.custom = std::make_unique<Feeder>(
        memory_input({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, it->first), fo);
    custom_issue(si);
  }

  uint32_t custom_rank(const Stream& s, int64_t algo_rank, const Where& what) {
    if (s.cur.group < 0) {
      if (algo_rank < 0 || algo_rank >= int64_t(n_npus_))
        throw Error(what() + ": rank " + std::to_string(algo_rank) + " is not an NPU");
      return static_cast<uint32_t>(algo_rank);
    }
    const auto& m = groups_[s.cur.group].members;
    if (algo_rank < 0 || algo_rank >= int64_t(m.size()))
      throw Error(what() + ": rank " + std::to_string(algo_rank) + " is not in the group");
    return m[algo_rank];
  }

  void custom_issue(uint32_t si) {
    std::vector<uint64_t> ready = streams_[si].custom->take_all();
    for (uint64_t id : ready) {
      Stream& s = streams_[si];
      FeederNode node = s.custom->node(id);
      Where what{s.cur.custom_file, node};
      if (id > 0xffffffffu) throw Error(what() + ": node ids of custom collectives must fit 32 bits");
      uint64_t arg = (uint64_t(si) << 32) | id;
      int64_t size = node.comm_size().value_or(0);
      int64_t tag = node.comm_tag().value_or(0);
      switch (node.type()) {
        case NodeType::CommSend: {
          auto dst = node.comm_dst();
          if (!dst) throw Error(what() + ": a send needs comm_dst");
          sys_send(s.npu, custom_rank(s, *dst, what), uint64_t(size), tag, false,
                   Handler{HandlerKind::CustomNode, s.npu, arg});
          break;
        }
        case NodeType::CommRecv: {
          auto src = node.comm_src();
          if (!src) throw Error(what() + ": a recv needs comm_src");
          sys_recv(s.npu, custom_rank(s, *src, what), uint64_t(size), tag, false,
                   Handler{HandlerKind::CustomNode, s.npu, arg});
          break;
        }
        case NodeType::Comp:
          register_call(s.npu, replay_time(what), SysCall{CallKind::CustomDone, false, si, id});
          break;
        default:
          // the reference takes other nodes and never finishes them; they finish at once here
          register_call(s.npu, 0, SysCall{CallKind::CustomDone, false, si, id});
          break;
      }
    }
  }

  void custom_node_done(uint32_t si, uint64_t id) {
    Stream& s = streams_[si];
    s.custom->mark_done(id);
    custom_issue(si);
    Stream& t = streams_[si];
    if (t.custom->finished()) {
      t.custom.reset();
      proceed(si);
    } else if (t.custom->in_flight() == 0 && t.custom->stalled()) {
      throw Error(t.cur.custom_file + ": custom collective cannot finish: " +
                  t.custom->stall_report());
    }
  }

  // ---------------------------------------------------------------- system layer: streams

  // A stream finished its phase, or is new (the reference's proceed_to_next_vnet_baseline):
  // leave the current phase's queue, notify the dataset when no phase is left, else join the
  // next phase's queue.
  void proceed(uint32_t si) {
    uint32_t n = streams_[si].npu;
    int prev = streams_[si].queue;
    bool last = streams_[si].next_phase == streams_[si].phases.size();
    if (last) dataset_step(streams_[si].dataset);  // may issue more work on this NPU
    if (prev >= 0) {
      auto& q = npus_[n].queues[prev];
      auto it = std::find(q.begin(), q.end(), si);
      if (it != q.end()) q.erase(it);
    }
    if (last) {
      if (prev >= 0) stream_removed(n, prev);
      streams_[si].phases.clear();
      streams_[si].packets.clear();
      streams_.release(si);
      return;
    }
    Stream& s = streams_[si];
    s.cur = s.phases[s.next_phase++];
    s.queue = s.cur.queue;
    s.initialized = false;
    start_phase_state(s);
    insert_stream(npus_[n].queues[s.queue], si);
    int q = s.queue;
    if (prev >= 0) stream_removed(n, prev);
    start_waiting(n, q);
  }

  // Queue order: streams already running first, then by priority (ties: arrival order).
  void insert_stream(std::vector<uint32_t>& q, uint32_t si) {
    size_t i = 0;
    while (i < q.size() && (streams_[q[i]].initialized ||
                            streams_[q[i]].priority >= streams_[si].priority))
      ++i;
    q.insert(q.begin() + static_cast<std::ptrdiff_t>(i), si);
  }

  void start_waiting(uint32_t n, int q) {
    Npu& p = npus_[n];
    for (size_t i = static_cast<size_t>(p.running[q]);
         i < p.queues[q].size() && p.running[q] < threshold_; ++i) {
      uint32_t si = p.queues[q][i];
      algo_init(si);
      ++npus_[n].running[q];
    }
  }
  void stream_removed(uint32_t n, int q) {
    --npus_[n].running[q];
    start_waiting(n, q);
  }

  void dataset_step(uint32_t di) {
    Dataset& d = datasets_[di];
    if (++d.finished < d.total) return;
    CollectiveTotals& t = result_.collectives[d.kind];
    t.time += now_ - d.created;
    uint32_t n = d.npu;
    uint64_t node = d.node;
    datasets_.release(di);
    node_done(n, node);
  }

  // ---------------------------------------------------------------- system layer: collectives

  std::pair<int, Dir> next_queue(Npu& p, uint32_t dim, int which) {
    QueueLevel& l = p.levels[dim];
    if (which == 0) {  // any queue of the dimension, round robin
      Dir d = (l.count > 1 && l.allocator >= l.count / 2) ? Dir::Anticlockwise : Dir::Clockwise;
      int q = static_cast<int>(l.first_queue + l.allocator++);
      if (l.allocator >= l.count) l.allocator = 0;
      return {q, d};
    }
    if (which == 1) {  // first half: reduce-scatter / all-reduce phases
      int q = static_cast<int>(l.first_queue + l.first_allocator++);
      if (l.first_allocator >= l.count / 2) l.first_allocator = 0;
      return {q, Dir::Clockwise};
    }
    int q = static_cast<int>(l.first_queue + l.last_allocator++);  // second half: all-gather
    if (l.last_allocator >= l.count) l.last_allocator = l.count / 2;
    return {q, Dir::Anticlockwise};
  }

  // The logical topology a collective runs over: per dimension, a ring (or a tree) and its
  // algorithm. `group` < 0: all NPUs.
  struct Plan {
    std::vector<AlgorithmChoice> algos;
    std::vector<RingView> rings;
    std::vector<bool> involved;
  };

  Plan make_plan(uint32_t npu, Collective type, int group, const std::vector<bool>& involved,
                 const Where& what) {
    const auto& algos = in_.system.algorithms[int(type)];
    if (algos.empty())
      throw Error(what() + ": the system configuration has no " +
                  std::string(collective_name(type)) + "-implementation");
    Plan plan;
    bool whole = group < 0 || groups_[group].members.size() == n_npus_;
    if (!whole) {
      const Group& g = groups_[group];
      if (!g.index_of.count(npu))
        throw Error(what() + ": NPU " + std::to_string(npu) + " is not in its communicator group");
      AlgorithmChoice a = algos.size() > 1 ? AlgorithmChoice{} : algos[0];
      if (a.kind == Algorithm::DoubleBinaryTree)
        throw Error(what() + ": doubleBinaryTree cannot run on a communicator group");
      a.flat = false;
      RingView r;
      r.n = static_cast<uint32_t>(g.members.size());
      r.members = &g.members;
      r.index_of = &g.index_of;
      r.local = true;
      plan.algos.push_back(a);
      plan.rings.push_back(r);
      plan.involved.push_back(true);
      return plan;
    }
    for (uint32_t d = 0; d < algos.size(); ++d) {
      RingView r;
      if (algos[d].flat) {
        r.n = n_npus_;
        r.stride = 1;
        r.base = 0;
      } else {
        r.n = net_.npus[d];
        r.stride = strides_[d];
        r.base = npu - coord(npu, d) * strides_[d];
      }
      plan.algos.push_back(algos[d]);
      plan.rings.push_back(r);
      // a group of all NPUs involves every dimension, as the reference
      plan.involved.push_back(group >= 0 ? true : (d < involved.size() ? bool(involved[d]) : true));
      if (algos[d].flat) break;
    }
    return plan;
  }

  PhaseSpec make_phase(uint32_t npu, Collective type, Collective phase_type, const Plan& plan,
                       uint32_t dim, uint64_t size, std::pair<int, Dir> queue,
                       const Where& what) {
    PhaseSpec p;
    const AlgorithmChoice& a = plan.algos[dim];
    p.type = phase_type;
    p.size = size;
    p.queue = queue.first;
    p.dir = queue.second;
    p.ring = plan.rings[dim];
    p.window = a.window;
    uint64_t n = p.ring.n;
    switch (a.kind) {
      case Algorithm::Ring: p.algo = AlgoKind::Ring; break;
      case Algorithm::Direct: p.algo = AlgoKind::Direct; break;
      case Algorithm::HalvingDoubling:
        p.algo = AlgoKind::HalvingDoubling;
        if (phase_type == Collective::AllToAll)
          throw Error(what() + ": halvingDoubling does not implement all-to-all");
        if ((n & (n - 1)) != 0)
          throw Error(what() + ": halvingDoubling needs a power-of-two number of NPUs, not " +
                      std::to_string(n));
        break;
      case Algorithm::DoubleBinaryTree: {
        if ((n & (n - 1)) != 0)
          throw Error(what() + ": doubleBinaryTree needs a power-of-two number of NPUs, not " +
                      std::to_string(n));
        // the reference runs a tree all-reduce whatever the phase asked for
        p.algo = AlgoKind::Tree;
        p.type = Collective::AllReduce;
        uint32_t& counter = npus_[npu].tree_counter[int(type) * dims_ + dim];
        bool root_max = counter++ % 2 == 0;
        auto key = std::make_pair(uint32_t(n), root_max);
        auto it = trees_.find(key);
        if (it == trees_.end()) it = trees_.emplace(key, make_tree(uint32_t(n), root_max)).first;
        const Tree& t = it->second;
        uint32_t pos = p.ring.index(npu);
        auto id = [&](int32_t q) { return q < 0 ? int64_t{-1} : int64_t{p.ring.at(q)}; };
        p.parent = id(t.parent[pos]);
        p.left = id(t.left[pos]);
        p.right = id(t.right[pos]);
        p.role = t.parent[pos] < 0                             ? TreeRole::Root
                 : (t.left[pos] < 0 && t.right[pos] < 0) ? TreeRole::Leaf
                                                               : TreeRole::Intermediate;
        break;
      }
    }
    switch (p.type) {
      case Collective::AllReduce:
      case Collective::AllToAll: p.final_size = size; break;
      case Collective::AllGather: p.final_size = size * n; break;
      case Collective::ReduceScatter: p.final_size = size / n; break;
    }
    return p;
  }

  void issue_collective(uint32_t npu, const FeederNode& node, Collective type, uint64_t size,
                        const std::vector<bool>& involved, int group, int explicit_priority) {
    Where what{npus_[npu].file, node};
    const SystemConfig& sys = in_.system;
    if (sys.preferred_dataset_splits == 0)
      throw Error(what() + ": the system configuration sets no 'preferred-dataset-splits' "
                  "(ASTRA-sim divides by zero)");
    Npu& p = npus_[npu];
    Plan plan;
    if (sys.custom[int(type)].empty()) plan = make_plan(npu, type, group, involved, what);
    // chunking: every chunk has the same size, the last one included
    uint64_t chunk = size / sys.preferred_dataset_splits;
    if (type != Collective::AllGather && chunk < n_npus_) {
      chunk = n_npus_;
      size = uint64_t(sys.preferred_dataset_splits) * chunk;
    }
    int priority = sys.scheduling == SchedulingPolicy::LIFO   ? p.priority_counter++
                   : sys.scheduling == SchedulingPolicy::FIFO ? p.priority_counter--
                                                              : explicit_priority;
    uint32_t di = datasets_.add(Dataset{npu, node.id(), 0, 0, now_, int(type), size});
    std::vector<std::vector<PhaseSpec>> chunks;
    if (!sys.custom[int(type)].empty()) {  // one stream for the whole collective, on queue 0; the rank's trace is chosen by its
      // position in the group (sorted ranks, as the reference).
      PhaseSpec c{};
      c.algo = AlgoKind::Custom;
      c.type = type;
      c.size = c.final_size = size;
      c.queue = 0;
      c.dir = Dir::Clockwise;
      uint32_t pos = npu;
      if (group >= 0) {
        std::vector<uint32_t> sorted = groups_[group].members;
        std::sort(sorted.begin(), sorted.end());
        auto it = std::find(sorted.begin(), sorted.end(), npu);
        if (it == sorted.end())
          throw Error(what() + ": NPU " + std::to_string(npu) + " is not in its communicator group");
        pos = static_cast<uint32_t>(it - sorted.begin());
        c.group = group;
      }
      c.custom_file = sys.custom[int(type)] + "." + std::to_string(pos) + ".et";
      chunks.push_back({c});
    }
    uint32_t dims = static_cast<uint32_t>(plan.rings.size());
    auto active = [&](uint32_t d) { return plan.rings[d].n > 1 && plan.involved[d]; };
    if (chunk == 0) chunk = 1;  // an all-gather smaller than the splits: one byte per chunk
    const bool custom = !sys.custom[int(type)].empty();
    while (!custom && size > 0) {
      size = chunk > size ? 0 : size - chunk;
      uint64_t remain = chunk;
      std::vector<PhaseSpec> phases;
      if (type != Collective::AllReduce || sys.optimization == CollectiveOptimization::Baseline) {
        for (uint32_t k = 0; k < dims; ++k) {
          uint32_t d = type == Collective::AllGather ? dims - 1 - k : k;
          if (!active(d)) continue;
          phases.push_back(make_phase(npu, type, type, plan, d, remain, next_queue(p, d, 0), what));
          remain = phases.back().final_size;
        }
      } else {
        // localBWAware: reduce-scatter up to the last active dimension, all-reduce there,
        // all-gather back down
        int last = 0;
        for (uint32_t d = 0; d < dims; ++d)
          if (active(d)) last = static_cast<int>(d);
        int d = 0;
        for (; d < last; ++d) {
          if (!active(d)) continue;
          phases.push_back(make_phase(npu, type, Collective::ReduceScatter, plan, d, remain,
                                      next_queue(p, d, 1), what));
          remain = phases.back().final_size;
        }
        if (active(d)) {
          phases.push_back(make_phase(npu, type, Collective::AllReduce, plan, d, remain,
                                      next_queue(p, d, 1), what));
          remain = phases.back().final_size;
        }
        for (--d; d >= 0; --d) {
          if (!active(d)) continue;
          phases.push_back(make_phase(npu, type, Collective::AllGather, plan, d, remain,
                                      next_queue(p, d, 2), what));
          remain = phases.back().final_size;
        }
      }
      if (phases.empty()) break;
      chunks.push_back(std::move(phases));
    }
    datasets_[di].total = static_cast<uint32_t>(chunks.size());
    if (chunks.empty()) {
      // Nobody to talk to (every dimension excluded): done at once. The reference never
      // finishes such a collective.
      datasets_[di].total = 1;
      register_call(npu, 0, SysCall{CallKind::DatasetDone, false, di, 0});
      return;
    }
    for (auto& phases : chunks) {
      uint32_t si = streams_.add(Stream{});
      Stream& s = streams_[si];
      s.npu = npu;
      s.dataset = di;
      s.priority = priority;
      s.id = group >= 0 ? npus_[npu].group_streams.try_emplace(group, groups_[group].first_stream_id)
                              .first->second++
                        : npus_[npu].streams_created++;
      s.phases = std::move(phases);
      s.next_phase = 0;
      s.queue = -1;
      proceed(si);
    }
  }


  // ---------------------------------------------------------------- workload layer

  static bool is_comm(NodeType t) {
    return t == NodeType::CommColl || t == NodeType::CommSend || t == NodeType::CommRecv;
  }

  bool slot_free(const Npu& p, const FeederNode& node) const {
    if (node.is_cpu_op()) return p.cpu_busy == 0;
    if (node.type() == NodeType::Comp) return p.comp_busy == 0;
    return p.comm_busy == 0 || node.type() == NodeType::CommRecv;
  }

  void occupy(Npu& p, const FeederNode& node, int delta) {
    if (node.is_cpu_op()) p.cpu_busy += delta;
    else if (node.type() == NodeType::Comp) p.comp_busy += delta;
    else if (node.type() != NodeType::CommRecv) p.comm_busy += delta;
  }

  // Issue every issuable node whose resource is free, smallest id first; repeated while nodes
  // finish instantly (INVALID, METADATA), whose dependants the reference would leave waiting.
  void workload_step(uint32_t n) {
    Npu& p = npus_[n];
    if (p.finished) return;
    bool again = true;
    while (again) {
      again = false;
      std::vector<uint64_t> ready = npus_[n].feeder->take_all();
      for (uint64_t id : ready) {
        Npu& q = npus_[n];
        FeederNode node = q.feeder->node(id);
        if (!slot_free(q, node)) {
          q.feeder->untake(id);
          continue;
        }
        if (issue(n, node)) again = true;
      }
    }
    Npu& q = npus_[n];
    if (q.feeder->finished() && q.cpu_busy == 0 && q.comp_busy == 0 && q.comm_busy == 0) {
      q.finished = true;
      q.finish = now_;
    }
  }

  static Tick replay_time(const Where& what) {
    uint64_t us = what.node.duration_micros();
    if (us > UINT64_MAX / 1000)
      throw Error(what() + ": duration_micros " + std::to_string(us) +
                  " is past the simulator's clock (64-bit nanoseconds, 584 years)");
    return us == 0 ? 1 : us * 1000;
  }

  // Returns true when the node finished at once.
  bool issue(uint32_t n, const FeederNode& node) {
    Npu& p = npus_[n];
    occupy(p, node, +1);
    uint64_t id = node.id();
    NodeType type = node.type();
    Where what{p.file, node};
    SpanKind kind = node.is_cpu_op()           ? SpanKind::Cpu
                    : type == NodeType::Comp   ? SpanKind::Compute
                    : type == NodeType::CommColl ? SpanKind::Collective
                    : type == NodeType::CommSend ? SpanKind::Send
                    : type == NodeType::CommRecv ? SpanKind::Recv
                    : (type == NodeType::MemLoad || type == NodeType::MemStore) ? SpanKind::Memory
                                                                                : SpanKind::Other;
    p.in_flight[id] = Running{now_, kind};
    auto replay = [&] {
      Tick t = replay_time(what);
      if (!node.is_cpu_op()) p.gpu_time += t;
      register_call(n, t, SysCall{CallKind::NodeDone, false, 0, id});
    };
    if (in_.system.replay_only) {
      replay();
      return false;
    }
    if (is_comm(type) && node.is_cpu_op())
      throw Error(what() + ": a communication node cannot be a CPU op (is_cpu_op is set)");
    switch (type) {
      case NodeType::MemLoad:
      case NodeType::MemStore: {
        const RemoteMemoryConfig& m = in_.memory;
        if (m.type == MemoryType::None)
          throw Error(what() + ": remote memory access needs a remote-memory configuration other "
                      "than NO_MEMORY_EXPANSION");
        auto size = node.tensor_size();
        if (!size) throw Error(what() + ": memory node without a tensor_size attribute");
        Tick access = to_tick(m.latency + double(*size) / m.bandwidth);
        Tick start = now_;
        if (m.type != MemoryType::PerNpu) {
          uint32_t unit = m.type == MemoryType::Pool ? 0 : n / m.npus_per_node + 1;
          Tick& busy_until = memory_busy_[unit];
          start = std::max(start, busy_until);
          if (access > UINT64_MAX - start) clock_overflow();
          busy_until = start + access;
        }
        register_call(n, start + access - now_, SysCall{CallKind::NodeDone, false, 0, id});
        return false;
      }
      case NodeType::Comp: {
        if (!in_.system.roofline || node.is_cpu_op()) {
          replay();
          return false;
        }
        auto ops = node.num_ops();
        auto size = node.tensor_size();
        if (!ops || !size)
          throw Error(what() + ": roofline compute needs num_ops and tensor_size attributes");
        if (*size == 0) return finish_now(n, id);  // the reference skips it as invalid
        if (!(peak_perf_ > 0))
          throw Error(what() + ": roofline-enabled needs 'peak-perf' in the system configuration");
        double intensity = static_cast<double>(*ops) / static_cast<double>(*size);
        double perf = std::min(local_mem_bw_ * intensity, peak_perf_);
        double seconds = static_cast<double>(*ops) / perf;
        Tick t = to_tick(seconds * 1e9);
        p.gpu_time += t;
        register_call(n, t, SysCall{CallKind::NodeDone, false, 0, id});
        return false;
      }
      case NodeType::CommColl: return issue_coll(n, node, what);
      case NodeType::CommSend: return issue_p2p(n, node, what, true);
      case NodeType::CommRecv: return issue_p2p(n, node, what, false);
      case NodeType::Invalid: return finish_now(n, id);
      case NodeType::Metadata:
        read_process_groups(n, node, what);
        return finish_now(n, id);
    }
    throw Error(what() + ": unknown node type " + std::to_string(int(type)));
  }

  // SEND: the peer is comm_dst and comm_src (optional) must be this NPU; RECV the other way.
  bool issue_p2p(uint32_t n, const FeederNode& node, const Where& what, bool send) {
    const char* peer_key = send ? "comm_dst" : "comm_src";
    const char* self_key = send ? "comm_src" : "comm_dst";
    auto peer = send ? node.comm_dst() : node.comm_src();
    auto tag = node.comm_tag();
    if (!peer || !tag)
      throw Error(what() + ": a " + (send ? "send" : "recv") + " needs " + peer_key +
                  " and comm_tag attributes");
    int64_t self = (send ? node.comm_src() : node.comm_dst()).value_or(n);
    if (self != int64_t(n))
      throw Error(what() + ": " + self_key + " " + std::to_string(self) + " is not this NPU");
    if (*peer < 0 || *peer >= int64_t(n_npus_) || *peer == int64_t(n))
      throw Error(what() + ": " + peer_key + " " + std::to_string(*peer) + " is not another NPU");
    uint64_t size = static_cast<uint64_t>(node.comm_size().value_or(0));
    uint32_t other = static_cast<uint32_t>(*peer);
    if (send) sys_send(n, other, size, *tag, false, Handler{HandlerKind::NodeSent, n, node.id()});
    else sys_recv(n, other, size, *tag, false, Handler{HandlerKind::NodeRecv, n, node.id()});
    return false;
  }

  bool issue_coll(uint32_t n, const FeederNode& node, const Where& what) {
    auto comm_type = node.comm_type();
    auto size = node.comm_size();
    if (!comm_type) throw Error(what() + ": collective without a comm_type attribute");
    if (!size || *size < 0) throw Error(what() + ": collective without a comm_size attribute");
    std::vector<bool> involved;
    if (auto a = node.trace().find_attr(node.position(), "involved_dim")) {
      if (a->kind() != AttrKind::BoolList)
        throw Error(what() + ": involved_dim must be a bool_list");
      for (uint64_t v : a->list()) involved.push_back(v != 0);
    }
    int group = -1;
    if (auto pg = node.pg_name(); pg && !pg->empty() && *pg != "0") {
      std::string name(*pg);
      int id = 0;
      if (name.find_first_not_of("0123456789") != std::string::npos || name.size() > 9)
        throw Error(what() + ": pg_name '" + name + "' is not a group number");
      id = std::stoi(name);
      auto rt = npus_[n].runtime_groups.find(id);
      if (rt != npus_[n].runtime_groups.end()) {
        group = rt->second;
      } else {
        auto it = group_index_.find(id);
        if (it == group_index_.end())
          throw Error(what() + ": communicator group " + name + " is not defined");
        group = it->second;
      }
    }
    auto& totals = result_.collectives;
    Collective type;
    switch (*comm_type) {
      case 0: type = Collective::AllReduce; break;
      case 2: type = Collective::AllGather; break;
      case 6: type = Collective::AllToAll; break;
      case 7: type = Collective::ReduceScatter; break;
      case 5: {  // broadcast: replayed with its duration, as the reference
        ++totals[kCollectiveTypes].count;
        totals[kCollectiveTypes].bytes += uint64_t(*size);
        uint32_t di = datasets_.add(Dataset{n, node.id(), 1, 0, now_, kCollectiveTypes, 0});
        register_call(n, replay_time(what), SysCall{CallKind::DatasetDone, false, di, 0});
        return false;
      }
      default:
        throw Error(what() + ": collective type " + std::to_string(*comm_type) +
                    " is not supported (all-reduce 0, all-gather 2, broadcast 5, all-to-all 6, "
                    "reduce-scatter 7)");
    }
    ++totals[int(type)].count;
    totals[int(type)].bytes += uint64_t(*size);
    issue_collective(n, node, type, uint64_t(*size), involved, group,
                     static_cast<int>(node.comm_priority()));
    return false;
  }

  // A METADATA node may carry PyTorch process groups: [{"pg_name": "3", "ranks": [..]}, ...],
  // stored by the converter as the Python repr of a one-string list (['[{"pg_name": ...}]']),
  // which the reference unwraps by dropping two characters at each end; a JSON string list
  // is accepted too.
  void read_process_groups(uint32_t n, const FeederNode& node, const Where& what) {
    std::string text(node.inputs_values());
    if (text.size() >= 4 && text.compare(0, 2, "['") == 0 && text.compare(text.size() - 2, 2, "']") == 0)
      text = text.substr(2, text.size() - 4);
    if (text.empty()) return;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
      if (j.is_array() && j.size() == 1 && j[0].is_string())
        j = nlohmann::json::parse(j[0].get<std::string>());
    } catch (const std::exception&) {
      return;  // not process-group information
    }
    if (!j.is_array()) return;
    for (const auto& item : j) {
      if (!item.is_object() || !item.contains("pg_name") || !item.contains("ranks")) continue;
      std::string name = item["pg_name"].is_string() ? item["pg_name"].get<std::string>()
                                                     : item["pg_name"].dump();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos ||
          name.size() > 9)
        throw Error(what() + ": process group name '" + name + "' is not a number");
      Group g;
      for (const auto& r : item["ranks"]) {
        if (!r.is_number_unsigned() || r.get<uint64_t>() >= n_npus_)
          throw Error(what() + ": process group " + name + " has an invalid rank");
        g.members.push_back(r.get<uint32_t>());
      }
      if (g.members.empty())
        for (uint32_t i = 0; i < n_npus_; ++i) g.members.push_back(i);
      // Every NPU announces the same groups: they share one Group, so that the NPUs of a
      // collective agree on its ring. Group ids are pg_name + 1, as the reference.
      int id = std::stoi(name);
      auto [it, added] = runtime_groups_.try_emplace({id, g.members}, static_cast<int>(groups_.size()));
      if (added) {
        for (uint32_t i = 0; i < g.members.size(); ++i) g.index_of[g.members[i]] = i;
        g.first_stream_id = int64_t(id + 1) * 1000000;
        groups_.push_back(std::move(g));
      }
      npus_[n].runtime_groups[id] = it->second;
    }
  }

  bool finish_now(uint32_t n, uint64_t id) {
    complete(n, id);
    return true;
  }

  // Bookkeeping of a finished node (no issuing).
  void complete(uint32_t n, uint64_t id) {
    Npu& p = npus_[n];
    FeederNode node = p.feeder->node(id);
    occupy(p, node, -1);
    auto it = p.in_flight.find(id);
    if (it != p.in_flight.end()) {
      Running r = it->second;
      int cls = r.kind == SpanKind::Compute ? 0
                : (r.kind == SpanKind::Collective || r.kind == SpanKind::Send ||
                   r.kind == SpanKind::Recv)
                    ? 1
                : r.kind == SpanKind::Cpu    ? 2
                : r.kind == SpanKind::Memory ? 3
                                             : -1;  // INVALID / METADATA: no busy time
      if (cls >= 0 && now_ > r.start) p.intervals[cls].emplace_back(r.start, now_);
      if (o_.record_spans)
        result_.spans.push_back(Span{n, r.kind, id, r.start, now_, std::string(node.name())});
      p.in_flight.erase(it);
    }
    ++p.nodes;
    ++nodes_run_;
    p.feeder->mark_done(id);
  }

  void node_done(uint32_t n, uint64_t id) {
    if (npus_[n].finished) return;
    complete(n, id);
    workload_step(n);
  }

  // ---------------------------------------------------------------- results

  SimResult finish() {
    result_.npus.resize(n_npus_);
    for (uint32_t n = 0; n < n_npus_; ++n) {
      Npu& p = npus_[n];
      NpuResult& r = result_.npus[n];
      r.finished = p.finished;
      r.nodes = p.nodes;
      r.finish = p.finished ? p.finish : 0;
      r.exposed_comm = p.finished ? p.finish - std::min(p.finish, p.gpu_time) : 0;
      std::vector<std::pair<Tick, Tick>> both = p.intervals[0];
      both.insert(both.end(), p.intervals[1].begin(), p.intervals[1].end());
      r.compute = union_length(p.intervals[0]);
      r.comm = union_length(p.intervals[1]);
      r.cpu = union_length(p.intervals[2]);
      r.memory = union_length(p.intervals[3]);
      Tick u = union_length(both);
      r.overlap = r.compute + r.comm - u;
      if (!p.finished) {
        result_.deadlock = true;
        describe_stuck(n, r);
      }
    }
    return std::move(result_);
  }

  void describe_stuck(uint32_t n, NpuResult& r) {
    Npu& p = npus_[n];
    std::vector<uint64_t> ids;
    for (const auto& [id, run] : p.in_flight) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (uint64_t id : ids) {
      FeederNode node = p.feeder->node(id);
      std::string s = node_label(node) + " ";
      switch (node.type()) {
        case NodeType::CommRecv:
          s += "waits for a message from NPU " + std::to_string(node.comm_src().value_or(-1)) +
               " (tag " + std::to_string(node.comm_tag().value_or(-1)) + ", " +
               std::to_string(node.comm_size().value_or(0)) + " bytes) that was never sent";
          break;
        case NodeType::CommSend:
          s += "sent to NPU " + std::to_string(node.comm_dst().value_or(-1)) +
               ", which never posted the matching receive";
          break;
        case NodeType::CommColl:
          s += "is a collective some of its peers never reached";
          break;
        default: s += "never finished"; break;
      }
      r.stuck.push_back(s);
    }
    std::vector<uint64_t> ready = p.feeder->take_all();
    for (uint64_t id : ready) {
      r.stuck.push_back(node_label(p.feeder->node(id)) + " was ready but never issued");
      p.feeder->untake(id);
    }
    if (p.in_flight.empty() && ready.empty()) {
      std::string why = p.feeder->stalled() ? p.feeder->stall_report() : "nodes remain";
      r.stuck.push_back(why);
    }
  }

  const SimInputs& in_;
  const SimOptions& o_;
  const NetworkConfig& net_;
  uint32_t n_npus_ = 0, dims_ = 0;
  std::vector<uint32_t> strides_, switch_base_;
  std::vector<double> bw_bpns_;
  Tick endpoint_delay_ = 10;
  double local_mem_bw_ = 0, peak_perf_ = 0;
  int threshold_ = 1;

  Tick now_ = 0;
  uint64_t nodes_run_ = 0;  // over all NPUs, for progress
  uint64_t seq_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  std::vector<std::vector<SysCall>> buckets_;
  std::vector<uint32_t> free_buckets_;

  std::vector<Npu> npus_;
  Pool<Stream> streams_;
  Pool<Dataset> datasets_;
  std::deque<Group> groups_;  // a deque: rings point at members while groups are added
  std::map<int, int> group_index_;
  std::map<std::pair<int, std::vector<uint32_t>>, int> runtime_groups_;  // from METADATA nodes
  std::map<std::pair<uint32_t, bool>, Tree> trees_;
  std::map<uint32_t, Tick> memory_busy_;
  std::map<std::string, std::string> custom_bytes_;  // custom collective traces, read once
  bool closed_form_ = false;
  std::map<RingGroupKey, RingGroup> ring_groups_;

  std::unordered_map<PairKey, PairCounters, PairHash> counters_;
  std::unordered_map<MatchKey, MatchEntry, MatchHash> matches_;
  std::vector<Message> messages_;
  std::vector<uint32_t> free_messages_;
  std::unordered_map<uint64_t, Link> links_;
  Pool<Handler> handlers_;
  Pool<Rendezvous> rendezvous_;

  SimResult result_;
};

}  // namespace

Tick SimResult::end() const {
  Tick t = 0;
  for (const NpuResult& n : npus) t = std::max(t, n.finish);
  return t;
}

SimResult simulate(const SimInputs& inputs, const SimOptions& options) {
  if (options.queues_per_dim == 0) throw Error("the number of queues per dimension must be >= 1");
  if (options.backend == Backend::CongestionAware && inputs.network.npus.size() > 255)
    throw Error("too many network dimensions");
  Engine engine(inputs, options);
  return engine.run();
}

}  // namespace chakra::sim
