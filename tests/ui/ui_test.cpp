// The web app's UI, natively: App driven headless (an ImGui context without a window) for its
// logic, and chakra-view under Xvfb for golden screenshots of the same views as in the browser.
#include <gtest/gtest.h>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "app.h"
#include "widgets.h"
#include "chart.h"
#include "chakra/app/share_link.h"
#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "png.h"
#include "sim_thread.h"
#include "test_support.h"

using nlohmann::json;
using testing_support::as_bytes;
using testing_support::read_raw;
using testing_support::shared;
namespace fs = std::filesystem;

namespace {

// A run's NPUs' finish times from the status (its result is chakra simulate --json's object).
std::vector<uint64_t> finish_of(const nlohmann::json& run) {
  std::vector<uint64_t> out;
  for (const nlohmann::json& n : run["result"]["npus"]) out.push_back(n["finish_ns"].get<uint64_t>());
  return out;
}

const std::string kTwoRank = "data/chakra_et/ericding_pytorch_converted_2rank";
const std::string kAllReduce = "data/chakra_et/astra-sim_AllReduce_1MB_8npus_2024-11";
const std::string kRing8 = "reference/astra-sim/inputs/net/ring_8.yml";
const std::string kRingSys = "reference/astra-sim/inputs/sys/ring_s4_c1.json";

// A host with a simulation thread when `threaded`, like chakra-view; otherwise runs happen in place.
class TestPlatform : public chakra_web::Platform {
 public:
  explicit TestPlatform(bool threaded) : threaded_(threaded) {}
  bool runs_simulations() const override { return threaded_; }
  void start_simulation(chakra::SimJob job) override { runner.start(std::move(job)); }
  void cancel_simulation() override { runner.cancel(); }
  chakra_web::SimThread runner;
  // As the browser: conversions wait in `held` until the test hands their outcome back.
  bool hold_conversions = false;
  std::vector<chakra::RankConversion> held;
  bool runs_conversions() const override { return hold_conversions; }
  void start_conversion(chakra::RankConversion job) override { held.push_back(std::move(job)); }
  chakra::ConvertedRank convert_here(const chakra::RankConversion& job) override { return chakra::convert_rank(job); }
  std::vector<std::pair<std::string, std::string>> downloads;  // name, bytes
  void download(const std::string& name, const std::string& content) override { downloads.emplace_back(name, content); }

 private:
  bool threaded_;
};

// One ImGui context per test, no window: frames are built and discarded.
class Headless {
 public:
  explicit Headless(bool threaded = false) : platform(threaded) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1280, 800);
    io.DeltaTime = 1.0f / 60;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
    app = std::make_unique<chakra_web::App>(platform);
  }
  ~Headless() {
    app.reset();
    ImGui::DestroyContext();
  }
  void frame() {
    app->work(50);
    platform.runner.poll(*app);
    ImGui::NewFrame();
    app->draw();
    ImGui::Render();
  }
  // Frames until files are open and the simulation thread is idle.
  void settle() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    do {
      frame();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the app never settled";
    } while (app->busy() || platform.runner.running());
    frame();
  }
  void drop(const std::string& path) {
    std::string bytes = read_raw(path);
    app->queue_file(std::vector<uint8_t>(bytes.begin(), bytes.end()), fs::path(path).filename().string());
  }
  void drop_dir(const std::string& dir) {
    for (const auto& e : fs::directory_iterator(dir)) drop(e.path().string());
  }
  json status() const { return json::parse(app->status_json()); }

  TestPlatform platform;
  std::unique_ptr<chakra_web::App> app;
};

void load_allreduce(Headless& h) {
  h.drop(shared(kRing8));
  h.drop(shared(kRingSys));
  h.drop_dir(shared(kAllReduce));
  h.settle();
}

// What the simulator says for the same files, without the UI.
std::vector<uint64_t> reference_finish() {
  chakra::sim::SimInputs in;
  in.workload = shared(kAllReduce) + "/AllReduce_1MB";
  in.network = chakra::astra::load_network(shared(kRing8));
  in.system = chakra::astra::load_system(shared(kRingSys));
  std::vector<uint64_t> out;
  for (const auto& n : chakra::sim::simulate(in).npus) out.push_back(n.finish);
  return out;
}

}  // namespace

// Durations pick their unit by magnitude, negative ones too (axis labels left of the start).
TEST(AppUi, DurationsHaveUnitsWhateverTheirSign) {
  EXPECT_EQ(chakra_web::format_duration(-1501, "us"), "-1.501 ms");
  EXPECT_EQ(chakra_web::format_duration(1501, "us"), "1.501 ms");
  EXPECT_EQ(chakra_web::format_duration(-2.5e9, "ns"), "-2.5 s");
  EXPECT_EQ(chakra_web::format_duration(-12, "ns"), "-12 ns");
  EXPECT_EQ(chakra_web::format_duration(-0.2, "ns"), "0 ns");
}

// Chart axes tick at round values (never between whole counts); the CSV is what is drawn.
TEST(Chart, TicksAreRoundAndTheCsvHasEveryValue) {
  EXPECT_EQ(chakra_web::chart_ticks(0, 64400, 4), (std::vector<double>{0, 20000, 40000, 60000}));
  EXPECT_EQ(chakra_web::chart_ticks(-12, 7, 4), (std::vector<double>{-10, -5, 0, 5}));
  EXPECT_EQ(chakra_web::chart_ticks(0, 2, 4, 1), (std::vector<double>{0, 1, 2}));  // counts
  EXPECT_TRUE(chakra_web::chart_ticks(3, 3, 4).empty());
  chakra_web::ColumnChart c;
  c.category_name = "NPU";
  c.categories = {"0", "1"};
  c.series = {{"compute alone", 0}, {"idle", 0}};
  c.values = {1.5, 2, 3, 0};
  EXPECT_EQ(c.csv(), "NPU,compute alone,idle\n0,1.5,2\n1,3,0\n");
}

