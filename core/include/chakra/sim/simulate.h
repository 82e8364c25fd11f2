// Replaying per-NPU Chakra traces on a modelled cluster: ASTRA-sim's analytical simulator
// (workload layer, system layer with chunked collectives, congestion-unaware and -aware
// networks), reproducing its numbers to the nanosecond. The behaviour matched, and where we
// deliberately differ from the reference (its crashes, hangs and silent drops), is specified in
// ../shared/docs/astra-sim-analytical-model.md and summarised in core/docs/simulator.md.
//
// Inputs are ASTRA-sim's own files: the network YAML, the system JSON, the remote-memory JSON,
// the communicator-group JSON and `PREFIX.<npu>.et` traces (one per NPU; the NPU count comes
// from the network). All times are integer nanoseconds.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/astra/config.h"
#include "chakra/format/et_io.h"
#include "chakra/trace/schema.h"
#include "chakra/support/progress.h"

namespace chakra::sim {

using Tick = uint64_t;

// ---- Running ---------------------------------------------------------------------------------

enum class Backend {
#define CHAKRA_NETWORK_BACKEND(Name, spelling) Name,
#include "chakra/sim/network_backends.def"
#undef CHAKRA_NETWORK_BACKEND
};
struct BackendInfo {
  Backend backend;
  const char* spelling;  // "unaware", "aware"
};
// Every backend, in Backend order (network_backends.def).
std::span<const BackendInfo> network_backends();

// The file NPU `npu` of the workload PREFIX reads: PREFIX.<npu>.et, or PREFIX.<npu>.et.gz when
// only that exists. Both existing is a chakra::Error naming them (which one is meant is unknown).
std::string npu_trace_file(const std::string& prefix, uint32_t npu);

// A workload given as a folder of per-NPU traces, as `chakra convert` and STAGE write them:
// STEM.<npu>.et or .et.gz for NPUs 0..N-1 (one STEM), and its communicator groups when the
// folder has STEM.comm_group.json, comm_group.json or STEM.json that reads as groups (STAGE's).
struct WorkloadFolder {
  std::string prefix;  // FOLDER/STEM
  uint32_t npus = 0;
  std::string comm_group;  // the groups' file, "" when none
};
// chakra::Error naming the folder when it holds no such traces, those of several stems, an NPU
// twice (.et and .et.gz), NPUs missing below the highest, or both comm-group files.
WorkloadFolder workload_folder(const std::string& folder);

struct SimInputs {
  std::string workload;  // NPU i reads npu_trace_file(workload, i)
  // When set, NPU i's trace is (*encoded_traces)[i] (the bytes of an .et file) and `workload`
  // only names them in messages; one entry per NPU.
  const std::vector<std::string>* encoded_traces = nullptr;
  // Else, when set, NPU i's trace is made when it is read (the bytes of an .et file; called once
  // or twice per NPU, from the simulating thread): a many-rank workload then never holds every
  // NPU's trace at once where NPUs mirror each other.
  std::function<std::string(uint32_t npu)> make_trace;
  astra::NetworkConfig network;
  astra::SystemConfig system;
  astra::RemoteMemoryConfig memory;
  astra::CommGroups groups;
  // How each trace is read (limits for untrusted inputs: node count, record and input size,
  // gzip ratio); its progress field is not used.
  ReadOptions read;
  // Files the system and the groups came from, named in errors found when they meet the
  // network (a group naming an NPU it lacks); empty when they came from no file.
  std::string system_source, groups_source;
};

// Slowdowns and heterogeneity (`--slowdown`): per-NPU speed factors, a per-NPU start delay and
// per-dimension bandwidth factors. Entries beyond the network's NPUs or dimensions are errors.
struct Slowdowns {
  std::vector<double> compute;    // per NPU: compute and CPU ops take k times as long
  std::vector<double> comm;       // per NPU: the collectives and messages it issues move k times
                                  // the bytes, so their transfers take k times as long
  std::vector<uint64_t> delay;    // per NPU: ns before its first node starts
  std::vector<double> bandwidth;  // per network dimension: its links' bandwidth times k
  // For the NPUs and dimensions past the end of each list (`all` sets them).
  double compute_rest = 1, comm_rest = 1, bandwidth_rest = 1;
  uint64_t delay_rest = 0;
  bool empty() const {
    return compute.empty() && comm.empty() && delay.empty() && bandwidth.empty() && compute_rest == 1 &&
           comm_rest == 1 && bandwidth_rest == 1 && delay_rest == 0;
  }
  double compute_of(uint32_t npu) const { return npu < compute.size() ? compute[npu] : compute_rest; }
  double comm_of(uint32_t npu) const { return npu < comm.size() ? comm[npu] : comm_rest; }
  uint64_t delay_of(uint32_t npu) const { return npu < delay.size() ? delay[npu] : delay_rest; }
  double bandwidth_of(uint32_t dim) const { return dim < bandwidth.size() ? bandwidth[dim] : bandwidth_rest; }
};
// Reads a slowdown spec: entries separated by ';' or new lines ('#' starts a comment), each a
// selector and settings separated by ':':
//   npu=3:compute=1.5      npu=0-7:comm=2      npu=1,4-5:delay=20us      dim=1:bandwidth=0.5
// NPU and dimension lists are numbers and ranges (a-b) separated by ',', or `all`; factors are
// numbers > 0; a delay is a count of ns, or with the unit ns, us or ms. Settings for the same
// NPU or dimension multiply (delays add). Throws chakra::Error naming `source` and the entry.
Slowdowns parse_slowdowns(std::string_view text, const std::string& source);
// A spec that parse_slowdowns reads back to `s` ("" for none): `all` entries first, then one per
// NPU or dimension that differs (factors relative to `all`'s, so equal up to rounding).
std::string format_slowdowns(const Slowdowns& s);

// How host stalls of replayed PyTorch traces run (core/docs/pytorch-replay.md, "Host stalls"):
// as the CPU time they were measured as, or, where a stall ended just after GPU work ended, as a
// wait for that work (the thread's next op depends on it and the stall's stretch is not spent).
enum class StallMode : uint8_t { Keep, Wait };
std::string_view stall_mode_name(StallMode m);  // "keep", "wait"

struct SimOptions {
  Backend backend = Backend::CongestionUnaware;
  StallMode stalls = StallMode::Keep;
  // When the traces have stalls that replay differently as waits, run the other mode as well
  // (SimResult::other_stall_mode), so that a report can say what it gives.
  bool compare_stall_modes = true;
  uint32_t queues_per_dim = 1;  // --num-queues-per-dim
  double injection_scale = 1;   // multiplies endpoint-delay (as the reference: only if set)
  bool rendezvous = false;      // 8 KiB handshake before every send
  bool record_spans = false;    // fill SimResult::spans (for --timeline)
  // What-if: nodes whose name contains `name_part` run `speedup` times faster: replayed and
  // roofline durations are divided by it, and so are collectives' and messages' sizes (their
  // transfers take bandwidth-bound time; latencies stay). Several that match a node multiply.
  struct Speedup {
    std::string name_part;
    double speedup = 1;
  };
  std::vector<Speedup> speedups;
  // Simulate every message of ring phases instead of solving them in closed form (same
  // results, far slower; for cross-checking).
  bool every_message = false;
  // Simulate every NPU even when they fall into classes of alike ones (SimResult::simulated_npus
  // says when one NPU stood for each class; same results, slower; for cross-checking).
  bool every_npu = false;
  // Stage "simulate": nodes run so far out of `expected_nodes` (the nodes in all traces, when
  // the caller knows them; 0 otherwise). It may stop the run.
  Progress* progress = nullptr;
  uint64_t expected_nodes = 0;
  // The run stops with an error after this many events without the clock advancing or a node
  // finishing (a livelock; every event should retire work). 0: never.
  uint64_t max_events_without_progress = uint64_t{1} << 30;
  Slowdowns slowdown;
};

enum class SpanKind : uint8_t { Compute, Cpu, Collective, Send, Recv, Memory, Other };

// One node's execution on one NPU, for timelines.
struct Span {
  uint32_t npu;
  SpanKind kind;
  uint64_t node;
  Tick start, end;
  std::string name;
};

struct NpuResult {
  bool finished = false;  // every node of the trace ran
  Tick finish = 0;        // when its last node finished (ASTRA-sim's "finished, X cycles")
  // ASTRA-sim's "exposed communication" (its per-NPU line): the finish less the GPU compute time
  // issued, so CPU time and waiting count too. Reports call it non-compute time; what they call
  // exposed communication is exposed_comm() (core/docs/simulator.md, "Exposed communication").
  Tick astra_exposed_comm = 0;
  Tick compute = 0, comm = 0, cpu = 0, memory = 0;  // busy time per class (union of intervals)
  Tick overlap = 0;                                 // time GPU compute and communication both ran
  // Exposed communication: time communication ran and GPU compute did not (the same definition
  // as measured_exposed_comm's and HTA's).
  Tick exposed_comm() const { return comm - std::min(comm, overlap); }
  uint64_t nodes = 0;              // nodes run
  std::vector<std::string> stuck;  // for an unfinished NPU: what it waits on, one per node
  // Traces with measured times (converted from a linked PyTorch trace): the span from the first
  // measured start to the last measured end over its nodes, what the simulation reproduces.
  // 0 when the trace carries no measured times.
  Tick measured_step = 0;
  // Of it, the measured exposed communication: time its communication kernels ran and its
  // compute kernels did not (as exposed_comm()). 0 without measured times.
  Tick measured_exposed_comm = 0;
  // Exposed transfer: time only a collective's transfer held the rank up — from the
  // collective's last arrival over its ranks to the rank's end of it, less the time its compute
  // ran (core/docs/pytorch-replay.md). Measured from the kernels, and simulated; 0 without
  // measured times. With communication free the simulated step approaches measured_step less
  // measured_exposed_transfer.
  Tick measured_exposed_transfer = 0, exposed_transfer = 0;
  // When the NPU began: 0, or for replay-model traces how much later its trace's measured start
  // is than the earliest NPU's; plus its Slowdowns::delay.
  Tick start = 0;
  // Its simulated step: from its start to its finish.
  Tick step() const { return finish - std::min(finish, start); }
  // Host stalls in its trace (replays of linked PyTorch traces): their measured length per
  // StallClass, and how many of the trace's ops wait for GPU work in the wait replay.
  std::array<Tick, kStallClassCount> stalls{};
  uint64_t stall_waits = 0;
  // The trace's ProfilerStep#N windows (its metadata; measured traces): over the nodes measured
  // inside each, from the first one's start to the last one's end, measured and simulated.
  struct StepWindow {
    std::string name;
    Tick annotated = 0;  // the annotation's own measured length
    Tick measured = 0, simulated = 0;
    uint64_t nodes = 0;
  };
  std::vector<StepWindow> profiler_steps;
};

// The name of SimResult::collectives[t] in JSON documents and tables: all_reduce, all_gather,
// reduce_scatter, all_to_all, broadcast.
const char* collective_totals_name(int t);

struct CollectiveTotals {
  uint64_t count = 0;  // collectives issued, summed over NPUs
  uint64_t bytes = 0;  // comm_size summed over NPUs
  Tick time = 0;       // issue-to-finish summed over NPUs
};

// Measured against simulated duration of one collective type (comm_type), over every NPU's
// collectives of that type that carry a measured duration.
struct CollectiveFit {
  int64_t comm_type = 0;
  uint64_t count = 0;
  Tick measured_median = 0, simulated_median = 0;
};

// How closely a replay reproduces when each measured node started: over every node with a
// measured start, on NPUs whose start is known (replay-model traces), |simulated start −
// measured start| with both taken from the earliest NPU's start.
struct StartError {
  uint64_t nodes = 0;
  Tick median = 0, p90 = 0;
};

// What the network carried in one dimension: messages and bytes that crossed it (a message
// counts in each dimension it crosses), and `busy`, the time those bytes take at the
// dimension's bandwidth: one link's serialisation time, summed.
struct DimensionLoad {
  uint64_t messages = 0, bytes = 0;
  Tick busy = 0;
};
// One direction of one link of the congestion-aware network (devices: NPUs 0..n−1, then the
// switches): what crossed it, its busy time, and how long messages queued for it.
struct LinkLoad {
  uint32_t from = 0, to = 0, dim = 0;
  uint64_t messages = 0, bytes = 0;
  Tick busy = 0, queued = 0;
};

struct SimResult {
  std::vector<NpuResult> npus;
  CollectiveTotals collectives[astra::kCollectiveTypes + 1];  // by Collective, then broadcast
  std::vector<CollectiveFit> measured_collectives;            // by comm_type; empty without measured times
  StartError start_error;                                     // nodes 0 without measured times
  uint64_t messages = 0;                                      // network messages delivered
  uint64_t events = 0;                                        // discrete events processed
  bool deadlock = false;                                      // some NPU could not finish (see NpuResult::stuck)
  // Congestion-aware: a phase solved in closed form shared links with other traffic, so the run
  // was done again with every message simulated (the figures are that run's).
  bool closed_form_contended = false;
  // NPUs whose traces were run: all of them, or one per class when the NPUs fall into classes whose
  // traces are the same up to node ids, communicator groups and peers, and nothing tells the NPUs
  // of a class apart (congestion-unaware network, collectives in closed form over groups within a
  // class, or over all NPUs when there is one class, peers that pair up, no per-NPU slowdowns, no
  // measured times): the lowest NPU of each class then stands for it, and the totals count every
  // NPU. On the congestion-aware network, one per orbit of the network's symmetries that map the
  // workload onto itself (core/docs/simulator.md).
  uint64_t simulated_npus = 0;
  // Which replay of host stalls ran, and, when the traces have stalls that the other replays
  // differently (SimOptions::compare_stall_modes), what the other one gave.
  StallMode stall_mode = StallMode::Keep;
  struct OtherStallMode {
    bool ran = false;
    bool deadlock = false;
    std::vector<Tick> steps;  // per NPU, NpuResult::step
    Tick end = 0;
  } other_stall_mode;
  // Traces whose start times were not measured on the ranks they describe (kTimesOriginAttr:
  // "projected", "simulated"): the origin, and no measured-vs-simulated figures. Empty otherwise.
  std::string times_origin;
  std::vector<Span> spans;
  std::vector<DimensionLoad> dimensions;  // per network dimension
  std::vector<LinkLoad> links;            // congestion-aware backend: every link used, busiest first
  Tick end() const;                       // latest finish over NPUs
};

// Runs the simulation. Bad inputs (missing trace files, malformed traces, a node ASTRA-sim
// cannot run, a config feature that is used but missing) throw chakra::Error naming the file or
// the NPU and node; a deadlock is not an error but is reported in the result.
SimResult simulate(const SimInputs& inputs, const SimOptions& options = {});

}  // namespace chakra::sim
