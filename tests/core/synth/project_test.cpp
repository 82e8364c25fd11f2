// Projection to more ranks by data parallelism: against chakra synth at the larger degree, the
// groups' roles inferred, identity at the same size, peers and METADATA groups rewritten.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "chakra/analysis/validate.h"
#include "chakra/app/sim_presets.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/synth/project.h"
#include "chakra/synth/synth.h"
#include "test_support.h"

using namespace chakra;
using testing_support::error_of;

namespace {

struct Ranks {
  std::vector<std::string> encoded;
  astra::CommGroups groups;
};

// Llama-2-7B (2 layers) under data (and tensor, pipeline) parallelism, `batch` sequences per step.
Ranks synthesized(uint64_t dp, uint64_t batch, uint64_t tp = 1, uint64_t pp = 1) {
  synth::SynthOptions o;
  synth::apply_preset("llama2-7b", o);
  o.shape.layers = 2, o.shape.seq = 1024, o.shape.batch = batch, o.shape.micro_batches = pp;
  o.par.dp = dp, o.par.tp = tp, o.par.pp = pp;
  const auto w = synth::synthesize(o);
  Ranks r;
  Trace t;
  for (uint32_t i = 0; i < synth::num_ranks(*w); ++i) {
    synth::rank_trace(*w, i, t);
    r.encoded.push_back(encode_et(t));
  }
  for (const auto& [id, members] : synth::comm_groups(*w))
    r.groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
  return r;
}

Trace decoded(const std::string& bytes) { return testing_support::decode(bytes); }

// A synthetic workload's ranks, and the ids of its data-parallel groups by synth's own layout
// (group_id), the answer inference must find.
struct Synthesized {
  Ranks ranks;
  std::set<int> dp_ids;
};
Synthesized synthesized(const synth::SynthOptions& o) {
  const auto w = synth::synthesize(o);
  Synthesized s;
  Trace t;
  for (uint32_t i = 0; i < synth::num_ranks(*w); ++i) {
    synth::rank_trace(*w, i, t);
    s.ranks.encoded.push_back(encode_et(t));
    s.dp_ids.insert(static_cast<int>(synth::group_id(*w, synth::Dim::DP, i)));
  }
  for (const auto& [id, members] : synth::comm_groups(*w))
    s.ranks.groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
  return s;
}

// The shapes of parallelism the inference is checked on: two layers of Llama-2-7B (or a small
// MoE), one step.
std::vector<std::pair<std::string, synth::SynthOptions>> layouts() {
  std::vector<std::pair<std::string, synth::SynthOptions>> out;
  auto llama = [&](const std::string& name, uint64_t dp, uint64_t tp, uint64_t pp, bool fsdp) {
    synth::SynthOptions o;
    synth::apply_preset("llama2-7b", o);
    o.shape.layers = 2, o.shape.seq = 1024, o.shape.batch = 8, o.shape.micro_batches = pp;
    o.par.dp = dp, o.par.tp = tp, o.par.pp = pp, o.par.fsdp = fsdp;
    out.emplace_back(name, o);
  };
  llama("tp4", 1, 4, 1, false);
  llama("dp4", 4, 1, 1, false);
  llama("dp2 x tp2", 2, 2, 1, false);
  llama("dp2 x tp2 x pp2", 2, 2, 2, false);
  llama("fsdp4", 4, 1, 1, true);
  llama("dp2 x tp2 x pp2, tp numbered first", 2, 2, 2, false);
  out.back().second.par.rank_order = {synth::Dim::TP, synth::Dim::CP, synth::Dim::EP, synth::Dim::DP};
  synth::SynthOptions moe;
  moe.model = synth::ModelKind::Moe;
  moe.shape.layers = 2, moe.shape.hidden = 1024, moe.shape.ffn = 2048, moe.shape.heads = 16, moe.shape.experts = 4;
  moe.shape.top_k = 2, moe.shape.seq = 512, moe.shape.batch = 8;
  moe.par.dp = 2, moe.par.tp = 2, moe.par.ep = 2;
  out.emplace_back("moe dp2 x tp2 x ep2", moe);
  return out;
}

synth::Plan plan_of(const Ranks& in, uint32_t to, const std::optional<std::vector<int>>& dp = std::nullopt,
                    bool without_metadata = false) {
  std::vector<Trace> traces;
  for (const std::string& b : in.encoded) {
    traces.push_back(decoded(b));
    if (without_metadata) traces.back().clear_metadata();
  }
  std::vector<const Trace*> ptrs;
  for (const Trace& t : traces) ptrs.push_back(&t);
  return synth::plan_data_parallel(ptrs, in.groups, to, dp);
}

std::set<int> data_parallel_ids(const synth::Plan& plan) {
  std::set<int> ids;
  for (const auto& [id, dp] : plan.data_parallel)
    if (dp) ids.insert(id);
  return ids;
}

// A rank of a hand-made converted-style trace: one collective per entry, with the shape its
// input tensor is recorded with ("" for none).
struct Collective {
  int group;  // 0: none, the whole world
  CommType type;
  uint64_t bytes;
  std::string shapes;
};
std::string rank_with(const std::vector<Collective>& issued) {
  Trace t;
  NodeDraft d;
  uint64_t id = 0;
  for (const Collective& c : issued) {
    d.clear();
    d.id = ++id;
    d.name = t.intern("nccl:collective");
    d.type = static_cast<int32_t>(NodeType::CommColl);
    if (id > 1) d.data_deps = {id - 1};
    d.attrs.add_int64(t.intern("comm_type"), static_cast<int64_t>(c.type));
    d.attrs.add_int64(t.intern("comm_size"), static_cast<int64_t>(c.bytes));
    if (c.group) d.attrs.add_string(t.intern("pg_name"), t.intern(std::to_string(c.group)));
    d.has_inputs = !c.shapes.empty();
    if (d.has_inputs) d.inputs.shapes = t.intern(c.shapes);
    t.append(d);
  }
  return encode_et(t);
}

struct Projected {
  synth::Plan plan;
  Ranks ranks;
};

Projected projected(const Ranks& in, uint32_t to, const std::optional<std::vector<int>>& dp = std::nullopt) {
  std::vector<Trace> traces;
  for (const std::string& b : in.encoded) traces.push_back(decoded(b));
  std::vector<const Trace*> ptrs;
  for (const Trace& t : traces) ptrs.push_back(&t);
  Projected p{synth::plan_data_parallel(ptrs, in.groups, to, dp), {}};
  for (uint32_t r = 0; r < to; ++r) {
    Trace t = decoded(in.encoded[r % in.encoded.size()]);
    synth::project_rank(t, p.plan, r);
    p.ranks.encoded.push_back(encode_et(t));
  }
  p.ranks.groups = synth::projected_groups(p.plan, in.groups);
  return p;
}

// The step on an H100 cluster of 8-GPU nodes over InfiniBand, compute from the roofline.
sim::Tick step(const Ranks& r) {
  const chakra::ClusterPreset& preset = chakra::cluster_preset("h100-ib-2x8");
  sim::SimInputs in;
  in.workload = "projected";
  in.encoded_traces = &r.encoded;
  in.network = chakra::fit_network(preset.network, r.encoded.size());
  in.system = preset.system;
  chakra::fit_system(in.system, in.network.topology.size());
  in.system.roofline = true;
  in.system.peak_perf = 989;
  in.system.local_mem_bw = 3350;
  in.groups = r.groups;
  const sim::SimResult result = sim::simulate(in);
  EXPECT_FALSE(result.deadlock);
  return result.end();
}

}  // namespace