TEST(AppUi, EveryViewDrawsAFileSetAndTheOverviewCountsIt) {
  Headless h;
  h.drop_dir(shared(kTwoRank));
  h.settle();
  json s = h.status();
  EXPECT_EQ(s["error"], "");
  ASSERT_EQ(s["ranks"].size(), 2u);
  EXPECT_EQ(s["ranks"][0]["summary"]["nodes"], 1634);
  for (const char* v : {"overview", "nodes", "graph", "timeline", "simulation"}) {
    ASSERT_TRUE(h.app->command(std::string("view ") + v));
    h.frame();
    h.frame();
    EXPECT_EQ(h.status()["view"], v);
  }
  EXPECT_FALSE(h.app->command("view nowhere"));
  EXPECT_FALSE(h.app->command("timeline 7"));  // no such run
}

// Links stay within what a link may hold however many runs were made: up to 12 runs they list
// each run's settings, past that only the current ones.
TEST(AppUi, LinksWithManyRunsStillOpen) {
  Headless h;
  load_allreduce(h);
  for (int k = 1; k <= 24; ++k) {  // 24 runs' keys would be over the 256 a link may have
    ASSERT_TRUE(h.app->command("simulate"));
    const chakra::ShareState state =
        chakra::decode_share_state(h.status()["hash"].get<std::string>());  // throws when over
    EXPECT_EQ(state.count("runs"), k <= 12 ? 1u : 0u) << k;
    if (k <= 12) {
      EXPECT_EQ(state.at("runs"), std::to_string(k));
    }
  }
}

TEST(AppUi, SimulationInPlaceMatchesTheSimulator) {
  Headless h;
  load_allreduce(h);
  ASSERT_TRUE(h.app->command("simulate"));
  json s = h.status();
  ASSERT_EQ(s["runs"].size(), 1u);
  EXPECT_EQ(finish_of(s["runs"][0]), reference_finish());
  EXPECT_TRUE(s["simulating"].is_null());
  EXPECT_TRUE(h.app->command("timeline 1"));
  h.frame();
  EXPECT_EQ(h.status()["view"], "timeline");
}

// Slowdowns set by command (as the Simulation view's table writes them) run as chakra simulate
// --slowdown does, travel in the share link, and a spec that does not parse is refused.
TEST(AppUi, SlowdownsRunAsTheSimulatorAndTravelInTheLink) {
  const std::string spec = "npu=3:compute=2; npu=all:comm=1.5; dim=0:bandwidth=0.5";
  chakra::sim::SimInputs in;
  in.workload = shared(kAllReduce) + "/AllReduce_1MB";
  in.network = chakra::astra::load_network(shared(kRing8));
  in.system = chakra::astra::load_system(shared(kRingSys));
  chakra::sim::SimOptions o;
  o.slowdown = chakra::sim::parse_slowdowns(spec, "test");
  std::vector<uint64_t> expected;
  for (const auto& n : chakra::sim::simulate(in, o).npus) expected.push_back(n.finish);
  ASSERT_NE(expected, reference_finish());
  std::string hash;
  {
    Headless h;
    load_allreduce(h);
    EXPECT_FALSE(h.app->command("slowdown npu=3:speed=2"));
    ASSERT_TRUE(h.app->command("slowdown " + spec));
    ASSERT_TRUE(h.app->command("simulate"));
    h.frame();
    json s = h.status();
    ASSERT_EQ(s["runs"].size(), 1u);
    EXPECT_EQ(finish_of(s["runs"][0]), expected);
    hash = s["hash"];
  }
  Headless b;
  b.app->apply_hash(hash);
  load_allreduce(b);
  json s = b.status();
  ASSERT_EQ(s["runs"].size(), 1u) << hash;  // the link's run, made again
  EXPECT_EQ(finish_of(s["runs"][0]), expected);
}

// "Export anonymized copy": a ZIP that Python's zipfile reads, one anonymized .et per rank that
// simulates as the loaded ranks do, the same bytes under the same key, no op name in it.
TEST(AppUi, AnonymizedExportIsAZipOfRanksThatSimulateTheSame) {
  Headless h;
  load_allreduce(h);
  ASSERT_TRUE(h.app->command("export anonymized k"));
  ASSERT_TRUE(h.app->command("export anonymized k"));
  ASSERT_EQ(h.platform.downloads.size(), 2u);
  EXPECT_EQ(h.platform.downloads[0].first, "anonymized.zip");
  EXPECT_EQ(h.platform.downloads[0].second, h.platform.downloads[1].second);
  const std::string dir = testing_support::temp_dir();
  testing_support::write_raw(dir + "/a.zip", h.platform.downloads[0].second);
  ASSERT_EQ(std::system(("cd '" + dir + "' && python3 -m zipfile -e a.zip out >/dev/null").c_str()), 0);
  chakra::sim::SimInputs in;
  in.workload = dir + "/out/rank";
  in.network = chakra::astra::load_network(shared(kRing8));
  in.system = chakra::astra::load_system(shared(kRingSys));
  std::vector<uint64_t> finish;
  for (const auto& n : chakra::sim::simulate(in).npus) finish.push_back(n.finish);
  EXPECT_EQ(finish, reference_finish());
  const std::string name(chakra::read_et(shared(kAllReduce) + "/AllReduce_1MB.0.et").name(0));
  ASSERT_GE(name.size(), 4u);
  EXPECT_EQ(read_raw(dir + "/out/rank.0.et").find(name), std::string::npos) << name;
  ASSERT_TRUE(h.app->command("export anonymized"));  // a random key: other tokens
  EXPECT_NE(h.platform.downloads[2].second, h.platform.downloads[0].second);
}

