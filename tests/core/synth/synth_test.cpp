// chakra synth: the per-rank structure of STAGE's reference outputs (../shared/reference/stage),
// closed forms of the collective volumes, pipeline schedules, and that the traces validate and
// simulate.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "chakra/analysis/validate.h"
#include "chakra/format/et_io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/synth/synth.h"
#include "test_support.h"

using namespace chakra;
using namespace chakra::synth;
using testing_support::shared;

namespace {

// What STAGE's summary.jsonl records per rank.
struct Summary {
  uint64_t nodes = 0, deps = 0, ctrl = 0, num_ops = 0;
  std::map<std::string, uint64_t> types, coll_count, coll_size, pg_names;
};

Summary summarize(const Trace& t) {
  Summary s;
  s.nodes = t.size();
  for (uint32_t n = 0; n < t.size(); ++n) {
    s.deps += t.data_deps(n).size();
    s.ctrl += t.ctrl_deps(n).size();
    s.types[std::string(node_type_name(t.type(n)))]++;
    if (t.type(n) == int32_t(NodeType::Comp)) s.num_ops += *t.find_attr(n, "num_ops")->as_uint64();
    if (t.type(n) == int32_t(NodeType::CommColl)) {
      std::string type(comm_type_name(*t.find_attr(n, "comm_type")->as_int64()));
      s.coll_count[type]++;
      s.coll_size[type] += *t.find_attr(n, "comm_size")->as_uint64();
      s.pg_names[std::string(*t.find_attr(n, "pg_name")->as_string())]++;
    }
  }
  return s;
}

std::map<std::string, uint64_t> counts(const nlohmann::json& j) {
  std::map<std::string, uint64_t> m;
  for (const auto& [k, v] : j.items()) m[k] = v.get<uint64_t>();
  return m;
}

Trace trace_of(const Workload& w, uint32_t rank) {
  Trace t;
  rank_trace(w, rank, t);
  return t;
}

// STAGE's arguments for the reference runs (../shared/reference/stage/README.md).
SynthOptions stage_run(ModelKind model, uint64_t layers, uint64_t hidden, uint64_t ffn, uint64_t heads, uint64_t seq,
                       uint64_t batch) {
  SynthOptions o;
  o.model = model;
  o.shape.layers = layers;
  o.shape.hidden = hidden;
  o.shape.ffn = ffn;
  o.shape.heads = heads;
  o.shape.kv_heads = heads;
  o.shape.seq = seq;
  o.shape.batch = batch;
  o.shape.vocab = 32000;
  o.stage_units = true;
  o.grad_sync_per_micro_batch = true;
  o.stage_expert_tokens = true;
  o.schedule = Schedule::None;
  return o;
}

struct ReferenceRun {
  const char* dir;
  SynthOptions options;
};

std::vector<ReferenceRun> reference_runs() {
  std::vector<ReferenceRun> runs;
  SynthOptions gpt = stage_run(ModelKind::Gpt, 4, 1024, 4096, 16, 512, 8);
  gpt.par.dp = gpt.par.tp = gpt.par.pp = 2;
  runs.push_back({"small_gpt_dp2_tp2_pp2", gpt});
  SynthOptions fsdp = stage_run(ModelKind::Gpt, 2, 1024, 4096, 16, 512, 8);
  fsdp.par.dp = 4;
  fsdp.par.tp = 2;
  fsdp.par.fsdp = true;
  runs.push_back({"small_fsdp_dp4_tp2", fsdp});
  SynthOptions moe = stage_run(ModelKind::Moe, 2, 1024, 2048, 16, 512, 8);
  moe.par.dp = moe.par.tp = moe.par.ep = 2;
  moe.shape.experts = 4;
  moe.shape.top_k = 2;
  runs.push_back({"small_moe_dp2_ep2_tp2", moe});
  // STAGE's `--model_type llama` without mixed precision builds its GPT graph.
  SynthOptions medium = stage_run(ModelKind::Gpt, 32, 4096, 11008, 32, 2048, 16);
  medium.par.dp = medium.par.tp = medium.par.pp = 4;
  medium.shape.micro_batches = 4;
  runs.push_back({"medium_llama7b_dp4_tp4_pp4_mb4", medium});
  return runs;
}

}  // namespace

