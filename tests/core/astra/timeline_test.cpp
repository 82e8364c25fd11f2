// ASTRA-sim logs → Chrome traces: the reference's bytes with --reference-units, correct
// microseconds otherwise, and the Chrome trace writer's event shapes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chakra/astra/timeline.h"
#include "chakra/format/chrome_trace.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;
using json = nlohmann::json;

namespace {

const std::string kLog = "reference/chakra/inputs/timeline/astra_sim_trace_MLP_ModelParallel_2npus.log";

std::string timeline(const std::string& log, chakra::TimelineOptions o, bool known_only = false) {
  chakra::StringSink out;
  chakra::write_timeline(chakra::parse_astra_sim_log(log, "x.log", o.num_npus, known_only), o, out);
  return out.out;
}

std::string error_of(const std::string& log, uint32_t npus, bool known_only = false) {
  try {
    chakra::parse_astra_sim_log(log, "x.log", npus, known_only);
  } catch (const chakra::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Timeline, ReferenceUnitsAreByteIdentical) {
  chakra::TimelineOptions o;
  o.num_npus = 2;
  o.npu_frequency_mhz = 1000;
  o.reference_units = true;
  EXPECT_TRUE(
      timeline(read_raw(shared(kLog)), o, true) ==
      read_raw(shared("reference/chakra/outputs/timeline_visualizer/MLP_ModelParallel_2npus.chrome_trace.json")));
}

TEST(Timeline, MicrosecondsTracksAndArgs) {
  chakra::TimelineOptions o;
  o.num_npus = 2;
  o.npu_frequency_mhz = 1000;
  json ours = json::parse(timeline(read_raw(shared(kLog)), o));
  json ref = json::parse(
      read_raw(shared("reference/chakra/outputs/timeline_visualizer/MLP_ModelParallel_2npus.chrome_trace.json")));
  std::vector<json> slices;
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  for (const json& e : ours["traceEvents"]) {
    if (e["ph"] == "X")
      slices.push_back(e);
    else if (e["name"] == "thread_name")
      thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    else if (e["name"] == "process_name")
      process_names[e["pid"]] = e["args"]["name"];
  }
  ASSERT_EQ(slices.size(), ref["traceEvents"].size());
  ASSERT_EQ(slices.size(), 116u);
  for (size_t k = 0; k < slices.size(); ++k) {
    const json& r = ref["traceEvents"][k];
    EXPECT_NEAR(slices[k]["ts"].get<double>(), r["ts"].get<double>() * 1000, 1e-6);  // ms → µs
    EXPECT_NEAR(slices[k]["dur"].get<double>(), r["dur"].get<double>() * 1000, 1e-6);
    EXPECT_NEAR(slices[k]["args"]["ms"].get<double>(), r["dur"].get<double>(), 1e-12);
    EXPECT_EQ(slices[k]["name"], r["name"]);
    EXPECT_EQ(slices[k]["pid"], r["pid"]);
  }
  // The first compute slice: issued at cycle 0, called back at 32291 at 1000 MHz = 32.291 µs.
  EXPECT_EQ(slices[0]["dur"], 32.291);
  EXPECT_EQ(slices[0]["args"]["node_id"], 0);
  EXPECT_EQ(slices[0]["args"]["callback_cycle"], 32291);
  EXPECT_EQ(process_names[1], "NPU 1");
  EXPECT_EQ((thread_names[{0, 3}]), "compute");
  EXPECT_EQ((thread_names[{1, 4}]), "communication");
}

TEST(Timeline, LogVariantsAndErrors) {
  // spdlog-prefixed lines (newer ASTRA-sim), names with commas, unrelated lines.
  std::string log =
      "[2024-05-01 10:00:00.000] [info] issue,sys->id=0,tick=100,node->id=4,node->name=COMP_NODE_a,b\n"
      "sys[0] finished, 1 cycles\n"
      "[2024-05-01 10:00:00.000] [info] callback,sys->id=0,tick=300,node->id=4,node->name=COMP_NODE_a,b\r\n";
  std::vector<chakra::TimelineSlice> s = chakra::parse_astra_sim_log(log, "x.log", 1, true);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "COMP_NODE_a,b");
  EXPECT_EQ(s[0].issue_cycle, 100u);
  EXPECT_EQ(s[0].callback_cycle, 300u);
  EXPECT_EQ(s[0].track, 3);

  // A name that gives no track: the reference's error, or the "other" track.
  std::string bad = read_raw(shared("reference/chakra/inputs/timeline/bad_node_name.log"));
  EXPECT_EQ(error_of(bad, 1, true), "x.log: line 1: Node type cannot be identified from aten::mm");
  chakra::TimelineOptions o;
  json doc = json::parse(timeline(bad, o));
  EXPECT_EQ(doc["traceEvents"].back()["tid"], 0);
  EXPECT_EQ(doc["traceEvents"].back()["dur"], 0.02);  // 20 cycles at 1000 MHz

  EXPECT_EQ(error_of("callback,sys->id=0,tick=5,node->id=1,node->name=COMP_NODE\n", 1),
            "x.log: line 1: callback for node 1 on NPU 0 without an issue");
  EXPECT_EQ(error_of("\nissue,sys->id=2,tick=5,node->id=1,node->name=COMP_NODE\n", 2),
            "x.log: line 2: NPU 2 is not below --num-npus 2");
  EXPECT_EQ(error_of("issue,sys->id=0,tick=-5,node->id=1,node->name=COMP_NODE\n", 1),
            "x.log: line 1: '-5' is not a non-negative integer");
  EXPECT_EQ(error_of("issue,sys->id=0,tick=5\n", 1), "x.log: line 1: expected 5 comma-separated fields");
}

TEST(Timeline, ChromeTraceWriterEventShapes) {
  chakra::StringSink out;
  chakra::ChromeTraceWriter w(out);
  w.thread_name(1, 2, "stream 7");
  w.complete(1, 2, 10.5, 2, "gemm\u00e9", "kernel", [](chakra::JsonWriter& a) { a.key("id").value_int(5); });
  w.flow(9, "dep", 1, 2, 11, 0, 3, 20);
  w.finish({{"displayTimeUnit", "\"ns\""}});
  EXPECT_EQ(
      out.out,
      "{\"traceEvents\": [{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 2, \"args\": {\"name\": "
      "\"stream 7\"}}, {\"pid\": 1, \"tid\": 2, \"ts\": 10.5, \"dur\": 2.0, \"ph\": \"X\", \"name\": "
      "\"gemm\\u00e9\", \"cat\": \"kernel\", \"args\": {\"id\": 5}}, {\"pid\": 1, \"tid\": 2, \"ts\": 11.0, "
      "\"ph\": \"s\", \"id\": 9, \"name\": \"dep\", \"cat\": \"dependency\"}, {\"pid\": 0, \"tid\": 3, \"ts\": "
      "20.0, \"ph\": \"f\", \"bp\": \"e\", \"id\": 9, \"name\": \"dep\", \"cat\": \"dependency\"}], "
      "\"displayTimeUnit\": \"ns\"}");
}