TEST(AppUi, ARunThatCannotStartUsesNoRunNumber) {
  Headless h;
  h.drop(shared(kRing8));
  h.drop(shared(kRingSys));
  h.drop(shared(kAllReduce) + "/AllReduce_1MB.0.et");
  h.settle();
  EXPECT_FALSE(h.app->command("simulate"));  // 8 NPUs, 1 rank
  EXPECT_NE(h.status()["sim_error"].get<std::string>().find("8 NPUs but 1 ranks"), std::string::npos);
  h.drop_dir(shared(kAllReduce));
  h.settle();
  ASSERT_TRUE(h.app->command("simulate"));
  json s = h.status();
  ASSERT_EQ(s["runs"].size(), 1u);
  EXPECT_EQ(s["runs"][0]["id"], 1);
  EXPECT_EQ(s["sim_error"], "");
}

TEST(AppUi, BackgroundRunReportsProgressThenTheSameNumbers) {
  Headless h(/*threaded=*/true);
  load_allreduce(h);
  ASSERT_TRUE(h.app->command("simulate"));
  EXPECT_FALSE(h.status()["simulating"].is_null());  // started, not finished
  EXPECT_FALSE(h.app->command("simulate"));          // one at a time, with a reason
  EXPECT_NE(h.status()["sim_error"].get<std::string>().find("a simulation is running"), std::string::npos);
  h.settle();
  json s = h.status();
  EXPECT_TRUE(s["simulating"].is_null());
  ASSERT_EQ(s["runs"].size(), 1u);
  EXPECT_EQ(finish_of(s["runs"][0]), reference_finish());
}

TEST(AppUi, ALongRunCanBeCancelledAndTheNextOneRuns) {
  Headless h(/*threaded=*/true);
  // A synthetic workload big enough to be still running after the cancel below.
  h.app->apply_hash("v=simulation&synth=llama2-7b&synth.layers=32&synth.dp=16&synth.tp=8&synth.pp=1");
  h.settle();
  ASSERT_EQ(h.status()["ranks"].size(), 128u) << h.status()["error"];
  h.app->command("fit");
  ASSERT_TRUE(h.app->command("simulate"));
  h.frame();
  ASSERT_FALSE(h.status()["simulating"].is_null());
  ASSERT_TRUE(h.app->command("cancel"));
  json s = h.status();
  EXPECT_TRUE(s["simulating"].is_null());
  EXPECT_TRUE(s["runs"].empty());
  EXPECT_EQ(s["log"].back(), "run 1 cancelled");
  h.settle();
  EXPECT_TRUE(h.status()["runs"].empty());  // nothing arrives from the cancelled run
  // Clearing while a run is under way cancels it too.
  ASSERT_TRUE(h.app->command("simulate"));
  h.app->command("clear");
  EXPECT_TRUE(h.status()["simulating"].is_null());
  EXPECT_FALSE(h.platform.runner.running());
}

TEST(AppUi, DroppedConfigsAreAdoptedOnceAndLaterFilesKeepEdits) {
  Headless h;
  h.drop(shared(kRing8));
  h.drop(shared(kRingSys));
  h.settle();
  EXPECT_EQ(h.status()["network"], chakra::astra::format_network(chakra::astra::load_network(shared(kRing8))));
  // Edit the bandwidth (as the Simulation view's field does, through the link state), then drop traces.
  std::string hash = h.status()["state"];  // the link's readable form, which links may also use
  size_t at = hash.find("sim.bw=50");
  ASSERT_NE(at, std::string::npos) << hash;
  hash.replace(at, 9, "sim.bw=75");
  h.app->apply_hash(hash);
  h.drop_dir(shared(kAllReduce));
  h.settle();
  EXPECT_NE(h.status()["network"].get<std::string>().find("bandwidth: [ 75 ]"), std::string::npos)
      << h.status()["network"];
  // A newly dropped network replaces the settings again.
  h.drop(shared(kRing8));
  h.settle();
  EXPECT_NE(h.status()["network"].get<std::string>().find("bandwidth: [ 50 ]"), std::string::npos)
      << h.status()["network"];
}

TEST(AppUi, ShareLinkRestoresViewAndSelectionInAFreshApp) {
  std::string hash;
  {
    Headless a;
    a.drop_dir(shared(kTwoRank));
    a.settle();
    a.app->select_node(1, 40);
    a.app->command("view graph");
    a.frame();
    hash = a.status()["hash"];
    EXPECT_EQ(a.status()["rank"], 1);
  }
  Headless b;
  b.app->apply_hash(hash);  // before the files, as when a link is opened
  b.drop_dir(shared(kTwoRank));
  b.settle();
  json s = b.status();
  EXPECT_EQ(s["view"], "graph");
  EXPECT_EQ(s["rank"], 1);
  EXPECT_GE(s["selected"].get<int64_t>(), 0);
  EXPECT_EQ(s["hash"], hash);
}

