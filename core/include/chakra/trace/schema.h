// The Chakra execution-trace schema as chakrakit sees it: node types, collective types,
// attribute value kinds, and the attributes that simulators read with the kinds they expect.
// Numbers match core/proto/et_def.proto (and therefore mlcommons/chakra) exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace chakra {

// Node.type. Values outside 0..7 can appear in files (proto3 enums are open); they are kept
// as raw integers and reported by `validate`.
enum class NodeType : int32_t {
  Invalid = 0,
  Metadata = 1,
  MemLoad = 2,
  MemStore = 3,
  Comp = 4,
  CommSend = 5,
  CommRecv = 6,
  CommColl = 7,
};
inline constexpr int32_t kNodeTypeCount = 8;

// "COMP_NODE" etc.; empty for values outside the enum.
std::string_view node_type_name(int32_t type);
std::optional<int32_t> parse_node_type(std::string_view name);

// Value of the "comm_type" attribute of COMM_COLL nodes.
enum class CommType : int32_t {
  AllReduce = 0,
  Reduce = 1,
  AllGather = 2,
  Gather = 3,
  Scatter = 4,
  Broadcast = 5,
  AllToAll = 6,
  ReduceScatter = 7,
  ReduceScatterBlock = 8,
  Barrier = 9,
};
inline constexpr int32_t kCommTypeCount = 10;

// GlobalMetadata attribute (bool) of traces that follow chakrakit's replay model for measured
// PyTorch traces (core/docs/pytorch-replay.md): simulators run CPU ops one at a time per thread
// ("tid" attribute) and GPU ops one at a time per stream ("stream"), lanes in parallel, instead
// of ASTRA-sim's one CPU, one compute and one communication slot per NPU.
inline constexpr std::string_view kReplayLanesAttr = "replay_lanes";
// GlobalMetadata attribute (uint64) of the same traces: the earliest measured start in the
// trace (µs, the profiler's clock). Ranks start their replay as far apart as these are, so a
// rank that began its step late holds the others up in collectives, as it did when measured.
inline constexpr std::string_view kReplayStartAttr = "replay_start_micros";

// Host stalls (core/docs/pytorch-replay.md, "Host stalls"): a host op one stretch of whose own
// time is far longer than its kind takes, classed by the evidence the Kineto trace holds for
// what the thread was doing. `chakra link --sync-deps` finds them, `chakra convert pytorch`
// carries them into the .et, `chakra simulate --stalls` replays them as CPU time or as waits.
enum class StallClass : uint8_t {
  Allocator,    // a cudaMalloc/cudaFree-like call took most of it (they synchronise the device)
  LaunchQueue,  // a kernel launch call took most of it (the launch queue was full)
  GpuWait,      // it ended just after GPU work on its device ended (an implicit synchronisation)
  RuntimeCall,  // another CUDA/HIP runtime call took most of it
  OtherThread,  // another thread of the process ran ops through most of it (GIL, handed-over work)
  Unexplained,  // no evidence: CPU work, or a wait the trace does not show
};
inline constexpr int kStallClassCount = 6;
// "allocator", "launch_queue", "gpu_wait", "runtime_call", "other_thread", "unexplained".
std::string_view stall_class_name(StallClass c);
std::optional<StallClass> parse_stall_class(std::string_view name);
// Node attributes of a converted stall: its class (string, stall_class_name) and its length in µs
// (uint64); the node's duration in the wait replay (uint64 µs) where it differs from the kept
// one; the nodes a node waits for in the wait replay (uint64 list). GlobalMetadata: the trace's
// number of stalls (uint64), so that readers look for the node attributes only then.
inline constexpr std::string_view kStallClassAttr = "stall_class";
inline constexpr std::string_view kStallMicrosAttr = "stall_micros";
inline constexpr std::string_view kStallWaitDurationAttr = "stall_wait_duration_micros";
inline constexpr std::string_view kStallWaitDepsAttr = "stall_wait_deps";
inline constexpr std::string_view kHostStallsAttr = "host_stalls";

// GlobalMetadata attributes of traces converted from a linked run with ProfilerStep#N
// annotations: their names (string list) and measured begin and end (uint64 lists, µs), in
// order. Simulate compares each step's window measured against simulated.
inline constexpr std::string_view kProfilerStepNamesAttr = "profiler_step_names";
inline constexpr std::string_view kProfilerStepBeginAttr = "profiler_step_begin_micros";
inline constexpr std::string_view kProfilerStepEndAttr = "profiler_step_end_micros";

// GlobalMetadata attribute (string) of traces whose times were not measured on the ranks they
// describe: "projected" (chakra project: copies of the traced ranks), "simulated" (chakra
// simulate --times-out). Their start times are not compared against simulations as measured.
inline constexpr std::string_view kTimesOriginAttr = "times_origin";
// GlobalMetadata attribute (string) of traces whose times were measured by `chakra replay` on
// real machines: how the replay was run (processes, compute scale). They compare as measured.
inline constexpr std::string_view kReplayedByAttr = "replayed_by";

// A METADATA node's PyTorch process groups as the converter stores them in its inputs values:
// the Python repr of a one-string list, ['[{"pg_name": "3", "ranks": [..]}, ...]']. The JSON
// inside when `values` is so wrapped (dropping two characters at each end, as the reference
// does); nullopt otherwise.
std::optional<std::string_view> wrapped_process_groups(std::string_view values);

