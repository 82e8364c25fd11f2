// ASTRA-sim's congestion-aware analytical network: a message is routed hop by hop over links
// (one per direction between two devices, switches included), and each link carries one
// message at a time, queueing the others in arrival order.
#include <algorithm>
#include <deque>
#include <tuple>

#include "sim/network/network.h"

namespace chakra::sim {
namespace {

class CongestionAwareNetwork final : public Network {
 public:
  CongestionAwareNetwork(EventQueue& queue, MessageSink& sink, const NetworkConfig& net)
      : Network(queue, sink, net) {
    switch_base_.resize(topo_.dims + 1, topo_.npus);
    for (uint32_t d = 0; d < topo_.dims; ++d) switch_base_[d + 1] = switch_base_[d] + topo_.npus / net.npus[d];
  }

 private:
  enum : uint8_t { kHop = kFirstBackendEvent, kLinkFree };
  struct Route {
    std::vector<uint32_t> devices;  // from source to destination
    std::vector<uint8_t> hop_dim;   // dimension of each hop's link
    uint32_t hop = 0;
  };
  struct Link {
    bool busy = false;
    uint8_t dim = 0;
    std::deque<std::pair<uint32_t, Tick>> pending;  // message, when it began to wait
    uint64_t messages = 0, bytes = 0;
    Tick queued = 0;
  };

  void load(SimResult& result) const override {
    Network::load(result);
    for (const auto& [key, l] : links_) {
      LinkLoad out;
      out.from = static_cast<uint32_t>(key >> 32), out.to = static_cast<uint32_t>(key), out.dim = l.dim;
      out.messages = l.messages, out.bytes = l.bytes, out.queued = l.queued;
      out.busy = queue_.to_tick(static_cast<double>(l.bytes) / topo_.bytes_per_ns[l.dim]);
      result.links.push_back(out);
    }
    std::sort(result.links.begin(), result.links.end(), [](const LinkLoad& a, const LinkLoad& b) {
      return a.busy != b.busy ? a.busy > b.busy : std::tie(a.from, a.to) < std::tie(b.from, b.to);
    });
  }

  void transport(uint32_t m) override {
    if (routes_.size() <= m) routes_.resize(m + 1);
    const MatchKey& k = key(m);
    route(routes_[m], k.src, k.dst);
    routes_[m].hop = 0;
    // Each dimension the route crosses (its hops of one dimension are consecutive) carries it.
    const auto& dims = routes_[m].hop_dim;
    for (size_t h = 0; h < dims.size(); ++h)
      if (h == 0 || dims[h] != dims[h - 1]) account(dims[h], k.size, 1);
    if (routes_[m].devices.size() < 2) {
      schedule(queue_.now(), kArrival, m);
    } else {
      link_send(m);
    }
  }

  void on_backend_event(const Event& e) override {
    if (e.kind == kHop) hop_arrived(e.a);
    else if (e.kind == kLinkFree) link_free(e.b);
  }

  // Dimension by dimension, lowest first (the reference only has one dimension); within a
  // dimension as the reference routes (Ring: shorter way, ties clockwise; Switch: via the
  // switch; FullyConnected: direct).
  void route(Route& r, uint32_t src, uint32_t dst) const {
    const NetworkConfig& net = topo_.net;
    const auto& strides = topo_.strides;
    r.devices.clear();
    r.hop_dim.clear();
    r.devices.push_back(src);
    uint32_t cur = src;
    for (uint32_t d = 0; d < topo_.dims; ++d) {
      int64_t s = topo_.coord(cur, d), t = topo_.coord(dst, d), n = net.npus[d];
      if (s == t) continue;
      uint32_t base = cur - static_cast<uint32_t>(s) * strides[d];
      switch (net.topology[d]) {
        case TopologyKind::Ring: {
          int64_t cw = t - s;
          if (cw < 0) cw += n;
          int64_t step = (n - cw < cw) ? -1 : 1;
          for (int64_t c = s; c != t;) {
            c = (c + step + n) % n;
            r.devices.push_back(base + static_cast<uint32_t>(c) * strides[d]);
            r.hop_dim.push_back(static_cast<uint8_t>(d));
          }
          break;
        }
        case TopologyKind::FullyConnected:
          r.devices.push_back(base + static_cast<uint32_t>(t) * strides[d]);
          r.hop_dim.push_back(static_cast<uint8_t>(d));
          break;
        case TopologyKind::Switch: {
          uint32_t group = (cur % strides[d]) + (cur / strides[d + 1]) * strides[d];
          r.devices.push_back(switch_base_[d] + group);
          r.devices.push_back(base + static_cast<uint32_t>(t) * strides[d]);
          r.hop_dim.push_back(static_cast<uint8_t>(d));
          r.hop_dim.push_back(static_cast<uint8_t>(d));
          break;
        }
      }
      cur = r.devices.back();
    }
  }

  void link_send(uint32_t m) {
    Route& r = routes_[m];
    uint64_t key = (uint64_t(r.devices[r.hop]) << 32) | r.devices[r.hop + 1];
    Link& l = links_[key];
    l.dim = r.hop_dim[r.hop];
    if (l.busy) {
      l.pending.emplace_back(m, queue_.now());
    } else {
      transmit(key, l, m);
    }
  }

  void transmit(uint64_t link, Link& l, uint32_t m) {
    l.busy = true;
    l.messages += 1;
    l.bytes += key(m).size;
    double bytes = static_cast<double>(key(m).size);
    double serial = bytes / topo_.bytes_per_ns[l.dim] * topo_.send_factor(key(m).src);
    Tick now = queue_.now();
    schedule(now + queue_.to_tick(topo_.net.latency[l.dim] + serial), kHop, m);
    schedule(now + queue_.to_tick(serial), kLinkFree, 0, link);
  }

  void hop_arrived(uint32_t m) {
    Route& r = routes_[m];
    ++r.hop;
    if (r.hop + 1 == r.devices.size()) {
      arrived(m);
    } else {
      link_send(m);
    }
  }

  void link_free(uint64_t link) {
    Link& l = links_[link];
    l.busy = false;
    if (!l.pending.empty()) {
      auto [m, since] = l.pending.front();
      l.pending.pop_front();
      l.queued += queue_.now() - since;
      transmit(link, l, m);
    }
  }

  std::vector<uint32_t> switch_base_;  // first switch id per dimension (after the NPUs)
  std::vector<Route> routes_;          // per message in flight
  std::unordered_map<uint64_t, Link> links_;
};

}  // namespace

std::unique_ptr<Network> make_CongestionAware_network(EventQueue& queue, MessageSink& sink,
                                                       const NetworkConfig& net) {
  return std::make_unique<CongestionAwareNetwork>(queue, sink, net);
}

}  // namespace chakra::sim
