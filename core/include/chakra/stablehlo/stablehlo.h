// StableHLO programs (the textual MLIR that JAX, PyTorch/XLA and TensorFlow lower to) as
// workloads: a parser of our own for the pretty and generic op forms, a per-op FLOP/byte cost
// model, per-device Chakra traces (compute regions between collectives, collectives with their
// replica groups, collective_permute as SEND/RECV pairs) and a step-time prediction that adds a
// per-device cost model (datasheet peaks, GEMM wave quantisation, calibrated shared efficiencies
// and a per-kernel overhead) to ASTRA-sim's analytical network model.
//
// The input is a per-device (SPMD-partitioned) program, as hespas consumes: shapes are local
// and collectives explicit. Specified in ../shared/docs/stablehlo-performance-model.md; what we
// count and why is in core/docs/stablehlo.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/sim/simulate.h"

namespace chakra {
class Trace;
}

namespace chakra::stablehlo {

// A value's type. Tensors have dims (a dynamic `?` dim counts as 1 and sets `dynamic`); tuples
// sum their members; tokens and unknown types have no bytes.
struct TensorType {
  std::string dtype;  // element type as written: f32, bf16, i1, f8E4M3FN, complex<f32>
  std::vector<int64_t> dims;
  uint32_t bits = 0;  // element width; i1 is stored as a byte and counts 8
  bool dynamic = false;
  double tuple_bytes = -1;  // >= 0 for tuple<...>: the members' bytes
  double elements() const;
  double bytes() const;
};

// What an op costs like. Control ops (call, while, case, manual_computation, fusion) are not
// listed themselves: their bodies are.
enum class OpClass : uint8_t {
  Matmul,
  Convolution,
  Elementwise,
  Reduction,
  DataMovement,
  Collective,
  Free,
  Unmodelled
};
inline constexpr int kOpClasses = 8;
const char* op_class_name(OpClass c);

enum class CollectiveKind : uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  CollectivePermute,
  CollectiveBroadcast
};
inline constexpr int kCollectiveKinds = 6;
const char* collective_kind_name(CollectiveKind k);  // "all_reduce", ...

// One collective as executed: who talks to whom, in global device ids
// (replica * num_partitions + partition).
struct CollectiveOp {
  CollectiveKind kind;
  double operand_bytes = 0;  // ASTRA-sim's comm_size: the input each device contributes
  double result_bytes = 0;
  std::vector<std::vector<uint32_t>> groups;         // resolved device groups
  std::vector<uint32_t> group_ids;                   // parallel to groups: the id in comm_groups(), 0 for one device
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // collective_permute: source -> target
  uint32_t group_size = 0;                           // as written in replica_groups (0 for collective_permute)
  uint32_t line = 0;
};

// The products a dot_general or convolution runs: `batch` independent (m x k) . (k x n) GEMMs
// (a convolution as its implicit GEMM: m = output positions, n = output features).
struct GemmShape {
  double batch = 1, m = 1, n = 1, k = 1;
};

// One executed op, after calls are inlined and while loops unrolled, in program order.
struct ExecOp {
  uint32_t name;  // index into Analysis::names
  OpClass cls;
  uint8_t dtype;        // index into Analysis::dtypes: the widest operand element type
  uint8_t kernels = 0;  // kernels it launches: 1, or 0 when fused into its consumer / free
  int32_t gemm = -1;    // index into Analysis::gemms for matmuls and convolutions
  double flops = 0, bytes = 0;
  int32_t collective = -1;                // index into Analysis::collectives
  uint32_t deps_begin = 0, deps_end = 0;  // Analysis::deps: earlier ExecOps whose results it reads
  double out_bytes = 0;                   // bytes of its results
  double arg_bytes = 0;                   // bytes it reads that no op produced (function arguments)
};

struct OpTotals {
  uint64_t count = 0;
  uint64_t kernels = 0;
  double flops = 0, bytes = 0;
};

struct AnalyzeOptions {
  uint64_t default_trip_count = 1;     // for while loops whose trip count is not a constant
  uint64_t max_exec_ops = 50'000'000;  // executed ops after unrolling; more is an error
  // Charge elementwise and data-movement ops only for the bytes that cross into or out of a
  // chain of such ops (what XLA's loop fusion leaves in memory). Off: every op reads its
  // operands and writes its results. Not applied to XLA-optimised input (mhlo.fusion present),
  // whose fusions are explicit.
  bool fuse_elementwise = true;
};

