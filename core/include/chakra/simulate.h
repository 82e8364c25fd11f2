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

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/et_io.h"
#include "chakra/progress.h"

namespace chakra::sim {

using Tick = uint64_t;

// ---- Network (ASTRA-sim analytical YAML) -------------------------------------------------

enum class TopologyKind { Ring, FullyConnected, Switch };

struct NetworkConfig {
  std::vector<TopologyKind> topology;  // one entry per dimension, dimension 0 varies fastest
  std::vector<uint32_t> npus;          // NPUs per dimension, each > 1
  std::vector<double> bandwidth;       // per link, "GB/s" read as GiB/s (x 2^30 / 1e9 B/ns)
  std::vector<double> latency;         // ns per hop
  uint64_t total_npus() const;
};

// Parses `topology`, `npus_count`, `bandwidth`, `latency` (flow `[a, b]` or block `- a` lists).
// Anything else, lists of unequal length, unknown topologies or out-of-range values throw
// chakra::Error naming `name`.
NetworkConfig parse_network(std::string_view yaml, const std::string& name);
NetworkConfig load_network(const std::string& path);
// The YAML form of `net` (flow lists, numbers written to read back exactly): what the web app
// exports, and what both parse_network and ASTRA-sim read back to the same configuration.
std::string format_network(const NetworkConfig& net);
const char* topology_name(TopologyKind t);

// ---- System (ASTRA-sim system JSON) --------------------------------------------------------

enum class Algorithm { Ring, Direct, HalvingDoubling, DoubleBinaryTree };
struct AlgorithmChoice {
  Algorithm kind = Algorithm::Ring;
  bool flat = false;   // "oneRing"/"oneDirect"/"oneHalvingDoubling": one ring of all NPUs
  int window = -1;     // "directN": at most N messages in flight (-1: one per peer)
};
enum class SchedulingPolicy { LIFO, FIFO, Explicit };
enum class CollectiveOptimization { Baseline, LocalBWAware };

// The four collective types ASTRA-sim's system layer implements.
enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll };
constexpr int kCollectiveTypes = 4;
const char* collective_name(Collective c);

struct SystemConfig {
  SchedulingPolicy scheduling = SchedulingPolicy::LIFO;
  CollectiveOptimization optimization = CollectiveOptimization::LocalBWAware;
  double endpoint_delay = 10;                // ns per NPU <-> memory-accelerator hand-off
  uint32_t active_chunks_per_dimension = 1;
  uint32_t preferred_dataset_splits = 0;     // chunks per collective; required (> 0)
  std::vector<AlgorithmChoice> algorithms[kCollectiveTypes];  // per dimension, by Collective
  std::string custom[kCollectiveTypes];      // "*-implementation-custom" trace prefix, if any
  double local_mem_bw = 0;                   // GB/s, decimal
  double peak_perf = 0;                      // TFLOPS
  bool roofline = false;
  bool replay_only = false;
  std::vector<std::string> notes;            // keys accepted without effect, for the user
};

// Keys and values as ASTRA-sim reads them; an unknown key, a wrong type or value, and features
// this simulator does not model (model-shared-bus: 1) throw chakra::Error naming `name`.
// Relative custom-collective prefixes are resolved against `base_dir` when they do not exist
// relative to the working directory.
SystemConfig parse_system(std::string_view json, const std::string& name,
                          const std::string& base_dir = "");
SystemConfig load_system(const std::string& path);
// The JSON form of `sys` (every key ASTRA-sim needs, none it ignores; notes are not written).
std::string format_system(const SystemConfig& sys);
// ASTRA-sim's spelling: "ring", "direct", "direct4", "oneHalvingDoubling", ...
std::string algorithm_name(const AlgorithmChoice& a);

// ---- Remote memory and communicator groups -------------------------------------------------

