#include "sim/network/network.h"

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

size_t Network::MatchHash::operator()(const MatchKey& k) const {
  return mix(mix(mix(mix(uint64_t(k.tag), k.src), k.dst), k.size), k.seq);
}
size_t Network::PairHash::operator()(const PairKey& k) const {
  return mix(mix(mix(uint64_t(k.tag), k.src), k.dst), k.size);
}

Network::Network(EventQueue& queue, MessageSink& sink, const NetworkConfig& net)
    : queue_(queue), topo_(net), dim_messages_(topo_.dims, 0), dim_bytes_(topo_.dims, 0), sink_(sink), sink_id_(queue.add_sink(*this)) {}

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

void Network::send(uint32_t src, uint32_t dst, uint64_t bytes, int64_t tag, Handler on_arrival) {
  PairCounters& c = counters_[PairKey{tag, src, dst, bytes}];
  MatchKey key{tag, src, dst, bytes, c.sends++};
  MatchEntry& e = matches_[key];
  e.send = on_arrival;
  transport(messages_.add(key));
}

void Network::recv(uint32_t npu, uint32_t src, uint64_t bytes, int64_t tag, Handler on_receive) {
  PairKey pk{tag, src, npu, bytes};
  PairCounters& c = counters_[pk];
  MatchKey key{tag, src, npu, bytes, c.recvs++};
  auto it = matches_.find(key);
  if (it != matches_.end() && it->second.arrived) {
    matches_.erase(it);
    forget_pair(pk);
    schedule(queue_.now(), kHandlerNow, handlers_.add(on_receive));
    return;
  }
  MatchEntry& e = it != matches_.end() ? it->second : matches_[key];
  e.recv = on_receive;
  e.has_recv = true;
}

// Sequence counters of a (tag, src, dst, size) stream are dropped once every send met its
// receive and nothing is in flight, so long runs do not accumulate them.
void Network::forget_pair(const PairKey& pk) {
  auto it = counters_.find(pk);
  if (it == counters_.end() || it->second.sends != it->second.recvs) return;
  // Messages of one pair arrive in the order sent (same route, same delay), so no entry of
  // the pair is pending once its newest one is gone.
  uint64_t last = it->second.sends;
  if (last > 0 && matches_.count(MatchKey{pk.tag, pk.src, pk.dst, pk.size, last - 1})) return;
  counters_.erase(it);
}

void Network::arrived(uint32_t m) {
  MatchKey key = messages_[m];
  messages_.release(m);
  ++delivered_;
  auto it = matches_.find(key);
  if (it == matches_.end()) throw Error("internal error: a message arrived that nobody sent");
  MatchEntry e = it->second;
  if (e.has_recv) {
    matches_.erase(it);
    forget_pair(PairKey{key.tag, key.src, key.dst, key.size});
    sink_.deliver(e.send);
    sink_.deliver(e.recv);
  } else {
    it->second.arrived = true;
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
