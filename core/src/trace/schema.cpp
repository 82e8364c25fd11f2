#include "chakra/trace/schema.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace chakra {
namespace {

constexpr std::array<std::string_view, kNodeTypeCount> kNodeTypeNames = {
    "INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
    "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
};

constexpr std::array<std::string_view, kCommTypeCount> kCommTypeNames = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER",  "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER",
};

struct KindNames {
  std::string_view proto;
  std::string_view json;
};

// Indexed by field number; 0 = unset, 1 and 2 are not value fields.
constexpr std::array<KindNames, kMaxAttrKind + 1> kKindNames = {{
    {"", ""},
    {"", ""},
    {"", ""},
    {"double_val", "doubleVal"},
    {"double_list", "doubleList"},
    {"float_val", "floatVal"},
    {"float_list", "floatList"},
    {"int32_val", "int32Val"},
    {"int32_list", "int32List"},
    {"int64_val", "int64Val"},
    {"int64_list", "int64List"},
    {"uint32_val", "uint32Val"},
    {"uint32_list", "uint32List"},
    {"uint64_val", "uint64Val"},
    {"uint64_list", "uint64List"},
    {"sint32_val", "sint32Val"},
    {"sint32_list", "sint32List"},
    {"sint64_val", "sint64Val"},
    {"sint64_list", "sint64List"},
    {"fixed32_val", "fixed32Val"},
    {"fixed32_list", "fixed32List"},
    {"fixed64_val", "fixed64Val"},
    {"fixed64_list", "fixed64List"},
    {"sfixed32_val", "sfixed32Val"},
    {"sfixed32_list", "sfixed32List"},
    {"sfixed64_val", "sfixed64Val"},
    {"sfixed64_list", "sfixed64List"},
    {"bool_val", "boolVal"},
    {"bool_list", "boolList"},
    {"string_val", "stringVal"},
    {"string_list", "stringList"},
    {"bytes_val", "bytesVal"},
    {"bytes_list", "bytesList"},
}};

// The attributes ASTRA-sim and the Chakra feeders interpret (chakra-reference-tools.md §1.4).
constexpr KnownAttr kKnownAttrs[] = {
    {"is_cpu_op", AttrKind::Bool, KindRule::BoolOrInteger,
     "compute on the CPU slot instead of the GPU; must be false on communication nodes"},
    {"comm_type", AttrKind::Int64, KindRule::AnyInteger, "collective type (CollectiveCommType)"},
    {"comm_size", AttrKind::Int64, KindRule::AnyInteger, "bytes moved by a collective or send/recv"},
    {"comm_src", AttrKind::Int32, KindRule::AnyInteger, "sending rank of a point-to-point message"},
    {"comm_dst", AttrKind::Int32, KindRule::AnyInteger, "receiving rank of a point-to-point message"},
    {"comm_tag", AttrKind::Int32, KindRule::AnyInteger, "tag matching a send with its receive"},
    {"comm_priority", AttrKind::Int32, KindRule::AnyInteger, "scheduling priority of a message"},
    {"pg_name", AttrKind::String, KindRule::Exact, "process group of a collective (\"\" = all ranks)"},
    {"tensor_size", AttrKind::Uint64, KindRule::AnyInteger,
     "bytes of a memory access, or bytes touched by a roofline compute node"},
    {"num_ops", AttrKind::Int64, KindRule::AnyInteger, "operation count of a roofline compute node"},
    {"involved_dim", AttrKind::BoolList, KindRule::Exact, "network dimensions a collective spans (ASTRA-sim)"},
};

}  // namespace

std::string_view node_type_name(int32_t type) {
  return type >= 0 && type < kNodeTypeCount ? kNodeTypeNames[type] : std::string_view{};
}

std::optional<int32_t> parse_node_type(std::string_view name) {
  for (int32_t i = 0; i < kNodeTypeCount; ++i)
    if (kNodeTypeNames[i] == name) return i;
  return std::nullopt;
}

