// What ring, direct and halving-doubling share (ASTRA-sim's packet-based algorithms): the
// chunk is cut into messages; each is handed to the memory accelerator (and reduced where the
// collective reduces) before it goes out, and every arrival lets the next message be prepared.
// A subclass says how many messages a phase has, their size, and who the peers are.
#pragma once

#include <map>

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

// Packet algorithms whose phases may be solved in closed form (ring, direct): the members of
// one phase of one chunk are gathered until all have started it (in a mirrored run, the one
// member stands for all at once), then the subclass solves them together, or, where the
// network cannot carry the phase's flows without events, each member runs message by message.
class GatheredPacketAlgorithm : public PacketAlgorithm {
 protected:
  struct Group {
    ClosedPhase phase{};
    uint32_t joined = 0;
    bool per_message = false;  // the network cannot carry its flows in closed form
    std::vector<Tick> start;   // per member, when it joined
    std::vector<uint32_t> stream;
    Flows flows;
  };
  // Stream si starts its phase: it joins the phase's group; the last member to join solves it.
  void join(CollectiveContext& c, uint32_t si);
  // The phase's flows: src, dst and members (join clears them first and sets the bytes).
  virtual void make_flows(const CollectiveContext& c, const Stream& s, Flows& f) const = 0;
  // Whether the subclass can solve the phase over flows the network opened (false: every
  // member runs message by message).
  virtual bool solvable(const CollectiveContext& c, const Stream& s, const Flows& f) const { return true; }
  // Every member has joined: give each its phase_done_after.
  virtual void solve(CollectiveContext& c, Group& g, uint32_t any) = 0;

 private:
  struct GroupKey {
    int64_t tag;
    uint32_t phase, base, stride, n;
    const void* members;
    Dir dir;
    bool operator<(const GroupKey& o) const;
  };
  std::map<GroupKey, uint32_t> group_of_;  // phases still gathering members, by slot in groups_
  Pool<Group> groups_;                     // pooled: phases come and go by the thousand
};

}  // namespace chakra::sim
