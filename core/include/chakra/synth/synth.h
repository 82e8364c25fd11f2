// Synthetic pre-execution traces of distributed LLMs (`chakra synth`): per-rank Chakra traces of
// one training step (forward, backward, optimizer) or one inference step (a prompt's prefill, or
// decoding one token per sequence against a KV cache) of a GPT, Llama or MoE model under
// data, tensor (with or without sequence), pipeline, context, expert and fully sharded data
// parallelism, in the style of STAGE (astra-sim/stage; core/docs/synth.md lists where and why
// the output differs).
//
// All ranks of one pipeline stage run the same graph, so synthesize() builds one graph per
// stage (O(pp × nodes per stage)) and rank_trace() instantiates it for a rank by filling in its
// communicator and peer ids, which are computed arithmetically: O(ranks) total work.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/trace/trace.h"

namespace chakra::synth {

enum class ModelKind { Gpt, Llama, Moe };
enum class Schedule { None, GPipe, OneFOneB };
enum class Attention { Fused, Full };
// Training: forward, backward and optimizer. Prefill: the forward over each prompt's `seq` tokens,
// filling the KV cache, then the logits of each sequence's last token. Decode: the forward of one
// new token per sequence, attending over `seq` cached keys and values, then its logits.
enum class Step { Train, Prefill, Decode };

struct ModelShape {
  uint64_t layers = 80;
  uint64_t hidden = 8192;
  uint64_t ffn = 28672;
  uint64_t heads = 64;
  uint64_t kv_heads = 0;  // 0: same as heads (GPT); Llama uses fewer (grouped-query attention)
  uint64_t vocab = 32000;
  uint64_t seq = 1024;
  uint64_t batch = 64;  // global batch per step, in sequences
  uint64_t micro_batches = 1;
  uint64_t experts = 8;  // MoE only
  uint64_t top_k = 2;    // MoE only
};

// Parallel dimensions that have communicators, in STAGE's group numbering order.
enum class Dim : uint8_t { DP, TP, CP, EP };

struct Parallelism {
  uint64_t dp = 1, tp = 1, pp = 1;
  uint64_t sp = 1;                // context parallelism: the sequence split over `sp` ranks
  uint64_t ep = 1;                // expert parallelism (MoE only)
  bool fsdp = false;              // shard each block's weights and gradients over dp (ZeRO-3)
  bool sequence_parallel = true;  // tensor parallel with sequence parallel (all-gather/reduce-scatter)
  // How ranks of a pipeline stage are numbered, fastest-varying first; pp is always slowest.
  // STAGE's order by default; Megatron-LM's is tp, cp, ep, dp (a tensor-parallel group on
  // consecutive ranks, so within a node).
  std::array<Dim, 4> rank_order{Dim::DP, Dim::TP, Dim::CP, Dim::EP};
};

// "dp,tp,sp,ep" (or '-'-separated; cp is sp) to an order; throws chakra::Error unless it names
// each of the four once. rank_order_name() writes it back with commas.
std::array<Dim, 4> parse_rank_order(std::string_view text);
std::string rank_order_name(const std::array<Dim, 4>& order);

struct SynthOptions {
  ModelKind model = ModelKind::Llama;
  Step step = Step::Train;
  ModelShape shape;
  Parallelism par;
  Schedule schedule = Schedule::OneFOneB;
  Attention attention = Attention::Fused;
  bool recompute = false;  // recompute each block's forward before its backward
  // Units. Default: num_ops in FLOPs (2 per multiply-add), comm_size and tensor_size in bytes
  // (`dtype_bytes` per element; tensor_size counts inputs and output, what a roofline reads).
  // stage_units: STAGE's units, num_ops in multiply-adds, sizes in elements, tensor_size = output.
  bool stage_units = false;
  uint32_t dtype_bytes = 2;
  // STAGE synchronises each block's gradients once per micro-batch; real frameworks once per
  // step (the default).
  bool grad_sync_per_micro_batch = false;
  // STAGE's experts each process 1/ep of the tokens routed to them (its expert sheet divides
  // the sequence by ep once more), so MoE expert compute and traffic are ep times too small.
  bool stage_expert_tokens = false;
};

// The options of a named preset ("llama2-7b", ...) over the given ones (shape and model only);
// throws chakra::Error listing the known names for an unknown one.
void apply_preset(std::string_view name, SynthOptions& options);
std::vector<std::string> preset_names();

struct Workload;  // the per-stage graphs and the rank layout

// Builds the per-stage graphs. Throws chakra::Error naming the option for inconsistent
// options (e.g. "--heads 12 is not divisible by --tp 8").
std::shared_ptr<const Workload> synthesize(const SynthOptions& options);

uint32_t num_ranks(const Workload& w);
uint32_t num_stages(const Workload& w);
uint32_t stage_of(const Workload& w, uint32_t rank);
// Nodes in the trace of every rank of `stage`.
uint32_t stage_nodes(const Workload& w, uint32_t stage);

// Rank `rank`'s trace. `out` is cleared first and may be reused between calls (its string
// pool and capacity are kept); safe to call from several threads with different `out`.
void rank_trace(const Workload& w, uint32_t rank, Trace& out);

// The communicator of `dim` that `rank` belongs to: its id (1-based, as written in pg_name)
// and members. Ids follow STAGE: all DP groups, then TP, CP, EP (EP only for MoE), each
// group enumerating the other coordinates in (pp, dp, tp, cp, ep) order, the last fastest.
uint32_t group_id(const Workload& w, Dim dim, uint32_t rank);
std::vector<uint32_t> group_members(const Workload& w, uint32_t id);
uint32_t num_groups(const Workload& w);
// Every group by id, for chakra::astra::format_comm_groups() (the file simulators read).
std::map<std::string, std::vector<int64_t>> comm_groups(const Workload& w);

// The bytes one rank of `stage` holds at its peak in the step, estimated in closed form. Inference:
// the weights, the KV cache of the stage's layers for the rank's sequences (seq + 1 tokens when
// decoding) and one layer's tensors of one micro-batch, no gradients or optimizer state.
// Training: bf16
// (dtype_bytes) weights and gradients, fp32 master weights and Adam moments (12 bytes per
// weight), all sharded over dp with FSDP; and the activations the forward keeps for the
// backward (per layer and micro-batch: the block's inputs and norms, Q/K/V, the attention output,
// the scores unless attention is fused, the FFN's intermediate tensors; with recompute only the
// block's input plus one layer's set) for the micro-batches in flight: all of them with GPipe,
// pp - stage with 1F1B. The last stage adds one micro-batch's logits. A planning figure like
// Megatron's memory estimate, not an allocator's trace.
struct MemoryEstimate {
  uint64_t weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0;
  uint64_t total() const { return weights + gradients + optimizer + activations + kv_cache; }
};
MemoryEstimate memory_estimate(const Workload& w, uint32_t stage);
uint64_t peak_memory_bytes(const Workload& w);  // the largest total over the stages

// Per-rank closed forms the tests check the graphs against.
uint64_t block_weight_elements(const SynthOptions& o);  // one block's weights on one rank (TP-sharded)

}  // namespace chakra::synth