// A typical link (64 ranks, two runs on two clusters, the first's timeline) is compact, names no
// file, and reopened with the same files makes both runs again; other files are noticed.
TEST(AppUi, CompactLinkNamesNoFileAndRerunsItsRun) {
  const std::string resnet = shared("data/chakra_et/astra-sim_resnet50_dp_64npus_2023-11_no_metadata");
  std::string hash;
  uint64_t finish = 0, finish2 = 0;
  {
    Headless a;
    a.drop_dir(resnet);
    a.settle();
    ASSERT_TRUE(a.app->command("preset tpu-v4-4x4x4"));
    ASSERT_TRUE(a.app->command("simulate"));
    a.settle();
    // A second run on another cluster: the link carries each run's own settings.
    ASSERT_TRUE(a.app->command("preset h100-ib-2x8"));
    ASSERT_TRUE(a.app->command("fit"));
    ASSERT_TRUE(a.app->command("simulate"));
    a.settle();
    ASSERT_TRUE(a.app->command("timeline 1"));  // the first run's timeline, not the last's
    a.frame();                                  // switches the tab
    a.frame();                                  // draws the timeline, fitted
    hash = a.status()["hash"];
    finish = finish_of(a.status()["runs"][0])[0];
    finish2 = finish_of(a.status()["runs"][1])[0];
    ASSERT_NE(finish, finish2);
  }
  EXPECT_LE(hash.size(), 500u) << hash;
  const chakra::ShareState state = chakra::decode_share_state(hash);
  EXPECT_EQ(state.at("files.n"), "64");
  for (const auto& [key, value] : state) EXPECT_EQ(value.find("resnet50"), std::string::npos) << key << "=" << value;
  {              // Reopened before its files are dropped: says what it needs; then runs the link's settings.
    Headless b;  // one ImGui context at a time
    b.app->apply_hash(hash);
    b.frame();
    EXPECT_NE(b.app->status_json().find("this link was made with 64 files (fingerprint " + state.at("files.fp")),
              std::string::npos);
    b.drop_dir(resnet);
    b.settle();
    json s = b.status();
    ASSERT_EQ(s["runs"].size(), 2u);
    EXPECT_EQ(finish_of(s["runs"][0])[0], finish);
    EXPECT_EQ(finish_of(s["runs"][1])[0], finish2);
    EXPECT_EQ(s["view"], "timeline");
    EXPECT_EQ(s["hash"], hash);  // the same state again: run 1's timeline, both runs' settings
  }
  // The same link over other files: a note says so.
  Headless c;
  c.drop_dir(shared(kTwoRank));
  c.settle();
  c.app->apply_hash(hash);
  c.frame();
  EXPECT_NE(c.app->status_json().find("the files open here are not the link's (64 files"), std::string::npos);
}

// The Analysis view of a real host ET + Kineto pair gives HTA's figures for that rank (its
// temporal breakdown in reference/hta), the same as `chakra analyze`; a click on a kernel's name
// finds it on the measured timeline.
TEST(AppUi, AnalysisViewGivesHtasFiguresForARealPair) {
  {
    Headless h;
    const std::string pair = shared("data/pairs/dlrm_8rank_v100/rank0");
    h.drop(pair + "/dlrm_eg_0.json");
    h.drop(pair + "/worker0_step_12.1694128201545.pt.trace.json");
    h.settle();
    ASSERT_TRUE(h.app->command("view analysis"));
    h.frame();
    h.frame();
    json s = h.status();
    ASSERT_EQ(s["analysis"].size(), 1u) << s.dump();
    const json& a = s["analysis"][0];
    const std::vector<double> hta =
        testing_support::csv_numbers(shared("reference/hta/dlrm_8rank_v100/temporal_breakdown.csv"), "0");
    ASSERT_GE(hta.size(), 5u);
    EXPECT_EQ(a["idle"].get<double>(), hta[1]);
    EXPECT_EQ(a["compute"].get<double>(), hta[2]);
    EXPECT_EQ(a["non_compute"].get<double>(), hta[3]);
    EXPECT_EQ(a["span"].get<double>(), hta[4]);
    EXPECT_EQ(s["view"], "analysis");
    EXPECT_NE(s["hash"].get<std::string>().find("z="), std::string::npos);
    // Its downloads are chakra analyze's --json and --csv, written by the same core writers.
    ASSERT_TRUE(h.app->command("export analysis json"));
    ASSERT_EQ(h.platform.downloads.back().first, "analysis.json");
    const json exported = json::parse(h.platform.downloads.back().second);
    EXPECT_EQ(exported["unit"], "us");
    ASSERT_EQ(exported["ranks"].size(), 1u);
    for (const char* key : {"span", "idle", "compute", "non_compute"})
      EXPECT_EQ(exported["ranks"][0][key], a[key]) << key;
    for (const char* key : {"names", "launches", "host_stalls", "idle_by_stream"})
      EXPECT_TRUE(exported["ranks"][0].contains(key)) << key;
    EXPECT_TRUE(exported.contains("collectives") && exported.contains("stragglers"));
    ASSERT_TRUE(h.app->command("export analysis csv"));
    EXPECT_EQ(h.platform.downloads.back().first, "breakdown.csv");
    EXPECT_EQ(h.platform.downloads.back().second.rfind("rank,span_us,idle_us,compute_us,", 0), 0u);
    EXPECT_NE(h.platform.downloads.back().second.find("\n0," + a["span"].dump() + "," + a["idle"].dump() + ","),
              std::string::npos);
    EXPECT_FALSE(h.app->command("export analysis xml"));
  }
  // Traces without measured GPU work say so instead of showing zeros (one ImGui context at a time);
  // a simulation run is analysed from its spans.
  Headless none;
  none.drop(shared(kTwoRank) + "/chakra_trace.0.et");
  none.settle();
  ASSERT_TRUE(none.app->command("view analysis"));
  none.frame();
  EXPECT_EQ(none.status()["analysis"][0]["gpu_ops"], 0);
  EXPECT_FALSE(none.app->command("analysis 1"));  // no run yet
  none.app->clear();
  load_allreduce(none);
  ASSERT_TRUE(none.app->command("simulate"));
  none.settle();
  ASSERT_TRUE(none.app->command("analysis 1"));
  none.frame();
  json s = none.status();
  EXPECT_EQ(s["analysis_source"], 1);
  EXPECT_EQ(s["view"], "analysis");
  EXPECT_FALSE(none.app->command("analysis x"));
}

