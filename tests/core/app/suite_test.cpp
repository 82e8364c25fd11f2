// The benchmark suite: its definition, hashes, and scores against the reference, run through the
// sweep engine on a small suite of two synthesized workloads at two scales.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "chakra/app/sim_presets.h"
#include "chakra/app/suite.h"
#include "chakra/astra/config.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace chakra;
using testing_support::error_of;
using namespace chakra::suite;

namespace {

const char* kSmall = R"(suite: test-suite-v0
reference: {preset: h100-ib-2x8}
workloads:
  - name: tiny-llama
    class: dense-llm
    workload: {synth: {model: llama, layers: 2, hidden: 512, ffn: 1024, heads: 8, seq: 256, vocab: 1000}}
    scales:
      16: {synth: {dp: 8, tp: 2, batch: 16}}
      32: {synth: {dp: 16, tp: 2, batch: 32}}
  - name: tiny-moe
    class: moe
    workload: {synth: {model: moe, layers: 1, hidden: 512, ffn: 1024, heads: 8, seq: 256, vocab: 1000, experts: 4, ep: 4}}
    scales:
      16: {synth: {dp: 4, batch: 16}}
      32: {synth: {dp: 8, batch: 32}}
)";

std::vector<sweep::Row> run_on(const Suite& s, const System& system) {
  const sweep::Spec spec = spec_for(s, {system});
  const sweep::Runner runner(spec, false);
  std::vector<sweep::Row> rows;
  for (const sweep::Point& p : sweep::expand(spec).points) rows.push_back(runner.run(p));
  return rows;
}

// The reference preset with every bandwidth of its network times `k`.
System scaled_system(double k) {
  System s = system_from_preset("h100-ib-2x8");
  astra::NetworkConfig net = astra::parse_network(s.network, "preset");
  for (double& b : net.bandwidth) b *= k;
  s.network = astra::format_network(net);
  s.name = "bandwidth x" + std::to_string(k);
  return s;
}

}  // namespace

TEST(Suite, TheReferenceScoresExactlyOneAndFasterNetworksRankAsSimulated) {
  const Suite s = parse_suite(kSmall, "small.yaml", "");
  const System reference = reference_system(s);
  const std::vector<sweep::Row> reference_rows = run_on(s, reference);
  const Json same = result(s, reference, run_on(s, reference), reference_rows);
  ASSERT_EQ(same["entries"].size(), 4u);
  for (const Json& e : same["entries"]) EXPECT_EQ(e["score"].get<double>(), 1.0) << e.dump();
  EXPECT_EQ(same["overall"].get<double>(), 1.0);

  const System faster = scaled_system(4), slower = scaled_system(0.25);
  const Json fast = result(s, faster, run_on(s, faster), reference_rows);
  const Json slow = result(s, slower, run_on(s, slower), reference_rows);
  for (size_t i = 0; i < 4; ++i) {
    const Json &f = fast["entries"][i], &w = slow["entries"][i];
    // A score is the reference's step over the system's: the ranking is the simulations'.
    EXPECT_DOUBLE_EQ(f["score"].get<double>(),
                     double(f["reference_step_ns"].get<uint64_t>()) / double(f["step_ns"].get<uint64_t>()));
    EXPECT_LT(f["step_ns"].get<uint64_t>(), w["step_ns"].get<uint64_t>()) << f.dump() << w.dump();
    EXPECT_GT(f["score"].get<double>(), 1.0) << f.dump();
    EXPECT_LT(w["score"].get<double>(), 1.0) << w.dump();
    // The network's utilisation per dimension explains it: links 16 times as fast are busy
    // for a smaller share of the step.
    ASSERT_EQ(f["network_utilisation"].size(), 2u);
    for (size_t d = 0; d < 2; ++d) {
      if (w["network_utilisation"][d].get<double>() > 0) {
        EXPECT_LT(f["network_utilisation"][d].get<double>(), w["network_utilisation"][d].get<double>()) << d;
      }
    }
  }
  EXPECT_GT(fast["overall"].get<double>(), 1.0);
  EXPECT_LT(slow["overall"].get<double>(), 1.0);
  // Class and overall scores are geometric means: the moe class is its one workload's.
  EXPECT_DOUBLE_EQ(fast["classes"]["moe"].get<double>(), fast["workloads"]["tiny-moe"].get<double>());
  const double a = fast["classes"]["dense-llm"].get<double>(), b = fast["classes"]["moe"].get<double>();
  EXPECT_NEAR(fast["overall"].get<double>(), std::sqrt(a * b), 1e-12);
  // The result records what was run: the suite's version and hash, each entry's hash, the
  // system's configuration and its hash.
  EXPECT_EQ(fast["suite"], "test-suite-v0");
  EXPECT_EQ(fast["suite_hash"], s.hash);
  EXPECT_NE(fast["system"]["hash"], slow["system"]["hash"]);
  EXPECT_EQ(fast["entries"][0]["hash"], entries(s)[0].hash);

  // The board ranks by overall score; results of another suite version, or the same system
  // twice, are refused naming the file.
  const Board board = make_board({slow, same, fast}, {"slow.json", "same.json", "fast.json"});
  EXPECT_EQ(board.sources, (std::vector<std::string>{"fast.json", "same.json", "slow.json"}));
  EXPECT_EQ(board.classes, (std::vector<std::string>{"dense-llm", "moe"}));
  Json other = fast;
  other["suite"] = "test-suite-v1";
  other["system"]["hash"] = "another";
  EXPECT_NE(error_of([&] {
              make_board({same, other}, {"same.json", "other.json"});
            }).find("other.json: a result of test-suite-v1"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              make_board({same, same}, {"a.json", "b.json"});
            }).find("b.json: the same system as another result"),
            std::string::npos);
}

