// The simulation report writers (chakra/analysis/sim_report.h) on a result built by hand, so
// every figure they print is known.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chakra/analysis/sim_report.h"

namespace {

using namespace chakra::astra;
using namespace chakra::sim;

class StringSink : public chakra::ByteSink {
 public:
  void write(const void* data, size_t n) override { text.append(static_cast<const char*>(data), n); }
  using ByteSink::write;
  std::string text;
};

SimResult three_npus() {
  SimResult r;
  r.npus.resize(3);
  auto finished = [](Tick finish, Tick astra_exposed_comm, Tick compute, Tick comm, Tick overlap, uint64_t nodes) {
    NpuResult n;
    n.finished = true;
    n.finish = finish;
    n.astra_exposed_comm = astra_exposed_comm;
    n.compute = compute;
    n.comm = comm;
    n.overlap = overlap;
    n.nodes = nodes;
    return n;
  };
  r.npus[0] = finished(2500, 500, 2000, 700, 200, 5);
  r.npus[1] = finished(1500, 100, 1400, 300, 100, 4);
  r.npus[2].stuck = {"node 7 (recv) waits for a message"};
  r.collectives[int(Collective::AllReduce)] = {2, 2048, 1200};
  r.messages = 12;
  r.events = 34;
  r.deadlock = true;
  r.spans.push_back(Span{1, SpanKind::Collective, 9, 1000, 1500, "all_reduce"});
  return r;
}

TEST(SimReport, FinishLinesInFinishOrderAsAstraSim) {
  EXPECT_EQ(chakra::astra_finish_lines(three_npus()),
            "sys[1] finished, 1500 cycles, exposed communication 100 cycles.\n"
            "sys[0] finished, 2500 cycles, exposed communication 500 cycles.\n");
}

TEST(SimReport, SummaryOverFinishedNpus) {
  // Means over the two finished NPUs; the unfinished one counts only in the NPU total; types
  // never issued are left out. Exposed communication (communication while no compute runs)
  // and ASTRA-sim's figure (step less compute) under different names.
  EXPECT_EQ(
      chakra::sim_summary_text(three_npus()),
      "\nsummary: 3 NPUs, 2 finished, 12 messages, 34 events\n"
      "  makespan                    2.500 us  (the first NPU's start to the last NPU's finish; last: NPU 0)\n"
      "  step per NPU                2.000 us  (each NPU's finish less its start: NPU 1 1.500 us ... NPU 0 2.500 us)\n"
      "  mean compute busy           1.700 us\n"
      "  mean comm busy                500 ns\n"
      "  mean overlap                  150 ns\n"
      "  mean exposed comm             350 ns  (communication running while no compute runs)\n"
      "  mean non-compute              300 ns  (step less compute time: ASTRA-sim's \"exposed communication\" above)\n"
      "  collective            count            bytes        mean time\n"
      "  all-reduce                2             2048           600 ns\n");
}

// The makespan is not a step: an NPU that starts late has a shorter step than the makespan.
TEST(SimReport, StepPerNpuIsItsFinishLessItsStart) {
  SimResult r = three_npus();
  r.npus[0].start = 1000;  // its step: 1500
  r.npus[1].start = 200;   // its step: 1300
  const std::string s = chakra::sim_summary_text(r);
  EXPECT_NE(
      s.find("  makespan                    2.500 us  (the first NPU's start to the last NPU's finish; last: NPU 0)\n"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("  step per NPU                1.400 us  (each NPU's finish less its start: NPU 1 1.300 us ... NPU "
                   "0 1.500 us)\n"),
            std::string::npos)
      << s;
  StringSink out;
  chakra::write_sim_json(r, out);
  auto j = nlohmann::json::parse(out.text);
  EXPECT_EQ(j["makespan_ns"], 2500);
  EXPECT_EQ(j["npus"][0]["step_ns"], 1500);
  EXPECT_EQ(j["npus"][1]["step_ns"], 1300);
  EXPECT_EQ(j["npus"][0]["non_compute_ns"], 500);
  EXPECT_EQ(j["npus"][0]["exposed_communication_ns"], 500);  // comm 700 less overlap 200
  EXPECT_FALSE(j["npus"][0].contains("exposed_comm_ns"));    // the old, ambiguous name is gone
}

// A congestion-aware run redone message by message says so, in the summary and the JSON.
TEST(SimReport, SaysWhenClosedFormsWereContended) {
  SimResult r = three_npus();
  const std::string line =
      "  (a ring phase solved in closed form shared links with other traffic: the run was redone with every "
      "message simulated)\n";
  EXPECT_EQ(chakra::sim_summary_text(r).find(line), std::string::npos);
  StringSink plain;
  chakra::write_sim_json(r, plain);
  EXPECT_EQ(nlohmann::json::parse(plain.text)["closed_form_contended"], false);
  r.closed_form_contended = true;
  EXPECT_NE(chakra::sim_summary_text(r).find("34 events\n" + line), std::string::npos) << chakra::sim_summary_text(r);
  StringSink redone;
  chakra::write_sim_json(r, redone);
  EXPECT_EQ(nlohmann::json::parse(redone.text)["closed_form_contended"], true);
}

TEST(SimReport, SaysWhenCpuOpsBoundTheStep) {
  SimResult r = three_npus();
  r.npus[0].cpu = 2400;  // 96% of NPU 0's 2500 ns
  std::string s = chakra::sim_summary_text(r);
  EXPECT_NE(s.find("  bound by CPU ops            2.400 us  (NPU 0's CPU ops are busy 96% of its step: no network "
                   "makes it shorter)\n"),
            std::string::npos)
      << s;
  r.npus[0].cpu = 2300;  // 92%: not said
  EXPECT_EQ(chakra::sim_summary_text(r).find("bound by CPU ops"), std::string::npos);
}

// Host stalls qualify the verdict, are listed per NPU and class, and the other mode's figures
// are given beside the ones of the mode that ran.
TEST(SimReport, HostStallsQualifyTheCpuBoundVerdict) {
  SimResult r = three_npus();
  r.npus[0].cpu = 2400;
  r.npus[0].stalls[int(chakra::StallClass::GpuWait)] = 1500;
  r.npus[0].stalls[int(chakra::StallClass::Unexplained)] = 200;
  r.npus[0].stall_waits = 1;
  std::string s = chakra::sim_summary_text(r);
  EXPECT_NE(
      s.find("(NPU 0's CPU ops are busy 96% of its step: 1.700 us of it are host stalls replayed as CPU time (see "
             "below): if they are waits, this is not what bounds it)\n"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("replayed as the CPU time they were measured as (--stalls keep)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("(no stall ended just after GPU work: --stalls wait replays them the same)\n"), std::string::npos)
      << s;
  EXPECT_NE(s.find("  NPU      stalls              gpu_wait   unexplained  share of step\n"
                   "  0        1.700 us            1.500 us        200 ns   68.0%\n"),
            std::string::npos)
      << s;
  r.other_stall_mode.ran = true;
  r.other_stall_mode.end = 1250;
  r.other_stall_mode.steps = {1000, 1250, 0};
  s = chakra::sim_summary_text(r);
  EXPECT_NE(
      s.find(
          "  with --stalls wait instead: makespan 1.250 us (-50.0%), step per NPU 1.000 us ... 1.250 us (-60.0% on the "
          "longest)\n"),
      std::string::npos)
      << s;
  StringSink out;
  chakra::write_sim_json(r, out);
  auto j = nlohmann::json::parse(out.text);
  EXPECT_EQ(j["stall_mode"], "keep");
  EXPECT_EQ(j["other_stall_mode"]["stall_mode"], "wait");
  EXPECT_EQ(j["other_stall_mode"]["step_ns"][0], 1000);
  EXPECT_EQ(j["npus"][0]["stalls_ns"]["gpu_wait"], 1500);
  EXPECT_FALSE(j["npus"][1].contains("stalls_ns"));
}

// Replays of measured traces: each NPU's simulated step (finish less its start) against its
// measured one, the mean and worst error, and per collective type the medians; in JSON too.
TEST(SimReport, MeasuredAgainstSimulated) {
  SimResult r = three_npus();
  EXPECT_EQ(chakra::measured_vs_simulated_text(r), "");  // nothing measured: nothing said
  r.npus[0].measured_step = 2000;                        // simulated 2500: +25%
  r.npus[1].start = 500;
  r.npus[1].measured_step = 1250;  // simulated 1500 - 500: -20%
  r.measured_collectives.push_back(CollectiveFit{0, 2, 800, 600});
  const std::string collectives =
      "  collective            count   median measured  median simulated     error\n"
      "  ALL_REDUCE                2            800 ns            600 ns    -25.0%\n";
  const std::string title =
      "  measured vs simulated over the whole trace, from each NPU's first measured start to its last measured end: "
      "mean "
      "|error| 22.5%, worst NPU 0 +25.0%\n";
  EXPECT_EQ(chakra::measured_vs_simulated_text(r), title +
                                                       "  NPU            measured      simulated     error\n"
                                                       "  0              2.000 us       2.500 us    +25.0%\n"
                                                       "  1              1.250 us       1.000 us    -20.0%\n" +
                                                       collectives);
  // With measured communication on some NPU, exposed communication and transfer, each measured
  // and simulated by one definition, for every NPU, explained.
  r.npus[1].measured_exposed_comm = 300;
  r.npus[1].measured_exposed_transfer = 120;
  r.npus[1].exposed_transfer = 150;
  EXPECT_EQ(
      chakra::measured_vs_simulated_text(r),
      title +
          "  NPU            measured      simulated     error  exposed comm (measured  simulated)*  exposed transfer "
          "(measured  simulated)**\n"
          "  0              2.000 us       2.500 us    +25.0%          0 ns       500 ns          0 ns         0 ns\n"
          "  1              1.250 us       1.000 us    -20.0%        300 ns       200 ns        120 ns       150 ns\n"
          "  * communication running while no compute runs     ** from each collective's last arrival to its end, less "
          "compute\n" +
          collectives);
  EXPECT_NE(chakra::sim_summary_text(r).find(title), std::string::npos);
  StringSink out;
  chakra::write_sim_json(r, out);
  auto j = nlohmann::json::parse(out.text);
  EXPECT_EQ(j["npus"][1]["measured_step_ns"], 1250);
  EXPECT_EQ(j["npus"][1]["start_ns"], 500);
  EXPECT_EQ(j["npus"][1]["measured_exposed_communication_ns"], 300);
  EXPECT_EQ(j["npus"][1]["measured_exposed_transfer_ns"], 120);
  EXPECT_EQ(j["npus"][1]["exposed_transfer_ns"], 150);
  EXPECT_FALSE(j["npus"][2].contains("measured_step_ns"));
  EXPECT_EQ(j["measured_collectives"][0]["comm_type"], "ALL_REDUCE");
  EXPECT_EQ(j["measured_collectives"][0]["measured_median_ns"], 800);
  EXPECT_EQ(j["measured_collectives"][0]["simulated_median_ns"], 600);
}

// The figure people quote: each ProfilerStep#N window, measured against simulated.
TEST(SimReport, ProfilerStepWindows) {
  SimResult r = three_npus();
  r.npus[0].measured_step = 2000;
  r.npus[1].measured_step = 1500;
  r.npus[0].profiler_steps = {{"ProfilerStep#7", 2100, 1800, 1980, 40}};
  r.npus[1].profiler_steps = {{"ProfilerStep#7", 1600, 1400, 1260, 38}};
  const std::string s = chakra::measured_vs_simulated_text(r);
  EXPECT_NE(
      s.find("  measured vs simulated in ProfilerStep#7, over the nodes measured inside it (first start to last end): "
             "mean |error| 10.0%, worst NPU 0 +10.0%\n"
             "  NPU            measured      simulated     error       annotated    nodes\n"
             "  0              1.800 us       1.980 us    +10.0%        2.100 us       40\n"
             "  1              1.400 us       1.260 us    -10.0%        1.600 us       38\n"),
      std::string::npos)
      << s;
  StringSink out;
  chakra::write_sim_json(r, out);
  auto j = nlohmann::json::parse(out.text);
  EXPECT_EQ(j["npus"][0]["profiler_steps"][0]["name"], "ProfilerStep#7");
  EXPECT_EQ(j["npus"][0]["profiler_steps"][0]["simulated_ns"], 1980);
}

// Traces whose times were not measured on the NPUs they describe are never compared.
TEST(SimReport, DerivedTimesAreNotComparedAsMeasured) {
  SimResult r = three_npus();
  r.npus[0].measured_step = 2000;
  r.times_origin = "copies of a traced rank's (chakra project)";
  const std::string s = chakra::measured_vs_simulated_text(r);
  EXPECT_EQ(s,
            "  (no measured-vs-simulated figures: these traces' times are copies of a traced rank's (chakra project), "
            "not measured on the NPUs they describe)\n");
}

// The chart's split of a step: compute alone + overlapped + communication alone + idle = step.
TEST(SimReport, TimeSplitAddsUpToTheStep) {
  chakra::sim::NpuResult n;
  n.start = 100;
  n.finish = 1100;  // a 1000-tick step
  n.compute = 600;
  n.comm = 300;
  n.overlap = 100;
  const chakra::NpuTimeSplit t = chakra::time_split(n);
  EXPECT_EQ(t.compute_only, 500u);
  EXPECT_EQ(t.overlapped, 100u);
  EXPECT_EQ(t.comm_only, 200u);
  EXPECT_EQ(t.idle, 200u);
  n.compute = 2000;  // busier than the step (inconsistent input): no negative idle
  EXPECT_EQ(chakra::time_split(n).idle, 0u);
}

TEST(SimReport, JsonCarriesEveryFigure) {
  StringSink out;
  chakra::write_sim_json(three_npus(), out);
  auto j = nlohmann::json::parse(out.text);
  EXPECT_EQ(j["end_ns"], 2500);
  EXPECT_EQ(j["deadlock"], true);
  EXPECT_EQ(j["npus"].size(), 3u);
  EXPECT_EQ(j["npus"][1]["finish_ns"], 1500);
  EXPECT_EQ(j["npus"][0]["overlap_ns"], 200);
  EXPECT_EQ(j["npus"][2]["stuck"][0], "node 7 (recv) waits for a message");
  EXPECT_FALSE(j["npus"][0].contains("stuck"));
  EXPECT_EQ(j["collectives"]["all_reduce"]["time_ns"], 1200);
  EXPECT_EQ(j["collectives"]["broadcast"]["count"], 0);
}

TEST(SimReport, ChromeTraceHasTracksAndSpans) {
  StringSink out;
  chakra::write_sim_chrome_trace(three_npus(), out);
  auto j = nlohmann::json::parse(out.text);
  int names = 0, slices = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_EQ(e["pid"], 1);
      EXPECT_EQ(e["tid"], int(SpanKind::Collective));
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.5);
      EXPECT_EQ(e["cat"], "collectives");
      EXPECT_EQ(e["args"]["node"], 9);
    }
  }
  EXPECT_EQ(names, 3 * 7);
  EXPECT_EQ(slices, 1);
}

}  // namespace