// The command table: every usage names a distinct command, and each one is found by its name
// (those without an argument run; a name without its argument is refused).
TEST(AppUi, EveryCommandInTheTableIsFoundByItsName) {
  Headless h;
  std::set<std::string> usages;
  for (const std::string& u : h.app->command_usages()) EXPECT_TRUE(usages.insert(u).second) << u;
  EXPECT_GE(usages.size(), 24u);
  EXPECT_TRUE(h.app->command("keys"));
  EXPECT_TRUE(h.app->command("view sweep"));
  EXPECT_EQ(h.status()["view"], "sweep");
  EXPECT_FALSE(h.app->command("view"));  // its argument is missing
  EXPECT_FALSE(h.app->command("view nowhere"));
  EXPECT_FALSE(h.app->command("simulate now"));  // takes none
  EXPECT_FALSE(h.app->command("no such command"));
  EXPECT_TRUE(h.app->command("sweep spec workload: {}"));  // the rest of the line is the argument
}

// The view registry (web/views.cpp): every view the `view` command lists opens by its name,
// draws with traces open, is the status's view, and comes back as itself from a share link.
TEST(AppUi, EveryViewOfTheRegistryOpensDrawsAndComesBackFromALink) {
  Headless h;
  h.drop_dir(shared(kTwoRank));
  h.settle();
  std::vector<std::string> names;
  for (const std::string& u : h.app->command_usages())
    if (u.rfind("view ", 0) == 0)
      for (std::string_view name : chakra::Split(std::string_view(u).substr(5), '|')) names.emplace_back(name);
  ASSERT_EQ(names.size(), 8u);
  EXPECT_EQ(names.front(), "overview");  // the first tab, what a fresh page shows
  for (const std::string& name : names) {
    ASSERT_TRUE(h.app->command("view " + name)) << name;
    h.frame();
    h.frame();
    EXPECT_EQ(h.status()["view"], name);
    const std::string hash = h.app->share_hash();
    ASSERT_TRUE(h.app->command(name == "overview" ? "view nodes" : "view overview"));
    h.app->apply_hash(hash);
    h.frame();
    EXPECT_EQ(h.status()["view"], name) << "from the link " << hash;
    EXPECT_EQ(h.status()["error"], "");
  }
}

// `find RUN NAME`, how other views send the user to slices on the timeline: it opens the Timeline
// view on that source with the slices named like NAME found; a run that does not exist, or no
// name, is refused and changes nothing.
TEST(AppUi, FindOpensTheTimelineOnASourceWithItsSlicesFound) {
  Headless h;
  load_allreduce(h);
  ASSERT_TRUE(h.app->run_simulation());
  h.settle();
  EXPECT_FALSE(h.app->command("find 3 ALL_REDUCE"));  // no run 3
  EXPECT_FALSE(h.app->command("find 1"));             // no name
  h.frame();
  EXPECT_EQ(h.status()["view"], "overview");
  ASSERT_TRUE(h.app->command("find 1 ALL_REDUCE"));
  h.frame();
  h.frame();
  const json s = h.status();
  EXPECT_EQ(s["view"], "timeline");
  EXPECT_EQ(s["timeline_found"], 8);  // the all-reduce of each of the 8 NPUs
}

// Scripted commands with numbers take exactly a whole number in range, else fail and change nothing.
TEST(AppUi, CommandNumbersAreCheckedWhole) {
  Headless h;
  EXPECT_FALSE(h.app->command("select 0"));  // no trace yet
  h.drop_dir(shared(kTwoRank));
  h.settle();
  EXPECT_TRUE(h.app->command("select 40"));
  const auto selected = h.status()["selected"];
  for (const char* bad :
       {"select 1634", "select -1", "select 4x", "select ", "synthesize nope 2 2 1 1", "synthesize llama3-8b 2 2 0 8",
        "synthesize llama3-8b 2 2 4097 8", "synthesize llama3-8b 2 2 4"})
    EXPECT_FALSE(h.app->command(bad)) << bad;
  EXPECT_EQ(h.status()["selected"], selected);
  EXPECT_EQ(h.status()["ranks"].size(), 2u);  // no synthetic workload replaced the traces
  EXPECT_TRUE(h.app->command("synthesize llama3-8b 2 2 4 8"));
  EXPECT_EQ(h.status()["ranks"].size(), 16u);
}

