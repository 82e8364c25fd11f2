#include "sim/collectives/packet_algorithm.h"

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

}  // namespace chakra::sim