// One module's entry function (@main, else its first public function), executed.
struct Analysis {
  std::string file, module;
  uint32_t devices = 1;  // mhlo.num_partitions x mhlo.num_replicas
  int64_t num_partitions = 1, num_replicas = 1;
  std::vector<ExecOp> ops;
  std::vector<uint32_t> deps;
  std::vector<double> dep_bytes;  // parallel to deps: bytes read from that producer
  std::vector<CollectiveOp> collectives;
  std::vector<GemmShape> gemms;
  std::vector<std::string> names, dtypes;
  std::map<std::string, OpTotals> by_name;  // executed ops per op name
  OpTotals by_class[kOpClasses];
  std::vector<std::string> warnings;  // unmodelled ops, guessed trip counts, dynamic dims
  bool fused = false;                 // bytes are after the elementwise fusion pass
  double matmul_conv_flops() const;
};

// Per-file facts without executing anything (the "static" counts of golden_scan.jsonl): every op
// of every function, regions included.
struct StaticStats {
  size_t modules = 0;
  std::map<std::string, uint64_t> ops;          // op name -> occurrences
  std::map<std::string, uint64_t> collectives;  // kind -> occurrences
  double collective_operand_bytes = 0;
  std::map<std::string, uint64_t> group_sizes;  // "4" -> collectives; "None" for permutes
};