// A large file as the page hands it over: slices when the app wants them, frames between.
// The status names the file and what is being done; a refused file and an abandoned one leave
// nothing behind and say why.
TEST(AppUi, FilesInSlicesOpenAsWholeFilesDoAndSayWhatTheyAreDoing) {
  const std::string whole = read_raw(shared(kTwoRank) + "/chakra_trace.0.et");
  json direct_ranks;
  std::string direct_hash;
  {  // one app at a time (each has the ImGui context)
    Headless direct;
    direct.drop(shared(kTwoRank) + "/chakra_trace.0.et");
    direct.settle();
    direct_ranks = direct.status()["ranks"];
    direct_hash = direct.app->share_hash();
  }

  Headless h;
  const uint32_t id = h.app->begin_file("chakra_trace.0.et", whole.size());
  size_t sent = 0;
  std::set<std::string> phases;
  for (int frames = 0; h.app->busy(); ++frames) {
    ASSERT_LT(frames, 100000) << "never finished";
    const int64_t wanted = h.app->file_bytes_wanted(id);
    if (wanted > 0) {
      const size_t n = std::min<size_t>({static_cast<size_t>(wanted), whole.size() - sent, 4093});
      ASSERT_TRUE(h.app->file_piece(id, as_bytes(whole).subspan(sent, n)));
      sent += n;
    }
    const json s = json::parse(h.app->brief_status_json());
    if (s["busy"].get<bool>()) {
      EXPECT_EQ(s["loading_file"], "chakra_trace.0.et");
      EXPECT_EQ(s["loading_bytes"], whole.size());
      phases.insert(s["loading_phase"].get<std::string>());
    }
    h.frame();
  }
  EXPECT_EQ(sent, whole.size());
  EXPECT_EQ(h.app->file_bytes_wanted(id), -1) << "an opened file takes no more";
  EXPECT_TRUE(phases.count("reading and decoding")) << json(phases).dump();
  EXPECT_EQ(h.status()["ranks"], direct_ranks);
  EXPECT_EQ(h.app->share_hash(), direct_hash) << "the same file fingerprint";

  // A PNG in slices: refused once its first 64 KiB are in; the rest is not asked for.
  std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  png.resize(300000, 'x');
  const uint32_t image = h.app->begin_file("photo.png", png.size());
  EXPECT_TRUE(h.app->file_piece(image, as_bytes(png).first(40000)));
  EXPECT_FALSE(h.app->file_piece(image, as_bytes(png).subspan(40000, 40000)));
  EXPECT_EQ(h.app->file_bytes_wanted(image), -1);
  // A file the page could not finish reading.
  const uint32_t gone = h.app->begin_file("gone.et", whole.size());
  EXPECT_TRUE(h.app->file_piece(gone, as_bytes(whole).first(1000)));
  h.app->abandon_file(gone, "NotFoundError");
  h.settle();
  const json s = h.status();
  EXPECT_NE(s["log"].dump().find("photo.png: not a trace this page reads: it looks like a PNG image"),
            std::string::npos)
      << s["log"];
  EXPECT_NE(s["error"].get<std::string>().find("gone.et: could not be read to its end (NotFoundError)"),
            std::string::npos)
      << s["error"];
  EXPECT_EQ(s["ranks"], direct_ranks) << "nothing of either was kept";
}

// The page links and converts a PyTorch pair in a worker: meanwhile it draws and says what it
// is doing; the result opens to the rank converting in place gives; a failure is shown and
// changes nothing; a result coming back after Clear is ignored.
TEST(AppUi, PairsConvertAwayFromTheUiThreadToTheSameRank) {
  const std::string dir = shared("data/pairs/dlrm_8rank_v100/rank0");
  const std::string host = dir + "/dlrm_eg_0.json", kineto = dir + "/worker0_step_12.1694128201545.pt.trace.json";
  json in_place;
  std::string in_place_link;
  {  // one ImGui context at a time
    Headless here;
    here.drop(host);
    here.drop(kineto);
    here.settle();
    in_place = here.status();
    in_place_link = here.app->share_hash();
  }
  ASSERT_EQ(in_place["ranks"].size(), 1u);

  Headless page;
  page.platform.hold_conversions = true;
  page.drop(host);
  page.drop(kineto);
  for (int i = 0; i < 5; ++i) page.frame();
  ASSERT_EQ(page.platform.held.size(), 1u);  // one job for the pair, none for the host ET alone
  json s = page.status();
  EXPECT_TRUE(s["busy"]);
  EXPECT_EQ(s["loading_phase"], "linking and converting");
  EXPECT_EQ(s["loading_file"], "dlrm_eg_0.json + worker0_step_12.1694128201545.pt.trace.json");
  EXPECT_TRUE(s["ranks"].empty());
  // Only workers work: the app needs no frames until they report (the page's loop pauses).
  EXPECT_FALSE(page.app->working_here());
  const chakra::RankConversion job = page.platform.held[0];
  page.platform.held.clear();
  page.app->conversion_finished(chakra::decode_converted(chakra::encode_converted(chakra::convert_rank(job))));
  page.settle();
  s = page.status();
  ASSERT_EQ(s["ranks"].size(), 1u);
  EXPECT_EQ(s["ranks"][0]["summary"], in_place["ranks"][0]["summary"]);
  EXPECT_EQ(s["ranks"][0]["warnings"], in_place["ranks"][0]["warnings"]);
  EXPECT_EQ(s["error"], "");
  EXPECT_EQ(page.app->share_hash(), in_place_link);  // the same files, the same link

  // The Kineto trace again, its conversion failing: said, and the rank stays as it was.
  page.drop(kineto);
  for (int i = 0; i < 3; ++i) page.frame();
  ASSERT_EQ(page.platform.held.size(), 1u);
  const chakra::RankConversion again = page.platform.held[0];
  page.platform.held.clear();
  page.app->conversion_failed(again.rank, again.generation, "worker0.json: the worker ran out of memory");
  page.settle();
  s = page.status();
  EXPECT_EQ(s["error"], "worker0.json: the worker ran out of memory");
  EXPECT_EQ(s["ranks"][0]["summary"], in_place["ranks"][0]["summary"]);

  // Files the page announced but has not handed over yet hold the conversion back, so a host ET
  // is not converted alone before its Kineto trace arrives.
  page.app->clear();
  page.app->expect_files(2);
  page.drop(host);
  for (int i = 0; i < 3; ++i) page.frame();
  EXPECT_TRUE(page.platform.held.empty());
  EXPECT_TRUE(page.app->busy());
  page.drop(kineto);
  for (int i = 0; i < 3; ++i) page.frame();
  ASSERT_EQ(page.platform.held.size(), 1u);
  EXPECT_FALSE(page.platform.held[0].host.empty());
  EXPECT_FALSE(page.platform.held[0].kineto.empty());
  page.platform.held.clear();

  // Cleared while converting: the result that comes back opens nothing.
  page.app->clear();
  page.drop(host);
  for (int i = 0; i < 3; ++i) page.frame();
  ASSERT_EQ(page.platform.held.size(), 1u);
  const chakra::RankConversion late = page.platform.held[0];
  page.platform.held.clear();
  page.app->clear();
  EXPECT_FALSE(page.app->busy());
  page.app->conversion_finished(chakra::convert_rank(late));
  page.settle();
  EXPECT_TRUE(page.status()["ranks"].empty());
  EXPECT_EQ(page.status()["error"], "");
}

