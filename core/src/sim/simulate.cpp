// The simulator's driver: it builds the layers, as ASTRA-sim's analytical build does, and runs
// the event loop.
//   engine/       the clock, the global event queue, per-NPU time buckets
//   network/      the network interface and its backends (congestion-unaware, -aware)
//   collectives/  one file per collective algorithm, behind CollectiveContext
//   system/       collectives cut into chunks and phases, queues, hand-offs, tag spaces
//   workload/     each NPU's trace, issued as its dependencies and resources allow
// Lower layers never call upward except through the small interfaces they declare
// (MessageSink, NodeSink, CollectiveContext). docs/architecture.md has the map.
#include "sim/engine/event_queue.h"
#include "sim/system/system.h"
#include "sim/workload/workload.h"

namespace chakra::sim {
namespace {

class Simulation {
 public:
  Simulation(const SimInputs& in, const SimOptions& o, ClosedFormLog* log = nullptr,
             MirrorMode mirror = MirrorMode::None)
      : in_(in),
        o_(o),
        queue_(in.workload),
        system_(queue_, in, o, workload_, log, mirror),
        workload_(queue_, in, o, system_, mirror) {}

  SimResult run() {
    workload_.start();
    constexpr uint64_t kCheckEvery = 1u << 12;
    uint64_t since_check = 0, events_standing_still = 0, nodes_at_check = 0;
    Tick time_at_check = 0;
    while (queue_.run_next()) {
      if (++since_check < kCheckEvery) continue;
      since_check = 0;
      const uint64_t nodes_run = workload_.nodes_run();
      const Tick now = queue_.now();
      report_progress(o_.progress, "simulate", nodes_run, o_.expected_nodes);
      // An empty queue ends a deadlocked run; a run that keeps making events while neither
      // its clock nor its finished nodes move is stopped too, instead of spinning.
      if (now != time_at_check || nodes_run != nodes_at_check) {
        time_at_check = now, nodes_at_check = nodes_run, events_standing_still = 0;
      } else if ((events_standing_still += kCheckEvery) >= o_.max_events_without_progress &&
                 o_.max_events_without_progress > 0) {
        throw Error(in_.workload + ".*.et: no progress: " + std::to_string(events_standing_still) + " events at " +
                    std::to_string(now) + " ns without the clock advancing or a node finishing (" +
                    std::to_string(nodes_run) + " nodes finished, " + std::to_string(queue_.pending()) +
                    " events pending)");
      }
    }
    SimResult result;
    workload_.finish(result);
    for (int t = 0; t <= kCollectiveTypes; ++t) result.collectives[t] = system_.totals(t);
    result.messages = system_.messages();
    system_.network_load(result);
    result.events = queue_.events_run();
    return result;
  }

 private:
  const SimInputs& in_;
  const SimOptions& o_;
  EventQueue queue_;
  System system_;  // tells workload_ (constructed next) of finished nodes, once running
  Workload workload_;
};

// How NPUs may stand for others, as far as the options tell: nothing per NPU; on the congestion-
// unaware network (ring phases in closed form hold for each ring alone) one per class of alike
// NPUs, on the congestion-aware one one per orbit of the network's symmetries. What the traces
// and the run tell (alike traces, algorithms of the collectives they issue, collectives over all
// NPUs, messages) is checked there (NotMirrored).
MirrorMode may_mirror(const SimInputs& in, const SimOptions& o) {
  const Slowdowns& slow = o.slowdown;
  if (o.every_npu || o.every_message || o.rendezvous || o.record_spans || in.network.total_npus() < 2 ||
      !slow.compute.empty() || !slow.comm.empty() || !slow.delay.empty() || slow.comm_rest != 1)
    return MirrorMode::None;
  return o.backend == Backend::CongestionUnaware ? MirrorMode::Classes : MirrorMode::Orbits;
}

// Runs with closed forms, redoing the run where one turns out contended. `direct`: whether
// direct phases are gathered to be solved (ClosedFormRefused, thrown through, says they may not).
SimResult run_closed_forms(const SimInputs& in, const SimOptions& options, bool direct) {
  ClosedFormLog attempt;
  attempt.direct = direct;
  try {
    Simulation simulation(in, options, &attempt);
    return simulation.run();
  } catch (const ClosedFormContended& contended) {
    // A closed-form phase shared links with other traffic: the run is redone. Up to the time
    // that was found the attempt was exact, and a rerun goes the same way that far: it keeps
    // the closed forms of phases that had ended by then and simulates every later phase (and
    // any that was still going) message by message, which orders them on the links as the
    // reference does (core/docs/simulator.md). Should that rerun meet contention all the same,
    // a last one simulates every message.
    ClosedFormLog rerun;
    rerun.restricted = true;
    rerun.direct = direct;
    for (const auto& [phase, end] : attempt.solved)
      if (end < contended.at) rerun.allowed.insert(phase);
    attempt = {};
    SimResult result;
    try {
      Simulation simulation(in, options, &rerun);
      result = simulation.run();
    } catch (const ClosedFormContended&) {
      SimOptions every = options;
      every.every_message = true;
      Simulation simulation(in, every);
      result = simulation.run();
    }
    result.closed_form_contended = true;
    return result;
  }
}

}  // namespace

const char* collective_totals_name(int t) {
  static const char* const names[kCollectiveTypes + 1] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                          "broadcast"};
  return t >= 0 && t <= kCollectiveTypes ? names[t] : "?";
}

