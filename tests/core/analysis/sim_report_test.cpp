// The simulation report writers (chakra/analysis/sim_report.h) on a result built by hand, so
// every figure they print is known.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chakra/analysis/sim_report.h"

namespace {

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
  r.npus[0] = {true, 2500, 500, 2000, 700, 0, 0, 200, 5, {}};
  r.npus[1] = {true, 1500, 100, 1400, 300, 0, 0, 100, 4, {}};
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
  // never issued are left out.
  EXPECT_EQ(chakra::sim_summary_text(three_npus()),
            "\nsummary: 3 NPUs, 2 finished, 12 messages, 34 events\n"
            "  step time                   2.500 us  (slowest: NPU 0)\n"
            "  mean compute busy           1.700 us\n"
            "  mean comm busy                500 ns\n"
            "  mean overlap                  150 ns\n"
            "  mean exposed comm             300 ns\n"
            "  collective            count            bytes        mean time\n"
            "  all-reduce                2             2048           600 ns\n");
}

// A congestion-aware run redone message by message says so, in the summary and the JSON.
TEST(SimReport, SaysWhenClosedFormsWereContended) {
  SimResult r = three_npus();
  const std::string line = "  (a ring phase solved in closed form shared links with other traffic: the run was redone with every "
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

// Replays of measured traces: each NPU's simulated step (finish less its start) against its
// measured one, the mean and worst error, and per collective type the medians; in JSON too.
TEST(SimReport, MeasuredAgainstSimulated) {
  SimResult r = three_npus();
  EXPECT_EQ(chakra::measured_vs_simulated_text(r), "");  // nothing measured: nothing said
  r.npus[0].measured_step = 2000;  // simulated 2500: +25%
  r.npus[1].start = 500;
  r.npus[1].measured_step = 1250;  // simulated 1500 - 500: -20%
  r.measured_collectives.push_back(CollectiveFit{0, 2, 800, 600});
  const std::string collectives =
      "  collective            count   median measured  median simulated     error\n"
      "  ALL_REDUCE                2            800 ns            600 ns    -25.0%\n";
  EXPECT_EQ(chakra::measured_vs_simulated_text(r),
            "  measured vs simulated step (span of the trace's measured times; mean |error| 22.5%, worst NPU 0 +25.0%)\n"
            "  NPU            measured      simulated     error\n"
            "  0              2.000 us       2.500 us    +25.0%\n"
            "  1              1.250 us       1.000 us    -20.0%\n" +
                collectives);
  // With measured exposed communication on some NPU, a column of it for every NPU, explained.
  r.npus[1].measured_exposed_comm = 300;
  EXPECT_EQ(chakra::measured_vs_simulated_text(r),
            "  measured vs simulated step (span of the trace's measured times; mean |error| 22.5%, worst NPU 0 +25.0%)\n"
            "  NPU            measured      simulated     error  measured exposed comm*\n"
            "  0              2.000 us       2.500 us    +25.0%                    0 ns\n"
            "  1              1.250 us       1.000 us    -20.0%                  300 ns\n"
            "  * from each collective's last measured arrival to its end, less compute kernel time\n" +
                collectives);
  EXPECT_NE(chakra::sim_summary_text(r).find("measured vs simulated step"), std::string::npos);
  StringSink out;
  chakra::write_sim_json(r, out);
  auto j = nlohmann::json::parse(out.text);
  EXPECT_EQ(j["npus"][1]["measured_step_ns"], 1250);
  EXPECT_EQ(j["npus"][1]["start_ns"], 500);
  EXPECT_EQ(j["npus"][1]["measured_exposed_comm_ns"], 300);
  EXPECT_FALSE(j["npus"][2].contains("measured_step_ns"));
  EXPECT_EQ(j["measured_collectives"][0]["comm_type"], "ALL_REDUCE");
  EXPECT_EQ(j["measured_collectives"][0]["measured_median_ns"], 800);
  EXPECT_EQ(j["measured_collectives"][0]["simulated_median_ns"], 600);
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