// "ALL_REDUCE" etc.; empty for values outside the enum.
std::string_view comm_type_name(int64_t type);
std::optional<int32_t> parse_comm_type(std::string_view name);

// The member of AttributeProto's `value` oneof that is set. The numeric value is the field
// number on the wire; each list kind is its scalar kind + 1.
enum class AttrKind : uint8_t {
  None = 0,  // no value set
  Double = 3,
  DoubleList = 4,
  Float = 5,
  FloatList = 6,
  Int32 = 7,
  Int32List = 8,
  Int64 = 9,
  Int64List = 10,
  Uint32 = 11,
  Uint32List = 12,
  Uint64 = 13,
  Uint64List = 14,
  Sint32 = 15,
  Sint32List = 16,
  Sint64 = 17,
  Sint64List = 18,
  Fixed32 = 19,
  Fixed32List = 20,
  Fixed64 = 21,
  Fixed64List = 22,
  Sfixed32 = 23,
  Sfixed32List = 24,
  Sfixed64 = 25,
  Sfixed64List = 26,
  Bool = 27,
  BoolList = 28,
  String = 29,
  StringList = 30,
  Bytes = 31,
  BytesList = 32,
};
inline constexpr int kMaxAttrKind = 32;

constexpr bool is_valid_attr_kind(int field) { return field == 0 || (field >= 3 && field <= 32); }
constexpr bool is_list(AttrKind k) { return k != AttrKind::None && static_cast<int>(k) % 2 == 0; }
// The scalar kind of a list's elements (identity for scalars).
constexpr AttrKind element_kind(AttrKind k) { return is_list(k) ? static_cast<AttrKind>(static_cast<int>(k) - 1) : k; }
constexpr AttrKind list_kind(AttrKind scalar) { return static_cast<AttrKind>(static_cast<int>(scalar) + 1); }
// Scalar kinds holding integers (bool excluded).
constexpr bool is_integer(AttrKind k) {
  switch (k) {
    case AttrKind::Int32:
    case AttrKind::Int64:
    case AttrKind::Uint32:
    case AttrKind::Uint64:
    case AttrKind::Sint32:
    case AttrKind::Sint64:
    case AttrKind::Fixed32:
    case AttrKind::Fixed64:
    case AttrKind::Sfixed32:
    case AttrKind::Sfixed64: return true;
    default: return false;
  }
}
constexpr bool is_unsigned(AttrKind k) {
  return k == AttrKind::Uint32 || k == AttrKind::Uint64 || k == AttrKind::Fixed32 || k == AttrKind::Fixed64;
}
// Integer kinds whose value is 32 bits wide.
constexpr bool is_32bit(AttrKind k) {
  return k == AttrKind::Int32 || k == AttrKind::Uint32 || k == AttrKind::Sint32 || k == AttrKind::Fixed32 ||
         k == AttrKind::Sfixed32 || k == AttrKind::Float;
}
constexpr bool is_floating(AttrKind k) { return k == AttrKind::Double || k == AttrKind::Float; }
constexpr bool is_text(AttrKind k) { return k == AttrKind::String || k == AttrKind::Bytes; }

// Proto field name ("int64_val", "bool_list") and proto3 JSON name ("int64Val", "boolList").
std::string_view attr_kind_proto_name(AttrKind k);
std::string_view attr_kind_json_name(AttrKind k);
// Accepts either spelling.
std::optional<AttrKind> parse_attr_kind(std::string_view name);

// How strictly a consumer reads an attribute's kind.
enum class KindRule : uint8_t {
  Exact,          // only `kind` is read correctly (mlcommons feeder v1 reads one oneof case)
  AnyInteger,     // any integer kind; `kind` is what the reference writers use
  BoolOrInteger,  // a bool, or an integer read as != 0 (ASTRA-sim, feeder v3; v1 only the bool)
};

// An attribute that simulators (ASTRA-sim through its feeders) interpret.
struct KnownAttr {
  std::string_view name;
  AttrKind kind;  // the kind Chakra's writers use and feeder v1 reads
  KindRule rule;  // what feeder_v3 / ASTRA-sim accept
  std::string_view meaning;
};
std::span<const KnownAttr> known_attrs();
const KnownAttr* find_known_attr(std::string_view name);

// What a GPU op does, from its name (the table in core/docs/analyses.md; the analyses and the
// timeline class GPU work by it): kernels of communication libraries (NCCL/RCCL, HCCL, gloo,
// MSCCL and MSCCL++, NVSHMEM, oneCCL, DeepEP's dispatch/combine) communicate, memcpy/memset move
// memory, the rest computes. A node typed as a collective or send/recv communicates
// whatever its name.
enum class GpuKind : uint8_t { Computation, Communication, Memory };
constexpr int kGpuKinds = 3;
GpuKind classify_gpu_op(std::string_view name, int32_t node_type = 0);
const char* gpu_kind_name(GpuKind kind);  // HTA's names: COMPUTATION, COMMUNICATION, MEMORY
// Whether a computation kernel's name is one the table of known compute kernels names (GEMM and
// convolution libraries, PyTorch's and its libraries' kernels, compilers' generated ones;
// core/docs/analyses.md). Names it does not know still count as computation, and the analyses
// list them, so a communication library with a name of its own is noticed, not hidden.
bool is_known_compute_kernel(std::string_view name);

}  // namespace chakra