// dp2 → dp8 and dp4 → dp32 simulate within 1% of chakra synth at dp8 and dp32 with the same
// per-rank batch (here: to the nanosecond, the layouts being the same).
TEST(Project, DataParallelMatchesSynthesisAtTheLargerDegree) {
  for (auto [from, to] : {std::pair<uint32_t, uint32_t>{2, 8}, {4, 32}}) {
    SCOPED_TRACE(std::to_string(from) + " -> " + std::to_string(to));
    const Projected p = projected(synthesized(from, 4 * from), to);
    const sim::Tick projected_step = step(p.ranks), synthesized_step = step(synthesized(to, 4 * to));
    EXPECT_NEAR(static_cast<double>(projected_step), static_cast<double>(synthesized_step),
                0.01 * static_cast<double>(synthesized_step));
    EXPECT_GT(projected_step, step(synthesized(from, 4 * from)));  // a larger ring takes longer
    for (const std::string& b : p.ranks.encoded) EXPECT_TRUE(validate(decoded(b)).ok());
  }
}

// dp2 x tp2: the data-parallel groups are the reductions issued least often; the tensor-parallel
// ones stay in each replica under new ids; the groups file matches what the traces name.
TEST(Project, InfersDataParallelGroupsAndKeepsTheOthersPerReplica) {
  const Ranks in = synthesized(2, 8, 2);  // DP groups 1 [0,1], 2 [2,3]; TP 3 [0,2], 4 [1,3]; 5-8 single ranks
  const Projected p = projected(in, 16);
  EXPECT_TRUE(p.plan.data_parallel.at(1) && p.plan.data_parallel.at(2));
  EXPECT_FALSE(p.plan.data_parallel.at(3) || p.plan.data_parallel.at(4));
  EXPECT_NE(p.plan.explanation.find("data-parallel: grows 4x"), std::string::npos) << p.plan.explanation;
  EXPECT_EQ(p.ranks.groups.at(1), (std::vector<uint32_t>{0, 1, 4, 5, 8, 9, 12, 13}));
  EXPECT_EQ(p.ranks.groups.at(4 + 8), (std::vector<uint32_t>{5, 7}));  // TP group 4 in replica 1
  // Every group a rank's trace names holds that rank.
  for (uint32_t r = 0; r < 16; ++r) {
    const Trace t = decoded(p.ranks.encoded[r]);
    for (uint32_t n = 0; n < t.size(); ++n)
      if (auto pg = t.find_attr(n, "pg_name"); pg && !pg->as_string()->empty()) {
        const auto& members = p.ranks.groups.at(std::stoi(std::string(*pg->as_string())));
        ASSERT_NE(std::find(members.begin(), members.end(), r), members.end())
            << "rank " << r << " pg " << *pg->as_string();
      }
  }
  EXPECT_GT(step(p.ranks), 0u);
  // Named instead: the tensor-parallel groups grow.
  const Projected named = projected(in, 8, std::vector<int>{3, 4});
  EXPECT_TRUE(named.plan.data_parallel.at(3));
  EXPECT_FALSE(named.plan.data_parallel.at(1));
}

