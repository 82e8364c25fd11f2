#include "sim/network/network.h"

#include <algorithm>

namespace chakra::sim {
namespace {
inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}
}  // namespace

Topology::Topology(const NetworkConfig& n) : net(n) {
  npus = static_cast<uint32_t>(net.total_npus());
  dims = static_cast<uint32_t>(net.npus.size());
  strides.resize(dims + 1, 1);
  for (uint32_t d = 0; d < dims; ++d) strides[d + 1] = strides[d] * net.npus[d];
  for (uint32_t d = 0; d < dims; ++d) bytes_per_ns.push_back(net.bandwidth[d] * (1 << 30) / (1'000'000'000));
}

uint32_t Topology::hops(uint32_t d, uint32_t src, uint32_t dst) const {
  switch (net.topology[d]) {
    case TopologyKind::Ring: {
      const uint32_t n = net.npus[d], s = coord(src, d), t = coord(dst, d);
      const uint32_t cw = t >= s ? t - s : t + n - s;
      return std::min(cw, n - cw);
    }
    case TopologyKind::FullyConnected: return 1;
    case TopologyKind::Switch: return 2;
  }
  return 1;
}

size_t Network::PairHash::operator()(const PairKey& k) const {
  return static_cast<size_t>(mix64(mix(mix(mix(uint64_t(k.tag), k.src), k.dst), k.size)));
}

Network::Network(EventQueue& queue, MessageSink& sink, const NetworkConfig& net)
    : queue_(queue),
      topo_(net),
      dim_messages_(topo_.dims, 0),
      dim_bytes_(topo_.dims, 0),
      sink_(sink),
      sink_id_(queue.add_sink(*this)) {}

uint32_t Network::first_dim(uint32_t src, uint32_t dst) const {
  uint32_t d = 0;
  while (d < topo_.dims && topo_.coord(src, d) == topo_.coord(dst, d)) ++d;
  return d;
}

void Network::carried(uint32_t src, uint32_t dst, uint64_t bytes, uint64_t count) {
  if (const uint32_t d = first_dim(src, dst); d < topo_.dims) account(d, bytes, count);
}

void Network::load(SimResult& result) const {
  result.dimensions.resize(topo_.dims);
  for (uint32_t d = 0; d < topo_.dims; ++d) {
    DimensionLoad& l = result.dimensions[d];
    l.messages = dim_messages_[d];
    l.bytes = dim_bytes_[d];
    l.busy = queue_.to_tick(static_cast<double>(l.bytes) / topo_.bytes_per_ns[d]);
  }
}

uint32_t Network::stream_of(const PairKey& pk) {
  bool added = false;
  uint32_t& id = stream_ids_.slot_for(pk, added);
  if (added) {
    id = streams_.take();
    Stream& s = streams_[id];
    s.key = pk;
    s.sends = s.recvs = s.first = 0;
    s.entries.clear();
    s.head = 0;
  }
  return id;
}

Network::MatchEntry& Network::entry(Stream& s, uint64_t seq) {
  const size_t at = s.head + static_cast<size_t>(seq - s.first);
  if (at >= s.entries.size()) s.entries.resize(at + 1);
  return s.entries[at];
}

void Network::done(uint32_t i, uint64_t seq) {
  Stream& s = streams_[i];
  MatchEntry& e = entry(s, seq);
  e.has_recv = e.arrived = true;  // marks it done
  while (s.head < s.entries.size() && s.entries[s.head].has_recv && s.entries[s.head].arrived) ++s.head, ++s.first;
  if (s.head == s.entries.size()) {
    s.entries.clear();
    s.head = 0;
    if (s.sends == s.recvs) {
      stream_ids_.erase(s.key);
      streams_.release(i);
    }
  }
}

void Network::send(uint32_t src, uint32_t dst, uint64_t bytes, int64_t tag, Handler on_arrival) {
  // Received where it is simulated: by dst's orbit's NPU, from src moved as dst was.
  const uint32_t i = symmetry_ ? stream_of(PairKey{tag, symmetry_->move_as(src, dst), symmetry_->canonical(dst), bytes})
                               : stream_of(PairKey{tag, src, dst, bytes});
  Stream& s = streams_[i];
  const uint64_t seq = s.sends++;
  entry(s, seq).send = on_arrival;
  transport(messages_.add(InFlight{MatchKey{tag, src, dst, bytes, seq}, i}));
}

void Network::recv(uint32_t npu, uint32_t src, uint64_t bytes, int64_t tag, Handler on_receive) {
  const uint32_t i = stream_of(PairKey{tag, src, npu, bytes});
  Stream& s = streams_[i];
  const uint64_t seq = s.recvs++;
  MatchEntry& e = entry(s, seq);
  if (e.arrived) {
    done(i, seq);
    schedule(queue_.now(), kHandlerNow, handlers_.add(on_receive));
    return;
  }
  e.recv = on_receive;
  e.has_recv = true;
}

void Network::arrived(uint32_t m) {
  const InFlight msg = messages_[m];
  messages_.release(m);
  delivered_ += weight(msg.key.src);
  Stream& s = streams_[msg.stream];
  MatchEntry& entry_ref = entry(s, msg.key.seq);
  const MatchEntry e = entry_ref;  // a copy: delivering may post to this stream
  if (e.has_recv) {
    done(msg.stream, msg.key.seq);
    sink_.deliver(e.send);
    sink_.deliver(e.recv);
  } else {
    entry_ref.arrived = true;
    sink_.deliver(e.send);
  }
}

void Network::on_event(const Event& e) {
  switch (e.kind) {
    case kArrival: arrived(e.a); break;
    case kHandlerNow: {
      Handler h = handlers_[e.a];
      handlers_.release(e.a);
      sink_.deliver(h);
      break;
    }
    default: on_backend_event(e); break;
  }
}

}  // namespace chakra::sim