std::string_view comm_type_name(int64_t type) {
  return type >= 0 && type < kCommTypeCount ? kCommTypeNames[type] : std::string_view{};
}

std::optional<std::string_view> wrapped_process_groups(std::string_view values) {
  if (values.size() < 4 || values.substr(0, 2) != "['" || values.substr(values.size() - 2) != "']") return std::nullopt;
  return values.substr(2, values.size() - 4);
}

std::optional<int32_t> parse_comm_type(std::string_view name) {
  for (int32_t i = 0; i < kCommTypeCount; ++i)
    if (kCommTypeNames[i] == name) return i;
  return std::nullopt;
}

std::string_view attr_kind_proto_name(AttrKind k) { return kKindNames[static_cast<int>(k)].proto; }
std::string_view attr_kind_json_name(AttrKind k) { return kKindNames[static_cast<int>(k)].json; }

std::optional<AttrKind> parse_attr_kind(std::string_view name) {
  for (int i = 3; i <= kMaxAttrKind; ++i)
    if (kKindNames[i].proto == name || kKindNames[i].json == name) return static_cast<AttrKind>(i);
  return std::nullopt;
}

std::span<const KnownAttr> known_attrs() { return kKnownAttrs; }

const KnownAttr* find_known_attr(std::string_view name) {
  for (const KnownAttr& k : kKnownAttrs)
    if (k.name == name) return &k;
  return nullptr;
}

namespace {

// DeepEP's kernels that move tokens between ranks (deepseek-ai/DeepEP: csrc/kernels/intranode.cu,
// internode.cu and internode_ll.cu name them deep_ep::{intranode,internode,internode_ll}::<name>,
// under deep_ep::legacy:: since 2026; EPv2's are deep_ep::elastic::<name>_impl). DeepEP's other
// kernels (layout::get_dispatch_layout, buffer cleaning, the epilogues that reorder what arrived)
// work on local memory.
bool is_deep_ep_communication(std::string_view name) {
  const size_t at = name.find("deep_ep::");
  if (at == std::string_view::npos) return false;
  // "void deep_ep::intranode::dispatch<8, 768>(int4*, ...)": the function, without its namespaces.
  const std::string_view qualified = name.substr(at, name.find_first_of("<(", at) - at);
  const std::string_view function = qualified.substr(qualified.rfind("::") + 2);
  static constexpr std::string_view kMoving[] = {"notify_dispatch",
                                                 "cached_notify_dispatch",
                                                 "cached_notify_combine",
                                                 "cached_notify",
                                                 "dispatch",
                                                 "combine",
                                                 "barrier",
                                                 "dispatch_impl",
                                                 "combine_impl",
                                                 "hybrid_dispatch_impl",
                                                 "hybrid_combine_impl",
                                                 "barrier_impl",
                                                 "pp_send_impl",
                                                 "pp_recv_impl",
                                                 "engram_fetch_impl",
                                                 "engram_fetch_wait_impl"};
  return std::find(std::begin(kMoving), std::end(kMoving), function) != std::end(kMoving);
}

}  // namespace