TEST(SynthStage, EveryRankMatchesStagesSummary) {
  for (const ReferenceRun& run : reference_runs()) {
    SCOPED_TRACE(run.dir);
    auto w = synthesize(run.options);
    std::ifstream in(shared(std::string("reference/stage/") + run.dir + "/summary.jsonl"));
    ASSERT_TRUE(in) << run.dir;
    uint32_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      nlohmann::json ref = nlohmann::json::parse(line);
      const std::string file = ref["file"];
      const uint32_t rank = std::stoul(file.substr(file.find('.') + 1));
      SCOPED_TRACE(file);
      Trace t = trace_of(*w, rank);
      Summary s = summarize(t);
      EXPECT_EQ(s.nodes, ref["nodes"].get<uint64_t>());
      EXPECT_EQ(s.deps, ref["deps"].get<uint64_t>());
      EXPECT_EQ(s.ctrl, 0u);
      EXPECT_EQ(s.types, counts(ref["node_types"]));
      EXPECT_EQ(s.num_ops, ref["sum_num_ops"].get<uint64_t>());
      EXPECT_EQ(s.coll_count, counts(ref["coll_count"]));
      EXPECT_EQ(s.coll_size, counts(ref["coll_comm_size_sum"]));
      EXPECT_EQ(s.pg_names, counts(ref["pg_names"]));
    }
    EXPECT_EQ(lines, num_ranks(*w));
  }
}

TEST(SynthStage, CommGroupsEqualStagesFile) {
  for (const ReferenceRun& run : reference_runs()) {
    SCOPED_TRACE(run.dir);
    auto w = synthesize(run.options);
    nlohmann::json ref = nlohmann::json::parse(
        testing_support::read_raw(shared(std::string("reference/stage/") + run.dir + "/workload.json")));
    nlohmann::json ours = nlohmann::json::parse(astra::format_comm_groups(comm_groups(*w)));
    EXPECT_EQ(ours, ref);
    EXPECT_EQ(num_groups(*w), ref.size());
  }
}

TEST(SynthStage, SameGraphAsStagesTraceInAstraSimsInputs) {
  // ASTRA-sim's reference inputs hold a STAGE trace (2 blocks per stage, 4 micro-batches);
  // every rank has the same node types, collective volumes, dependencies and operations.
  SynthOptions o = stage_run(ModelKind::Gpt, 4, 2048, 8192, 16, 1024, 16);
  o.par.dp = o.par.tp = o.par.pp = 2;
  o.shape.micro_batches = 4;
  auto w = synthesize(o);
  for (uint32_t rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE(rank);
    Summary ref = summarize(
        read_et(shared("reference/astra-sim/inputs/stage/llm_dp2_tp2_pp2/workload." + std::to_string(rank) + ".et")));
    Summary s = summarize(trace_of(*w, rank));
    EXPECT_EQ(s.nodes, ref.nodes);
    EXPECT_EQ(s.deps, ref.deps);
    EXPECT_EQ(s.types, ref.types);
    EXPECT_EQ(s.num_ops, ref.num_ops);
    EXPECT_EQ(s.coll_count, ref.coll_count);
    EXPECT_EQ(s.coll_size, ref.coll_size);
    EXPECT_EQ(s.pg_names, ref.pg_names);
  }
}

namespace {

SynthOptions small_llama() {
  SynthOptions o;
  o.model = ModelKind::Llama;
  o.shape.layers = 4;
  o.shape.hidden = 512;
  o.shape.ffn = 1536;
  o.shape.heads = 8;
  o.shape.kv_heads = 2;
  o.shape.vocab = 1000;
  o.shape.seq = 256;
  o.shape.batch = 16;
  o.shape.micro_batches = 4;
  o.par.dp = 2;
  o.par.tp = 2;
  o.par.pp = 2;
  return o;
}

std::vector<uint64_t> sizes_of(const Trace& t, CommType type) {
  std::vector<uint64_t> v;
  for (uint32_t n = 0; n < t.size(); ++n)
    if (t.type(n) == int32_t(NodeType::CommColl) && *t.find_attr(n, "comm_type")->as_int64() == int64_t(type))
      v.push_back(*t.find_attr(n, "comm_size")->as_uint64());
  return v;
}

}  // namespace

