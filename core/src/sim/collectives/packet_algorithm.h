// What ring, direct and halving-doubling share (ASTRA-sim's packet-based algorithms): the
// chunk is cut into messages; each is handed to the memory accelerator (and reduced where the
// collective reduces) before it goes out, and every arrival lets the next message be prepared.
// A subclass says how many messages a phase has, their size, and who the peers are.
#pragma once

#include "sim/collectives/collective.h"

namespace chakra::sim {

class PacketAlgorithm : public CollectiveAlgorithm {
 public:
  void init(CollectiveContext& c, uint32_t si) override;
  void on_bundle(CollectiveContext& c, uint32_t si) override;
  void on_message(CollectiveContext& c, uint32_t si) override;

 protected:
  // Messages prepared after each cycle of `parallel` local ones (the reference's non-zero
  // count).
  virtual int64_t received_per_cycle(const Stream& s) const = 0;
  // After each prepared message: move to the next peers, if the algorithm changes them.
  virtual void advance_peers(Stream& s) const {}
  // A prepared message may go out (a slot was freed); false when the phase must wait.
  virtual bool send_ready(CollectiveContext& c, uint32_t si);

  // Ring and direct: `messages` to send, each a 1/n piece of the chunk (an all-gather's whole
  // input), first to the next NPU in the phase's direction and from the previous one.
  static void start_with_neighbours(Stream& s, int64_t messages);
  void prepare_packet(CollectiveContext& c, uint32_t si);
  bool send_packet(CollectiveContext& c, uint32_t si);
};

}  // namespace chakra::sim
