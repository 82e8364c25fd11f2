// Direct: each NPU exchanges with every other NPU of the phase in turn, with up to `window`
// messages in flight (one per peer by default). An all-reduce sends its second half only once
// every first-half message has arrived.
//
// Phases with one message in flight per peer are solved in closed form in two cases (both
// tested against simulating every message):
//
// Mirrored runs (every NPU alike and starting together, core/docs/simulator.md) on a network
// where every peer's message takes the same time D, over a dimension or a communicator group
// whose members are all as far apart. Every member hands its n - 1 messages off at once (E);
// they all arrive D later, together, and each is handed off (and reduced, R, where the
// collective reduces). That ends an all-gather, all-to-all or reduce-scatter: E + D + E (+ R).
// An all-reduce then sends its second half, which arrives D later and is handed off:
// E + D + E + R + D + E (+ R in a group of three or more, see solve_mirrored). These are the
// times of the events below when all events of one kind fall at one time, as here.
//
// A switch dimension on the congestion-aware network, every member starting together on links
// alike. Member i's messages leave through its up-link in peer order i+1, i+2, ...: its k-th
// message starts there at u_k = max(sent_k, u_(k-1) + serialisation), whoever i is. The
// down-link to member j therefore gets the k-th message of member j-k, in order of k, at
// u_k + hop time, exactly as the one down-link of member 0's flow would see member 0's
// messages: one flow through one up-link and one down-link, carried message by message in
// send order (Flows::carry), gives every member's times and every link's load. Arrivals are
// handed off and reduced as above; an all-reduce's second half goes out from the first
// hand-off that ends once every first-half message has arrived (all hand-offs ended by then at
// once, then one per later hand-off). Members that start apart, links in different states or
// already reached by other traffic, and a hand-off ending at the very time of the last arrival
// (the order of the events would decide) refuse the phase (ClosedFormRefused): its members
// waited without sending, so the run is redone with direct phases simulated message by message.
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
    if (c.closed_form() && (c.mirrored() || (c.direct_closed_forms() && !s.cur.ring.local)) &&
        s.parallel == int64_t(s.cur.ring.n) - 1)
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
      for (int64_t i = 0, n = s.parallel; i < n && send_packet(c, si); ++i) {}
      return true;
    }
    return PacketAlgorithm::send_ready(c, si);
  }

 private:
  // Mirrored: the flows of the one member that runs, to each peer. Otherwise one flow per
  // member, to the next member: on a switch it holds that member's up-link and one down-link,
  // the two links each message crosses (which down-link does not matter, see above).
  void make_flows(const CollectiveContext& c, const Stream& s, Flows& f) const override {
    const RingView& r = s.cur.ring;
    if (c.mirrored()) {
      f.members = 1;
      f.src.assign(r.n - 1, s.npu);
      for (uint32_t i = 0; i < r.n; ++i)
        if (r.at(i) != s.npu) f.dst.push_back(r.at(i));
      return;
    }
    f.members = r.n;
    for (uint32_t i = 0; i < r.n; ++i) f.src.push_back(r.at(i)), f.dst.push_back(r.at(i + 1));
  }

  // Not mirrored: only a switch dimension of a network of links (each flow two hops of one
  // dimension), with messages and hand-offs that take time (zero times would meet other events).
  bool solvable(const CollectiveContext& c, const Stream& s, const Flows& f) const override {
    if (c.mirrored()) return true;
    if (!f.delay.empty() || f.src.size() < 2 || c.handoff_delay(s) == 0) return false;
    for (size_t i = 0; i < f.src.size(); ++i) {
      if (f.first_hop[i + 1] - f.first_hop[i] != 2) return false;
      const Flows::Hop &up = f.hops[f.first_hop[i]], &down = f.hops[f.first_hop[i] + 1];
      if (up.dim != down.dim || up.serial == 0) return false;
    }
    return true;
  }

  void solve(CollectiveContext& c, Group& g, uint32_t any) override {
    if (c.mirrored()) return solve_mirrored(c, g, any);
    const Stream& s = c.stream(any);
    Flows& flows = g.flows;
    c.ready_flows(flows);
    const Tick now = c.clock().now();
    // Members that started at different times, or links in different states, part ways; the
    // members waited for each other without sending, so the run is redone with every direct
    // phase simulated message by message.
    if (!flows.alike || std::any_of(g.start.begin(), g.start.end(), [&](Tick t) { return t != now; }))
      throw ClosedFormRefused{};
    const Tick E = c.handoff_delay(s);
    const Collective type = s.cur.type;
    const bool reduces = type == Collective::ReduceScatter || type == Collective::AllReduce;
    const Tick R = reduces ? c.reduction_delay(s.msg_size) : 0;
    const int64_t peers = int64_t(s.cur.ring.n) - 1;
    // Each half sends `peers` messages one serialisation apart after waiting at most for the
    // links to be free: past 2^64 ns the sums below would wrap (to_tick raises the clock error).
    Tick wait = 0;
    for (uint32_t h = 0; h < 2; ++h) wait = std::max(wait, flows.hops[h].free > now ? flows.hops[h].free - now : 0);
    c.clock().to_tick(double(now) + double(wait) +
                      2 * (double(E) + double(R) + double(peers) * double(flows.hops[0].serial + flows.hops[1].serial) +
                           double(flows.slowest)) +
                      double(E));
    std::vector<Tick>& arrive = arrive_;
    arrive.resize(peers);
    for (int64_t k = 0; k < peers; ++k) arrive[k] = flows.carry(0, now + E);  // handed off together
    Tick end = arrive.back() + E + R;
    if (type == Collective::AllReduce) {
      // Hand-off k ends at arrive[k] + E + R; the first to end after the last arrival sends
      // every message whose hand-off has ended, each later one its own.
      const Tick last = arrive.back();
      int64_t first = 0;
      while (arrive[first] + E + R <= last) {
        if (arrive[first] + E + R == last) throw ClosedFormRefused{};
        ++first;
      }
      std::vector<Tick>& second = second_;
      second.resize(peers);
      for (int64_t k = 0; k < peers; ++k) second[k] = flows.carry(0, arrive[std::max(k, first)] + E + R);
      end = second.back() + E;
    }
    // Links that other traffic reached at or after this phase's first message (another chunk's
    // direct phase starting at the same time, say): refused too, rather than contended, so that
    // the rerun keeps every other closed form.
    try {
      c.close_flows(flows, uint64_t(type == Collective::AllReduce ? 2 * peers : peers), true);
    } catch (const ClosedFormContended&) {
      throw ClosedFormRefused{};
    }
    c.closed_form_solved(g.phase, end);
    for (uint32_t si : g.stream) c.phase_done_after(si, end - now);
  }

  void solve_mirrored(CollectiveContext& c, Group& g, uint32_t any) {
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
    // A communicator group's phase prepares every received message in one cycle of (n-1)^2
    // (received_per_cycle): an all-reduce's second-half arrivals are reduced too, where a
    // dimension's start a cycle that does not reduce (two members: a cycle of one, as there).
    const Tick R2 = type == Collective::AllReduce && s.cur.ring.local && s.cur.ring.n > 2 ? R : 0;
    const Tick now = c.clock().now();
    // Past 2^64 ns the sum would wrap (to_tick raises the simulator's clock error).
    c.clock().to_tick(double(now) + rounds * (double(E) + double(D)) + double(E) + double(R) + double(R2));
    const Tick end = type == Collective::AllReduce ? now + E + D + E + R + D + E + R2 : now + E + D + E + R;
    c.close_flows(flows, type == Collective::AllReduce ? 2 : 1, true);
    c.closed_form_solved(g.phase, end);
    for (uint32_t si : g.stream)
      if (si != UINT32_MAX) c.phase_done_after(si, end - now);
  }

  std::vector<Tick> arrive_, second_;  // solve()'s, kept for their capacity
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_Direct_algorithm(uint32_t, uint32_t) { return std::make_unique<Direct>(); }

}  // namespace chakra::sim