// N → N is the identity; pipeline sends keep their peers inside the replica; bad requests are
// named.
TEST(Project, IdentityPeersAndErrors) {
  const Ranks in = synthesized(2, 8, 1, 2);  // pp 2: sends and receives between stages
  const Projected same = projected(in, 4);
  EXPECT_EQ(same.ranks.encoded, in.encoded);
  const Projected twice = projected(in, 8);
  for (uint32_t r = 4; r < 8; ++r) {
    const Trace t = decoded(twice.ranks.encoded[r]);
    size_t peers = 0;
    for (uint32_t n = 0; n < t.size(); ++n)
      for (const char* key : {"comm_src", "comm_dst"})
        if (auto v = t.find_attr(n, key)) {
          EXPECT_GE(*v->as_int64(), 4) << "rank " << r;
          EXPECT_LT(*v->as_int64(), 8) << "rank " << r;
          ++peers;
        }
    EXPECT_GT(peers, 0u);
  }
  EXPECT_GT(step(twice.ranks), 0u);
  std::vector<Trace> traces;
  for (const std::string& b : in.encoded) traces.push_back(decoded(b));
  std::vector<const Trace*> ptrs;
  for (const Trace& t : traces) ptrs.push_back(&t);
  auto error = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error([&] { synth::plan_data_parallel(ptrs, in.groups, 6); }).find("must be a multiple of the 4 ranks"),
            std::string::npos);
  astra::CommGroups beyond = in.groups;
  beyond[99] = {0, 7};
  EXPECT_NE(error([&] { synth::plan_data_parallel(ptrs, beyond, 8); }).find("group 99 names rank 7"),
            std::string::npos);
  EXPECT_NE(
      error([&] { synth::plan_data_parallel(ptrs, in.groups, 8, std::vector<int>{42}); }).find("group 42 is not among"),
      std::string::npos);
}

