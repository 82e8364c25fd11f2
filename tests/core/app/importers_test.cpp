// The one table of file kinds (app/importers.h): every kind has one importer, each recognises its
// own files and no earlier one takes them, and the workspace opens every kind the CLI reads.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "chakra/app/importers.h"
#include "chakra/app/suite.h"
#include "chakra/app/workspace.h"
#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace chakra;
using testing_support::test_data;

namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A small Chakra trace as chakra jsonize writes it: rank 1 of the bundled text workload.
std::string chakra_json_text(Trace* trace_out = nullptr) {
  Workspace ws;
  ws.add(as_bytes(read_file(test_data("fixtures/microAllReduce.txt"))), "microAllReduce.txt");
  StringSink out;
  write_json(ws.rank(1)->trace, out);
  if (trace_out) *trace_out = read_json_trace(out.out, "t.json");
  return out.out;
}

// One file of each kind, as a user would drop it: a name and its bytes.
std::map<InputKind, std::pair<std::string, std::string>> samples() {
  Trace trace;
  chakra_json_text(&trace);
  return {
      {InputKind::ChakraEt, {"r.et", encode_et(trace)}},
      {InputKind::ChakraJson, {"t.json", chakra_json_text()}},
      {InputKind::PytorchHostEt,
       {"h.json", R"({"schema": "1.0.1", "pid": 7, "nodes": [{"id": 1, "name": "aten::mm"}]})"}},
      {InputKind::KinetoTrace, {"k.json", R"({"schemaVersion": 1, "traceEvents": []})"}},
      {InputKind::TextWorkload, {"w.txt", read_file(test_data("fixtures/microAllReduce.txt"))}},
      {InputKind::NetworkYaml, {"n.yml", read_file(test_data("fixtures/ring_8.yml"))}},
      {InputKind::SystemJson, {"s.json", read_file(test_data("fixtures/ring_s4_c1.json"))}},
      {InputKind::CommGroupJson, {"g.json", R"({"1": [0, 1], "2": [2, 3]})"}},
      {InputKind::RemoteMemoryJson, {"m.json", read_file(test_data("fixtures/no_memory_expansion.json"))}},
      {InputKind::StableHlo, {"p.mlir", read_file(test_data("fixtures/hespas__test_split_replica_groups.mlir"))}},
      {InputKind::SweepTable,
       {"RESULTS.jsonl",
        R"({"point":0,"sweep":"4f2a","system.all-gather-implementation":["ring"],"npus":8,"step_ns":1200,"error":""})"
        "\n"}},
      {InputKind::SuiteResult,
       {"result.json",
        R"({"suite": "s-v1", "suite_hash": "ab", "tool": "chakrakit 0", "system": {"name": "x", "network": )"
        R"("topology: [Ring]\n", "system": "{\"scheduling-policy\": \"LIFO\"}", "hash": "cd"}, "entries": [{"workload": )"
        R"("w", "class": "c", "npus": 8, "hash": "ef", "step_ns": 10, "reference_step_ns": 20, "score": 2.0, )"
        R"("exposed_communication_share": 0.5, "network_utilisation": [0.25]}], "workloads": {"w": 2.0}, "classes": )"
        R"({"c": 2.0}, "overall": 2.0})"}},
  };
}

}  // namespace

TEST(Importers, EveryKindHasOneNamedImporterThatKnowsItsSample) {
  const auto files = samples();
  std::set<InputKind> kinds;
  std::set<std::string> names;
  std::set<int> orders;
  int last_order = 0;
  for (const FileImporter& i : importers()) {  // importers.def's lines, in the order they are asked
    EXPECT_TRUE(kinds.insert(i.kind).second) << i.name << ": two importers of one kind";
    EXPECT_TRUE(orders.insert(i.sniff_order).second) << i.name << ": two importers asked at " << i.sniff_order;
    EXPECT_GT(i.sniff_order, last_order) << i.name;
    last_order = i.sniff_order;
    EXPECT_EQ(importer(i.kind).name, i.name);
    EXPECT_NE(i.open, nullptr) << i.name;
    EXPECT_TRUE(names.insert(i.name).second) << i.name << ": two importers of one name";
    EXPECT_NE(std::string(i.what), "") << i.name;
    ASSERT_TRUE(files.count(i.kind)) << i.name << ": no sample file in this test";
    const auto& [file_name, bytes] = files.at(i.kind);
    const SniffedInput s = sniff_input(file_name, as_bytes(bytes));
    EXPECT_EQ(s.kind, i.kind) << file_name << " was taken for " << input_kind_name(s.kind);
    EXPECT_NE(s.evidence, "") << file_name;
    EXPECT_EQ(importer_names().find(i.name) != std::string::npos, true);
  }
  EXPECT_EQ(kinds.size(), static_cast<size_t>(InputKind::Unknown));  // every InputKind but Unknown
  EXPECT_EQ(files.size(), kinds.size());
}

TEST(Importers, EvidenceSaysWhatTheKindWasKnownBy) {
  const auto files = samples();
  auto evidence = [&](InputKind k) { return sniff_input(files.at(k).first, as_bytes(files.at(k).second)).evidence; };
  EXPECT_EQ(evidence(InputKind::KinetoTrace), "traceEvents");
  EXPECT_EQ(evidence(InputKind::PytorchHostEt), "nodes, schema");
  EXPECT_EQ(evidence(InputKind::NetworkYaml), "topology, npus_count");
  EXPECT_EQ(evidence(InputKind::ChakraEt), "a name ending in .et");
  EXPECT_EQ(evidence(InputKind::StableHlo), "a name ending in .mlir");
  EXPECT_EQ(evidence(InputKind::SweepTable), "rows of point, sweep");
  EXPECT_EQ(evidence(InputKind::SuiteResult), "suite_hash, entries");
  // Without their names: the content decides.
  EXPECT_EQ(sniff_input("program.txt", as_bytes(files.at(InputKind::StableHlo).second)).kind, InputKind::StableHlo);
  EXPECT_EQ(sniff_input("trace.bin", as_bytes(files.at(InputKind::ChakraEt).second)).evidence,
            "binary records with length prefixes");
  // JSON is never taken for a .et by its name, nor YAML for a program.
  EXPECT_EQ(sniff_input("x.et", as_bytes(std::string(R"({"hello": 1})"))).kind, InputKind::Unknown);
  EXPECT_EQ(sniff_input("x.mlir", as_bytes(std::string(R"({"hello": 1})"))).kind, InputKind::Unknown);
}

