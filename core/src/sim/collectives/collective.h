// The collective algorithms of the system layer. A collective is cut into chunks; each chunk is
// a Stream that walks through phases (one per network dimension, or one for a communicator
// group or a custom algorithm), and each phase is run on each NPU by a CollectiveAlgorithm:
// what to send to whom, when to hand data to the memory accelerator and reduce it, when the
// phase is over. An algorithm reaches the rest of the simulator only through
// CollectiveContext, which the system layer implements (as ASTRA-sim's algorithms reach the
// network only through their stream's owner).
//
// Adding an algorithm: a file in this folder defining make_<Name>_algorithm() and one line in
// chakra/astra/collective_algorithms.def (its enumerator and config spelling).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "chakra/astra/config.h"
#include "chakra/astra/feeder.h"
#include "sim/astra_names.h"
#include "sim/common.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/flows.h"

namespace chakra::sim {

enum class Dir : uint8_t { Clockwise, Anticlockwise };

// The NPUs one phase runs over, in ring order: arithmetic (a network dimension:
// base + k * stride) or an explicit list (a communicator group).
struct RingView {
  uint32_t n = 0, stride = 1, base = 0;
  const std::vector<uint32_t>* members = nullptr;
  const std::unordered_map<uint32_t, uint32_t>* index_of = nullptr;
  bool local = false;  // communicator-group ring: fixed 10 ns hand-offs, as the reference

  uint32_t at(int64_t k) const {
    k %= n;
    if (k < 0) k += n;
    return members ? (*members)[k] : base + static_cast<uint32_t>(k) * stride;
  }
  uint32_t index(uint32_t npu) const { return members ? index_of->at(npu) : (npu - base) / stride; }
  uint32_t receiver(uint32_t npu, Dir d, int64_t steps = 1) const {
    return at(int64_t(index(npu)) + (d == Dir::Clockwise ? steps : -steps));
  }
  uint32_t sender(uint32_t npu, Dir d) const { return at(int64_t(index(npu)) + (d == Dir::Clockwise ? -1 : 1)); }
};

class CollectiveAlgorithm;

enum class TreeRole : uint8_t { Root, Intermediate, Leaf };

// One phase of a chunk on one NPU.
struct PhaseSpec {
  CollectiveAlgorithm* algo = nullptr;
  Collective type;
  uint64_t size;        // input bytes of this phase
  uint64_t final_size;  // output bytes (the next phase's input)
  int queue;
  Dir dir;
  int window = -1;
  RingView ring;
  // Double binary tree: this NPU's place in the tree picked for this chunk.
  TreeRole role = TreeRole::Leaf;
  int64_t parent = -1, left = -1, right = -1;
  // Custom (Chakra ET algorithm): its trace for this rank, and the group whose ranks it names.
  std::string custom_file;
  int group = -1;
};

struct Packet {
  uint32_t dest, src;
  uint64_t size;
};

// Prepared messages waiting for a free slot, oldest first. A vector and a read position, not a
// std::deque: a deque allocates on construction, and a stream is made per chunk per NPU while
// most (closed-form rings) never queue a message.
struct PacketQueue {
  std::vector<Packet> items;
  size_t head = 0;
  bool empty() const { return head == items.size(); }
  const Packet& front() const { return items[head]; }
  void push_back(const Packet& p) { items.push_back(p); }
  void pop_front() {
    if (++head == items.size()) clear();
  }
  void clear() { items.clear(), head = 0; }
};

enum class TreeState : uint8_t {
  Begin,
  SendingToParent,
  WaitingFromParent,
  End,
  WaitingTwoChildren,
  WaitingOneChild,
  SendingToChildren
};

// A chunk of a collective on one NPU and the state of its current phase's algorithm.
struct Stream {
  uint32_t npu = 0, dataset = 0;
  int64_t id = 0;
  int priority = 0;
  std::vector<PhaseSpec> phases;
  uint32_t next_phase = 0;
  int queue = -1;
  bool initialized = false;
  PhaseSpec cur{};
  // packet algorithms (ring, direct, halving-doubling)
  uint64_t msg_size = 0;
  int64_t stream_count = 0, parallel = 1, zero = 0, non_zero = 0, free_packets = 0, received = 0, middle = 0;
  bool toggle = false;
  uint32_t receiver = 0, sender = 0;
  int64_t rank_offset = 0;
  double multiplier = 1;
  PacketQueue packets;
  // tree
  TreeState tree_state = TreeState::Begin;
  int reductions = 0;
  // custom algorithm: its nodes, fed like a workload
  std::unique_ptr<Feeder> custom;
};

// What an algorithm may ask of the system layer. Streams are named by index; a Stream& is
// valid until the next call that may start more work.
class CollectiveContext {
 public:
  virtual Stream& stream(uint32_t si) = 0;
  virtual const EventQueue& clock() const = 0;
  virtual uint32_t npus() const = 0;

