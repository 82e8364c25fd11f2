#include "sim/system/system.h"

#include <algorithm>
#include <cmath>

#include "chakra/support/text.h"

namespace chakra::sim {
namespace {

constexpr int64_t kCollectiveTags = 500000000;  // tag spaces of the reference's send types
constexpr int64_t kRendezvousTags = 1000000000;
constexpr uint64_t kRendezvousBytes = 8192;

enum HandlerKind : uint8_t { kNobody, kStreamMessage, kStreamNode, kNodeDone, kRendezvousSend, kRendezvousRecv };
enum : uint8_t { kSysBucket };

uint64_t stream_node(uint32_t si, uint64_t node) { return (uint64_t(si) << 32) | node; }

}  // namespace

System::System(EventQueue& queue, const SimInputs& in, const SimOptions& o, NodeSink& nodes, ClosedFormLog* log,
               MirrorMode mirror)
    : queue_(queue),
      in_(in),
      nodes_(nodes),
      topo_(in.network),
      network_(make_network(o.backend, queue, *this, in.network)),
      sink_id_(queue.add_sink(*this)),
      log_(network_->closed_forms_contend() ? log : nullptr) {
  const SystemConfig& s = in.system;
  // The reference scales endpoint-delay only when the key is present and keeps the product
  // in an int (its truncation is kept; past an int the conversion would be undefined).
  const double scaled_delay = s.endpoint_delay * o.injection_scale;
  if (!(scaled_delay < 2147483648.0))
    throw Error(source_prefix(in.system_source) + "endpoint-delay x injection scale (" + std::to_string(scaled_delay) +
                " ns) does not fit ASTRA-sim's int");
  endpoint_delay_ = static_cast<Tick>(static_cast<int>(scaled_delay));
  local_mem_bw_ = s.local_mem_bw * 1000000000;
  rendezvous_on_ = o.rendezvous;
  mirrored_ = mirror == MirrorMode::Classes;
  orbits_ = mirror == MirrorMode::Orbits;
  closed_form_ = network_->closed_forms() && !o.rendezvous && !o.every_message && !orbits_;
  // Slower senders: every message of theirs is simulated (closed-form phases assume equal ends).
  if (!o.slowdown.comm.empty() || o.slowdown.comm_rest != 1) {
    std::vector<double> factors(topo_.npus);
    for (uint32_t n = 0; n < topo_.npus; ++n) factors[n] = o.slowdown.comm_of(n);
    network_->set_send_slowdown(std::move(factors));
    closed_form_ = false;
  }
  threshold_ = static_cast<int>(std::ceil(double(s.active_chunks_per_dimension) / o.queues_per_dim));
  for (int t = 0; t < kCollectiveTypes; ++t)
    if (s.algorithms[t].size() > topo_.dims)
      throw Error(source_prefix(in.system_source) + "the system configuration lists " +
                  std::to_string(s.algorithms[t].size()) + " " + collective_name(Collective(t)) + " algorithms for " +
                  with_article(std::to_string(topo_.dims) + "-dimensional network"));
  for (const auto& [id, members] : in.groups) {
    Group g;
    g.members = members;
    for (uint32_t i = 0; i < members.size(); ++i) {
      if (members[i] >= topo_.npus)
        throw Error(source_prefix(in.groups_source) + "communicator group " + std::to_string(id) + " names NPU " +
                    std::to_string(members[i]) + " but the network has " + std::to_string(topo_.npus));
      g.index_of[members[i]] = i;
    }
    g.first_stream_id = int64_t(id) * 1000000;
    group_index_[id] = static_cast<int>(groups_.size());
    groups_.push_back(std::move(g));
  }
  buckets_.resize(topo_.npus);
  npus_.resize(topo_.npus);
  const uint32_t total_queues = topo_.dims * o.queues_per_dim;
  for (Npu& p : npus_) {
    p.queues.resize(total_queues);
    p.running.assign(total_queues, 0);
    for (uint32_t d = 0; d < topo_.dims; ++d) {
      QueueLevel l;
      l.first_queue = d * o.queues_per_dim;
      l.count = o.queues_per_dim;
      l.last_allocator = l.count / 2;
      p.levels.push_back(l);
    }
  }
  algorithms_.resize(collective_algorithms().size());
}

CollectiveAlgorithm& System::algorithm(Algorithm kind) {
  auto& a = algorithms_[size_t(kind)];
  if (!a) a = make_algorithm(kind, topo_.npus, topo_.dims);
  return *a;
}

// ---------------------------------------------------------------- events

// A system event on NPU n after `delay` ns (the reference's Sys::register_event).
void System::register_call(uint32_t n, Tick delay, SysCall c) {
  Tick t = queue_.now() + delay;
  if (buckets_.add(n, t, c)) queue_.schedule(t, sink_id_, kSysBucket, n);
}

void System::on_event(const Event& e) {
  const uint32_t n = e.a;
  buckets_.run(n, e.time, [&](const SysCall& c) {
    switch (c.kind) {
      case CallKind::Bundle: bundle_done(c); break;
      case CallKind::NodeDone: nodes_.node_done(n, c.arg); break;
      case CallKind::DatasetDone: dataset_step(c.obj); break;
      case CallKind::StreamNode: streams_[c.obj].cur.algo->on_node_done(*this, c.obj, c.arg); break;
      case CallKind::PhaseDone: proceed(c.obj); break;
    }
  });
}

void System::deliver(const Handler& h) {
  switch (h.kind) {
    case kNobody: break;
    case kStreamMessage: {
      uint32_t si = static_cast<uint32_t>(h.arg);
      streams_[si].cur.algo->on_message(*this, si);
      break;
    }
    case kStreamNode: {
      uint32_t si = uint32_t(h.arg >> 32);
      streams_[si].cur.algo->on_node_done(*this, si, h.arg & 0xffffffffu);
      break;
    }
    case kNodeDone: nodes_.node_done(h.npu, h.arg); break;
    case kRendezvousSend: {
      Rendezvous r = rendezvous_[h.arg];
      rendezvous_.release(static_cast<uint32_t>(h.arg));
      network_->send(r.npu, r.peer, r.size, r.tag, r.handler);
      break;
    }
    case kRendezvousRecv: {
      Rendezvous r = rendezvous_[h.arg];
      rendezvous_.release(static_cast<uint32_t>(h.arg));
      network_->recv(r.npu, r.peer, r.size, r.tag, r.handler);
      break;
    }
  }
}

// ---------------------------------------------------------------- send and receive

// The system layer's send/recv (front_end_sim_send/recv): tag spaces and rendezvous.
static int64_t wire_tag(int64_t tag, bool collective) {
  return collective ? tag % (kRendezvousTags - kCollectiveTags) + kCollectiveTags : tag % kCollectiveTags;
}
// Every message goes through these two. A mirrored run exchanges the workload's messages between
// the simulated NPUs (its classes were made so), and none of a collective's: its phases are solved
// for the whole class.
void System::sys_send(uint32_t npu, uint32_t dst, uint64_t bytes, int64_t tag, bool collective, Handler h) {
  if (mirrored_ && (collective || !mirror_ || mirror_->rep[dst] != dst)) throw NotMirrored{};
  tag = wire_tag(tag, collective);
  if (!rendezvous_on_) return network_->send(npu, dst, bytes, tag, h);
  uint32_t r = rendezvous_.add({npu, dst, tag, bytes, h});
  network_->recv(npu, dst, kRendezvousBytes, tag + kRendezvousTags, Handler{kRendezvousSend, npu, r});
}
void System::sys_recv(uint32_t npu, uint32_t src, uint64_t bytes, int64_t tag, bool collective, Handler h) {
  if (mirrored_ && (collective || !mirror_ || mirror_->rep[src] != src)) throw NotMirrored{};
  tag = wire_tag(tag, collective);
  if (!rendezvous_on_) return network_->recv(npu, src, bytes, tag, h);
  uint32_t r = rendezvous_.add({npu, src, tag, bytes, h});
  network_->send(npu, src, kRendezvousBytes, tag + kRendezvousTags, Handler{kRendezvousRecv, npu, r});
}

// A mirrored phase stands for those of its class, all alike: flows that are the sends of k members
// stand for class size / k copies, each carrying its load.
void System::close_flows(const Flows& f, uint64_t per_flow, bool first_for_all) {
  uint64_t copies = 1;
  if (mirrored_) {
    const uint64_t npus = f.dst.empty() ? 0 : weight(f.dst[0]);
    if (f.members == 0 || npus % f.members != 0) throw NotMirrored{};
    copies = npus / f.members;
  }
  closed_form_messages_ += per_flow * f.src.size() * copies;
  network_->close_flows(f, per_flow * copies, first_for_all);
}

CollectiveTotals System::totals(int t) const { return totals_[t]; }

void System::set_mirror(const Mirror& m) {
  mirror_ = &m;
  network_->set_weights(&m.size);
  if (orbits_ && !network_->set_symmetry(&*m.symmetry)) throw NotMirrored{};
}

void System::send(uint32_t si, uint32_t dst, uint64_t bytes) {
  const Stream& s = streams_[si];
  sys_send(s.npu, dst, bytes, s.id, true, Handler{});
}
void System::recv(uint32_t si, uint32_t src, uint64_t bytes) {
  const Stream& s = streams_[si];
  sys_recv(s.npu, src, bytes, s.id, true, Handler{kStreamMessage, s.npu, si});
}
void System::node_send(uint32_t si, uint64_t node, uint32_t dst, uint64_t bytes, int64_t tag) {
  uint32_t npu = streams_[si].npu;
  sys_send(npu, dst, bytes, tag, false, Handler{kStreamNode, npu, stream_node(si, node)});
}
void System::node_recv(uint32_t si, uint64_t node, uint32_t src, uint64_t bytes, int64_t tag) {
  uint32_t npu = streams_[si].npu;
  sys_recv(npu, src, bytes, tag, false, Handler{kStreamNode, npu, stream_node(si, node)});
}
void System::node_after(uint32_t si, uint64_t node, Tick delay) {
  register_call(streams_[si].npu, delay, SysCall{CallKind::StreamNode, false, si, node});
}

void System::node_message(uint32_t n, uint64_t node, uint32_t peer, uint64_t bytes, int64_t tag, bool send) {
  if (send)
    sys_send(n, peer, bytes, tag, false, Handler{kNodeDone, n, node});
  else
    sys_recv(n, peer, bytes, tag, false, Handler{kNodeDone, n, node});
}

void System::finish_after(uint32_t n, Tick delay, uint64_t node) {
  register_call(n, delay, SysCall{CallKind::NodeDone, false, 0, node});
}

// ---------------------------------------------------------------- hand-offs and reductions

Tick System::reduction_delay(uint64_t bytes) const {
  if (!(local_mem_bw_ > 0))
    throw Error("a collective needs a local reduction but the system configuration sets no 'local-mem-bw'");
  // one write and two reads of the message, each truncated (as the reference)
  Tick one = queue_.to_tick(static_cast<double>(bytes) / local_mem_bw_ * 1e9);
  if (one > UINT64_MAX / 3) queue_.clock_overflow();
  return one + one + one;
}

void System::bundle(uint32_t si, bool reduce, uint64_t bytes, bool endpoint) {
  const Stream& s = streams_[si];
  register_call(s.npu, endpoint ? endpoint_delay_ : handoff_delay(s), SysCall{CallKind::Bundle, reduce, si, bytes});
}

void System::bundle_done(const SysCall& c) {
  if (c.reduce) {
    register_call(streams_[c.obj].npu, reduction_delay(c.arg), SysCall{CallKind::Bundle, false, c.obj, c.arg});
    return;
  }
  streams_[c.obj].cur.algo->on_bundle(*this, c.obj);
}

void System::phase_done_after(uint32_t si, Tick delay) {
  register_call(streams_[si].npu, delay, SysCall{CallKind::PhaseDone, false, si, 0});
}

// ---------------------------------------------------------------- streams and queues

// A stream finished its phase, or is new (the reference's proceed_to_next_vnet_baseline):
// leave the current phase's queue, notify the dataset when no phase is left, else join the
// next phase's queue.
void System::proceed(uint32_t si) {
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
  s.zero = s.non_zero = s.free_packets = s.received = 0;
  s.toggle = false;
  s.packets.clear();
  s.parallel = 1;
  s.tree_state = TreeState::Begin;
  s.reductions = 0;
  s.cur.algo->start(s);
  insert_stream(npus_[n].queues[s.queue], si);
  int q = s.queue;
  if (prev >= 0) stream_removed(n, prev);
  start_waiting(n, q);
}

// Queue order: streams already running first, then by priority (ties: arrival order).
void System::insert_stream(std::vector<uint32_t>& q, uint32_t si) {
  size_t i = 0;
  while (i < q.size() && (streams_[q[i]].initialized || streams_[q[i]].priority >= streams_[si].priority)) ++i;
  q.insert(q.begin() + static_cast<std::ptrdiff_t>(i), si);
}

void System::start_waiting(uint32_t n, int q) {
  Npu& p = npus_[n];
  for (size_t i = static_cast<size_t>(p.running[q]); i < p.queues[q].size() && p.running[q] < threshold_; ++i) {
    uint32_t si = p.queues[q][i];
    streams_[si].initialized = true;
    streams_[si].cur.algo->init(*this, si);
    ++npus_[n].running[q];
  }
}

void System::stream_removed(uint32_t n, int q) {
  --npus_[n].running[q];
  start_waiting(n, q);
}

void System::dataset_step(uint32_t di) {
  Dataset& d = datasets_[di];
  if (++d.finished < d.total) return;
  totals_[d.kind].time += (queue_.now() - d.created) * weight(d.npu);
  uint32_t n = d.npu;
  uint64_t node = d.node;
  datasets_.release(di);
  nodes_.node_done(n, node);
}

}  // namespace chakra::sim
