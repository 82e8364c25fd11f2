// A sweep's `project` workload: a measured run opened from its folder, checked against its
// content hash and grown by data parallelism, each rank held as the simulator reads it.
#include <gtest/gtest.h>

#include <filesystem>

#include "chakra/app/suite.h"
#include "chakra/app/sweep.h"
#include "chakra/app/workspace.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/synth/project.h"
#include "app/sweep_parts.h"
#include "test_support.h"

using namespace chakra;
using testing_support::error_of;

namespace {

const std::string kExamples = CHAKRA_TEST_DATA "/../../assets/examples";

sweep::Row run_one(const std::string& workload) {
  const sweep::Spec spec =
      sweep::parse_spec("workload: " + workload + "\nnetwork: {preset: h100-ib-2x8}\n", "p.yaml", "");
  return sweep::Runner(spec, false).run(sweep::expand(spec).points.at(0));
}

// The figures of a row: everything but its point, sweep and axis columns.
sweep::Row figures(sweep::Row row) {
  for (const char* key : {"point", "sweep"}) row.erase(key);
  return row;
}

}  // namespace

TEST(SweepProject, AMeasuredRunProjectedToItsOwnRanksSimulatesAsItsConvertedTraces) {
  // The 8-rank DLRM run (host ETs with their Kineto traces) converted as the page does, written
  // whole: what the projection, which keeps each rank without its tensors, must equal.
  const std::string folder = kExamples + "/dlrm_8rank";
  Workspace ws;
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(folder))
    if (f.path().extension() != ".md") files.push_back(f.path());
  for (const auto& f : files) {
    const std::string bytes = read_file(f.string());
    ws.add({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, f.string());
  }
  const std::string out = testing_support::temp_dir() + "/converted";
  std::filesystem::create_directories(out);
  ASSERT_EQ(ws.ranks().size(), 8u);
  for (const auto& r : ws.ranks()) {
    OutputFile f(out + "/run." + std::to_string(r->rank) + ".et");
    f.write(encode_et(r->trace));
    f.commit();
  }

  const sweep::Row whole = run_one("{traces: " + out + "}");
  ASSERT_EQ(whole["error"], "") << whole.dump();
  const sweep::Row projected = run_one("{project: {traces: " + folder + ", to: 8, dp: [0]}}");
  EXPECT_EQ(figures(projected), figures(whole));

  // Twice the ranks: twice the collectives, a step no shorter.
  const sweep::Row doubled = run_one("{project: {traces: " + folder + ", to: 16, dp: [0]}}");
  ASSERT_EQ(doubled["error"], "") << doubled.dump();
  EXPECT_EQ(doubled["npus"], 16);
  EXPECT_EQ(doubled["all_reduce_count"], 2 * whole["all_reduce_count"].get<uint64_t>());
  EXPECT_EQ(doubled["all_to_all_count"], 2 * whole["all_to_all_count"].get<uint64_t>());
  EXPECT_GE(doubled["step_ns"].get<uint64_t>(), whole["step_ns"].get<uint64_t>());
}

TEST(SweepProject, TheFilesMustHaveTheContentHashTheWorkloadNames) {
  const std::string folder = kExamples + "/resnet50_dp_64npus";
  const std::string hash = sweep::folder_sha256(folder);
  EXPECT_EQ(hash.size(), 64u);
  const sweep::Row right = run_one("{project: {traces: " + folder + ", to: 128, dp: [0], sha256: " + hash + "}}");
  EXPECT_EQ(right["error"], "") << right.dump();
  EXPECT_EQ(right["npus"], 128);
  const sweep::Row wrong =
      run_one("{project: {traces: " + folder + ", to: 128, dp: [0], sha256: " + std::string(64, 'f') + "}}");
  EXPECT_NE(wrong["error"].get<std::string>().find("its files' SHA-256 is " + hash + ", not the fff"),
            std::string::npos)
      << wrong.dump();
  // ASTRA-sim's example has one family, the world, and no tensor shapes: nothing to infer from,
  // so the projection asks; 0 names the collectives without a group.
  const sweep::Row asked = run_one("{project: {traces: " + folder + ", to: 128}}");
  EXPECT_NE(asked["error"].get<std::string>().find("cannot tell which groups are data-parallel"), std::string::npos);
  const sweep::Row unknown = run_one("{project: {traces: " + folder + ", to: 128, dp: [3]}}");
  EXPECT_NE(unknown["error"].get<std::string>().find("data-parallel group 3 is not among the groups"),
            std::string::npos);
}

TEST(Suite, TheBuiltInSuitesMeasuredRunsAreTheShippedExamples) {
  const suite::Suite s = suite::builtin_suite(CHAKRA_TEST_DATA "/../../assets/suite");
  size_t measured = 0;
  for (const suite::Entry& e : suite::entries(s)) {
    if (!e.config.contains("project")) continue;
    ++measured;
    const std::string folder = sweep::resolve(s.base_dir, e.config["project"]["traces"].get<std::string>());
    EXPECT_EQ(e.config["project"]["sha256"], sweep::folder_sha256(folder)) << folder;
  }
  EXPECT_EQ(measured, 5u);  // DLRM at 64 and 512, ResNet-50 at 64, 512 and 4096
}

// A measured run keeps its measured compute on every system, even one whose JSON turns the
// roofline on (its nodes carry no operation counts to time); synthesized steps run on it.
TEST(Suite, MeasuredRunsKeepTheirTimesWhateverTheSystemSays) {
  const suite::Suite s = suite::parse_suite(
      "suite: t\nreference: {preset: h100-ib-2x8}\nworkloads:\n  - name: r\n    class: vision\n"
      "    workload: {project: {traces: " +
          kExamples +
          "/resnet50_dp_64npus, dp: [0]}}\n    scales: {64: {project: {to: 64}}}\n"
          "  - name: l\n    class: dense-llm\n"
          "    workload: {synth: {model: llama, layers: 1, hidden: 256, ffn: 512, heads: 4, seq: 128, vocab: 500}}\n"
          "    scales: {16: {synth: {dp: 16, batch: 16}}}\n",
      "t.yaml", "");
  suite::System system = suite::system_from_preset("h100-ib-2x8");
  suite::Json sys = suite::Json::parse(system.system);
  sys["roofline-enabled"] = 1;
  system.system = sys.dump();
  const sweep::Spec spec = suite::spec_for(s, {system});
  const sweep::Runner runner(spec, false);
  const sweep::Expansion e = sweep::expand(spec);
  ASSERT_EQ(e.points.size(), 2u);
  const sweep::Row measured = runner.run(e.points[0]), synthesized = runner.run(e.points[1]);
  EXPECT_EQ(measured["error"], "") << measured.dump();
  EXPECT_EQ(measured["compute_ns"], 1082450000u);  // the trace's durations, as measured
  EXPECT_EQ(synthesized["error"], "") << synthesized.dump();
  EXPECT_GT(synthesized["compute_ns"].get<uint64_t>(), 0u);
}