TEST(Suite, ChangingAWorkloadsDefinitionChangesItsHashOnly) {
  const Suite s = parse_suite(kSmall, "small.yaml", "");
  std::string edited = kSmall;
  edited.replace(edited.find("dp: 16, tp: 2, batch: 32"), 24, "dp: 16, tp: 2, batch: 64");
  const Suite t = parse_suite(edited, "edited.yaml", "");
  const auto before = entries(s), after = entries(t);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    const bool changed = before[i].workload == "tiny-llama" && before[i].npus == 32;
    EXPECT_EQ(before[i].hash != after[i].hash, changed) << before[i].workload << " " << before[i].npus;
  }
  EXPECT_NE(s.hash, t.hash);
}

TEST(Suite, BadDefinitionsAreRefusedNamingTheFileAndWhat) {
  EXPECT_NE(error_of([] {
              parse_suite(
                  "suite: x\nreference: {preset: a}\n"
                  "workloads: []\n",
                  "a.yaml", "");
            }).find("a.yaml: workloads"),
            std::string::npos);
  std::string bad_scale = kSmall;
  bad_scale.replace(bad_scale.find("16: {synth: {dp: 8"), 2, "1x");
  EXPECT_NE(error_of([&] { parse_suite(bad_scale, "b.yaml", ""); }).find("b.yaml: workload tiny-llama: scale '1x'"),
            std::string::npos);
  std::string twice = kSmall;
  twice.replace(twice.find("tiny-moe"), 8, "tiny-llama");
  EXPECT_NE(error_of([&] { parse_suite(twice, "c.yaml", ""); }).find("c.yaml: workload tiny-llama is defined twice"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_suite("suite: x\nbogus: 1\n", "d.yaml", ""); }).find("d.yaml: unknown key 'bogus'"),
            std::string::npos);
}

TEST(Suite, AFailedEntryIsNamedNotScored) {
  std::string bad = kSmall;
  bad.replace(bad.find("dp: 8, tp: 2, batch: 16"), 23, "dp: 8, tp: 2, batch: 15");  // batch not divisible by dp
  const Suite s = parse_suite(bad, "bad.yaml", "");
  const System reference = reference_system(s);
  const auto rows = run_on(s, reference);
  const std::string e = error_of([&] { result(s, reference, rows, rows); });
  EXPECT_NE(e.find("suite: tiny-llama at 16 NPUs failed"), std::string::npos) << e;
}

TEST(Suite, TheBuiltInSuiteParses) {
  const Suite s = builtin_suite(CHAKRA_TEST_DATA "/../../assets/suite");
  EXPECT_EQ(s.version, "chakra-suite-v1");
  std::set<std::string> classes;
  for (const Entry& e : entries(s)) classes.insert(e.klass);
  EXPECT_EQ(classes,
            (std::set<std::string>{"dense-llm", "moe", "long-context", "inference", "recommendation", "vision"}));
}

// The suite's synthesized steps are ones a cluster of 80 GB devices could run: each rank's memory
// estimate (weights, gradients, optimizer state, activations or KV cache) fits, at every scale.
TEST(Suite, TheBuiltInSuitesStepsFitAnEightyGigabyteDevice) {
  const Suite s = builtin_suite(CHAKRA_TEST_DATA "/../../assets/suite");
  size_t synthesized = 0;
  for (const Entry& e : entries(s)) {
    if (!e.config.contains("synth")) continue;
    const auto w = chakra::synth::synthesize(sweep::synth_options(e.config["synth"]));
    EXPECT_EQ(chakra::synth::num_ranks(*w), e.npus) << e.workload;
    EXPECT_LE(chakra::synth::peak_memory_bytes(*w), uint64_t{80} << 30) << e.workload << " at " << e.npus;
    ++synthesized;
  }
  EXPECT_EQ(synthesized, 16u);
}

// An entry run elsewhere (the page's workers) from its job gives the rows a whole run gives, on
// every system in order; a damaged job is an error.
TEST(Suite, AnEntryJobGivesTheRowsOfTheWholeRun) {
  const Suite s = parse_suite(kSmall, "small.yaml", "");
  const std::vector<System> systems = {scaled_system(2), reference_system(s)};
  const auto faster = run_on(s, systems[0]), reference = run_on(s, systems[1]);
  for (size_t i = 0; i < entries(s).size(); ++i) {
    const std::vector<sweep::Row> rows = run_entry_job(entry_job(s, systems, i));
    ASSERT_EQ(rows.size(), 2u);
    for (const char* f : {"step_ns", "exposed_communication_ns", "events"}) {
      EXPECT_EQ(rows[0][f], faster[i][f]) << i << f;
      EXPECT_EQ(rows[1][f], reference[i][f]) << i << f;
    }
  }
  EXPECT_NE(error_of([] { run_entry_job("{"); }).find("suite entry job: not JSON"), std::string::npos);
  EXPECT_NE(error_of([&] { run_entry_job(entry_job(s, systems, 99)); }).find("entry 99 of 4"), std::string::npos);
}
