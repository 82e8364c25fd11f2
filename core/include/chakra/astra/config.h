// ASTRA-sim's input files as plain configuration structs: the analytical network YAML, the
// system JSON, the remote-memory JSON and the communicator-group JSON, read and written exactly
// as ASTRA-sim reads them. The simulator (chakra/sim/simulate.h) runs on them; the web app, the
// StableHLO predictor and `chakra synth` build them. Where ASTRA-sim's behaviour is matched, and
// where we differ on purpose, is in ../shared/docs/astra-sim-analytical-model.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace chakra::astra {

// ---- Network (ASTRA-sim analytical YAML) -------------------------------------------------

enum class TopologyKind { Ring, FullyConnected, Switch };

struct NetworkConfig {
  std::vector<TopologyKind> topology;  // one entry per dimension, dimension 0 varies fastest
  std::vector<uint32_t> npus;          // NPUs per dimension, each >= 1 (1: a single GPU)
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

enum class Algorithm {
#define CHAKRA_COLLECTIVE_ALGORITHM(Name, spelling, flat, windowed) Name,
#include "chakra/astra/collective_algorithms.def"
#undef CHAKRA_COLLECTIVE_ALGORITHM
};
struct AlgorithmInfo {
  Algorithm kind;
  const char* spelling;  // "ring", "halvingDoubling", ...
  bool flat, windowed;   // whether "one<Spelling>" and "<spelling>N" exist
};
// Every algorithm, in Algorithm order (collective_algorithms.def).
std::span<const AlgorithmInfo> collective_algorithms();

struct AlgorithmChoice {
  Algorithm kind = Algorithm::Ring;
  bool flat = false;  // "oneRing"/"oneDirect"/"oneHalvingDoubling": one ring of all NPUs
  int window = -1;    // "directN": at most N messages in flight (-1: one per peer)
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
  double endpoint_delay = 10;  // ns per NPU <-> memory-accelerator hand-off
  uint32_t active_chunks_per_dimension = 1;
  uint32_t preferred_dataset_splits = 0;                      // chunks per collective; required (> 0)
  std::vector<AlgorithmChoice> algorithms[kCollectiveTypes];  // per dimension, by Collective
  std::string custom[kCollectiveTypes];                       // "*-implementation-custom" trace prefix, if any
  double local_mem_bw = 0;                                    // GB/s, decimal
  double peak_perf = 0;                                       // TFLOPS
  bool roofline = false;
  bool replay_only = false;
  std::vector<std::string> notes;  // keys accepted without effect, for the user
};

// Keys and values as ASTRA-sim reads them; an unknown key, a wrong type or value, and features
// this simulator does not model (model-shared-bus: 1) throw chakra::Error naming `name`.
// Relative custom-collective prefixes are resolved against `base_dir` when they do not exist
// relative to the working directory.
SystemConfig parse_system(std::string_view json, const std::string& name, const std::string& base_dir = "");
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
// {"1": [0, 1], ...}: the comm-group JSON ASTRA-sim reads (--comm-group-configuration), one
// group a line, numeric names in numeric order; from names (the converter's) or from ids.
std::string format_comm_groups(const std::map<std::string, std::vector<int64_t>>& groups);
std::string format_comm_groups(const CommGroups& groups);
// The PyTorch process groups a METADATA node lists in its inputs values (the converter's form,
// wrapped_process_groups), by number; a group listing no ranks has all `npus`. nullopt when the
// values are no process-group information; chakra::Error naming `where` for a name that is no
// number or a rank outside `npus`.
std::optional<CommGroups> metadata_process_groups(std::string_view inputs_values, uint32_t npus,
                                                  const std::string& where);

}  // namespace chakra::astra