// A rank is validated in a frame of its own, not in the one that decoded its last nodes (on a
// large trace validation takes most of a frame); meanwhile it is shown, marked as being checked.
TEST(AppUi, ValidationWaitsForTheNextFrame) {
  Headless h;
  h.drop(shared(kTwoRank) + "/chakra_trace.0.et");
  h.app->work(60000);  // opens the whole file in one call
  json s = h.status();
  ASSERT_EQ(s["ranks"].size(), 1u);
  EXPECT_FALSE(s["ranks"][0]["checked"]);
  EXPECT_TRUE(s["busy"]);
  EXPECT_EQ(s["loading_phase"], "validating");
  EXPECT_EQ(s["loading_file"], "chakra_trace.0.et");
  h.app->work(60000);
  s = h.status();
  EXPECT_TRUE(s["ranks"][0]["checked"]);
  EXPECT_FALSE(s["busy"]);
  EXPECT_EQ(s["loading_phase"], "");
}

// The page opens everything the CLI reads, through the workspace's importers: Chakra JSON as a
// rank, a StableHLO program as its devices' traces (the device it was modelled on said), and a
// table chakra sweep wrote, sent in slices as the browser sends it, in the Sweep view.
TEST(AppUi, ChakraJsonStableHloAndSweepTablesOpenLikeTheCliReadsThem) {
  Headless h;
  chakra::StringSink json_text;
  chakra::write_json(chakra::read_et(shared(kTwoRank) + "/chakra_trace.1.et"), json_text);
  h.app->queue_file(std::vector<uint8_t>(json_text.out.begin(), json_text.out.end()), "chakra_trace.1.json");
  h.settle();
  json s = h.status();
  ASSERT_EQ(s["ranks"].size(), 1u) << s["log"];
  EXPECT_EQ(s["ranks"][0]["rank"], 1);
  EXPECT_EQ(s["ranks"][0]["source"], "chakra_trace.1.json");

  h.drop(testing_support::test_data("fixtures/hespas__test_split_replica_groups.mlir"));
  h.settle();
  s = h.status();
  ASSERT_EQ(s["ranks"].size(), 4u) << s["log"];
  EXPECT_NE(s["log"].dump().find("StableHLO program on 4 devices"), std::string::npos) << s["log"];
  EXPECT_NE(s["log"].dump().find("compute modelled on"), std::string::npos) << s["log"];

  const std::string table =
      "{\"point\":0,\"sweep\":\"4f2a\",\"npus\":8,\"step_ns\":1200,\"error\":\"\"}\n"
      "{\"point\":1,\"sweep\":\"4f2a\",\"npus\":8,\"step_ns\":900,\"error\":\"\"}\n";
  const uint32_t id = h.app->begin_file("RESULTS.jsonl", table.size());
  for (size_t at = 0; at < table.size(); at += 16)
    ASSERT_TRUE(h.app->file_piece(id, as_bytes(table).subspan(at, std::min<size_t>(16, table.size() - at))));
  h.settle();
  s = h.status();
  EXPECT_EQ(s["view"], "sweep");
  EXPECT_EQ(s["sweep"]["source"], "RESULTS.jsonl");
  EXPECT_EQ(s["sweep"]["done"], 2);
  EXPECT_EQ(s["ranks"].size(), 4u);  // a table leaves the traces alone
}

TEST(AppUi, BadFilesAreNamedInTheErrorAndTheAppCarriesOn) {
  Headless h;
  std::string good = read_raw(shared(kTwoRank) + "/chakra_trace.0.et");
  std::string cut = good.substr(0, good.size() / 2);
  h.app->queue_file(std::vector<uint8_t>(cut.begin(), cut.end()), "cut.0.et");
  const std::vector<uint8_t> broken = {'{', '"', 'x'};
  h.app->queue_file(broken, "broken.json");
  h.app->queue_file(std::vector<uint8_t>(good.begin(), good.end()), "chakra_trace.0.et");
  h.settle();
  json s = h.status();
  std::string log = s["log"].dump();
  EXPECT_NE(log.find("cut.0.et"), std::string::npos) << log;
  EXPECT_NE(log.find("broken.json"), std::string::npos) << log;
  ASSERT_EQ(s["ranks"].size(), 1u);
  EXPECT_EQ(s["ranks"][0]["source"], "chakra_trace.0.et");
}

// ---- golden screenshots: chakra-view under Xvfb -------------------------------------------------

namespace {

struct Shot {
  const char* name;
  std::vector<std::string> args;
};

// Share of pixels whose colour differs by more than a small tolerance in some channel.
double differing_fraction(const chakra_web::Image& a, const chakra_web::Image& b, chakra_web::Image& diff) {
  diff = a;
  size_t differing = 0;
  for (size_t i = 0; i < a.rgba.size(); i += 4) {
    bool differs = false;
    for (int c = 0; c < 3; ++c) differs |= std::abs(int(a.rgba[i + c]) - int(b.rgba[i + c])) > 24;
    differing += differs;
    for (int c = 0; c < 3; ++c) diff.rgba[i + c] = differs ? (c == 0 ? 255 : 0) : a.rgba[i + c] / 4;
  }
  return static_cast<double>(differing) / static_cast<double>(a.rgba.size() / 4);
}

}  // namespace