TEST(SynthClosedForm, TensorParallelVolumesPerBlock) {
  SynthOptions o = small_llama();
  o.shape.micro_batches = 1;
  o.par.pp = 1;
  const uint64_t b = 16 / 2, S = 256, D = 512, tp = 2, bytes = 2;
  auto w = synthesize(o);
  Trace t = trace_of(*w, 0);
  // Sequence parallel: per block 6 all-gathers of the local shard, 4 reduce-scatters of the full
  // local activations; plus one gradient all-reduce per block and two per embedding (dp, tp).
  std::vector<uint64_t> ag = sizes_of(t, CommType::AllGather), rs = sizes_of(t, CommType::ReduceScatter);
  ASSERT_EQ(ag.size(), 6 * 4u);
  ASSERT_EQ(rs.size(), 4 * 4u);
  for (uint64_t s : ag) EXPECT_EQ(s, b * S / tp * D * bytes);
  for (uint64_t s : rs) EXPECT_EQ(s, b * S * D * bytes);

  o.par.sequence_parallel = false;
  t = trace_of(*synthesize(o), 0);
  EXPECT_TRUE(sizes_of(t, CommType::AllGather).empty());
  EXPECT_TRUE(sizes_of(t, CommType::ReduceScatter).empty());
  std::vector<uint64_t> ar = sizes_of(t, CommType::AllReduce);
  ASSERT_EQ(ar.size(), 4 * 4u + 4 + 2);  // 4 per block, a gradient per block, 1 per embedding (dp only)
  EXPECT_EQ(std::count(ar.begin(), ar.end(), b * S * D * bytes), 16);
}

TEST(SynthClosedForm, DataParallelGradientBytesArePerRankParameters) {
  SynthOptions o = small_llama();
  const uint64_t D = 512, F = 1536, H = 8, KV = 2, dh = D / H, tp = 2, bytes = 2;
  // Grouped-query attention: Wq, Wk, Wv, Wo; SwiGLU: gate, up, down; all split over tp.
  const uint64_t params = (D * (H + 2 * KV) * dh + D * D + 3 * D * F) / tp;
  EXPECT_EQ(block_weight_elements(o), params);
  auto w = synthesize(o);
  for (uint32_t rank : {0u, 7u}) {
    Trace t = trace_of(*w, rank);
    std::vector<uint64_t> ar = sizes_of(t, CommType::AllReduce);
    // Once per step (not per micro-batch): 2 blocks per stage, and the embedding over dp and tp.
    EXPECT_EQ(std::count(ar.begin(), ar.end(), params * bytes), 2);
    EXPECT_EQ(std::count(ar.begin(), ar.end(), 1000 * D * bytes), 2);
    EXPECT_EQ(ar.size(), 4u);
  }
  o.grad_sync_per_micro_batch = true;  // STAGE's behaviour: every micro-batch
  Trace t = trace_of(*synthesize(o), 0);
  std::vector<uint64_t> ar = sizes_of(t, CommType::AllReduce);
  EXPECT_EQ(std::count(ar.begin(), ar.end(), params * bytes), 2 * 4);

  // FSDP: weights gathered as dp shards before each forward and backward, gradients
  // reduce-scattered from the full size.
  o = small_llama();
  o.par.fsdp = true;
  t = trace_of(*synthesize(o), 0);
  std::vector<uint64_t> ag = sizes_of(t, CommType::AllGather), rs = sizes_of(t, CommType::ReduceScatter);
  EXPECT_EQ(std::count(ag.begin(), ag.end(), params / 2 * bytes), 2 * 2 * 4);  // 2 blocks × fwd/bwd × 4 micro-batches
  EXPECT_EQ(std::count(rs.begin(), rs.end(), params * bytes), 2);
}

