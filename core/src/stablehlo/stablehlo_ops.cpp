// What each StableHLO op is: its class (matmul, elementwise, collective ...), its collective kind,
// and the kernels it runs as, before and after XLA-style fusion.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "stablehlo_parts.h"

namespace chakra::stablehlo {

std::string_view short_name(std::string_view name) {
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// ---- types and names ------------------------------------------------------------------------

double TensorType::elements() const {
  if (tuple_bytes >= 0 || bits == 0) return 0;
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

double TensorType::bytes() const {
  if (tuple_bytes >= 0) return tuple_bytes;
  return elements() * bits / 8.0;
}

const char* op_class_name(OpClass c) {
  static const char* const names[] = {"matmul",        "convolution", "elementwise", "reduction",
                                      "data movement", "collective",  "free",        "unmodelled"};
  return names[static_cast<int>(c)];
}

const char* collective_kind_name(CollectiveKind k) {
  static const char* const names[] = {"all_reduce", "all_gather",         "reduce_scatter",
                                      "all_to_all", "collective_permute", "collective_broadcast"};
  return names[static_cast<int>(k)];
}

double Analysis::matmul_conv_flops() const {
  return by_class[int(OpClass::Matmul)].flops + by_class[int(OpClass::Convolution)].flops;
}

// ---- op classes --------------------------------------------------------------------------------

bool in(std::string_view s, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

bool is_return(std::string_view name) {
  return in(name, {"return", "func.return", "stablehlo.return", "mhlo.return", "sdy.return"});
}

std::optional<CollectiveKind> collective_kind(std::string_view name) {
  const std::string_view s = short_name(name);
  if (name.substr(0, 4) == "sdy.") return std::nullopt;
  if (s == "all_reduce") return CollectiveKind::AllReduce;
  if (s == "all_gather") return CollectiveKind::AllGather;
  if (s == "reduce_scatter") return CollectiveKind::ReduceScatter;
  if (s == "all_to_all") return CollectiveKind::AllToAll;
  if (s == "collective_permute") return CollectiveKind::CollectivePermute;
  if (s == "collective_broadcast") return CollectiveKind::CollectiveBroadcast;
  return std::nullopt;
}

// Cost class by op name, before attributes are looked at.
OpClass classify(std::string_view name, std::string_view callee) {
  const std::string_view s = short_name(name);
  if (collective_kind(name)) return OpClass::Collective;
  if (in(s, {"dot_general", "dot"})) return OpClass::Matmul;
  if (s == "convolution") return OpClass::Convolution;
  if (in(s, {"add",
             "subtract",
             "multiply",
             "divide",
             "maximum",
             "minimum",
             "compare",
             "and",
             "or",
             "xor",
             "power",
             "atan2",
             "remainder",
             "shift_left",
             "shift_right_arithmetic",
             "shift_right_logical",
             "complex",
             "exponential",
             "exponential_minus_one",
             "log",
             "log_plus_one",
             "tanh",
             "rsqrt",
             "sqrt",
             "cbrt",
             "logistic",
             "negate",
             "abs",
             "convert",
             "sine",
             "cosine",
             "tan",
             "is_finite",
             "not",
             "floor",
             "ceil",
             "round_nearest_even",
             "round_nearest_afz",
             "sign",
             "popcnt",
             "count_leading_zeros",
             "real",
             "imag",
             "select",
             "clamp",
             "reduce_precision",
             "rng",
             "rng_bit_generator",
             "erf",
             "erf_inv",
             "lgamma",
             "digamma",
             "polygamma",
             "zeta",
             "next_after",
             "acos",
             "asin",
             "atan",
             "acosh",
             "asinh",
             "atanh",
             "cosh",
             "sinh",
             "square",
             "uniform_quantize",
             "uniform_dequantize"}))
    return OpClass::Elementwise;
  if (in(s, {"reduce", "reduce_window", "select_and_scatter", "sort", "top_k"})) return OpClass::Reduction;
  if (in(s, {"broadcast_in_dim",
             "broadcast",
             "transpose",
             "reshape",
             "pad",
             "reverse",
             "slice",
             "dynamic_slice",
             "dynamic_update_slice",
             "concatenate",
             "gather",
             "scatter",
             "copy",
             "bitcast",
             "bitcast_convert",
             "dynamic_reshape",
             "real_dynamic_slice",
             "dynamic_broadcast_in_dim",
             "dynamic_gather",
             "torch_index_select",
             "dynamic_pad",
             "dynamic_iota"}))
    return OpClass::DataMovement;
  if (in(s, {"constant", "iota", "get_tuple_element", "tuple", "partition_id", "replica_id", "optimization_barrier",
             "after_all", "create_token", "get_dimension_size", "sharding_constraint", "set_dimension_size",
             "add_dependency"}))
    return OpClass::Free;
  if (s == "custom_call") {
    if (in(callee, {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
                    "MoveToHost", "MoveToDevice", "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape",
                    "xla.sdy.FuncResultSharding", "LayoutConstraint"}) ||
        callee.substr(0, 6) == "check." || callee.substr(0, 8) == "xla.sdy.")
      return OpClass::Free;
  }
  return OpClass::Unmodelled;
}

// ---- kernels and fusion ----------------------------------------------------------------------

namespace {
bool fusible(OpClass c) { return c == OpClass::Elementwise || c == OpClass::DataMovement || c == OpClass::Free; }
}  // namespace

// Chains of elementwise and data-movement ops run as one kernel (XLA's loop fusion), and a
// reduction absorbs the chain that feeds it (input fusion): such ops read from memory only what
// a matmul, convolution, collective or the caller produced, and write only what those consume
// or nobody consumes (the program's results).
void fuse_elementwise(Analysis& a) {
  auto absorbs = [](OpClass c) { return fusible(c) || c == OpClass::Reduction; };
  std::vector<uint8_t> consumers(a.ops.size(), 0);  // bit 0: any consumer, bit 1: one outside the fusion
  for (const ExecOp& e : a.ops)
    for (uint32_t k = e.deps_begin; k < e.deps_end; ++k) consumers[a.deps[k]] |= absorbs(e.cls) ? 1 : 3;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    ExecOp& e = a.ops[i];
    if (!absorbs(e.cls) || e.bytes == 0) continue;
    double bytes = e.arg_bytes;
    for (uint32_t k = e.deps_begin; k < e.deps_end; ++k)
      if (!fusible(a.ops[a.deps[k]].cls)) bytes += a.dep_bytes[k];
    const bool writes = e.cls == OpClass::Reduction || consumers[i] != 1;  // the root of its fusion
    if (writes) bytes += e.out_bytes;
    e.bytes = bytes;
    e.kernels = writes && bytes > 0 ? 1 : 0;
  }
  a.fused = true;
}

// Kernels before fusion: one per op that computes or moves bytes (collectives are the network's).
void count_kernels(Analysis& a) {
  for (ExecOp& e : a.ops)
    e.kernels = e.cls != OpClass::Collective && e.cls != OpClass::Free && (e.flops > 0 || e.bytes > 0) ? 1 : 0;
}

}  // namespace chakra::stablehlo
