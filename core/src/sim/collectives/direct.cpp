// Direct: each NPU exchanges with every other NPU of the phase in turn, with up to `window`
// messages in flight (one per peer by default). An all-reduce sends its second half only once
// every first-half message has arrived.
#include <algorithm>

#include "sim/collectives/packet_algorithm.h"

namespace chakra::sim {
namespace {

class Direct final : public PacketAlgorithm {
 public:
  void start(Stream& s) const override {
    const int64_t n = s.cur.ring.n;
    start_with_neighbours(s, s.cur.type == Collective::AllReduce ? 2 * (n - 1) : n - 1);
    s.middle = n - 1;
    s.parallel = s.cur.window == -1 ? n - 1 : std::min<int64_t>(s.cur.window, n - 1);
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
      for (int64_t i = 0, n = s.parallel; i < n; ++i) send_packet(c, si);
      return true;
    }
    return PacketAlgorithm::send_ready(c, si);
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_Direct_algorithm(uint32_t, uint32_t) { return std::make_unique<Direct>(); }

}  // namespace chakra::sim
