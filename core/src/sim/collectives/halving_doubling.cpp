// Halving-doubling (recursive halving, then doubling): log2(n) steps, each with the partner
// at a distance that halves (reduce-scatter) or doubles (all-gather); the message size
// changes the other way. Needs a power-of-two number of NPUs; no all-to-all.
#include <cmath>

#include "sim/collectives/packet_algorithm.h"

namespace chakra::sim {
namespace {

class HalvingDoubling final : public PacketAlgorithm {
 public:
  void configure(PhaseSpec& p, const PhaseSite& site) override {
    uint64_t n = p.ring.n;
    if (p.type == Collective::AllToAll) throw Error(site.what() + ": halvingDoubling does not implement all-to-all");
    if ((n & (n - 1)) != 0)
      throw Error(site.what() + ": halvingDoubling needs a power-of-two number of NPUs, not " + std::to_string(n));
  }

  void start(Stream& s) const override {
    const PhaseSpec& p = s.cur;
    int64_t n = p.ring.n;
    int64_t steps = static_cast<int64_t>(std::log2(double(n)));
    s.stream_count = p.type == Collective::AllReduce ? 2 * steps : steps;
    s.msg_size = p.type == Collective::AllGather ? p.size : p.size / 2;
    s.rank_offset = p.type == Collective::AllGather ? n / 2 : 1;
    s.multiplier = p.type == Collective::AllGather ? 0.5 : 2;
    pick_partner(s);
  }

 protected:
  // As the reference computes it (the parallel count inside the logarithm's difference).
  int64_t received_per_cycle(const Stream& s) const override {
    return static_cast<int64_t>(std::log2(double(s.cur.ring.n)) - 1 * s.parallel);
  }

  void advance_peers(Stream& s) const override {
    const RingView& r = s.cur.ring;
    s.rank_offset = static_cast<int64_t>(s.rank_offset * s.multiplier);
    s.msg_size = static_cast<uint64_t>(s.msg_size / s.multiplier);
    if (s.rank_offset == int64_t(r.n) && s.cur.type == Collective::AllReduce) {
      s.multiplier = 0.5;
      s.rank_offset = static_cast<int64_t>(s.rank_offset * s.multiplier);
      s.msg_size = static_cast<uint64_t>(s.msg_size / s.multiplier);
    }
    pick_partner(s);
  }

 private:
  static void pick_partner(Stream& s) {
    Dir d = s.rank_offset == 0                                   ? Dir::Clockwise
            : (s.cur.ring.index(s.npu) / s.rank_offset) % 2 == 0 ? Dir::Clockwise
                                                                 : Dir::Anticlockwise;
    s.receiver = s.cur.ring.receiver(s.npu, d, s.rank_offset);
    s.sender = s.receiver;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_HalvingDoubling_algorithm(uint32_t, uint32_t) {
  return std::make_unique<HalvingDoubling>();
}

}  // namespace chakra::sim
