// ASTRA-sim's congestion-unaware analytical network: a message takes its hops' latency plus
// its serialisation on the first dimension where its ends differ, whatever else is in flight.
#include <algorithm>

#include "sim/network/network.h"

namespace chakra::sim {
namespace {

class CongestionUnawareNetwork final : public Network {
 public:
  using Network::Network;
  bool closed_forms() const override { return true; }
  bool open_flows(Flows& f) const override;
  void ready_flows(Flows& f) const override;
  void close_flows(const Flows& f, uint64_t per_flow, bool) override {
    for (size_t i = 0; i < f.src.size(); ++i) carried(f.src[i], f.dst[i], f.bytes, per_flow);
  }
  // A message's time is set by the first dimension where its ends differ and its hops there.
  bool same_delays(uint32_t a, uint32_t b, uint32_t c, uint32_t d) const override {
    const uint32_t dim = first_dim(a, b);
    return dim == first_dim(c, d) && (dim == topo_.dims || topo_.hops(dim, a, b) == topo_.hops(dim, c, d));
  }

 private:
  Tick delay(uint32_t src, uint32_t dst, uint64_t bytes) const;
  void transport(uint32_t m) override;
};

bool CongestionUnawareNetwork::open_flows(Flows& f) const {
  f.delay.resize(f.src.size());
  for (size_t i = 0; i < f.src.size(); ++i) f.delay[i] = delay(f.src[i], f.dst[i], f.bytes);
  f.slowest = f.delay.empty() ? 0 : *std::max_element(f.delay.begin(), f.delay.end());
  return true;
}

void CongestionUnawareNetwork::ready_flows(Flows& f) const {
  f.alike = std::all_of(f.delay.begin(), f.delay.end(), [&](Tick d) { return d == f.slowest; });
}

Tick CongestionUnawareNetwork::delay(uint32_t src, uint32_t dst, uint64_t bytes) const {
  const uint32_t d = first_dim(src, dst);
  if (d == topo_.dims) return 0;
  const NetworkConfig& net = topo_.net;
  double link = topo_.hops(d, src, dst) * net.latency[d];
  double serial = topo_.serial_ns(bytes, d, src);
  return queue_.to_tick(link + serial);
}

void CongestionUnawareNetwork::transport(uint32_t m) {
  const MatchKey& k = key(m);
  carried(k.src, k.dst, k.size, weight(k.src));
  schedule(queue_.now() + delay(k.src, k.dst, k.size), kArrival, m);
}

}  // namespace

std::unique_ptr<Network> make_CongestionUnaware_network(EventQueue& queue, MessageSink& sink,
                                                        const NetworkConfig& net) {
  return std::make_unique<CongestionUnawareNetwork>(queue, sink, net);
}

}  // namespace chakra::sim