// A converted PyTorch trace lists its process groups in a METADATA node: read as groups, and
// rewritten per replica like the groups file.
TEST(Project, MetadataProcessGroupsAreRewritten) {
  auto rank = [](uint32_t r) {
    Trace t;
    NodeDraft d;
    d.id = 1;
    d.name = t.intern("process_group:init");
    d.type = static_cast<int32_t>(NodeType::Metadata);
    d.has_inputs = true;
    d.inputs.values = t.intern(R"(['[{"pg_name": "1", "pg_desc": "dp", "ranks": [0, 1]}, {"pg_name": "2", "ranks": [)" +
                               std::to_string(r) + "]}]']");
    t.append(d);
    d.clear();
    d.id = 2;
    d.name = t.intern("allreduce");
    d.type = static_cast<int32_t>(NodeType::CommColl);
    d.data_deps = {1};
    d.attrs.add_int64(t.intern("comm_type"), 0);
    d.attrs.add_int64(t.intern("comm_size"), 1 << 20);
    d.attrs.add_string(t.intern("pg_name"), t.intern("1"));
    d.has_inputs = true;
    d.inputs.shapes = t.intern("[[262144]]");  // a flat gradient bucket, as converted traces record it
    t.append(d);
    return encode_et(t);
  };
  Ranks in;
  in.encoded = {rank(0), rank(1)};
  in.groups = synth::metadata_groups(decoded(in.encoded[0]));
  ASSERT_EQ(in.groups.at(1), (std::vector<uint32_t>{0, 1}));
  const Projected p = projected(in, 4);
  const Trace r3 = decoded(p.ranks.encoded[3]);
  const astra::CommGroups seen = synth::metadata_groups(r3);
  EXPECT_EQ(seen.at(1), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(seen.at(2 + 2), (std::vector<uint32_t>{3}));  // rank 1's single-rank group, in replica 1
}

// Traces chakra synth made name the command in their metadata: the data-parallel groups are
// its --dp runs, the ones synth's own layout (group_id) says, never the tensor-parallel ones;
// made with --dp 1 there is no gradient traffic to grow, and that is refused.
TEST(Project, SynthCommandSaysWhichGroupsAreDataParallel) {
  for (const auto& [name, options] : layouts()) {
    SCOPED_TRACE(name);
    const Synthesized s = synthesized(options);
    const uint32_t n = static_cast<uint32_t>(s.ranks.encoded.size());
    if (options.par.dp == 1) {
      const std::string e = error_of([&] { plan_of(s.ranks, 2 * n); });
      EXPECT_NE(e.find("chakra synth made them with --dp 1 --tp 4"), std::string::npos) << e;
      EXPECT_NE(e.find("--groups"), std::string::npos) << e;
      continue;
    }
    const synth::Plan plan = plan_of(s.ranks, 2 * n);
    EXPECT_EQ(data_parallel_ids(plan), s.dp_ids);
    EXPECT_NE(plan.explanation.find("from the command in the traces' metadata"), std::string::npos) << plan.explanation;
    if (options.par.rank_order != synth::Parallelism{}.rank_order) {
      EXPECT_NE(plan.explanation.find("numbers ranks tp,sp,ep,dp fastest first, so groups of 2 ranks 2 apart"),
                std::string::npos)
          << plan.explanation;
    }
  }
}

// Without the command (metadata lost, e.g. anonymized), counts decide only by comparison: the
// family synchronising at most half as often as another is data-parallel; one family of
// reductions alone (dp only, FSDP, tp only) cannot be told from tensor parallelism: refused.
TEST(Project, WithoutTheCommandCountsDecideOnlyAgainstAnotherFamily) {
  for (const auto& [name, options] : layouts()) {
    SCOPED_TRACE(name);
    const Synthesized s = synthesized(options);
    const uint32_t n = static_cast<uint32_t>(s.ranks.encoded.size());
    if (options.par.tp == 1 || options.par.dp == 1) {
      const std::string e = error_of([&] { plan_of(s.ranks, 2 * n, std::nullopt, true); });
      EXPECT_NE(e.find("one family alone issues"), std::string::npos) << e;
      EXPECT_NE(e.find("Name them: --groups FILE"), std::string::npos) << e;
      continue;
    }
    const synth::Plan plan = plan_of(s.ranks, 2 * n, std::nullopt, true);
    EXPECT_EQ(data_parallel_ids(plan), s.dp_ids);
    EXPECT_NE(plan.explanation.find("from how often they synchronise"), std::string::npos) << plan.explanation;
    EXPECT_NE(plan.explanation.find("x as often: not data-parallel"), std::string::npos) << plan.explanation;
  }
}

// Converted traces record their tensors' shapes: gradient buckets are flat, activations are
// [seq, batch, hidden]. Here the data-parallel groups are strided and the tensor-parallel ones
// consecutive (the opposite of synth's layout), and the shapes alone find them; pure tensor
// parallelism, activations reduced over the world, a flat family too small for gradients and
// two flat families are refused.
TEST(Project, TensorShapesTellGradientBucketsFromActivations) {
  const std::string activation = "[[1024, 4, 4096]]", bucket = "[[6553600]]";
  auto step = [&](int tp_group, int dp_group) {
    std::vector<Collective> c;
    for (int layer = 0; layer < 4; ++layer) c.push_back({tp_group, CommType::AllReduce, 32u << 20, activation});
    for (int b = 0; b < 2; ++b) c.push_back({dp_group, CommType::AllReduce, 25u << 20, bucket});
    return c;
  };
  Ranks in;  // TP groups 1 [0, 1], 2 [2, 3]; DP groups 3 [0, 2], 4 [1, 3]
  in.groups = {{1, {0, 1}}, {2, {2, 3}}, {3, {0, 2}}, {4, {1, 3}}};
  in.encoded = {rank_with(step(1, 3)), rank_with(step(1, 4)), rank_with(step(2, 3)), rank_with(step(2, 4))};
  const synth::Plan plan = plan_of(in, 8);
  EXPECT_EQ(data_parallel_ids(plan), (std::set<int>{3, 4}));
  EXPECT_NE(plan.explanation.find("from the tensors they carry"), std::string::npos) << plan.explanation;
  EXPECT_NE(plan.explanation.find("groups 3, 4 (2 ranks, spacing 2): 2 all-reduces per rank; 25.0 MiB each, "
                                  "50.0 MiB per rank, flat buffers -> data-parallel: grows 2x"),
            std::string::npos)
      << plan.explanation;
  EXPECT_NE(plan.explanation.find("tensors like [1024, 4, 4096] -> moves activations"), std::string::npos)
      << plan.explanation;

  // Pure tensor parallelism over 4 ranks: activations, and a flat layer-norm gradient reduction
  // in the same family; the single-rank data-parallel groups issue nothing.
  Ranks tp;
  tp.groups = {{1, {0, 1, 2, 3}}, {2, {0}}, {3, {1}}, {4, {2}}, {5, {3}}};
  std::vector<Collective> tp_step(4, {1, CommType::AllReduce, 32u << 20, activation});
  tp_step.push_back({1, CommType::AllReduce, 1u << 20, "[[262144]]"});
  tp.encoded.assign(4, rank_with(tp_step));
  std::string e = error_of([&] { plan_of(tp, 8); });
  EXPECT_NE(e.find("no family synchronises flat buffers"), std::string::npos) << e;
  EXPECT_NE(e.find("groups 1 (4 ranks, spacing 1): 5 all-reduces per rank"), std::string::npos) << e;

  // The same activations with no group: over the world, which would grow.
  Ranks world;
  world.encoded.assign(4, rank_with(std::vector<Collective>(4, {0, CommType::AllReduce, 32u << 20, activation})));
  e = error_of([&] { plan_of(world, 8); });
  EXPECT_NE(e.find("no group (all 4 ranks): 4 all-reduces per rank"), std::string::npos) << e;
  // ... and next to real data-parallel groups: still refused, the world grows whatever is chosen.
  Ranks both;
  both.groups = {{1, {0, 1}}, {2, {2, 3}}};
  auto with_world = [&](int dp_group) {
    std::vector<Collective> c = {{0, CommType::AllReduce, 32u << 20, activation}};
    c.push_back({dp_group, CommType::AllReduce, 25u << 20, bucket});
    return c;
  };
  both.encoded = {rank_with(with_world(1)), rank_with(with_world(1)), rank_with(with_world(2)),
                  rank_with(with_world(2))};
  e = error_of([&] { plan_of(both, 8); });
  EXPECT_NE(e.find("the collectives without a group include all-reduces"), std::string::npos) << e;

  // A 4-byte loss all-reduced over the world is not a gradient.
  Ranks loss;
  loss.groups = {{1, {0, 1, 2, 3}}};
  loss.encoded.assign(
      4, rank_with({{1, CommType::AllReduce, 32u << 20, activation}, {0, CommType::AllReduce, 4, "[[1]]"}}));
  e = error_of([&] { plan_of(loss, 8); });
  EXPECT_NE(e.find("too little for gradients"), std::string::npos) << e;

  // Two families of flat buffers: ambiguous.
  Ranks two = in;
  auto flat_both = [&](int a, int b) {
    return rank_with({{a, CommType::AllReduce, 25u << 20, bucket}, {b, CommType::AllReduce, 25u << 20, bucket}});
  };
  two.encoded = {flat_both(1, 3), flat_both(1, 4), flat_both(2, 3), flat_both(2, 4)};
  e = error_of([&] { plan_of(two, 8); });
  EXPECT_NE(e.find("more than one family synchronises flat buffers"), std::string::npos) << e;
}

// --groups: exactly the groups named grow (even some of a family); an empty list or an unknown
// id is an error, never ignored.
TEST(Project, GivenGroupsAreCheckedAndTakenExactly) {
  const Ranks in = synthesized(2, 8, 2);  // DP groups 1 [0,1], 2 [2,3]; TP 3 [0,2], 4 [1,3]
  EXPECT_NE(error_of([&] { plan_of(in, 8, std::vector<int>{}); }).find("an empty list"), std::string::npos);
  EXPECT_NE(error_of([&] {
              plan_of(in, 8, std::vector<int>{1, 42});
            }).find("group 42 is not among"),
            std::string::npos);
  const synth::Plan one = plan_of(in, 8, std::vector<int>{1});
  EXPECT_EQ(data_parallel_ids(one), (std::set<int>{1}));
  EXPECT_NE(one.explanation.find("data-parallel groups as given:\n"), std::string::npos) << one.explanation;
  EXPECT_NE(one.explanation.find("groups 1 (2 ranks, spacing 1): 4 all-reduces per rank"), std::string::npos)
      << one.explanation;
}
