// Every command on what the repository bundles (assets/examples, tests/data/fixtures), so that a
// clone published on its own tests each of them: the suites comparing with the reference data of
// ../shared run where it is present (tests/run says how many did not, and why).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "test_support.h"

using namespace cli_testing;
using testing_support::read_raw;
using testing_support::temp_dir;
using testing_support::test_data;
namespace fs = std::filesystem;

namespace {

std::string dlrm() { return assets("examples/dlrm_8rank"); }
std::string fixture(const std::string& name) { return test_data("fixtures/" + name); }
std::string alias(const std::string& name) { return fs::path(CHAKRA_BIN).parent_path().string() + "/" + name; }

nlohmann::json json_of(const std::string& path) { return nlohmann::json::parse(read_raw(path)); }

}  // namespace

// The bundled real run through the whole pipeline: link, convert, simulate (each rank against its
// measured step), analyze, the critical path, diff against the simulation, info and validate.
TEST(Bundled, RealRunLinksConvertsSimulatesAndAnalyzes) {
  const std::string dir = temp_dir();
  Result r = run({"link", dlrm(), "-o", dir + "/linked/run.json", "--sync-deps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "linked 8 ranks")) << r.err;
  EXPECT_TRUE(contains(r.err, "pairing: rank 7 by the host ET's file name, the Kineto trace's distributedInfo"))
      << r.err;
  r = run({"convert", "pytorch", dir + "/linked", "-o", dir + "/et/run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"simulate", "--workload", dir + "/et/run", "--preset", "v100-dgx1-8", "--json", dir + "/sim.json",
           "--times-out", dir + "/sim/run", "--timeline", dir + "/timeline.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "measured vs simulated in ProfilerStep#10")) << r.out;
  const nlohmann::json sim = json_of(dir + "/sim.json");
  ASSERT_EQ(sim["npus"].size(), 8u);
  for (const nlohmann::json& n : sim["npus"])
    EXPECT_NEAR(n["step_ns"].get<double>() / n["measured_step_ns"].get<double>(), 1.0, 0.02) << n;
  for (const nlohmann::json& c : sim["measured_collectives"])
    EXPECT_NEAR(c["simulated_median_ns"].get<double>() / c["measured_median_ns"].get<double>(), 1.0, 0.15) << c;
  EXPECT_GT(json_of(dir + "/timeline.json")["traceEvents"].size(), 8u * 1900);

  r = run({"analyze", "--json", dlrm()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json measured = nlohmann::json::parse(r.out);
  ASSERT_EQ(measured["ranks"].size(), 8u);
  r = run({"analyze", "--json", dir + "/et"});  // the converted traces give the same figures
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json converted = nlohmann::json::parse(r.out);
  for (size_t k : {0, 2, 4, 5, 6, 7})  // ranks 1 and 3 have 64 GPU ops no launch call names: not linked
    for (const char* key : {"span", "idle", "compute", "non_compute"})
      EXPECT_NEAR(converted["ranks"][k][key].get<double>(), measured["ranks"][k][key].get<double>(),
                  0.01 * measured["ranks"][k]["span"].get<double>())
          << k << " " << key;
  // Chakra JSON of a converted rank is read as its .et (the importer table knows it by its content).
  r = run({"jsonize", dir + "/et/run.2.et", dir + "/run.2.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"analyze", "--json", dir + "/run.2.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json from_json = nlohmann::json::parse(r.out);
  ASSERT_EQ(from_json["ranks"].size(), 1u);
  EXPECT_EQ(from_json["ranks"][0]["rank"], 2);
  for (const char* key : {"span", "idle", "compute", "non_compute"})
    EXPECT_EQ(from_json["ranks"][0][key], converted["ranks"][2][key]) << key;
  r = run({"analyze", "--critical-path", dir + "/et"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "critical path across 8 ranks")) << r.out;
  r = run({"diff", "--json", dir + "/et", dir + "/sim"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"info", dir + "/et"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "COMM_COLL_NODE")) << r.out;
  r = run({"validate", dir + "/et"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// Shared as the working group intends: anonymized (the copy links, converts and simulates to the
// same nanoseconds) and projected to more ranks (its times never compared as measured).
TEST(Bundled, AnonymizedAndProjectedRunsSimulate) {
  const std::string dir = temp_dir();
  auto simulate = [&](const std::string& run_dir, const std::string& out) {
    EXPECT_EQ(run({"link", run_dir, "-o", out + "/linked/run.json", "--sync-deps", "--quiet"}).exit_code, 0);
    EXPECT_EQ(run({"convert", "pytorch", out + "/linked", "-o", out + "/et/run"}).exit_code, 0);
    return run({"simulate", "--workload", out + "/et/run", "--preset", "v100-dgx1-8"});
  };
  Result r = run({"anonymize", dlrm(), "-o", dir + "/anon", "--key", "k"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Result original = simulate(dlrm(), dir + "/a"), anonymized = simulate(dir + "/anon", dir + "/b");
  ASSERT_EQ(original.exit_code, 0) << original.err;
  ASSERT_EQ(anonymized.exit_code, 0) << anonymized.err;
  EXPECT_EQ(original.out, anonymized.out);
  EXPECT_FALSE(contains(read_raw(dir + "/anon/kineto.0.json.gz"), "embedding"));

  r = run({"project", dir + "/a/et/run", "--to", "16", "-o", dir + "/p/run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"simulate", "--workload", dir + "/p/run", "--preset", "v100-dgx1-8", "--npus", "16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sys[15] finished")) << r.out;
  EXPECT_TRUE(contains(r.out, "no measured-vs-simulated figures")) << r.out;
}

// The graph and JSON tools and the reference tools' drop-ins on the bundled traces.
TEST(Bundled, GraphsJsonAndDropIns) {
  const std::string dir = temp_dir();
  const std::string et = assets("examples/pytorch_2rank/chakra_trace.0.et.gz");
  Result r = run({"visualize", et, "-o", dir + "/g.svg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(read_raw(dir + "/g.svg"), "<svg")) << r.err;
  ASSERT_EQ(run({"visualize", et, "-o", dir + "/g.graphml"}).exit_code, 0);
  ASSERT_EQ(run({"jsonize", et, dir + "/t.json"}).exit_code, 0);
  ASSERT_EQ(run({"dejsonize", dir + "/t.json", dir + "/t.et"}).exit_code, 0);
  EXPECT_EQ(testing_support::read_decompressed(et), read_raw(dir + "/t.et"));
  r = run({"--input_filename", et, "--output_filename", dir + "/ref.json"}, alias("chakra_jsonizer"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({"--input_filename", et, "--output_filename", dir + "/ref.dot"}, alias("chakra_visualizer"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(read_raw(dir + "/ref.dot"), "digraph")) << r.err;
  r = run({"--rank", "0", "--chakra-host-trace", dlrm() + "/dlrm_eg_0.json.gz", "--chakra-device-trace",
           dlrm() + "/worker0_step_12.1694128201545.pt.trace.json.gz", "--output-file", dir + "/l.json"},
          alias("chakra_trace_link"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json_of(dir + "/l.json")["nodes"].size(), 1936u);
}

// ASTRA-sim's own inputs: text workloads, its drop-in binaries, its logs, its microbenchmarks.
TEST(Bundled, AstraSimWorkloadsLogsAndMicrobenchmarks) {
  const std::string dir = temp_dir();
  Result r = run({"convert", "text", fixture("MLP_ModelParallel.txt"), "--num-npus", "8", "-o", dir + "/mlp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"--workload-configuration=" + dir + "/mlp", "--system-configuration=" + fixture("ring_s4_c1.json"),
           "--network-configuration=" + fixture("ring_8.yml"),
           "--remote-memory-configuration=" + fixture("no_memory_expansion.json")},
          alias("AstraSim_Analytical_Congestion_Unaware"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sys[7] finished")) << r.out;
  r = run({"simulate", "--workload", dir + "/mlp", "--system", fixture("ring_s4_c1.json"), "--network",
           fixture("ring_8.yml"), "--backend", "aware"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"timeline", fixture("astra_sim_trace_MLP_ModelParallel_2npus.log"), "-o", dir + "/tl.json", "--num-npus",
           "2", "--npu-frequency", "1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(json_of(dir + "/tl.json")["traceEvents"].size(), 10u);
  r = run({"--input_filename", fixture("astra_sim_trace_MLP_ModelParallel_2npus.log"), "--output_filename",
           dir + "/tl2.json", "--num_npus", "2", "--npu_frequency", "1000"},
          alias("chakra_timeline_visualizer"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({"generate", "--num-npus", "2", "-o", dir + "/gen"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t generated = 0;
  for (const auto& e : fs::directory_iterator(dir + "/gen")) generated += e.path().extension() == ".et";
  EXPECT_EQ(generated, 14u * 2);
  r = run({"generate", "collective", "--type", "all_reduce", "--size", "1MiB", "--npus", "8", "-o", dir + "/ar/ar"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"simulate", "--workload", dir + "/ar/ar", "--system", fixture("ring_s4_c1.json"), "--network",
           fixture("ring_8.yml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "all-reduce")) << r.out;
}

// Workloads made here: a synthetic LLM step and a StableHLO program, simulated and predicted.
TEST(Bundled, SynthesizedAndStableHloWorkloads) {
  const std::string dir = temp_dir();
  Result r = run({"synth", "--preset", "llama3-8b", "--dp", "2", "--tp", "2", "--pp", "2", "-o", dir + "/s/llama"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"simulate", "--workload", dir + "/s/llama", "--comm-group", dir + "/s/llama.comm_group.json", "--preset",
           "h100-hgx-8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sys[7] finished")) << r.out;
  // Without --comm-group, the groups file beside the prefix is taken, and said so; with none, the
  // traces' groups are undefined and the run refused.
  const Result beside = run({"simulate", "--workload", dir + "/s/llama", "--preset", "h100-hgx-8"});
  ASSERT_EQ(beside.exit_code, 0) << beside.err;
  EXPECT_EQ(beside.out, r.out);
  EXPECT_TRUE(contains(beside.err, "note: communicator groups from " + dir + "/s/llama.comm_group.json, beside"))
      << beside.err;
  const Result none =
      run({"simulate", "--workload", dir + "/s/llama", "--preset", "h100-hgx-8", "--comm-group", "empty"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(contains(none.err, "is not defined (no comm-group file given)")) << none.err;
  const std::string mlir = fixture("hespas__test_split_replica_groups.mlir");
  r = run({"import", "stablehlo", mlir, "--device", "h100", "-o", dir + "/h/prog"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int d = 0; d < 4; ++d) EXPECT_TRUE(fs::exists(dir + "/h/prog." + std::to_string(d) + ".et")) << d;
  EXPECT_TRUE(fs::exists(dir + "/h/prog.comm_group.json"));
  // A network of another size than the program's devices is refused; one of 4 gives a step.
  r = run({"predict", mlir, "--device", "h100", "--network", fixture("ring_8.yml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "the network has 8 NPUs but")) << r.err;
  testing_support::write_raw(dir + "/ring_4.yml",
                             "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  r = run({"predict", mlir, "--device", "h100", "--network", dir + "/ring_4.yml", "--json", dir + "/p.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json_of(dir + "/p.json")["classes"]["collective"]["ops"], 2);  // its two all-reduces
}

// The command registry (native/commands.h): every command a cmd_*.cpp registers is listed by
// `chakra --help`, answers --help, has a row in core/docs/cli.md and a section in the manual; every
// alias is a link beside the binary that runs.
TEST(Bundled, EveryRegisteredCommandIsListedHelpedAndDocumented) {
  const std::string help = run({"--help"}).out;
  const std::string docs = read_raw(std::string(CHAKRA_SOURCE_DIR) + "/core/docs/cli.md");
  size_t commands = 0, aliases = 0;
  for (const auto& e : fs::directory_iterator(std::string(CHAKRA_SOURCE_DIR) + "/native")) {
    const std::string file = e.path().filename().string();
    if (file.rfind("cmd_", 0) != 0 || e.path().extension() != ".cpp") continue;
    const std::string text = read_raw(e.path().string());
    size_t registered = 0;
    for (size_t at = text.find("\nCHAKRA_"); at != std::string::npos; at = text.find("\nCHAKRA_", at + 1)) {
      const size_t open = text.find('"', at), close = text.find('"', open + 1);
      const std::string name = text.substr(open + 1, close - open - 1);
      ++registered;
      if (text.compare(at + 1, 14, "CHAKRA_COMMAND") == 0) {
        ++commands;
        EXPECT_TRUE(contains(help, "\n  " + name + " ")) << file << ": " << name << " not in chakra --help";
        EXPECT_EQ(run({name, "--help"}).exit_code, 0) << name;
        EXPECT_TRUE(contains(docs, "| `chakra " + name)) << name << " has no row in core/docs/cli.md";
      } else {
        ++aliases;
        EXPECT_TRUE(contains(help, " " + name)) << name;
        EXPECT_EQ(run({"--help"}, alias(name)).exit_code, 0) << name;
      }
    }
    EXPECT_GT(registered, 0u) << file << " registers no command";
  }
  EXPECT_EQ(commands, 22u);
  EXPECT_EQ(aliases, 8u);
}