TEST(SynthClosedForm, PipelineSendsCarryMicroBatchActivations) {
  SynthOptions o = small_llama();
  o.par.pp = 4;
  auto w = synthesize(o);
  const uint64_t bytes = 16 / 4 / 2 * 256 / 2 * 512 * 2;                   // micro-batch/dp · seq/tp · hidden · 2 B
  std::map<std::tuple<int64_t, int64_t, int64_t>, uint64_t> sends, recvs;  // (src, dst, tag) → size
  for (uint32_t rank = 0; rank < num_ranks(*w); ++rank) {
    Trace t = trace_of(*w, rank);
    uint64_t p2p = 0;
    for (uint32_t n = 0; n < t.size(); ++n) {
      if (t.type(n) != int32_t(NodeType::CommSend) && t.type(n) != int32_t(NodeType::CommRecv)) continue;
      ++p2p;
      auto key = std::tuple{*t.find_attr(n, "comm_src")->as_int64(), *t.find_attr(n, "comm_dst")->as_int64(),
                            *t.find_attr(n, "comm_tag")->as_int64()};
      auto& side = t.type(n) == int32_t(NodeType::CommSend) ? sends : recvs;
      EXPECT_TRUE(side.emplace(key, *t.find_attr(n, "comm_size")->as_uint64()).second) << "duplicate tag";
      EXPECT_EQ(*t.find_attr(n, "comm_size")->as_uint64(), bytes);
      EXPECT_EQ(t.type(n) == int32_t(NodeType::CommSend) ? std::get<0>(key) : std::get<1>(key), rank);
    }
    const uint32_t stage = stage_of(*w, rank);
    EXPECT_EQ(p2p, (stage == 0 || stage == 3 ? 2u : 4u) * 4)
        << rank;  // per micro-batch: activation and gradient per neighbour
  }
  EXPECT_EQ(sends, recvs);  // every send has its receive
}

namespace {

uint32_t node_named(const Trace& t, std::string_view name) {
  for (uint32_t n = 0; n < t.size(); ++n)
    if (t.name(n) == name) return n;
  ADD_FAILURE() << "no node " << name;
  return 0;
}

uint64_t uint_attr(const Trace& t, std::string_view node, std::string_view attr) {
  return *t.find_attr(node_named(t, node), attr)->as_uint64();
}

}  // namespace

TEST(SynthClosedForm, FullAttentionContextParallelRecomputeAndExpertTokens) {
  SynthOptions o = small_llama();
  o.par = {.dp = 1, .tp = 2, .pp = 1, .sp = 2};
  o.shape.micro_batches = 1;
  o.shape.batch = 4;
  o.attention = Attention::Full;
  const uint64_t b = 4, S = 256, T = b * S / 2, Hl = 8 / 2, KVl = 2 / 2, dh = 512 / 8;
  Trace t = trace_of(*synthesize(o), 0);
  // Q·Kᵀ and P·V of the local queries over all S keys, in FLOPs; the gradients twice that.
  EXPECT_EQ(uint_attr(t, "mb0.transformer.0.mha.attn_kernel.qkv", "num_ops"), 2 * 2 * T * S * Hl * dh);
  EXPECT_EQ(uint_attr(t, "mb0.transformer.0.mha.attn_kernel.dq", "num_ops"), 2 * 2 * T * S * Hl * dh);
  EXPECT_EQ(uint_attr(t, "mb0.transformer.0.mha.attn_kernel.dk", "num_ops"), 2 * T * S * Hl * dh);
  // Context parallel: K and V gathered over sp, their gradients reduce-scattered from the whole
  // sequence, and the weight gradients all-reduced over sp.
  EXPECT_EQ(uint_attr(t, "mb0.transformer.0.mha.k/ALL_GATHER.cp", "comm_size"), T * KVl * dh * 2);
  EXPECT_EQ(uint_attr(t, "mb0.transformer.0.mha.dk/REDUCE_SCATTER.cp", "comm_size"), b * S * KVl * dh * 2);
  EXPECT_EQ(uint_attr(t, "mb0.transformer.0.grad/ALL_REDUCE.cp", "comm_size"), block_weight_elements(o) * 2);

  // Recompute: the forward again before each block's backward, and the weight gradients use it.
  o.recompute = true;
  Trace r = trace_of(*synthesize(o), 0);
  uint64_t recomputed = 0;
  for (uint32_t n = 0; n < r.size(); ++n) recomputed += r.name(n).find(".recompute.") != std::string_view::npos;
  // Without recompute the blocks' forward nodes are emitted first, up to the last block's output.
  const uint32_t last_forward = node_named(t, "mb0.transformer.3.ffn_res.y");
  uint64_t forward = 0;
  for (uint32_t n = 0; n <= last_forward; ++n) forward += t.name(n).starts_with("mb0.transformer.");
  EXPECT_EQ(recomputed, forward);  // every block's forward nodes, collectives included
  auto deps = r.data_deps(node_named(r, "mb0.transformer.2.mha.dwo"));
  EXPECT_EQ(std::count(deps.begin(), deps.end(), node_named(r, "mb0.transformer.2.recompute.mha.attn_kernel.qkv")), 1);

  // MoE: each local expert processes tokens × top_k / experts (gathered over tp); STAGE's count
  // is ep times smaller.
  o = small_llama();
  o.model = ModelKind::Moe;
  o.par = {.dp = 1, .tp = 2, .pp = 1, .sp = 1, .ep = 2};
  o.shape.experts = 4;
  o.shape.micro_batches = 1;
  o.shape.batch = 4;
  o.stage_units = true;
  const uint64_t tokens = 4 * 256 * 2 / 4, D = 512, Fl = 1536 / 2;
  EXPECT_EQ(uint_attr(trace_of(*synthesize(o), 0), "mb0.transformer.0.moe.1.ffn.xgate", "num_ops"), tokens * D * Fl);
  o.stage_expert_tokens = true;
  EXPECT_EQ(uint_attr(trace_of(*synthesize(o), 0), "mb0.transformer.0.moe.1.ffn.xgate", "num_ops"),
            tokens / 2 * D * Fl);
}

