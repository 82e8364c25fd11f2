// Ring: each NPU sends to its neighbour in the phase's direction and receives from the other
// one; an all-reduce goes twice around (reduce-scatter, then all-gather).
//
// A ring phase is solved in closed form where the network allows it (fixed delays, or links
// each used by one flow of the phase): a member's k-th receive completes at max(its own k-th
// send, when its sender's k-th message arrives), and its next send follows after the hand-off
// (and reduction) delay, so once every member has started the phase all finish times follow
// from that recurrence: the same numbers as simulating each message (tested against it), at a
// fraction of the events.
#include <algorithm>

#include "sim/collectives/packet_algorithm.h"

namespace chakra::sim {
namespace {

class Ring final : public GatheredPacketAlgorithm {
 public:
  void start(Stream& s) const override {
    const Collective type = s.cur.type;
    const int64_t n = s.cur.ring.n;
    start_with_neighbours(s, type == Collective::AllReduce  ? 2 * (n - 1)
                             : type == Collective::AllToAll ? n * (n - 1) / 2
                                                            : n - 1);
  }

  void init(CollectiveContext& c, uint32_t si) override {
    if (c.closed_form()) return join(c, si);
    PacketAlgorithm::init(c, si);
  }

 protected:
  int64_t received_per_cycle(const Stream& s) const override { return (int64_t(s.cur.ring.n) - 1) * s.parallel; }

 private:
  // Flow i: from member i's sender to member i.
  void make_flows(const CollectiveContext&, const Stream& s, Flows& f) const override {
    const RingView& r = s.cur.ring;
    f.members = r.n;
    f.src.resize(r.n), f.dst.resize(r.n);
    for (uint32_t i = 0; i < r.n; ++i) {
      f.src[i] = r.at(s.cur.dir == Dir::Clockwise ? int64_t(i) - 1 : int64_t(i) + 1);
      f.dst[i] = r.at(i);
    }
  }

  // With equal starts and flows that take equal times, every member goes through the same
  // times (by induction over the steps), so member 0 alone is solved and stands for all.
  void solve(CollectiveContext& c, Group& g, uint32_t any) override {
    const Stream& s0 = c.stream(any);
    const PhaseSpec& p = s0.cur;
    const uint32_t n = p.ring.n;
    const int64_t steps = s0.stream_count;
    const Tick E = c.handoff_delay(s0);
    const bool reduces = p.type == Collective::ReduceScatter || p.type == Collective::AllReduce;
    const Tick R = reduces ? c.reduction_delay(g.flows.bytes) : 0;
    Flows& flows = g.flows;
    c.ready_flows(flows);
    const bool one_for_all =
        flows.alike && std::all_of(g.start.begin(), g.start.end(), [&](Tick t) { return t == g.start[0]; });
    if (c.mirrored() && !one_for_all) throw NotMirrored{};  // its members would part ways
    const uint32_t solved = one_for_all ? 1 : n;
    std::vector<uint32_t>& prev = prev_;
    std::vector<Tick>& send = send_;
    std::vector<Tick>& recv = recv_;
    prev.resize(solved), send.resize(solved), recv.resize(solved);
    Tick last_start = 0;
    for (uint32_t i = 0; i < solved; ++i) {
      prev[i] = one_for_all ? 0 : p.dir == Dir::Clockwise ? (i + n - 1) % n : (i + 1) % n;
      send[i] = g.start[i] + E;
      last_start = std::max(last_start, g.start[i]);
    }
    // Every step adds at most one message's time and one hand-off (plus, contended, the previous
    // message's): past 2^64 ns the sums below would wrap.
    c.clock().to_tick(double(last_start) + double(steps + 1) * (2 * double(flows.slowest) + double(E) + double(R)));
    const bool fixed = !flows.delay.empty();
    for (int64_t k = 0; k < steps; ++k) {
      // the packet inserted on receive k is insert k + 1: a cycle of one local and n - 1
      // received packets; all-reduce reduces in the first cycle only, reduce-scatter always
      int64_t j = k + 1;
      bool received = j % n != 0;
      bool proc =
          received && (p.type == Collective::ReduceScatter || (p.type == Collective::AllReduce && (j / n) % 2 == 0));
      Tick d = E + (proc ? R : 0);
      if (fixed)
        for (uint32_t i = 0; i < solved; ++i) recv[i] = std::max(send[i], send[prev[i]] + flows.delay[i]);
      else
        for (uint32_t i = 0; i < solved; ++i) recv[i] = std::max(send[i], flows.carry(i, send[prev[i]]));
      for (uint32_t i = 0; i < solved; ++i) send[i] = recv[i] + d;
    }
    c.close_flows(flows, uint64_t(steps), one_for_all);
    c.closed_form_solved(g.phase, *std::max_element(send.begin(), send.end()));
    const Tick now = c.clock().now();
    for (uint32_t i = 0; i < n; ++i)
      if (g.stream[i] != UINT32_MAX) c.phase_done_after(g.stream[i], send[one_for_all ? 0 : i] - now);
  }

  std::vector<uint32_t> prev_;  // solve()'s, kept for their capacity
  std::vector<Tick> send_, recv_;
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_Ring_algorithm(uint32_t, uint32_t) { return std::make_unique<Ring>(); }

}  // namespace chakra::sim
