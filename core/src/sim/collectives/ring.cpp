// Ring: each NPU sends to its neighbour in the phase's direction and receives from the other
// one; an all-reduce goes twice around (reduce-scatter, then all-gather).
//
// On a network with fixed delays (congestion-unaware) a ring phase is solved in closed form:
// without contention a member's k-th receive completes at max(its own k-th send, its sender's
// k-th send + network time), and its next send follows after the hand-off (and reduction)
// delay, so once every member has started the phase all finish times follow from that
// recurrence: the same numbers as simulating each message (tested against it), at a fraction
// of the events.
#include <algorithm>
#include <map>
#include <tuple>

#include "sim/collectives/packet_algorithm.h"

namespace chakra::sim {
namespace {

class Ring final : public PacketAlgorithm {
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
  // The members of one phase of one chunk, gathered until all have started it.
  struct GroupKey {
    int64_t tag;
    uint32_t phase, base, stride, n;
    const void* members;
    Dir dir;
    bool operator<(const GroupKey& o) const {
      return std::tie(tag, phase, base, stride, n, members, dir) <
             std::tie(o.tag, o.phase, o.base, o.stride, o.n, o.members, o.dir);
    }
  };
  struct Group {
    uint32_t joined = 0;
    std::vector<Tick> start;
    std::vector<uint32_t> stream;
  };

  void join(CollectiveContext& c, uint32_t si) {
    const Stream& s = c.stream(si);
    const RingView& r = s.cur.ring;
    GroupKey key{s.id, s.next_phase, r.base, r.stride, r.n, r.members, s.cur.dir};
    Group& g = groups_[key];
    if (g.start.empty()) g.start.assign(r.n, 0), g.stream.assign(r.n, UINT32_MAX);
    uint32_t idx = r.index(s.npu);
    if (g.stream[idx] != UINT32_MAX)
      throw Error("NPU " + std::to_string(s.npu) + " joined the same collective phase twice "
                  "(stream ids out of step across NPUs)");
    g.start[idx] = c.clock().now();
    g.stream[idx] = si;
    if (++g.joined < r.n) return;
    Group done = std::move(g);
    groups_.erase(key);
    solve(c, done, si);
  }

  void solve(CollectiveContext& c, const Group& g, uint32_t any) {
    const Stream& s0 = c.stream(any);
    const PhaseSpec& p = s0.cur;
    const RingView& r = p.ring;
    const uint32_t n = r.n;
    const uint64_t msg = s0.msg_size;
    const int64_t steps = s0.stream_count;
    const Tick E = c.handoff_delay(s0);
    const bool reduces = p.type == Collective::ReduceScatter || p.type == Collective::AllReduce;
    const Tick R = reduces ? c.reduction_delay(msg) : 0;
    std::vector<uint32_t> prev(n);
    std::vector<Tick> net(n), send(n), recv(n);
    Tick last_start = 0, slowest_net = 0;
    for (uint32_t i = 0; i < n; ++i) {
      prev[i] = p.dir == Dir::Clockwise ? (i + n - 1) % n : (i + 1) % n;
      net[i] = c.network_delay(r.at(prev[i]), r.at(i), msg);
      send[i] = g.start[i] + E;
      last_start = std::max(last_start, g.start[i]);
      slowest_net = std::max(slowest_net, net[i]);
    }
    // Every step adds at most one hop and one handoff: past 2^64 ns the sums below would wrap.
    c.clock().to_tick(double(last_start) + double(steps + 1) * (double(slowest_net) + double(E) + double(R)));
    for (int64_t k = 0; k < steps; ++k) {
      // the packet inserted on receive k is insert k + 1: a cycle of one local and n - 1
      // received packets; all-reduce reduces in the first cycle only, reduce-scatter always
      int64_t j = k + 1;
      bool received = j % n != 0;
      bool proc = received && (p.type == Collective::ReduceScatter ||
                               (p.type == Collective::AllReduce && (j / n) % 2 == 0));
      Tick d = E + (proc ? R : 0);
      for (uint32_t i = 0; i < n; ++i) recv[i] = std::max(send[i], send[prev[i]] + net[i]);
      for (uint32_t i = 0; i < n; ++i) send[i] = recv[i] + d;
    }
    for (uint32_t i = 0; i < n; ++i) c.count_messages(r.at(prev[i]), r.at(i), msg, uint64_t(steps));
    const Tick now = c.clock().now();
    for (uint32_t i = 0; i < n; ++i) c.phase_done_after(g.stream[i], send[i] - now);
  }

  std::map<GroupKey, Group> groups_;
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_Ring_algorithm(uint32_t, uint32_t) { return std::make_unique<Ring>(); }

}  // namespace chakra::sim