TEST(SynthSchedule, OneFOneBAndGPipeOrderMicroBatchesPerStage) {
  SynthOptions o = small_llama();
  o.par.pp = 4;
  o.shape.micro_batches = 6;
  o.shape.batch = 24;
  // "F3"/"B3" for the first and last node of micro-batch 3's forward/backward on a stage.
  auto unit = [](std::string_view name) -> std::string {
    const std::string mb(name.substr(2, name.find('.') - 2));
    for (const char* f : {"in_emb.y", ".x/recv", ".y/send", "loss.loss"})
      if (name.ends_with(f)) return "F" + mb;
    for (const char* b : {"loss.dy", ".dy/recv", ".dx/send", "in_emb.dx"})
      if (name.ends_with(b)) return "B" + mb;
    return "";
  };
  for (Schedule sched : {Schedule::OneFOneB, Schedule::GPipe}) {
    o.schedule = sched;
    auto w = synthesize(o);
    for (uint32_t stage = 0; stage < 4; ++stage) {
      Trace t = trace_of(*w, stage * 4);
      // Each unit's first node waits (ctrl_deps) for the previous unit's last node: follow the chain.
      std::map<std::string, std::string> next;
      std::string first;
      for (uint32_t n = 0; n < t.size(); ++n) {
        const std::string u = unit(t.name(n));
        if (u.empty()) continue;
        if (!t.ctrl_deps(n).empty()) {
          ASSERT_EQ(t.ctrl_deps(n).size(), 1u);
          const std::string before = unit(t.name(static_cast<uint32_t>(t.ctrl_deps(n)[0])));
          ASSERT_FALSE(before.empty()) << t.name(n);
          EXPECT_TRUE(next.emplace(before, u).second) << before;
        } else if ((t.name(n).ends_with("in_emb.y") || t.name(n).ends_with(".x/recv")) && u == "F0") {
          first = u;
        }
      }
      std::string order;
      for (std::string u = first; !u.empty(); u = next.count(u) ? next[u] : "") order += u + " ";
      std::string expected;
      if (sched == Schedule::GPipe) {
        expected = "F0 F1 F2 F3 F4 F5 B0 B1 B2 B3 B4 B5 ";
      } else {
        const int warmup = 3 - static_cast<int>(stage);
        for (int m = 0; m < warmup; ++m) expected += "F" + std::to_string(m) + " ";
        for (int m = warmup; m < 6; ++m) expected += "F" + std::to_string(m) + " B" + std::to_string(m - warmup) + " ";
        for (int m = 6 - warmup; m < 6; ++m) expected += "B" + std::to_string(m) + " ";
      }
      EXPECT_EQ(order, expected) << "stage " << stage;
    }
  }
  o.schedule = Schedule::None;
  EXPECT_EQ(summarize(trace_of(*synthesize(o), 0)).ctrl, 0u);
}

