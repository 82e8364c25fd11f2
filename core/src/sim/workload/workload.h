// The workload layer (ASTRA-sim's Workload and HardwareResource), one instance for all NPUs:
// each NPU's trace is fed node by node as dependencies finish; a node is issued when its
// resource (CPU, GPU compute, GPU communication) is free, and runs as a replay of its recorded
// duration, a roofline estimate, a remote-memory access, or a message or collective handed to
// the system layer. It keeps what the results report per NPU.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "chakra/sim/resources.h"
#include "sim/astra_names.h"
#include "sim/system/system.h"

namespace chakra::sim {

// The system layer's collective for a node's comm_type; none for a broadcast (5, replayed) and
// for types the simulator does not run.
inline std::optional<Collective> collective_of(int64_t comm_type) {
  switch (comm_type) {
    case 0: return Collective::AllReduce;
    case 2: return Collective::AllGather;
    case 6: return Collective::AllToAll;
    case 7: return Collective::ReduceScatter;
    default: return std::nullopt;
  }
}

// A pg_name that names a communicator group (empty and "0" mean all NPUs), and the group's
// number: nullopt unless it is at most 9 decimal digits.
inline bool names_group(std::string_view pg) { return !pg.empty() && pg != "0"; }
inline std::optional<int> group_number(std::string_view pg) {
  if (pg.empty() || pg.size() > 9 || pg.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  int v = 0;
  for (const char c : pg) v = v * 10 + (c - '0');
  return v;
}

class Workload final : public NodeSink {
 public:
  // Opens every NPU's trace (errors name the file). `mirror` other than None: every trace is read
  // once and the NPUs put in classes of alike ones, or in orbits (find_classes), and only one
  // NPU of each runs, for all of it (else NotMirrored).
  Workload(EventQueue& queue, const SimInputs& in, const SimOptions& o, System& system,
           MirrorMode mirror = MirrorMode::None);

  // Issues what every NPU can run at time 0.
  void start();
  void node_done(uint32_t n, uint64_t id) override;
  // Over all NPUs (a mirrored run's simulated NPUs count for their classes).
  uint64_t nodes_run() const { return nodes_run_; }
  // Fills result.npus, spans, deadlock and simulated_npus. A mirrored run that did not finish
  // throws NotMirrored (each NPU then names its own stuck nodes).
  void finish(SimResult& result);

 private:
  struct Running {
    Tick start;
    SpanKind kind;
  };
  struct Npu {
    std::string file;
    // The whole trace, read at start (thousands of NPUs must not hold thousands of open
    // files); the feeder reads from it, so it is declared first and outlives the feeder. Freed
    // once the feeder has read it all (NPU 0's is kept to compare the others with).
    std::unique_ptr<const std::string> bytes;
    std::unique_ptr<Feeder> feeder;
    NodeResources resources;               // what runs now, by slot or, for replay-model traces, by lane
    std::optional<uint64_t> replay_start;  // kReplayStartAttr, µs
    bool has_stalls = false;               // kHostStallsAttr: read the nodes' stall attributes
    bool derived = false;                  // kTimesOriginAttr: its times were not measured on it
    std::array<Tick, kStallClassCount> stalls{};
    uint64_t stall_waits = 0;
    // ProfilerStep#N windows (µs, measured clock) and what ran inside each.
    struct Window {
      std::string name;
      uint64_t begin = 0, end = 0;
      uint64_t measured_first = UINT64_MAX, measured_last = 0;
      Tick simulated_first = UINT64_MAX, simulated_last = 0;
      uint64_t nodes = 0;
    };
    std::vector<Window> windows;
    Tick start = 0;  // when the NPU begins (see NpuResult::start)
    bool started = false;
    uint64_t measured_first = UINT64_MAX, measured_last = 0;  // µs, over nodes with a start time
    // GPU work, measured and simulated, ns: collectives (by communicator, pg_name or "" for
    // all ranks) and compute kernels, for the exposed communication and transfer (NpuResult).
    struct GpuWork {
      std::map<std::string, std::vector<std::pair<Tick, Tick>>, std::less<>> collectives;
      std::vector<std::pair<Tick, Tick>> kernels;
    };
    GpuWork measured_work, simulated_work;
    Tick gpu_time = 0;
    bool finished = false;
    Tick finish = 0;
    std::unordered_map<uint64_t, Running> in_flight;
    std::vector<std::pair<Tick, Tick>> intervals[4];  // busy time: compute, comm, cpu, memory
    uint64_t nodes = 0;
  };

  std::string trace_file(uint32_t n) const;  // npu_trace_file(PREFIX, n)
  // NPU n's .et: the bytes given in memory, or its file's, read into `file_bytes` (errors name
  // the file).
  std::string_view trace_bytes(uint32_t n, std::string& file_bytes) const;
  // The classes of a mirrored run (classes.cpp): fills mirror_, and `rep_bytes` with the
  // simulated NPUs' traces; NotMirrored when there is nothing to gain or NPUs of a class differ.
  // `orbits`: the classes are the orbits of the network's rotations that map the workload onto
  // itself (mirror_.symmetry).
  void find_classes(std::vector<std::string>& rep_bytes, bool orbits);
  // NPU n's state (a simulated one's, in a mirrored run), and the NPU of a slot of npus_.
  Npu& npu(uint32_t n) { return npus_[slot_.empty() ? n : slot_[n]]; }
  uint32_t npu_at(uint32_t slot) const { return slot_.empty() ? slot : mirror_.reps[slot]; }
  void step(uint32_t n);
  bool issue(uint32_t n, const FeederNode& node);
  bool issue_p2p(uint32_t n, const FeederNode& node, const Where& what, bool send);
  bool issue_coll(uint32_t n, const FeederNode& node, const Where& what);
  void read_process_groups(uint32_t n, const FeederNode& node, const Where& what);
  bool finish_now(uint32_t n, uint64_t id);
  double speedup_of(const FeederNode& node) const;                // SimOptions::speedups that match it, multiplied
  double comm_speedup(uint32_t n, const FeederNode& node) const;  // and NPU n's comm slowdown
  static uint64_t faster(uint64_t v, double speedup);
  void complete(uint32_t n, uint64_t id);
  void describe_stuck(uint32_t n, NpuResult& r);
  // Fills NpuResult's measured_exposed_comm, measured_exposed_transfer and exposed_transfer.
  void add_exposed_figures(SimResult& result);
  // Per NPU, the exposed transfer of one kind of GPU work (Npu::measured_work or simulated_work).
  std::vector<Tick> exposed_transfer(Npu::GpuWork Npu::*work);
  void read_metadata(Npu& p);

  EventQueue& queue_;
  const SimInputs& in_;
  const SimOptions& o_;
  System& system_;
  uint32_t n_npus_ = 0;
  double local_mem_bw_ = 0, peak_perf_ = 0;
  std::vector<Npu> npus_;                 // every NPU, or in a mirrored run one of each class (mirror_.reps)
  Mirror mirror_;                         // a mirrored run's classes
  std::vector<uint32_t> slot_;            // a mirrored run's: per NPU, its slot in npus_ (simulated ones)
  std::vector<uint64_t> ready_scratch_;   // step()'s, kept for its capacity
  std::map<uint32_t, Tick> memory_busy_;  // shared remote memories: busy until
  uint64_t nodes_run_ = 0;                // over all NPUs, for progress
  std::vector<Span> spans_;
  // Per comm_type: the measured and simulated durations of its collectives with a measured one.
  struct Durations {
    std::vector<Tick> measured, simulated;
    void add(Tick m, Tick s) { measured.push_back(m), simulated.push_back(s); }
  };
  std::map<int64_t, Durations> collective_fit_;
  bool started_as_measured_ = false;  // every NPU has a replay start, and its start is that offset
  std::vector<Tick> start_errors_;    // |simulated − measured start| of each measured node then
  std::string times_origin_;          // kTimesOriginAttr of a trace, if one has it
};

}  // namespace chakra::sim
