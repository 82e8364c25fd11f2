// chakra synth --step prefill|decode: an inference step is the training step's forward without
// gradients, loss or update; decoding reads the KV cache; closed forms of their costs and memory;
// --rank-order renumbers ranks without changing what any rank does.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "chakra/analysis/validate.h"
#include "chakra/format/et_io.h"
#include "chakra/synth/synth.h"

using namespace chakra;
using namespace chakra::synth;

namespace {

SynthOptions small_llama() {
  SynthOptions o;
  o.model = ModelKind::Llama;
  o.shape = {.layers = 4, .hidden = 512, .ffn = 1536, .heads = 8, .kv_heads = 2, .vocab = 1000, .seq = 256};
  o.shape.batch = 16;
  o.shape.micro_batches = 2;
  o.par.dp = 2;
  o.par.tp = 2;
  o.par.pp = 2;
  return o;
}

Trace trace_of(const SynthOptions& o, uint32_t rank) {
  Trace t;
  rank_trace(*synthesize(o), rank, t);
  return t;
}

struct Cost {
  uint64_t num_ops = 0, tensor_size = 0, comm_size = 0;
  int32_t type = 0;
  bool operator==(const Cost&) const = default;
};

std::map<std::string, Cost> costs(const Trace& t) {
  std::map<std::string, Cost> m;
  for (uint32_t n = 0; n < t.size(); ++n) {
    Cost c;
    c.type = t.type(n);
    if (auto a = t.find_attr(n, "num_ops")) c.num_ops = *a->as_uint64();
    if (auto a = t.find_attr(n, "tensor_size")) c.tensor_size = *a->as_uint64();
    if (auto a = t.find_attr(n, "comm_size")) c.comm_size = *a->as_uint64();
    m.emplace(std::string(t.name(n)), c);
  }
  return m;
}

std::string error_of(const SynthOptions& o) {
  try {
    synthesize(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Prefill: every node is the training step's forward node of the same name and cost, but for
// the last stage's logits (each sequence's last token); nothing of the backward, the loss, the
// gradient synchronisation or the update.
TEST(SynthInference, PrefillIsTheTrainingForwardWithoutTheRest) {
  for (uint32_t rank : {0u, 7u}) {  // a rank of the first and of the last pipeline stage
    SCOPED_TRACE(rank);
    SynthOptions o = small_llama();
    const std::map<std::string, Cost> train = costs(trace_of(o, rank));
    o.step = Step::Prefill;
    const Trace prefill_trace = trace_of(o, rank);
    EXPECT_TRUE(validate(prefill_trace).ok());
    const std::map<std::string, Cost> prefill = costs(prefill_trace);
    size_t logits = 0;
    for (const auto& [name, cost] : prefill) {
      if (name.ends_with("out_emb.y")) {
        const uint64_t b = 16 / (2 * 2), D = 512, V = 1000;
        EXPECT_EQ(cost.num_ops, 2 * b * D * V) << name;
        ++logits;
        continue;
      }
      for (const char* backward : {".d", "grad", "update", "loss"})
        EXPECT_EQ(name.find(backward), std::string::npos) << name;
      ASSERT_TRUE(train.count(name)) << name;
      EXPECT_EQ(cost, train.at(name)) << name;
    }
    EXPECT_EQ(logits, rank == 7 ? 2u : 0u);  // one per micro-batch on the last stage
    EXPECT_LT(prefill.size(), train.size() / 2);
    // No data-parallel collective: replicas of a served model never talk.
    for (uint32_t n = 0; n < prefill_trace.size(); ++n) {
      if (prefill_trace.type(n) == int32_t(NodeType::CommColl)) {
        EXPECT_EQ(prefill_trace.name(n).find(".dp"), std::string::npos) << prefill_trace.name(n);
      }
    }
  }
}

// Decode: one token per sequence through every layer; its attention does 2·b·S·heads·head_dim
// multiply-adds per matmul pair and reads the whole cache; tensor parallelism all-reduces b
// tokens.
TEST(SynthInference, DecodeAttendsOverTheCacheOneTokenPerSequence) {
  SynthOptions o = small_llama();
  o.step = Step::Decode;
  o.par.pp = 1;
  o.par.sequence_parallel = false;
  const uint64_t b = 16 / (2 * 2), S = 256, D = 512, H = 8, KV = 2, dh = D / H, tp = 2, bytes = 2, F = 1536;
  const uint64_t Hl = H / tp, KVl = KV / tp;
  const std::map<std::string, Cost> c = costs(trace_of(o, 0));
  const Cost& attn = c.at("mb0.transformer.0.mha.attn_kernel.qkv");
  EXPECT_EQ(attn.num_ops, 2 * (2 * b * S * Hl * dh));
  EXPECT_EQ(attn.tensor_size, (2 * b * Hl * dh + b * S * 2 * KVl * dh) * bytes);  // output, queries, cache
  const Cost& qkv = c.at("mb0.transformer.0.mha.qkv");
  EXPECT_EQ(qkv.num_ops, 2 * b * D * (Hl + 2 * KVl) * dh);
  EXPECT_EQ(qkv.tensor_size, (b * (Hl + 2 * KVl) * dh + b * D + D * (Hl + 2 * KVl) * dh) * bytes);  // weights read
  EXPECT_EQ(c.at("mb0.transformer.0.ffn.xgate").num_ops, 2 * b * D * (F / tp));
  EXPECT_EQ(c.at("mb0.transformer.0.mha.o/ALL_REDUCE.tp").comm_size, b * D * bytes);
  EXPECT_EQ(c.at("mb0.out_emb.y").num_ops, 2 * b * D * 1000);
  // Attention's cost grows with the context, the projections' do not.
  o.shape.seq = 1024;
  const std::map<std::string, Cost> longer = costs(trace_of(o, 0));
  EXPECT_EQ(longer.at("mb0.transformer.0.mha.attn_kernel.qkv").num_ops, 4 * attn.num_ops);
  EXPECT_EQ(longer.at("mb0.transformer.0.mha.qkv"), qkv);
}

TEST(SynthInference, MemoryHoldsWeightsAndTheKvCacheOnly) {
  SynthOptions o = small_llama();
  o.par.pp = 1;
  const MemoryEstimate train = memory_estimate(*synthesize(o), 0);
  for (Step step : {Step::Prefill, Step::Decode}) {
    o.step = step;
    const MemoryEstimate m = memory_estimate(*synthesize(o), 0);
    EXPECT_EQ(m.weights, train.weights);
    EXPECT_EQ(m.gradients, 0u);
    EXPECT_EQ(m.optimizer, 0u);
    const uint64_t cached = step == Step::Decode ? 257 : 256;
    // 4 layers × 8 sequences per replica × cached tokens × K and V of one KV head × 64 × 2 bytes.
    EXPECT_EQ(m.kv_cache, 4 * 8 * cached * 2 * 1 * 64 * 2);
    EXPECT_LT(m.activations, train.activations);
    EXPECT_EQ(m.total(), m.weights + m.kv_cache + m.activations);
  }
}

TEST(SynthInference, OptionsThatMeanTrainingAreRefused) {
  SynthOptions o = small_llama();
  o.step = Step::Prefill;
  o.par.fsdp = true;
  EXPECT_NE(error_of(o).find("--fsdp shards weights for training; --step prefill holds them whole"), std::string::npos)
      << error_of(o);
  o = small_llama();
  o.step = Step::Decode;
  o.recompute = true;
  EXPECT_NE(error_of(o).find("--recompute applies to training, not --step decode"), std::string::npos);
  o = small_llama();
  o.step = Step::Decode;
  o.par.sp = 2;
  o.par.dp = 1;
  EXPECT_NE(error_of(o).find("--sp splits a prompt's tokens"), std::string::npos) << error_of(o);
  o = small_llama();
  o.step = Step::Decode;
  o.shape.batch = 4;  // 2 sequences per micro-batch and replica... 1 with 2 micro-batches
  EXPECT_NE(error_of(o).find("1 sequences per micro-batch and --dp rank are not divisible by --tp (2)"),
            std::string::npos)
      << error_of(o);
  o.par.sequence_parallel = false;
  EXPECT_EQ(error_of(o), "");
}

// Megatron-LM's order (tp fastest): a tensor-parallel group is consecutive ranks; each group is
// still the ranks differing in one coordinate; a rank's trace is that of the rank with the same
// coordinates in STAGE's order, its communicator and peer ids aside.
TEST(SynthRankOrder, GroupsFollowTheOrderAndTheWorkStaysTheSame) {
  EXPECT_EQ(rank_order_name(parse_rank_order("tp-cp-ep-dp")), "tp,sp,ep,dp");
  for (const char* bad : {"tp,dp,sp", "tp,tp,sp,ep", "tp,dp,sp,ep,pp", "tp,dp,sp,xp", ""})
    EXPECT_THROW(parse_rank_order(bad), Error) << bad;
  SynthOptions o = small_llama();
  o.model = ModelKind::Moe;
  o.par = {.dp = 2, .tp = 2, .pp = 2, .sp = 1, .ep = 2};
  o.shape.experts = 4;
  const auto stage = synthesize(o);
  o.par.rank_order = {Dim::TP, Dim::CP, Dim::EP, Dim::DP};
  const auto megatron = synthesize(o);
  const uint32_t strides[4] = {4, 1, 1, 2};  // dp, tp, cp, ep in the rank number
  for (uint32_t r = 0; r < num_ranks(*megatron); ++r) {
    for (int d = 0; d < 4; ++d) {
      const std::vector<uint32_t> m = group_members(*megatron, group_id(*megatron, Dim(d), r));
      const uint32_t degree = d == 2 ? 1 : 2;
      ASSERT_EQ(m.size(), degree);
      const uint32_t base = r - (r / strides[d] % degree) * strides[d];
      for (uint32_t k = 0; k < degree; ++k) EXPECT_EQ(m[k], base + k * strides[d]);
    }
    // The same coordinates in STAGE's order: dp fastest, then tp, ep, pp.
    const uint32_t tp = r % 2, ep = r / 2 % 2, dp = r / 4 % 2, pp = r / 8;
    const uint32_t same = dp + 2 * tp + 4 * ep + 8 * pp;
    Trace a, b;
    rank_trace(*megatron, r, a);
    rank_trace(*stage, same, b);
    ASSERT_EQ(a.size(), b.size());
    for (uint32_t n = 0; n < a.size(); ++n) {
      EXPECT_EQ(a.name(n), b.name(n));
      for (const char* attr : {"num_ops", "comm_size", "tensor_size"})
        EXPECT_EQ(a.find_attr(n, attr).has_value(), b.find_attr(n, attr).has_value());
    }
  }
  Trace t;
  rank_trace(*megatron, 0, t);
  EXPECT_NE(std::string(*t.metadata_attr(1).as_string()).find("--rank-order tp,sp,ep,dp"), std::string::npos);
}