TEST(SynthSimulate, EveryLayoutValidatesAndSimulatesWithoutDeadlock) {
  const std::string dir = testing_support::temp_dir();
  astra::SystemConfig system = astra::parse_system(
      R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
          "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["direct"],
          "collective-optimization": "localBWAware", "local-mem-bw": 3350, "roofline-enabled": 1, "peak-perf": 989})",
      "system.json");
  struct Case {
    const char* name;
    SynthOptions o;
  };
  std::vector<Case> cases;
  for (Schedule s : {Schedule::OneFOneB, Schedule::GPipe, Schedule::None})
    cases.push_back({"llama", small_llama()}), cases.back().o.schedule = s;
  cases.push_back({"recompute", small_llama()});
  cases.back().o.recompute = true;
  cases.push_back({"fsdp", small_llama()});
  cases.back().o.par.fsdp = true;
  cases.push_back({"context parallel, full attention", small_llama()});
  cases.back().o.par.sp = 2;
  cases.back().o.par.dp = 1;
  cases.back().o.attention = Attention::Full;
  cases.push_back({"moe", small_llama()});
  cases.back().o.model = ModelKind::Moe;
  cases.back().o.par.ep = 2;
  cases.back().o.par.dp = 1;
  cases.back().o.shape.experts = 4;
  const SynthOptions moe = cases.back().o;
  for (Step step : {Step::Prefill, Step::Decode}) {  // inference: a dense model and an MoE one
    const bool prefill = step == Step::Prefill;
    cases.push_back({prefill ? "prefill" : "decode", small_llama()});
    cases.back().o.step = step;
    cases.push_back({prefill ? "moe prefill" : "moe decode", moe});
    cases.back().o.step = step;
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto w = synthesize(c.o);
    const std::string prefix = dir + "/w";
    for (uint32_t r = 0; r < num_ranks(*w); ++r) {
      Trace t = trace_of(*w, r);
      ValidationReport report = validate(t);
      EXPECT_TRUE(report.ok()) << (report.findings.empty() ? "" : report.findings[0].message);
      EXPECT_EQ(report.warnings, 0u) << (report.findings.empty() ? "" : report.findings[0].message);
      write_et(t, prefix + "." + std::to_string(r) + ".et");
    }
    sim::SimInputs in;
    in.workload = prefix;
    in.network = astra::parse_network("topology: [ Switch ]\nnpus_count: [ " + std::to_string(num_ranks(*w)) +
                                          " ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
                                      "net.yml");
    in.system = system;
    in.groups = astra::parse_comm_groups(astra::format_comm_groups(comm_groups(*w)), "groups.json");
    sim::SimResult r = sim::simulate(in);
    EXPECT_FALSE(r.deadlock);
    for (const sim::NpuResult& npu : r.npus) {
      EXPECT_TRUE(npu.finished);
      EXPECT_GT(npu.compute, 0u);
    }
  }
}

TEST(SynthSimulate, OneFOneBIsNoSlowerThanGPipe) {
  // Same work, different order: 1F1B starts backward passes earlier, so it finishes no later.
  SynthOptions o = small_llama();
  o.par.dp = 1;
  o.par.tp = 1;
  o.par.pp = 4;
  o.shape.micro_batches = 8;
  const std::string dir = testing_support::temp_dir();
  auto run = [&](Schedule s) {
    o.schedule = s;
    auto w = synthesize(o);
    for (uint32_t r = 0; r < num_ranks(*w); ++r) write_et(trace_of(*w, r), dir + "/w." + std::to_string(r) + ".et");
    sim::SimInputs in;
    in.workload = dir + "/w";
    in.network =
        astra::parse_network("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", "net.yml");
    in.system =
        astra::parse_system(R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "preferred-dataset-splits": 1,
        "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
        "all-to-all-implementation": ["ring"], "collective-optimization": "baseline", "local-mem-bw": 3350,
        "roofline-enabled": 1, "peak-perf": 989})",
                            "system.json");
    sim::SimResult r = sim::simulate(in);
    EXPECT_FALSE(r.deadlock);
    return r.end();
  };
  const sim::Tick gpipe = run(Schedule::GPipe), one_f_one_b = run(Schedule::OneFOneB);
  EXPECT_LE(one_f_one_b, gpipe);
  EXPECT_GT(one_f_one_b, 0u);
}

