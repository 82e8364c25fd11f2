// Direct: each NPU exchanges with every other NPU of the phase in turn, with up to `window`
// messages in flight (one per peer by default). An all-reduce sends its second half only once
// every first-half message has arrived.
//
// In a mirrored run (every NPU alike and starting together, core/docs/simulator.md) a phase with
// one message in flight per peer, on a network where every peer's message takes the same time
// D, is solved in closed form. Every member hands its n - 1 messages off at once (E); they all
// arrive D later, together, and each is handed off (and reduced, R, where the collective
// reduces). That ends an all-gather, all-to-all or reduce-scatter: E + D + E (+ R). An
// all-reduce then sends its second half, which arrives D later and is handed off:
// E + D + E + R + D + E. These are the times of the events below when all events of one kind
// fall at one time, as here (tested against simulating every message).
#include <algorithm>

#include "sim/collectives/packet_algorithm.h"

namespace chakra::sim {
namespace {

class Direct final : public GatheredPacketAlgorithm {
 public:
  void start(Stream& s) const override {
    const int64_t n = s.cur.ring.n;
    start_with_neighbours(s, s.cur.type == Collective::AllReduce ? 2 * (n - 1) : n - 1);
    s.middle = n - 1;
    s.parallel = s.cur.window == -1 ? n - 1 : std::min<int64_t>(s.cur.window, n - 1);
  }

  void init(CollectiveContext& c, uint32_t si) override {
    const Stream& s = c.stream(si);
    if (c.closed_form() && c.mirrored() && !s.cur.ring.local && s.parallel == int64_t(s.cur.ring.n) - 1)
      return join(c, si);
    PacketAlgorithm::init(c, si);
  }

 protected:
  int64_t received_per_cycle(const Stream& s) const override {
    return s.cur.ring.local ? (int64_t(s.cur.ring.n) - 1) * s.parallel : s.parallel;
  }

  void advance_peers(Stream& s) const override {
    const RingView& r = s.cur.ring;
    s.receiver = r.receiver(s.receiver, s.cur.dir);
    if (s.receiver == s.npu) s.receiver = r.receiver(s.receiver, s.cur.dir);
    s.sender = r.sender(s.sender, s.cur.dir);
    if (s.sender == s.npu) s.sender = r.sender(s.sender, s.cur.dir);
  }

  bool send_ready(CollectiveContext& c, uint32_t si) override {
    Stream& s = c.stream(si);
    if (s.cur.type == Collective::AllReduce && s.stream_count <= s.middle) {
      if (s.received < s.middle) return false;
      // Up to `parallel` at once; a send that finds no message or no free slot changes nothing,
      // so the first one that fails ends the round (looping on was quadratic in the peers).
      for (int64_t i = 0, n = s.parallel; i < n && send_packet(c, si); ++i) {
      }
      return true;
    }
    return PacketAlgorithm::send_ready(c, si);
  }

 private:
  // Only mirrored phases are gathered: the flows of the one member that runs, to each peer.
  void make_flows(const Stream& s, Flows& f) const override {
    const RingView& r = s.cur.ring;
    f.members = 1;
    f.src.assign(r.n - 1, s.npu);
    for (uint32_t i = 0; i < r.n; ++i)
      if (r.at(i) != s.npu) f.dst.push_back(r.at(i));
  }

  void solve(CollectiveContext& c, Group& g, uint32_t any) override {
    const Stream& s = c.stream(any);
    Flows& flows = g.flows;
    c.ready_flows(flows);
    const Tick E = c.handoff_delay(s);
    // Peers whose messages take different times (a ring network), or times that coincide with
    // the hand-offs (zero delays), would need the order of the events: every NPU runs instead.
    if (!flows.alike || flows.delay.empty() || flows.delay[0] == 0 || E == 0) throw NotMirrored{};
    const Tick D = flows.delay[0];
    const Collective type = s.cur.type;
    const bool reduces = type == Collective::ReduceScatter || type == Collective::AllReduce;
    const Tick R = reduces ? c.reduction_delay(s.msg_size) : 0;
    const double rounds = type == Collective::AllReduce ? 2 : 1;  // messages each way per peer
    const Tick now = c.clock().now();
    // Past 2^64 ns the sum would wrap (to_tick raises the simulator's clock error).
    c.clock().to_tick(double(now) + rounds * (double(E) + double(D)) + double(E) + double(R));
    const Tick end = type == Collective::AllReduce ? now + E + D + E + R + D + E : now + E + D + E + R;
    c.close_flows(flows, type == Collective::AllReduce ? 2 : 1, true);
    c.closed_form_solved(g.phase, end);
    for (uint32_t si : g.stream)
      if (si != UINT32_MAX) c.phase_done_after(si, end - now);
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_Direct_algorithm(uint32_t, uint32_t) { return std::make_unique<Direct>(); }

}  // namespace chakra::sim
