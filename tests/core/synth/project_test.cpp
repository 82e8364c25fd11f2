// Projection to more ranks by data parallelism: against chakra synth at the larger degree, the
// groups' roles inferred, identity at the same size, peers and METADATA groups rewritten.
#include <gtest/gtest.h>

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

namespace {

struct Ranks {
  std::vector<std::string> encoded;
  sim::CommGroups groups;
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
  for (const auto& [id, members] : synth::comm_groups(*w)) r.groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
  return r;
}

Trace decoded(const std::string& bytes) { return testing_support::decode(bytes); }

struct Projected {
  project::Plan plan;
  Ranks ranks;
};

Projected projected(const Ranks& in, uint32_t to, const std::optional<std::vector<int>>& dp = std::nullopt) {
  std::vector<Trace> traces;
  for (const std::string& b : in.encoded) traces.push_back(decoded(b));
  std::vector<const Trace*> ptrs;
  for (const Trace& t : traces) ptrs.push_back(&t);
  Projected p{project::plan_data_parallel(ptrs, in.groups, to, dp), {}};
  for (uint32_t r = 0; r < to; ++r) {
    Trace t = decoded(in.encoded[r % in.encoded.size()]);
    project::project_rank(t, p.plan, r);
    p.ranks.encoded.push_back(encode_et(t));
  }
  p.ranks.groups = project::projected_groups(p.plan, in.groups);
  return p;
}

// The step on an H100 cluster of 8-GPU nodes over InfiniBand, compute from the roofline.
sim::Tick step(const Ranks& r) {
  const sim::ClusterPreset& preset = sim::cluster_preset("h100-ib-2x8");
  sim::SimInputs in;
  in.workload = "projected";
  in.encoded_traces = &r.encoded;
  in.network = sim::fit_network(preset.network, r.encoded.size());
  in.system = preset.system;
  sim::fit_system(in.system, in.network.topology.size());
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
    EXPECT_NEAR(static_cast<double>(projected_step), static_cast<double>(synthesized_step), 0.01 * static_cast<double>(synthesized_step));
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
        ASSERT_NE(std::find(members.begin(), members.end(), r), members.end()) << "rank " << r << " pg " << *pg->as_string();
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
  EXPECT_NE(error([&] { project::plan_data_parallel(ptrs, in.groups, 6); }).find("must be a multiple of the 4 ranks"), std::string::npos);
  sim::CommGroups beyond = in.groups;
  beyond[99] = {0, 7};
  EXPECT_NE(error([&] { project::plan_data_parallel(ptrs, beyond, 8); }).find("group 99 names rank 7"), std::string::npos);
  EXPECT_NE(error([&] { project::plan_data_parallel(ptrs, in.groups, 8, std::vector<int>{42}); }).find("group 42 is not among"), std::string::npos);
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
    d.inputs.values = t.intern(R"(['[{"pg_name": "1", "pg_desc": "dp", "ranks": [0, 1]}, {"pg_name": "2", "ranks": [)" + std::to_string(r) + "]}]']");
    t.append(d);
    d.clear();
    d.id = 2;
    d.name = t.intern("allreduce");
    d.type = static_cast<int32_t>(NodeType::CommColl);
    d.data_deps = {1};
    d.attrs.add_int64(t.intern("comm_type"), 0);
    d.attrs.add_int64(t.intern("comm_size"), 1 << 20);
    d.attrs.add_string(t.intern("pg_name"), t.intern("1"));
    t.append(d);
    return encode_et(t);
  };
  Ranks in;
  in.encoded = {rank(0), rank(1)};
  in.groups = project::metadata_groups(decoded(in.encoded[0]));
  ASSERT_EQ(in.groups.at(1), (std::vector<uint32_t>{0, 1}));
  const Projected p = projected(in, 4);
  const Trace r3 = decoded(p.ranks.encoded[3]);
  const sim::CommGroups seen = project::metadata_groups(r3);
  EXPECT_EQ(seen.at(1), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(seen.at(2 + 2), (std::vector<uint32_t>{3}));  // rank 1's single-rank group, in replica 1
}