TEST(SynthUnits, FlopsAreTwiceTheMultiplyAddsAndSizesAreBytes) {
  SynthOptions o = small_llama();
  Trace bytes = trace_of(*synthesize(o), 0);
  o.stage_units = true;
  Trace elems = trace_of(*synthesize(o), 0);
  ASSERT_EQ(bytes.size(), elems.size());
  for (uint32_t n = 0; n < bytes.size(); ++n) {
    if (bytes.type(n) == int32_t(NodeType::Comp)) {
      uint64_t a = *bytes.find_attr(n, "num_ops")->as_uint64(), b = *elems.find_attr(n, "num_ops")->as_uint64();
      EXPECT_EQ(a, *bytes.find_attr(n, "op_type")->as_string() == "M" ? 2 * b : b) << bytes.name(n);
      EXPECT_GT(*bytes.find_attr(n, "tensor_size")->as_uint64(), 2 * *elems.find_attr(n, "tensor_size")->as_uint64());
    } else {
      EXPECT_EQ(*bytes.find_attr(n, "comm_size")->as_uint64(), 2 * *elems.find_attr(n, "comm_size")->as_uint64());
    }
  }
}

TEST(SynthDeterminism, SameOptionsGiveTheSameBytes) {
  SynthOptions o = small_llama();
  EXPECT_EQ(encode_et(trace_of(*synthesize(o), 5)), encode_et(trace_of(*synthesize(o), 5)));
  // A reused Trace gives the same bytes as a fresh one.
  auto w = synthesize(o);
  Trace reused;
  rank_trace(*w, 0, reused);
  rank_trace(*w, 5, reused);
  EXPECT_EQ(encode_et(reused), encode_et(trace_of(*w, 5)));
}

TEST(SynthGroups, EachGroupHoldsTheRanksDifferingInOneCoordinate) {
  SynthOptions o = small_llama();
  o.model = ModelKind::Moe;
  o.par = {.dp = 2, .tp = 2, .pp = 2, .sp = 3, .ep = 2};
  o.shape.seq = 384;
  o.shape.batch = 8;
  o.shape.micro_batches = 2;
  o.shape.experts = 4;
  auto w = synthesize(o);
  const uint32_t N = num_ranks(*w);
  ASSERT_EQ(N, 48u);
  const uint32_t strides[4] = {1, 2, 4, 12};  // dp, tp, cp, ep in the rank number
  const uint32_t degree[4] = {2, 2, 3, 2};
  std::set<uint32_t> ids;
  for (uint32_t r = 0; r < N; ++r)
    for (int d = 0; d < 4; ++d) {
      uint32_t id = group_id(*w, Dim(d), r);
      ids.insert(id);
      std::vector<uint32_t> m = group_members(*w, id);
      ASSERT_EQ(m.size(), degree[d]);
      const uint32_t base = r - (r / strides[d] % degree[d]) * strides[d];
      for (uint32_t k = 0; k < degree[d]; ++k) EXPECT_EQ(m[k], base + k * strides[d]);
    }
  EXPECT_EQ(ids.size(), num_groups(*w));
  EXPECT_EQ(*ids.begin(), 1u);
  EXPECT_EQ(*ids.rbegin(), num_groups(*w));
}