// The page opens everything the CLI reads, through the workspace's one path.
TEST(Importers, TheWorkspaceOpensChakraJsonStableHloSweepTablesAndSuiteResults) {
  Trace expected;
  const std::string json = chakra_json_text(&expected);
  Workspace ws;
  EXPECT_EQ(ws.add(as_bytes(json), "trace.3.json"),
            "rank 3: trace.3.json (" + std::to_string(expected.size()) + " nodes)");
  ASSERT_NE(ws.rank(3), nullptr);
  EXPECT_EQ(encode_et(ws.rank(3)->trace), encode_et(expected));

  const std::string program = read_file(test_data("fixtures/hespas__test_split_replica_groups.mlir"));
  const std::string said = ws.add(as_bytes(program), "split.mlir");
  EXPECT_NE(said.find("split.mlir: StableHLO program on 4 devices"), std::string::npos) << said;
  EXPECT_NE(said.find("compute modelled on"), std::string::npos) << said;  // the device is said, not silently assumed
  ASSERT_EQ(ws.ranks().size(), 4u);                                        // the program's devices replace the ranks
  EXPECT_FALSE(ws.groups.empty());
  for (const auto& r : ws.ranks()) {
    EXPECT_GT(r->trace.size(), 0u);
    ASSERT_FALSE(r->notes.empty());
    EXPECT_NE(r->notes.front().find("chakra import stablehlo --device"), std::string::npos);
  }

  const std::string table = samples().at(InputKind::SweepTable).second;
  EXPECT_EQ(ws.add(as_bytes(table), "RESULTS.jsonl"), "RESULTS.jsonl: a sweep table of 1 rows");
  ASSERT_TRUE(ws.sweep_table.has_value());
  EXPECT_EQ(ws.sweep_table->table.rows.size(), 1u);
  EXPECT_EQ(ws.ranks().size(), 4u);  // a table leaves the traces alone
  const std::string result = samples().at(InputKind::SuiteResult).second;
  EXPECT_EQ(ws.add(as_bytes(result), "result.json"), "result.json: a result of s-v1 on x");
  ASSERT_EQ(ws.suite_results.size(), 1u);
  EXPECT_EQ(ws.suite_results[0].result["overall"], 2.0);
  // A board (BOARD.json) opens as its results, best first; one whose result is damaged is refused.
  suite::Json other = suite::Json::parse(result);
  other["system"]["hash"] = "ce";
  other["overall"] = 3.0;
  const suite::Board board = suite::make_board({suite::Json::parse(result), other}, {"a.json", "b.json"});
  const std::string board_text = suite::board_json(board);
  EXPECT_EQ(sniff_input("board.json", as_bytes(board_text)).kind, InputKind::SuiteResult);
  EXPECT_EQ(ws.add(as_bytes(board_text), "board.json"), "board.json: a board of 2 results of s-v1");
  ASSERT_EQ(ws.suite_results.size(), 3u);
  EXPECT_EQ(ws.suite_results[1].name, "board.json: b.json");
  EXPECT_EQ(ws.suite_results[1].result, other);
  EXPECT_EQ(ws.suite_results[2].result, suite::Json::parse(result));
  std::string damaged = board_text;
  damaged.replace(damaged.find("\"overall\""), 9, "\"overall_\"");
  try {
    ws.add(as_bytes(damaged), "board2.json");
    ADD_FAILURE() << "a damaged board opened";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "board2.json: b.json: not a suite result (overall)");
  }

  auto error = [&](const std::string& bytes, const std::string& name) {
    try {
      ws.add(as_bytes(bytes), name);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{\"point\":0,\"sweep\":\"4f2a\",\"npus\":\n", "cut.jsonl").rfind("cut.jsonl", 0), 0u);
  std::string no_overall = result;
  no_overall.replace(no_overall.find("\"overall\""), 9, "\"overall_\"");
  EXPECT_EQ(error(no_overall, "r.json"), "r.json: not a suite result (overall)");
  EXPECT_EQ(error(read_file(test_data("hostile/mlir/truncated.mlir")), "bad.mlir").rfind("bad.mlir", 0), 0u);
  EXPECT_EQ(error("{\"globalMetadata\": {}, \"nodes\": [{\"id\": 1, \"type\": \"COMP_NODE\"", "cut.json")
                .rfind("cut.json", 0),
            0u);
  EXPECT_EQ(ws.ranks().size(), 4u);  // a bad file changes nothing

  // A program whose unrolled loops execute more ops than the page holds is refused, saying so.
  ws.max_stablehlo_ops = 2;
  const std::string too_many = error(program, "big.mlir");
  EXPECT_EQ(too_many.rfind("big.mlir", 0), 0u) << too_many;
  EXPECT_NE(too_many.find("more than 2 ops after unrolling"), std::string::npos) << too_many;
  EXPECT_NE(too_many.find("the page's limit; chakra import stablehlo takes up to 50 million"), std::string::npos)
      << too_many;
  EXPECT_EQ(ws.ranks().size(), 4u);
}
