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
  CongestionAwareNetwork(EventQueue& queue, MessageSink& sink, const NetworkConfig& net) : Network(queue, sink, net) {
    switch_base_.resize(topo_.dims + 1, topo_.npus);
    for (uint32_t d = 0; d < topo_.dims; ++d) switch_base_[d + 1] = switch_base_[d] + topo_.npus / net.npus[d];
  }

 private:
  enum : uint8_t { kHop = kFirstBackendEvent, kLinkFree };
  struct Route {
    std::vector<uint32_t> devices;  // from source to destination
    std::vector<uint8_t> hop_dim;   // dimension of each hop's link
  };
  struct InFlight {
    std::vector<uint32_t> links;  // the route's links (indices into links_)
    uint32_t hop = 0;
  };
  struct Link {
    uint32_t from = 0, to = 0;  // devices
    bool busy = false;
    uint8_t dim = 0;
    std::deque<std::pair<uint32_t, Tick>> pending;  // message, when it began to wait
    uint64_t messages = 0, bytes = 0;
    Tick queued = 0;
    // For closed-form phases: the last arrival of any message at the link (`seen`: one came),
    // when the messages known so far have all gone through, and the span closed-form phases
    // hold it (first arrival to last end; their last arrival).
    bool seen = false;
    Tick last_arrival = 0, free_at = 0;
    Tick reserved_from = 0, reserved_until = 0, reserved_last = 0;
  };

  // A ring phase's flows are carried in closed form when no two of them share a link: each
  // link then sees one flow's messages in the order sent, after whatever reached it before the
  // phase's first message, and Flows::carry gives their times. Anything reaching a link between
  // the phase's first and last message is caught (close_flows, link_send): the run is redone.
  bool closed_forms() const override { return true; }
  bool closed_forms_contend() const override { return true; }

  bool open_flows(Flows& f) const override {
    Route r;
    f.first_hop.assign(1, 0);
    f.hops.clear();
    f.slowest = 0;
    for (size_t i = 0; i < f.src.size(); ++i) {
      route(r, f.src[i], f.dst[i]);
      Tick total = 0;
      for (size_t h = 0; h + 1 < r.devices.size(); ++h) {
        Flows::Hop hop;
        hop.link = link_key(r.devices[h], r.devices[h + 1]);
        hop.dim = r.hop_dim[h];
        const double serial = topo_.serial_ns(f.bytes, hop.dim, f.src[i]);
        hop.serial = queue_.to_tick(serial);
        hop.latency = queue_.to_tick(topo_.net.latency[hop.dim] + serial);
        total += hop.latency;
        f.hops.push_back(hop);
      }
      f.first_hop.push_back(static_cast<uint32_t>(f.hops.size()));
      f.slowest = std::max(f.slowest, total);
    }
    std::vector<uint64_t> links(f.hops.size());
    for (size_t h = 0; h < f.hops.size(); ++h) links[h] = f.hops[h].link;
    std::sort(links.begin(), links.end());
    return std::adjacent_find(links.begin(), links.end()) == links.end();
  }

  // Each hop starts from its link as it is now: free once what reached it before has gone.
  void ready_flows(Flows& f) const override {
    for (Flows::Hop& hop : f.hops) {
      const uint32_t* id = link_ids_.find(hop.link);
      hop.free = id ? links_[*id].free_at : 0;
      hop.first = hop.queued = hop.messages = 0;
    }
    f.alike = true;
    const uint32_t n = f.first_hop.size() > 1 ? f.first_hop[1] : 0;
    for (size_t i = 1; i < f.src.size() && f.alike; ++i) {
      f.alike = f.first_hop[i + 1] - f.first_hop[i] == n;
      for (uint32_t h = 0; h < n && f.alike; ++h) {
        const Flows::Hop &a = f.hops[h], &b = f.hops[f.first_hop[i] + h];
        f.alike = a.serial == b.serial && a.latency == b.latency && a.free == b.free;
      }
    }
  }

  void close_flows(const Flows& f, uint64_t per_flow, bool first_for_all) override {
    if (per_flow == 0) return;
    const Tick now = queue_.now();
    // The phase's first message reached its first link when its first member began, which may
    // be before now: the run is exact up to there, not up to now.
    Tick began = now;
    for (uint32_t h = 0; h < f.first_hop[first_for_all ? 1 : f.src.size()]; ++h)
      began = std::min(began, f.hops[h].first);
    for (size_t i = 0; i < f.src.size(); ++i) {
      for (uint32_t h = f.first_hop[i]; h < f.first_hop[i + 1]; ++h) {
        const Flows::Hop& hop = f.hops[h];
        const Flows::Hop& times = first_for_all ? f.hops[h - f.first_hop[i]] : hop;
        Link& l = links_[link_id(hop.link, hop.dim)];
        // Something reached the link at or after the phase's first message, or still waits
        // for it: the order on the link would have mixed them.
        if (!l.pending.empty() || (l.seen && l.last_arrival >= times.first)) throw ClosedFormContended{began};
        l.messages += per_flow;
        l.bytes += per_flow * f.bytes;
        l.queued += times.queued;
        l.reserved_from = l.reserved_until > now ? std::min(l.reserved_from, times.first) : times.first;
        l.reserved_until = std::max(l.reserved_until, times.free);
        l.reserved_last = std::max(l.reserved_last, times.last);
        l.seen = true;
        l.last_arrival = std::max(l.last_arrival, times.last);
        l.free_at = std::max(l.free_at, times.free);
        if (h == f.first_hop[i] || hop.dim != f.hops[h - 1].dim) account(hop.dim, f.bytes, per_flow);
      }
    }
  }

  // Run for one NPU of each orbit: each link kept stands for its orbit's (every NPU's messages
  // reach them alike), the one whose NPU end is the orbit's NPU (core/docs/simulator.md).
  bool set_symmetry(const Symmetry* s) override {
    symmetry_ = s;
    return true;
  }

  void load(SimResult& result) const override {
    Network::load(result);
    const uint32_t images = symmetry_ ? symmetry_->order() : 1;
    for (const Link& l : links_) {
      for (uint32_t e = 0; e < images; ++e) {
        LinkLoad out;
        std::tie(out.from, out.to) =
            symmetry_ ? moved(l.from, l.to, l.dim, [&](uint32_t x) { return symmetry_->apply(e, x); })
                      : std::pair(l.from, l.to);
        out.dim = l.dim;
        out.messages = l.messages, out.bytes = l.bytes, out.queued = l.queued;
        out.busy = queue_.to_tick(static_cast<double>(l.bytes) / topo_.bytes_per_ns[l.dim]);
        result.links.push_back(out);
      }
    }
    std::sort(result.links.begin(), result.links.end(), [](const LinkLoad& a, const LinkLoad& b) {
      return a.busy != b.busy ? a.busy > b.busy : std::tie(a.from, a.to) < std::tie(b.from, b.to);
    });
  }

  void transport(uint32_t m) override {
    if (in_flight_.size() <= m) in_flight_.resize(m + 1);
    const MatchKey& k = key(m);
    route(route_, k.src, k.dst);
    InFlight& fl = in_flight_[m];
    fl.hop = 0;
    fl.links.clear();
    // Each dimension the route crosses (its hops of one dimension are consecutive) carries it.
    const auto& dims = route_.hop_dim;
    for (size_t h = 0; h < dims.size(); ++h) {
      if (h == 0 || dims[h] != dims[h - 1]) account(dims[h], k.size, weight(k.src));
      uint32_t from = route_.devices[h], to = route_.devices[h + 1];
      if (symmetry_) {  // the link of the orbit's NPU that stands for this one
        const uint32_t npu = from < topo_.npus ? from : to;
        std::tie(from, to) = moved(from, to, dims[h], [&](uint32_t x) { return symmetry_->move_as(x, npu); });
      }
      fl.links.push_back(link_id(link_key(from, to), dims[h]));
    }
    if (fl.links.empty()) {
      schedule(queue_.now(), kArrival, m);
    } else {
      link_send(m);
    }
  }

  void on_backend_event(const Event& e) override {
    if (e.kind == kHop)
      hop_arrived(e.a);
    else if (e.kind == kLinkFree)
      link_free(static_cast<uint32_t>(e.b));
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
          r.devices.push_back(switch_of(cur, d));
          r.devices.push_back(base + static_cast<uint32_t>(t) * strides[d]);
          r.hop_dim.push_back(static_cast<uint8_t>(d));
          r.hop_dim.push_back(static_cast<uint8_t>(d));
          break;
        }
      }
      cur = r.devices.back();
    }
  }

  // The switch of dimension d that NPU x reaches.
  uint32_t switch_of(uint32_t x, uint32_t d) const {
    const auto& strides = topo_.strides;
    return switch_base_[d] + (x % strides[d]) + (x / strides[d + 1]) * strides[d];
  }
  // A link of dimension `dim` moved by `move` (NPU to NPU): its NPU ends moved, a switch end
  // to the switch its moved NPU end reaches (every link has an NPU end).
  template <class Move>
  std::pair<uint32_t, uint32_t> moved(uint32_t from, uint32_t to, uint32_t dim, Move move) const {
    const uint32_t npu = from < topo_.npus ? from : to;
    auto end = [&](uint32_t device) { return device < topo_.npus ? move(device) : switch_of(move(npu), dim); };
    return {end(from), end(to)};
  }

  static uint64_t link_key(uint32_t from, uint32_t to) { return (uint64_t(from) << 32) | to; }
  // The link of a link_key, made on first use.
  uint32_t link_id(uint64_t key, uint8_t dim) {
    bool added = false;
    uint32_t& id = link_ids_.slot_for(key, added);
    if (added) {
      id = static_cast<uint32_t>(links_.size());
      Link& l = links_.emplace_back();
      l.from = static_cast<uint32_t>(key >> 32), l.to = static_cast<uint32_t>(key), l.dim = dim;
    }
    return id;
  }

  void link_send(uint32_t m) {
    const InFlight& fl = in_flight_[m];
    const uint32_t link = fl.links[fl.hop];
    Link& l = links_[link];
    const Tick now = queue_.now();
    l.seen = true;
    l.last_arrival = now;
    // Closed-form messages hold the link from reserved_from to reserved_until, unless this one
    // goes through entirely before their first arrives. Held: after the last of them has
    // arrived this one waits for them to go through; amid them, it would have mixed with them.
    const bool held =
        now < l.reserved_until &&
        (l.busy || now + queue_.to_tick(topo_.serial_ns(key(m).size, l.dim, key(m).src)) > l.reserved_from);
    if (held) {
      if (now <= l.reserved_last) throw ClosedFormContended{now};
      if (!l.busy) schedule(l.reserved_until, kLinkFree, 0, link);
      l.busy = true;
      l.pending.emplace_back(m, now);
    } else if (l.busy) {
      l.pending.emplace_back(m, now);
    } else {
      transmit(link, l, m);
    }
  }

  void transmit(uint32_t link, Link& l, uint32_t m) {
    l.busy = true;
    l.messages += 1;
    l.bytes += key(m).size;
    const double serial = topo_.serial_ns(key(m).size, l.dim, key(m).src);
    Tick now = queue_.now();
    const Tick free = now + queue_.to_tick(serial);
    l.free_at = std::max(l.free_at, free);
    schedule(now + queue_.to_tick(topo_.net.latency[l.dim] + serial), kHop, m);
    schedule(free, kLinkFree, 0, link);
  }

  void hop_arrived(uint32_t m) {
    InFlight& fl = in_flight_[m];
    if (++fl.hop == fl.links.size()) {
      arrived(m);
    } else {
      link_send(m);
    }
  }

  void link_free(uint32_t link) {
    Link& l = links_[link];
    l.busy = false;
    if (!l.pending.empty()) {
      auto [m, since] = l.pending.front();
      l.pending.pop_front();
      l.queued += queue_.now() - since;
      transmit(link, l, m);
    }
  }

  std::vector<uint32_t> switch_base_;          // first switch id per dimension (after the NPUs)
  Route route_;                                // scratch
  std::vector<InFlight> in_flight_;            // per message
  std::vector<Link> links_;                    // in order of first use
  FlatIndex<uint64_t, IntegerHash> link_ids_;  // link_key -> index in links_
};

}  // namespace

std::unique_ptr<Network> make_CongestionAware_network(EventQueue& queue, MessageSink& sink, const NetworkConfig& net) {
  return std::make_unique<CongestionAwareNetwork>(queue, sink, net);
}

}  // namespace chakra::sim
