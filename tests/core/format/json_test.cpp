// JSON output: byte-identical to the reference jsonizer; our own formats are valid JSON and read
// back into the same trace; malformed JSON is an error with a line and column.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;

namespace {

std::string jsonize(const chakra::Trace& t, chakra::JsonFormat format, bool compact = false) {
  chakra::StringSink out;
  chakra::JsonOptions options;
  options.format = format;
  options.compact = compact;
  chakra::write_json(t, out, options);
  return out.out;
}

// jsonize_et on the encoded `bytes` of `t` writes, in every format, what write_json writes for
// the whole trace, and counts what it read.
void expect_streaming_matches_whole(const std::string& bytes, const chakra::Trace& t, const std::string& name) {
  for (auto format : {chakra::JsonFormat::Json, chakra::JsonFormat::Jsonl, chakra::JsonFormat::Reference}) {
    chakra::StringSink streamed;
    chakra::JsonOptions options;
    options.format = format;
    const chakra::JsonizeStats stats =
        chakra::jsonize_et(chakra::memory_input(as_bytes(bytes), name), streamed, options);
    ASSERT_TRUE(streamed.out == jsonize(t, format)) << "format " << static_cast<int>(format);
    EXPECT_EQ(stats.nodes, t.size());
    EXPECT_EQ(stats.has_metadata, t.has_metadata());
    EXPECT_EQ(stats.unknown_fields, t.has_unknown_fields() || t.dropped_unknown_fields() != 0);
  }
}

TEST(ReferenceJsonizer, ByteIdenticalToTheReferenceOutputs) {
  const std::pair<const char*, const char*> cases[] = {
      {"reference/chakra/inputs/chakra.0.et.gz", "reference/chakra/outputs/jsonizer/chakra.0.et.json.gz"},
      {"reference/chakra/outputs/converter_pytorch/1.0.2-chakra.0.0.4.et",
       "reference/chakra/outputs/converter_pytorch/1.0.2-chakra.0.0.4.et.json"},
      {"reference/chakra/outputs/generator/npus2/one_metadata_node_all_types.0.et",
       "reference/chakra/outputs/generator/npus2/one_metadata_node_all_types.0.et.json"},
  };
  for (const auto& [et, expected] : cases) {
    SCOPED_TRACE(et);
    const std::string want = read_decompressed(shared(expected));
    const std::string got = jsonize(chakra::read_et(shared(et)), chakra::JsonFormat::Reference);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want);
  }
}

TEST(JsonFormats, EveryCorpusTraceRoundTripsThroughEachFormat) {
  const auto files = all_shared_traces();
  int checked = 0;
  for (const auto& path : files) {
    const std::string bytes = read_decompressed(path);
    const chakra::Trace t = decode(bytes, path);
    if (t.has_unknown_fields()) continue;  // JSON cannot carry fields outside the schema
    SCOPED_TRACE(path);
    for (auto format : {chakra::JsonFormat::Json, chakra::JsonFormat::Jsonl, chakra::JsonFormat::Reference}) {
      const std::string text = jsonize(t, format);
      chakra::Trace back = chakra::read_json_trace(text, "roundtrip.json");
      ASSERT_EQ(chakra::encode_et(back), bytes) << "format " << static_cast<int>(format);
    }
    ++checked;
  }
  EXPECT_GT(checked, 800);
}

TEST(JsonFormats, StreamingJsonizeMatchesWholeTraceOutput) {
  int checked = 0;
  for (const auto& path : all_shared_traces()) {
    SCOPED_TRACE(path);
    const std::string bytes = read_decompressed(path);
    expect_streaming_matches_whole(bytes, decode(bytes, path), path);
    ++checked;
  }
  EXPECT_GT(checked, 800);
}

// Streaming jsonize keeps node strings in a pool that starts afresh every 128 KiB, and caches
// per string id whether a string needs escaping: ids are reused after a fresh start, so a stale
// cache would write a quote unescaped. Unique names (many fresh starts) mixed with names that
// need escaping and a repeated attribute string must come out as the whole-trace writer's.
TEST(JsonFormats, StreamingJsonizeWithManyDistinctStringsMatchesWholeTraceOutput) {
  chakra::Trace t;
  chakra::NodeDraft d;
  const chakra::StrId label = t.intern("label"), shared_value = t.intern("same \"every\" time");
  size_t distinct_bytes = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    d.clear();
    d.id = i;
    d.type = 4;
    std::string name = (i % 3 == 0 ? "needs \"escaping\" " : "plain_name_") + std::to_string(i) + std::string(24, 'x');
    distinct_bytes += name.size();
    d.name = t.intern(name);
    d.attrs.add_string(label, i % 2 ? shared_value : d.name);
    t.append(d);
  }
  ASSERT_GT(distinct_bytes, size_t{512} << 10);  // several fresh starts
  expect_streaming_matches_whole(chakra::encode_et(t), t, "many_strings.et");
}