Tick SimResult::end() const {
  Tick t = 0;
  for (const NpuResult& n : npus) t = std::max(t, n.finish);
  return t;
}

namespace {

SimResult simulate_once(const SimInputs& inputs, const SimOptions& options) {
  if (options.queues_per_dim == 0) throw Error("the number of queues per dimension must be >= 1");
  if (options.backend == Backend::CongestionAware && inputs.network.npus.size() > 255)
    throw Error("too many network dimensions");
  if (inputs.network.total_npus() == 0) throw Error("the network has no NPUs");
  const Slowdowns& slow = options.slowdown;
  const uint64_t npus = inputs.network.total_npus(), dims = inputs.network.bandwidth.size();
  for (const size_t listed : {slow.compute.size(), slow.comm.size(), slow.delay.size()})
    if (listed > npus)
      throw Error("the slowdowns name NPU " + std::to_string(listed - 1) + ", and the network has " +
                  std::to_string(npus) + " NPUs");
  if (slow.bandwidth.size() > dims)
    throw Error("the slowdowns name dimension " + std::to_string(slow.bandwidth.size() - 1) + ", and the network has " +
                std::to_string(dims) + " dimensions");
  const bool slowed_links = !slow.bandwidth.empty() || slow.bandwidth_rest != 1;
  SimInputs slowed;  // the network with its dimensions' bandwidth scaled
  if (slowed_links) {
    slowed = inputs;
    for (uint32_t d = 0; d < dims; ++d) slowed.network.bandwidth[d] *= slow.bandwidth_of(d);
  }
  const SimInputs& in = slowed_links ? slowed : inputs;
  // Alike NPUs: one runs for each class or orbit, unless something turns out to tell them apart.
  if (const MirrorMode mirror = may_mirror(in, options); mirror != MirrorMode::None) {
    try {
      Simulation simulation(in, options, nullptr, mirror);
      return simulation.run();
    } catch (const NotMirrored&) {}
  }
  // A direct phase refused in closed form had its members wait: the run is redone with direct
  // phases simulated message by message (outside mirrored runs), every other closed form kept.
  try {
    return run_closed_forms(in, options, true);
  } catch (const ClosedFormRefused&) {
    return run_closed_forms(in, options, false);
  }
}

}  // namespace

SimResult simulate(const SimInputs& inputs, const SimOptions& options) {
  SimResult result = simulate_once(inputs, options);
  uint64_t waits = 0;
  for (const NpuResult& n : result.npus) waits += n.stall_waits;
  if (options.compare_stall_modes && waits > 0) {
    SimOptions other = options;
    other.stalls = options.stalls == StallMode::Keep ? StallMode::Wait : StallMode::Keep;
    other.record_spans = false;
    other.compare_stall_modes = false;
    const SimResult o = simulate_once(inputs, other);
    result.other_stall_mode.ran = true;
    result.other_stall_mode.deadlock = o.deadlock;
    result.other_stall_mode.end = o.end();
    for (const NpuResult& n : o.npus) result.other_stall_mode.steps.push_back(n.step());
  }
  return result;
}

}  // namespace chakra::sim
