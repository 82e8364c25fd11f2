// The messages of a phase solved in closed form (ring phases), grouped by their ends: a flow is
// every message from one NPU to another, carried one after the other in the order sent: the
// closed-form counterpart of the event queue, shared by the network and collective layers. The
// network that opens the flows fills in how they travel: a fixed delay per flow
// (congestion-unaware), or the flow's hops, each over a link no other flow of the phase uses
// (congestion-aware; core/docs/simulator.md says why that is exact).
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <set>
#include <vector>

#include "sim/engine/event_queue.h"

namespace chakra::sim {

struct Flows {
  struct Hop {
    uint64_t link = 0;
    uint8_t dim = 0;
    Tick serial = 0;   // how long a message holds the link
    Tick latency = 0;  // when it reaches the link's far end (latency + serialisation)
    // What the phase's messages did on it: first and last arrival, when it is free again
    // (before the first: when the link is free of earlier messages), time spent waiting for it,
    // messages carried.
    Tick first = 0, last = 0, free = 0, queued = 0;
    uint64_t messages = 0;
  };

  uint64_t bytes = 0;               // every message's size
  std::vector<uint32_t> src, dst;   // per flow
  uint32_t members = 0;             // how many of the phase's members these flows are the sends of
  std::vector<Tick> delay;          // fixed-delay networks: per flow; empty otherwise
  std::vector<uint32_t> first_hop;  // flow f's hops are hops[first_hop[f], first_hop[f + 1])
  std::vector<Hop> hops;
  Tick slowest = 0;    // the longest time one message of a flow takes on idle links
  bool alike = false;  // every flow takes the same times for the same send times (set by ready_flows)

  // Empty, for a new phase (buffers keep their capacity: phase groups are pooled).
  void clear() {
    bytes = 0, members = 0, slowest = 0, alike = false;
    src.clear(), dst.clear(), delay.clear(), first_hop.clear(), hops.clear();
  }

  // When flow f's next message, sent at `sent`, arrives (messages of a flow in the order sent).
  Tick carry(uint32_t f, Tick sent) {
    if (!delay.empty()) return sent + delay[f];
    Tick t = sent;
    for (uint32_t h = first_hop[f]; h < first_hop[f + 1]; ++h) {
      Hop& hop = hops[h];
      if (hop.messages++ == 0) hop.first = t;
      hop.last = t;
      const Tick start = std::max(t, hop.free);
      hop.queued += start - t;
      hop.free = start + hop.serial;
      t = start + hop.latency;
    }
    return t;
  }
};

// Thrown by a contention network when a closed-form phase's links turn out to carry other
// traffic while the phase used them: simulate() runs again. `at`: the run was exact before it.
struct ClosedFormContended {
  Tick at;
};

// Thrown where a phase gathered to be solved in closed form cannot be after all (a direct phase
// whose members started apart, on links in different states, or whose events would tie): its
// members waited without sending, so simulate() runs again without that kind of closed form.
struct ClosedFormRefused {};

// A ring phase as the closed forms name it: its chunk's tag, phase and ring, and when its first
// member joined; the same in every run of one simulation up to where two runs part.
struct ClosedPhase {
  int64_t tag;
  uint32_t phase, base, stride, n;
  uint8_t dir;
  Tick joined;
  auto operator<=>(const ClosedPhase&) const = default;
};

// The closed-form phases of one run, and which phases a rerun may solve in closed form.
struct ClosedFormLog {
  std::vector<std::pair<ClosedPhase, Tick>> solved;  // each phase solved, and when it ended
  bool restricted = false;                           // a rerun: only `allowed` phases
  std::set<ClosedPhase> allowed;
  bool direct = true;  // direct phases gathered to be solved (false after a ClosedFormRefused)
};

}  // namespace chakra::sim