TEST(SynthPresets, EveryPresetSynthesizes) {
  std::vector<std::string> names = preset_names();
  EXPECT_GE(names.size(), 4u);
  for (const char* expected : {"llama2-7b", "llama3-70b", "gpt3-175b", "mixtral-8x7b"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    SynthOptions o;
    apply_preset(name, o);
    o.par.tp = 8;
    o.par.pp = 4;
    o.shape.batch = 8;
    auto w = synthesize(o);
    Trace t = trace_of(*w, 0);
    EXPECT_GT(t.size(), 0u);
  }
  SynthOptions o;
  apply_preset("llama3-70b", o);
  EXPECT_EQ(o.model, ModelKind::Llama);
  EXPECT_EQ(o.shape.kv_heads, 8u);
  EXPECT_EQ(o.shape.vocab, 128256u);
}

// Memory: Llama-2-7B's weights are its published 6.74 B parameters (norms aside) in bf16 and
// Adam's state 12 bytes each; FSDP shards them over dp; 1F1B keeps pp - stage micro-batches
// where GPipe keeps all; recompute keeps only each block's input.
TEST(SynthMemory, EstimateFollowsWeightsShardingAndTheSchedule) {
  SynthOptions o;
  apply_preset("llama2-7b", o);
  o.shape.batch = 16;
  o.shape.seq = 2048;
  o.par.dp = 2;
  const MemoryEstimate m = memory_estimate(*synthesize(o), 0);
  const double params = 6'738'415'616.0 - 32 * 2 * 4096 - 4096;  // the model's count less its RMSNorm weights
  EXPECT_NEAR(static_cast<double>(m.weights), 2 * params, 2e-3 * params);
  EXPECT_EQ(m.gradients, m.weights);
  EXPECT_EQ(m.optimizer, 6 * m.weights);
  o.par.fsdp = true;
  const MemoryEstimate sharded = memory_estimate(*synthesize(o), 0);
  EXPECT_EQ(sharded.weights, m.weights / 2);
  EXPECT_EQ(sharded.optimizer, m.optimizer / 2);
  EXPECT_EQ(sharded.activations, m.activations);
  o.par.fsdp = false;

  // Eight micro-batches over four stages: stage 0 of 1F1B holds 4 of them, GPipe all 8; the
  // last stage adds its logits (2 bytes × tokens × vocab, logits and their softmax).
  o.par.dp = 1;
  o.par.pp = 4;
  o.shape.micro_batches = 8;
  o.schedule = Schedule::OneFOneB;
  const auto one_f_one_b = synthesize(o);
  o.schedule = Schedule::GPipe;
  const auto gpipe = synthesize(o);
  const uint64_t tokens = 2 * 2048;  // 16 sequences / 8 micro-batches × seq
  const uint64_t logits = 2 * 2 * tokens * 32000;
  EXPECT_EQ(memory_estimate(*gpipe, 0).activations, 2 * memory_estimate(*one_f_one_b, 0).activations);
  EXPECT_EQ(memory_estimate(*gpipe, 3).activations - logits,
            8 * (memory_estimate(*one_f_one_b, 3).activations - logits));
  EXPECT_EQ(peak_memory_bytes(*one_f_one_b), memory_estimate(*one_f_one_b, 0).total());
  o.schedule = Schedule::OneFOneB;
  o.recompute = true;
  EXPECT_LT(memory_estimate(*synthesize(o), 0).activations, memory_estimate(*one_f_one_b, 0).activations / 4);
}

TEST(SynthErrors, InconsistentOptionsNameTheOption) {
  auto error = [](SynthOptions o) -> std::string {
    try {
      synthesize(o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  SynthOptions o = small_llama();
  o.par.tp = 16;
  EXPECT_NE(error(o).find("--heads (8) is not divisible by --tp (16)"), std::string::npos) << error(o);
  o = small_llama();
  o.par.ep = 2;
  EXPECT_NE(error(o).find("--ep applies to --model moe"), std::string::npos) << error(o);
  o = small_llama();
  o.par.pp = 5;
  EXPECT_NE(error(o).find("--pp (5) exceeds --layers (4)"), std::string::npos) << error(o);
  o = small_llama();
  o.shape.batch = 12;
  EXPECT_NE(error(o).find("--batch (12) is not divisible by --micro-batches × --dp (8)"), std::string::npos)
      << error(o);
  o = small_llama();
  o.shape.hidden = 500;
  EXPECT_NE(error(o).find("--hidden (500) is not divisible by --heads (8)"), std::string::npos) << error(o);
  o = small_llama();
  o.par.dp = 0;
  EXPECT_NE(error(o).find("--dp must be at least 1"), std::string::npos) << error(o);
  o = small_llama();
  o.shape.hidden = uint64_t{1} << 40;
  o.shape.heads = 1;
  o.shape.kv_heads = 1;
  o.par.tp = 1;
  o.shape.ffn = uint64_t{1} << 40;
  EXPECT_NE(error(o).find("overflows"), std::string::npos) << error(o);
  o = small_llama();
  o.shape.micro_batches = 1 << 20;
  o.shape.batch = 2 << 20;
  EXPECT_NE(error(o).find("nodes per rank (--micro-batches × layers per stage × nodes per block); at most 50000000"),
            std::string::npos)
      << error(o);
  SynthOptions p;
  try {
    apply_preset("llama9", p);
    ADD_FAILURE() << "no error for an unknown preset";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown preset 'llama9' (known: "), std::string::npos) << e.what();
  }
}