GpuKind classify_gpu_op(std::string_view name, int32_t node_type) {
  const auto type = static_cast<NodeType>(node_type);
  if (type == NodeType::CommColl || type == NodeType::CommSend || type == NodeType::CommRecv)
    return GpuKind::Communication;
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  // ncclKernel_*, ncclDevKernel_* (NCCL 2.19+), RCCL's kernels (named as NCCL's), HCCL's, gloo's.
  if (name.rfind("nccl", 0) == 0 || name.rfind("hccl", 0) == 0 || has("ncclKernel") || has("ncclDevKernel") ||
      has("gloo"))
    return GpuKind::Communication;
  // PyTorch's symmetric-memory collectives (NVLink SHARP multimem, one- and two-shot all-reduce).
  if (has("multimem_") || has("all_reduce_kernel") || has("all_gather_kernel") || has("reduce_scatter_kernel"))
    return GpuKind::Communication;
  // Other communication libraries' kernels, as their sources name them:
  // - MSCCL (Azure/msccl-executor-nccl, also inside RCCL): mscclKernel_<op>_<type>_<protocol>;
  //   MSCCL++ (microsoft/mscclpp): every kernel in namespace mscclpp (executionKernel, the
  //   collective::allreduce*/allgather* algorithms).
  // - NVSHMEM (NVIDIA/nvshmem): its stream collectives and waits (alltoall_on_stream_kernel,
  //   barrier_on_stream_kernel_threadgroup, rdxn_on_stream_kernel, ...) and nvshmemi_* kernels
  //   (proxy puts and gets, signals, team set-up); PyTorch's NVSHMEM collectives
  //   (c10d::nvshmem_extension::allToAllV, exchangeSplitAndOffset, ...).
  // - oneCCL's SYCL collectives (uxlfoundation/oneCCL, src/coll/algorithms): kernels named after
  //   theirs (Allreduce_small_kernel, AllreduceMediumKernel_LocalSync, AllgathervMediumKernel_*,
  //   Allgatherv_small_kernel_*, ReduceScatterLargeKernel, Reduce_scatter_small_kernel_*).
  // - DeepEP: is_deep_ep_communication.
  static constexpr std::string_view kLibraries[] = {"mscclKernel_", "mscclpp::",           "_on_stream_kernel",
                                                    "nvshmemi_",    "nvshmem_extension::", "Allreduce",
                                                    "Allgather",    "ReduceScatter",       "Reduce_scatter"};
  for (std::string_view k : kLibraries)
    if (has(k)) return GpuKind::Communication;
  if (is_deep_ep_communication(name)) return GpuKind::Communication;
  if (has("Memcpy") || has("Memset")) return GpuKind::Memory;
  return GpuKind::Computation;
}

bool is_known_compute_kernel(std::string_view name) {
  // Substrings, case as written by the libraries that emit them.
  static constexpr std::string_view kKnown[] = {
      // GEMM, convolution and attention libraries (cuBLAS, cuBLASLt, cuDNN, CUTLASS, MIOpen,
      // rocBLAS/Tensile, MAGMA, FlashAttention, TensorRT-LLM)
      "gemm", "gemv", "Gemm", "cublas", "nvjet", "cudnn", "cutlass", "xmma", "conv", "MIOpen", "Cijk_", "magma",
      "flash", "fmha", "attn", "bmm_", "tensorrt_llm", "wgrad", "dgrad", "fprop", "winograd", "fft", "splitK", "bn_fw",
      "bn_bw",
      // PyTorch and its libraries (ATen, CUB, FBGEMM, vLLM, MoE kernels), compilers (Triton)
      "at::", "cub::", "cunn_", "fbgemm", "embedding", "vllm::", "moe::", "triton", "multi_tensor_apply", "elementwise",
      "reduce_1Block", "softmax", "norm", "transpose", "index", "copy", "permute", "SubTensorOp", "scal_kernel",
      "dot_kernel", "compute_cuda_kernel", "bucketize",
      // DeepEP's kernels on local memory (its communicating ones are classed before: classify_gpu_op)
      "deep_ep::"};
  for (std::string_view k : kKnown)
    if (name.find(k) != std::string_view::npos) return true;
  return false;
}

const char* gpu_kind_name(GpuKind kind) {
  switch (kind) {
    case GpuKind::Computation: return "COMPUTATION";
    case GpuKind::Communication: return "COMMUNICATION";
    case GpuKind::Memory: return "MEMORY";
  }
  return "COMPUTATION";
}

namespace {
constexpr std::string_view kStallClassNames[kStallClassCount] = {"allocator",    "launch_queue", "gpu_wait",
                                                                 "runtime_call", "other_thread", "unexplained"};
}  // namespace

std::string_view stall_class_name(StallClass c) { return kStallClassNames[static_cast<int>(c)]; }

std::optional<StallClass> parse_stall_class(std::string_view name) {
  for (int c = 0; c < kStallClassCount; ++c)
    if (kStallClassNames[c] == name) return static_cast<StallClass>(c);
  return std::nullopt;
}

}  // namespace chakra