enum class MemoryType { None, PerNpu, PerNode, Pool };
struct RemoteMemoryConfig {
  MemoryType type = MemoryType::None;
  double latency = 0;          // ns
  double bandwidth = 0;        // GB/s, decimal
  uint32_t npus_per_node = 1;  // PerNode: NPUs sharing one memory node
};
RemoteMemoryConfig parse_remote_memory(std::string_view json, const std::string& name);
RemoteMemoryConfig load_remote_memory(const std::string& path);

// Group id (> 0) -> member NPUs in ring order.
using CommGroups = std::map<int, std::vector<uint32_t>>;
CommGroups parse_comm_groups(std::string_view json, const std::string& name);
CommGroups load_comm_groups(const std::string& path);

// ---- Running ---------------------------------------------------------------------------------

enum class Backend { CongestionUnaware, CongestionAware };

struct SimInputs {
  std::string workload;  // NPU i reads `workload + "." + i + ".et"`
  // When set, NPU i's trace is (*encoded_traces)[i] (the bytes of an .et file) and `workload`
  // only names them in messages; one entry per NPU.
  const std::vector<std::string>* encoded_traces = nullptr;
  NetworkConfig network;
  SystemConfig system;
  RemoteMemoryConfig memory;
  CommGroups groups;
  // How each trace is read (limits for untrusted inputs: node count, record and input size,
  // gzip ratio); its progress field is not used.
  ReadOptions read;
  // Files the system and the groups came from, named in errors found when they meet the
  // network (a group naming an NPU it lacks); empty when they came from no file.
  std::string system_source, groups_source;
};

struct SimOptions {
  Backend backend = Backend::CongestionUnaware;
  uint32_t queues_per_dim = 1;   // --num-queues-per-dim
  double injection_scale = 1;    // multiplies endpoint-delay (as the reference: only if set)
  bool rendezvous = false;       // 8 KiB handshake before every send
  bool record_spans = false;     // fill SimResult::spans (for --timeline)
  // Simulate every message of ring phases on the congestion-unaware network instead of
  // solving them in closed form (same results, far slower; for cross-checking).
  bool every_message = false;
  // Stage "simulate": nodes run so far out of `expected_nodes` (the nodes in all traces, when
  // the caller knows them; 0 otherwise). It may stop the run.
  Progress* progress = nullptr;
  uint64_t expected_nodes = 0;
  // The run stops with an error after this many events without the clock advancing or a node
  // finishing (a livelock; every event should retire work). 0: never.
  uint64_t max_events_without_progress = uint64_t{1} << 30;
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
  bool finished = false;        // every node of the trace ran
  Tick finish = 0;              // when its last node finished (ASTRA-sim's "finished, X cycles")
  Tick exposed_comm = 0;        // finish - GPU compute time issued ("exposed communication")
  Tick compute = 0, comm = 0, cpu = 0, memory = 0;  // busy time per class (union of intervals)
  Tick overlap = 0;             // time GPU compute and communication both ran
  uint64_t nodes = 0;           // nodes run
  std::vector<std::string> stuck;  // for an unfinished NPU: what it waits on, one per node
};

struct CollectiveTotals {
  uint64_t count = 0;   // collectives issued, summed over NPUs
  uint64_t bytes = 0;   // comm_size summed over NPUs
  Tick time = 0;        // issue-to-finish summed over NPUs
};

struct SimResult {
  std::vector<NpuResult> npus;
  CollectiveTotals collectives[kCollectiveTypes + 1];  // by Collective, then broadcast
  uint64_t messages = 0;  // network messages delivered
  uint64_t events = 0;    // discrete events processed
  bool deadlock = false;  // some NPU could not finish (see NpuResult::stuck)
  std::vector<Span> spans;
  Tick end() const;       // latest finish over NPUs
};

// Runs the simulation. Bad inputs (missing trace files, malformed traces, a node ASTRA-sim
// cannot run, a config feature that is used but missing) throw chakra::Error naming the file or
// the NPU and node; a deadlock is not an error but is reported in the result.
SimResult simulate(const SimInputs& inputs, const SimOptions& options = {});

}  // namespace chakra::sim