// A parsed file (one or more modules separated by `// -----`).
class Program {
 public:
  ~Program();
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  size_t modules() const;
  std::string_view module_name(size_t m) const;
  const std::string& file() const;
  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  friend Program parse_program(std::string, const std::string&);
  explicit Program(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Parses StableHLO text. Malformed input throws chakra::Error "NAME:LINE:COL: what"; MLIR
// bytecode (.mlirbc, "ML\xefR") is recognised and rejected with how to get text instead.
Program parse_program(std::string text, const std::string& name);
Program load_program(const std::string& path);

StaticStats static_stats(const Program& p);
Analysis analyze(const Program& p, size_t module = 0, const AnalyzeOptions& options = {});

// ---- devices and the cost model ------------------------------------------------------------

// How far real kernels stay from the datasheet: the same for every device (each device's own
// facts are in DeviceSpec), calibrated as core/docs/stablehlo.md describes.
struct EfficiencyModel {
  double gemm = 1;                                  // fraction of peak FLOP/s a GEMM's full waves sustain
  double bandwidth = 1;                             // fraction of HBM bandwidth kernels sustain on the bytes we count
  double kernel_overhead_s = 0;                     // per launched kernel: launch, ramp-up and tail
  static EfficiencyModel roofline() { return {}; }  // peak everything, no overhead
};

// The model of assets/stablehlo/devices.json ("model").
EfficiencyModel shipped_model();

struct DeviceSpec {
  std::string key, name, source;
  std::map<std::string, double> peak_flops;  // FLOP/s per element type (bf16, f32, tf32, ...)
  double fallback_flops = 0;                 // for element types without an entry
  double hbm_bytes_per_s = 0;
  uint32_t sms = 0;                                            // streaming multiprocessors (0: no wave quantisation)
  uint32_t tile_m = 0, tile_n = 0;                             // largest output tile one SM computes in a GEMM
  EfficiencyModel model;                                       // shipped_model() for presets
  double peak_for(std::string_view dtype, bool matmul) const;  // f32 matmul -> tf32 if listed
};

// The presets of assets/stablehlo/devices.json (compiled in), with shipped_model(). Unknown
// names throw, listing them.
DeviceSpec device_preset(std::string_view key);
std::vector<std::string> device_presets();

// Fraction of the SMs' tile slots a GEMM fills: its tiles (edge tiles padded) spread over whole
// waves of `sms` tiles, for the best tile of 64..256 a side with between half and all of the
// device's tile area (what a GEMM library would pick), K split into slices of at least 256 while
// the tiles do not fill the SMs. 1 when the device has no tile or SM count.
double wave_efficiency(const GemmShape& g, const DeviceSpec& d);

// The two sides of one op's time, before the kernel overhead: FLOPs at the sustained peak
// (matmuls and convolutions scaled by wave_efficiency) and counted bytes at the sustained
// bandwidth. Collectives cost 0 here (the network simulates them).
struct OpCost {
  double compute_s = 0, memory_s = 0, overhead_s = 0;
  double seconds() const { return (compute_s > memory_s ? compute_s : memory_s) + overhead_s; }
};
OpCost op_cost(const Analysis& a, const ExecOp& op, const DeviceSpec& d);
inline double op_seconds(const Analysis& a, const ExecOp& op, const DeviceSpec& d) {
  return op_cost(a, op, d).seconds();
}

// ---- Chakra traces ------------------------------------------------------------------------

struct ImportOptions {
  uint32_t devices = 0;  // 0: the module's own count; otherwise must equal it
};

// Device `device`'s trace: COMP nodes for runs of compute between collectives (duration_micros
// from the roofline, rounded so that totals are kept; num_ops = FLOPs, tensor_size = bytes),
// COMM_COLL nodes with comm_size = operand bytes and pg_name = the device's group id, SEND/RECV
// for collective_permute. Collectives whose group is only this device are local and cost
// nothing. Dependencies follow the SSA def-use chains plus program order between compute nodes.
void device_trace(const Analysis& a, const DeviceSpec& d, uint32_t device, Trace& out);

// Group id ("1", "2", ...) -> member devices, numbered in order of first use.
std::map<std::string, std::vector<int64_t>> comm_groups(const Analysis& a);

// ---- prediction ---------------------------------------------------------------------------

struct ClassBreakdown {
  OpTotals totals;
  double seconds = 0;          // sum of op_seconds
  double compute_bound_s = 0;  // the part of `seconds` where FLOPs, not bytes, bound the op
  double overhead_s = 0;       // the part of `seconds` that is per-kernel overhead
};

struct Prediction {
  double step_s = 0;          // simulated finish of the slowest device
  double compute_s = 0;       // sum of op_seconds on one device
  double exposed_comm_s = 0;  // step minus compute on the slowest device
  ClassBreakdown classes[kOpClasses];
  double collective_bytes[kCollectiveKinds] = {};  // operand bytes per device 0
  uint64_t collective_count[kCollectiveKinds] = {};
  sim::SimResult sim;
};

// The system config used when none is given: hespas' ASTRA-sim settings (LIFO, localBWAware,
// one chunk, endpoint delay 1), direct collectives on fully connected dimensions and ring
// otherwise, local memory bandwidth = the device's HBM.
astra::SystemConfig default_system(const astra::NetworkConfig& net, const DeviceSpec& d);

// Imports every device and simulates them on `net` (whose NPU count must equal the devices).
Prediction predict(const Analysis& a, const DeviceSpec& d, const astra::NetworkConfig& net,
                   const astra::SystemConfig& system);

// ---- calibration of the shared constants ----------------------------------------------------

// One measured case: a program on a device whose step was measured. `exposed_comm_s` (from a
// prediction) is added to the modelled compute and held fixed while the constants move.
struct CalibrationCase {
  const Analysis* analysis = nullptr;
  DeviceSpec device;
  double measured_s = 0;
  double exposed_comm_s = 0;
};

// Modelled compute of `c` (the sum of op_seconds) under `m` plus its exposed communication.
double modelled_step(const CalibrationCase& c, const EfficiencyModel& m);

// The EfficiencyModel minimising the sum over `cases` of log(modelled_step / measured)^2:
// coordinate descent over log(gemm), log(bandwidth) and the overhead, from `start`, with the
// efficiencies kept in (0, 1] and the overhead in [0, 1 ms]. Deterministic.
EfficiencyModel calibrate(const std::vector<CalibrationCase>& cases, EfficiencyModel start = {0.5, 0.5, 2e-6});

// The paper's trend error for one workload: for every pair of systems (A, B),
// |(pred_A / pred_B) / (measured_A / measured_B) - 1|; returns the median (NaN without pairs).
double median_trend_error(const std::vector<double>& predicted, const std::vector<double>& measured);

}  // namespace chakra::stablehlo