TEST(JsonFormats, DocumentAndLinesAreValidJson) {
  const chakra::Trace t = chakra::read_et(shared("reference/chakra/outputs/converter_pytorch/1.0.2-chakra.0.0.4.et"));
  for (bool compact : {false, true}) {
    auto doc = nlohmann::json::parse(jsonize(t, chakra::JsonFormat::Json, compact));
    ASSERT_EQ(doc["nodes"].size(), t.size());
    EXPECT_EQ(doc["nodes"][0]["id"].get<uint64_t>(), t.id(0));
    EXPECT_EQ(doc["nodes"][0]["type"], "COMP_NODE");
    EXPECT_EQ(doc["globalMetadata"]["attr"][0]["stringVal"], "1.0.2-chakra.0.0.4");
  }
  std::istringstream lines(jsonize(t, chakra::JsonFormat::Jsonl));
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);
    if (n == 0) {
      EXPECT_TRUE(j.contains("globalMetadata"));
    }
    ++n;
  }
  EXPECT_EQ(n, t.size() + 1);
}

TEST(JsonFormats, HandWrittenJsonWithProtoFieldNames) {
  const char* text = R"({"nodes": [
    {"id": 1, "name": "a", "type": "COMP_NODE", "duration_micros": "5"},
    {"id": 2, "name": "b", "type": 7, "data_deps": [1],
     "attr": [{"name": "comm_size", "int64_val": "1048576"}, {"name": "comm_type", "int64Val": 0},
              {"name": "l", "doubleList": [1.5, "NaN"]}]}]})";
  chakra::Trace t = chakra::read_json_trace(text, "hand.json");
  EXPECT_FALSE(t.has_metadata());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.duration_micros(0), 5u);
  EXPECT_EQ(t.type(1), 7);
  EXPECT_EQ(t.find_attr(1, "comm_size")->as_int64().value(), 1048576);
  EXPECT_EQ(t.find_attr(1, "l")->list().size(), 2u);
}

std::string json_error(const std::string& text) {
  try {
    chakra::read_json_trace(text, "bad.json");
  } catch (const chakra::Error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonErrors, NameTheLocationAndTheProblem) {
  EXPECT_EQ(json_error(""), "bad.json:1:1: empty input: no JSON trace");
  EXPECT_EQ(json_error("[1]"), "bad.json:1:1: expected '{' (a JSON trace starts with an object)");
  // Found by fuzzing: a number beyond double's range escaped as nlohmann's exception.
  EXPECT_EQ(json_error("{\"nodes\": [{\"id\": 1, \"duration_micros\": 3E332}]}"),
            "bad.json:1:12: number overflow parsing '3E332'");
  EXPECT_EQ(json_error("{\"nodes\": [\n  {\"id\": 1, \"colour\": 2}]}"),
            "bad.json:2:3: node 0 (id 1): unknown key \"colour\"");
  EXPECT_EQ(json_error("{\"nodes\": [{\"id\": -1}]}"), "bad.json:1:12: node 0 (id -1): id out of range, got -1");
  EXPECT_EQ(json_error("{\"nodes\": [{\"id\": 1, \"type\": \"GPU_NODE\"}]}"),
            "bad.json:1:12: node 0 (id 1): unknown node type, got \"GPU_NODE\"");
  EXPECT_EQ(json_error("{\"nodes\": [{\"attr\": [{\"name\": \"x\", \"int32Val\": 3000000000}]}]}"),
            "bad.json:1:12: node 0: attr[0] \"x\" int32Val out of range, got 3000000000");
  EXPECT_EQ(json_error("{\"nodes\": [{\"attr\": [{\"name\": \"x\", \"int64Val\": 1, \"boolVal\": true}]}]}"),
            "bad.json:1:12: node 0: attr[0] \"x\" has more than one value");
  EXPECT_NE(json_error("{\"nodes\": [{\"id\": 1,}]}").find("bad.json:1:"), std::string::npos);
  EXPECT_NE(json_error("{\"nodes\": [{\"id\": 1}").find("unexpected end of input"), std::string::npos);
  EXPECT_EQ(json_error("{\"nodes\": []} x"), "bad.json:1:15: unexpected text after the document");
}

}  // namespace
