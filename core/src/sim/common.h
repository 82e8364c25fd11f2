// Small pieces every layer of the simulator uses: naming a node in errors, a node's replayed
// duration, and slot pools.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chakra/astra/feeder.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "sim/astra_names.h"
#include "sim/network/symmetry.h"

namespace chakra::sim {

// Thrown where a mirrored run (one NPU simulated for each class of alike NPUs) meets something
// that tells NPUs of a class apart: a collective's messages, a collective over NPUs of several
// classes, traces that differ. simulate() then runs every NPU.
struct NotMirrored {};

// How a run may let one NPU stand for others (core/docs/simulator.md): not at all; one per class
// of alike NPUs (the congestion-unaware network); one per orbit of the network's symmetries
// that map the workload onto itself (the congestion-aware network).
enum class MirrorMode : uint8_t { None, Classes, Orbits };

// The classes of a mirrored run: NPUs whose traces are alike up to node ids and to whom they
// talk, each class simulated as its lowest NPU, which stands for all of it. With Orbits, the
// classes are the orbits of `symmetry`.
struct Mirror {
  std::vector<uint32_t> rep;    // per NPU: the NPU simulated for it
  std::vector<uint32_t> size;   // per NPU: how many NPUs its class has
  std::vector<uint32_t> reps;   // the simulated NPUs, ascending
  std::vector<uint32_t> index;  // per NPU: its place in its class, ascending
  std::optional<Symmetry> symmetry;
};

// "FILE: " for messages about a configuration read from FILE; nothing if it came from no file.
inline std::string source_prefix(const std::string& source) { return source.empty() ? "" : source + ": "; }

inline std::string node_label(const FeederNode& n) {
  return "node " + std::to_string(n.id()) + " (" + std::string(n.name()) + ")";
}

// Names a node for error messages: "FILE: node ID (NAME)", built only when an error is raised
// (nodes are issued on the hot path).
struct Where {
  const std::string& file;
  const FeederNode& node;
  std::string operator()() const { return file + ": " + node_label(node); }
};

// A node's recorded duration in ns; a zero duration takes 1 ns, as the reference.
inline Tick replay_time(const Where& what) {
  uint64_t us = what.node.duration_micros();
  if (us > UINT64_MAX / 1000)
    throw Error(what() + ": duration_micros " + std::to_string(us) +
                " is past the simulator's clock (64-bit nanoseconds, 584 years)");
  return us == 0 ? 1 : us * 1000;
}

// Slots reused through a free list: indices stay valid while in use, and nothing is allocated
// per use in the steady state.
template <class T>
class Pool {
 public:
  uint32_t add(T v) {
    const uint32_t i = take();
    items_[i] = std::move(v);
    return i;
  }
  // A slot as its last user left it (its buffers keep their capacity), or a new one.
  uint32_t take() {
    if (free_.empty()) {
      items_.emplace_back();
      return static_cast<uint32_t>(items_.size() - 1);
    }
    const uint32_t i = free_.back();
    free_.pop_back();
    return i;
  }
  void release(uint32_t i) { free_.push_back(i); }
  T& operator[](uint32_t i) { return items_[i]; }
  const T& operator[](uint32_t i) const { return items_[i]; }

 private:
  std::vector<T> items_;
  std::vector<uint32_t> free_;
};

}  // namespace chakra::sim