TEST(AppGolden, NativeViewsLookAsRecorded) {
  ASSERT_EQ(std::system("command -v xvfb-run >/dev/null"), 0) << "xvfb-run is missing: run .ci/setup-deps native";
  std::string out = testing_support::temp_dir();
  std::string two = shared(kTwoRank), ar = shared(kAllReduce);
  std::vector<std::string> allreduce = {shared(kRing8), shared(kRingSys)};
  for (int r = 0; r < 8; ++r) allreduce.push_back(ar + "/AllReduce_1MB." + std::to_string(r) + ".et");
  auto with = [](std::vector<std::string> files, std::vector<std::string> opts) {
    opts.insert(opts.end(), files.begin(), files.end());
    return opts;
  };
  std::vector<Shot> shots = {
      {"overview", with({two + "/chakra_trace.0.et", two + "/chakra_trace.1.et", two + "/comm_group.json"}, {})},
      {"nodes", with({two + "/chakra_trace.0.et"}, {"--hash", "v=nodes&r=0&n=12&q=detach"})},
      {"graph", with({two + "/chakra_trace.0.et"}, {"--hash", "v=graph&r=0&n=12&g.critical=1"})},
      {"simulation", with(allreduce, {"--do", "simulate", "--do", "view simulation"})},
      {"timeline",
       {"--hash", "synth=llama2-7b&synth.layers=2&synth.dp=2&synth.tp=2", "--do", "fit", "--do", "simulate", "--do",
        "timeline 1"}},
      {"analysis",
       {"--do", "view analysis", shared("data/pairs/dlrm_8rank_v100/rank0/dlrm_eg_0.json"),
        shared("data/pairs/dlrm_8rank_v100/rank0/worker0_step_12.1694128201545.pt.trace.json")}},
      {"sweep", {"--do", "sweep example", "--do", "sweep run", "--frames", "12"}},
  };
  bool update = std::getenv("CHAKRA_UPDATE_GOLDEN") != nullptr;
  for (const Shot& shot : shots) {
    SCOPED_TRACE(shot.name);
    std::string png = out + "/" + shot.name + ".png";
    // In sanitizer builds, leaks are not checked in chakra-view: Mesa's driver, loaded and
    // unloaded at run time, leaves allocations no stack can be given for. The app's own code is
    // leak-checked by the headless tests above, in this process.
    std::string cmd =
        "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 xvfb-run -a -s '-screen 0 1400x900x24' "
        "'" CHAKRA_VIEW "' --size 1280x800 --screenshot '" +
        png + "' --status '" + out + "/" + shot.name + ".json'";
    for (const std::string& a : shot.args) cmd += " '" + a + "'";
    ASSERT_EQ(std::system((cmd + " 2>" + out + "/stderr.txt").c_str()), 0) << cmd << "\n"
                                                                           << read_raw(out + "/stderr.txt");
    json status = json::parse(read_raw(out + "/" + shot.name + ".json"));
    EXPECT_EQ(status["error"], "") << shot.name;
    if (std::string_view(shot.name) == "sweep") {  // the example's 60 points, run in place by the native host
      EXPECT_EQ(status["sweep"]["done"], 60);
      EXPECT_EQ(status["sweep"]["failed"], 0);
    }
    std::string golden = std::string(CHAKRA_GOLDEN_DIR) + "/" + shot.name + ".png";
    if (update) {
      fs::copy_file(png, golden, fs::copy_options::overwrite_existing);
      continue;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; record it with CHAKRA_UPDATE_GOLDEN=1";
    chakra_web::Image want = chakra_web::decode_png(read_raw(golden), golden);
    chakra_web::Image got = chakra_web::decode_png(read_raw(png), png);
    ASSERT_EQ(got.width, want.width);
    ASSERT_EQ(got.height, want.height);
    chakra_web::Image diff;
    double fraction = differing_fraction(got, want, diff);
    std::string diff_path = out + "/" + shot.name + ".diff.png";
    testing_support::write_raw(diff_path, chakra_web::encode_png(diff));
    EXPECT_LE(fraction, 0.002) << shot.name << ": " << fraction * 100 << "% of pixels differ; see " << png << " and "
                               << diff_path;
  }
  ASSERT_FALSE(update) << "golden images rewritten in " CHAKRA_GOLDEN_DIR
                          "; look at them, then run again without "
                          "CHAKRA_UPDATE_GOLDEN";
}

TEST(Png, RoundTripsAndRefusesDamage) {
  chakra_web::Image img;
  img.width = 3;
  img.height = 2;
  for (int i = 0; i < 24; ++i) img.rgba.push_back(static_cast<uint8_t>(i * 10));
  std::string bytes = chakra_web::encode_png(img);
  chakra_web::Image back = chakra_web::decode_png(bytes, "x.png");
  EXPECT_EQ(back.rgba, img.rgba);
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_THROW(chakra_web::decode_png(bytes.substr(0, cut), "x.png"), chakra::Error) << cut;
}

TEST(Png, GoldenComparisonSeesAnotherView) {
  std::string dir = CHAKRA_GOLDEN_DIR;
  chakra_web::Image a = chakra_web::decode_png(read_raw(dir + "/overview.png"), "overview.png");
  chakra_web::Image b = chakra_web::decode_png(read_raw(dir + "/nodes.png"), "nodes.png");
  chakra_web::Image diff;
  EXPECT_GT(differing_fraction(a, b, diff), 0.02);
  EXPECT_EQ(differing_fraction(a, a, diff), 0.0);
}