  // A message of the stream's collective (tagged with its id); a matching receive ends in the
  // algorithm's on_message.
  virtual void send(uint32_t si, uint32_t dst, uint64_t bytes) = 0;
  virtual void recv(uint32_t si, uint32_t src, uint64_t bytes) = 0;
  // Hands `bytes` to the memory accelerator (the hand-off delay of the phase's ring, or the
  // endpoint delay when `endpoint`), then reduces them when `reduce`; ends in on_bundle.
  virtual void bundle(uint32_t si, bool reduce, uint64_t bytes, bool endpoint) = 0;
  virtual Tick handoff_delay(const Stream& s) const = 0;
  virtual Tick reduction_delay(uint64_t bytes) const = 0;
  // The phase is over (now, or after `delay`): the stream moves to its next phase.
  virtual void phase_done(uint32_t si) = 0;
  virtual void phase_done_after(uint32_t si, Tick delay) = 0;

  // Closed forms: whether phases may be solved without simulating their messages; how the
  // network carries a phase's flows (false: simulate the phase message by message), their state
  // just before they are carried, and, once solved, `per_flow` messages along each flow
  // (counted, and their load recorded).
  virtual bool closed_form() const = 0;
  // A mirrored run: only NPU 0 runs, standing for every NPU, all alike; a member joining a phase
  // stands for all of its members joining then (and for every ring of its dimension).
  virtual bool mirrored() const = 0;
  virtual bool open_flows(Flows& f) const = 0;
  virtual void ready_flows(Flows& f) const = 0;
  virtual void close_flows(const Flows& f, uint64_t per_flow, bool first_for_all) = 0;
  // Whether this phase may be solved in closed form (a rerun keeps only some: ClosedFormLog),
  // and, once it is, when it ended.
  virtual bool closed_form_for(const ClosedPhase& p) const = 0;
  // Whether direct phases outside mirrored runs are gathered to be solved in closed form (not
  // after one was refused: ClosedFormRefused).
  virtual bool direct_closed_forms() const = 0;
  virtual void closed_form_solved(const ClosedPhase& p, Tick end) = 0;

  // A collective given as traces: one node's point-to-point message or timed step, ending in
  // on_node_done.
  virtual void node_send(uint32_t si, uint64_t node, uint32_t dst, uint64_t bytes, int64_t tag) = 0;
  virtual void node_recv(uint32_t si, uint64_t node, uint32_t src, uint64_t bytes, int64_t tag) = 0;
  virtual void node_after(uint32_t si, uint64_t node, Tick delay) = 0;
  virtual const std::vector<uint32_t>& group_members(int group) const = 0;

 protected:
  ~CollectiveContext() = default;
};

// Where a phase is planned: checks and tree positions name it.
struct PhaseSite {
  uint32_t npu;
  Collective collective;  // the collective the phase belongs to
  uint32_t dim;
  const Where& what;
};

// One per algorithm per simulation (it may keep state across streams, such as trees).
class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  // Checks that the algorithm can run the phase planned at `site` (errors name site.what) and
  // fills its algorithm-specific fields.
  virtual void configure(PhaseSpec& p, const PhaseSite& site) {}
  // Resets the stream's algorithm state for its new current phase.
  virtual void start(Stream& s) const {}
  // The stream's phase begins (it got its turn in its queue).
  virtual void init(CollectiveContext& c, uint32_t si) = 0;
  // A bundle() of the stream finished.
  virtual void on_bundle(CollectiveContext& c, uint32_t si) = 0;
  // A message the stream receives arrived.
  virtual void on_message(CollectiveContext& c, uint32_t si) = 0;
  // A node_send/node_recv/node_after of the stream finished.
  virtual void on_node_done(CollectiveContext& c, uint32_t si, uint64_t node);
};

// The algorithm of a config's kind, new for one simulation (registry.cpp), and the one that
// runs collectives given as Chakra traces (custom.cpp).
std::unique_ptr<CollectiveAlgorithm> make_algorithm(Algorithm kind, uint32_t npus, uint32_t dims);
std::unique_ptr<CollectiveAlgorithm> make_custom_algorithm();

}  // namespace chakra::sim
