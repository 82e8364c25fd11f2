#include "sim/collectives/packet_algorithm.h"

#include <tuple>

namespace chakra::sim {

void CollectiveAlgorithm::on_node_done(CollectiveContext&, uint32_t, uint64_t) {
  throw Error("internal error: a collective algorithm got a node it never issued");
}

void PacketAlgorithm::init(CollectiveContext& c, uint32_t si) {
  for (int64_t i = 0, n = c.stream(si).parallel; i < n; ++i) prepare_packet(c, si);
}

void PacketAlgorithm::on_bundle(CollectiveContext& c, uint32_t si) {
  Stream& s = c.stream(si);
  ++s.free_packets;
  if (!send_ready(c, si)) return;
  Stream& t = c.stream(si);
  if (t.stream_count == 0 && t.free_packets == t.parallel) c.phase_done(si);
}

void PacketAlgorithm::on_message(CollectiveContext& c, uint32_t si) {
  ++c.stream(si).received;
  prepare_packet(c, si);
}

bool PacketAlgorithm::send_ready(CollectiveContext& c, uint32_t si) {
  send_packet(c, si);
  return true;
}

void PacketAlgorithm::start_with_neighbours(Stream& s, int64_t messages) {
  const PhaseSpec& p = s.cur;
  s.stream_count = messages;
  s.msg_size = p.type == Collective::AllGather ? p.size : p.size / p.ring.n;
  s.receiver = p.ring.receiver(s.npu, p.dir);
  s.sender = p.ring.sender(s.npu, p.dir);
}

// Prepares the next message: a cycle is `parallel` local messages, then received ones; in an
// all-reduce every other cycle reduces, in a reduce-scatter every received one does.
void PacketAlgorithm::prepare_packet(CollectiveContext& c, uint32_t si) {
  Stream& s = c.stream(si);
  if (s.zero == 0 && s.non_zero == 0) {
    s.zero = s.parallel;
    s.non_zero = received_per_cycle(s);
    s.toggle = !s.toggle;
  }
  bool reduce;
  if (s.zero > 0) {
    reduce = false;
    --s.zero;
  } else if (s.non_zero > 0) {
    reduce = s.cur.type == Collective::ReduceScatter || (s.cur.type == Collective::AllReduce && s.toggle);
    --s.non_zero;
  } else {
    throw Error("internal error: collective algorithm injected nothing");
  }
  s.packets.push_back(Packet{s.receiver, s.sender, s.msg_size});
  uint64_t bytes = s.msg_size;
  advance_peers(s);
  c.bundle(si, reduce, bytes, false);
}

// Sends the oldest prepared message and posts its receive, if a slot is free.
bool PacketAlgorithm::send_packet(CollectiveContext& c, uint32_t si) {
  Stream& s = c.stream(si);
  if (s.packets.empty() || s.stream_count == 0 || s.free_packets == 0) return false;
  Packet p = s.packets.front();
  c.send(si, p.dest, p.size);
  c.recv(si, p.src, p.size);
  Stream& t = c.stream(si);
  --t.stream_count;
  t.packets.pop_front();
  --t.free_packets;
  return true;
}

bool GatheredPacketAlgorithm::GroupKey::operator<(const GroupKey& o) const {
  return std::tie(tag, phase, base, stride, n, members, dir) <
         std::tie(o.tag, o.phase, o.base, o.stride, o.n, o.members, o.dir);
}

void GatheredPacketAlgorithm::join(CollectiveContext& c, uint32_t si) {
  const Stream& s = c.stream(si);
  const RingView& r = s.cur.ring;
  GroupKey key{s.id, s.next_phase, r.base, r.stride, r.n, r.members, s.cur.dir};
  auto [at, fresh] = group_of_.try_emplace(key, 0);
  if (fresh) {
    at->second = groups_.take();
    Group& g = groups_[at->second];
    g.joined = 0;
    // Mirrored, every member starts now: only this one's stream exists.
    g.start.assign(r.n, c.mirrored() ? c.clock().now() : 0), g.stream.assign(r.n, UINT32_MAX);
    g.flows.clear();
    g.flows.bytes = s.msg_size;
    make_flows(c, s, g.flows);
    g.phase = ClosedPhase{s.id, s.next_phase, r.base, r.stride, r.n, uint8_t(s.cur.dir), c.clock().now()};
    g.per_message = !c.closed_form_for(g.phase) || !c.open_flows(g.flows) || !solvable(c, s, g.flows);
  }
  const uint32_t gi = at->second;
  Group& g = groups_[gi];
  const uint32_t idx = r.index(s.npu);
  if (g.stream[idx] != UINT32_MAX)
    throw Error("NPU " + std::to_string(s.npu) +
                " joined the same collective phase twice "
                "(stream ids out of step across NPUs)");
  g.start[idx] = c.clock().now();
  g.stream[idx] = si;
  const bool per_message = g.per_message, all = ++g.joined == r.n || c.mirrored();
  if (all) {
    group_of_.erase(at);
    if (!per_message) solve(c, g, si);  // starts no phase: `g` stays where it is
    groups_.release(gi);
  }
  if (per_message) PacketAlgorithm::init(c, si);
}

}  // namespace chakra::sim
