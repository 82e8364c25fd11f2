// ASTRA-sim 1.0 text workloads → .et: the reference converter's bytes for the types it supports,
// ASTRA-sim 1.0's loops for the ones it rejects, clear errors for bad files.
#include <gtest/gtest.h>

#include <map>

#include "chakra/analysis/validate.h"
#include "chakra/astra/text_workload.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;
using chakra::TextWorkload;

namespace {

TextWorkload parse_shared(const std::string& relative) {
  return chakra::parse_text_workload(read_raw(shared(relative)), relative);
}

// Node names in file order, and the data deps as names, for readable graph assertions.
std::vector<std::string> names(const chakra::Trace& t) {
  std::vector<std::string> out;
  for (uint32_t n = 0; n < t.size(); ++n) out.emplace_back(t.name(n));
  return out;
}
std::vector<std::string> dep_names(const chakra::Trace& t, uint32_t n) {
  std::map<uint64_t, std::string> by_id;
  for (uint32_t m = 0; m < t.size(); ++m) by_id[t.id(m)] = std::string(t.name(m));
  std::vector<std::string> out;
  for (uint64_t d : t.data_deps(n)) out.push_back(by_id.at(d));
  return out;
}
uint32_t find(const chakra::Trace& t, const std::string& name, int occurrence = 0) {
  for (uint32_t n = 0; n < t.size(); ++n)
    if (t.name(n) == name && occurrence-- == 0) return n;
  ADD_FAILURE() << "no node " << name;
  return 0;
}

}  // namespace

// Every reference input the reference converts: both NPUs' files byte for byte (2 NPUs, 2 passes,
// the arguments the reference outputs were made with; ids continue across NPUs).
TEST(TextWorkload, ReproducesReferenceOutputsByteForByte) {
  int compared = 0;
  for (const std::string& in : find_files(shared("reference/chakra/inputs/text"), {".txt"})) {
    std::string stem = in.substr(in.rfind('/') + 1);
    stem.resize(stem.size() - 4);
    TextWorkload w = chakra::parse_text_workload(read_raw(in), in);
    if (!chakra::is_reference_text_type(w.type)) continue;
    uint64_t first_id = 0;
    for (int npu = 0; npu < 2; ++npu) {
      chakra::Trace t = chakra::text_workload_trace(w, 2, first_id);
      first_id += t.size();
      std::string expected =
          read_raw(shared("reference/chakra/outputs/converter_text/" + stem + "." + std::to_string(npu) + ".et"));
      EXPECT_EQ(chakra::encode_et(t), expected) << stem << " npu " << npu;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 14);  // 7 reference inputs × 2 NPUs
}

TEST(TextWorkload, DeclaredLayerCountChangesTheGraphLikeTheReference) {
  // MODEL uses line 2's count to decide which layer has no input-gradient collective.
  std::string text =
      "MODEL\n3\n"
      "a -1 1 ALLGATHER 8 1 ALLREDUCE 8 1 NONE 0 1\n"
      "b -1 1 ALLGATHER 8 1 ALLREDUCE 8 1 NONE 0 1\n";
  TextWorkload w = chakra::parse_text_workload(text, "m.txt");
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_NE(w.warnings[0].find("declares 3 layers but the file has 2"), std::string::npos);
  chakra::Trace t = chakra::text_workload_trace(w, 1, 0);
  // With the right count layer a (index 0) gets no IG collective; with 3 declared it does.
  EXPECT_EQ(names(t),
            (std::vector<std::string>{"COMP_NODE_a_FWD", "COMM_COLL_NODE_a_ALLGATHER", "COMP_NODE_b_FWD",
                                      "COMM_COLL_NODE_b_ALLGATHER", "COMP_NODE_b_BWD_IG", "COMM_COLL_NODE_b_ALLREDUCE",
                                      "COMP_NODE_b_BWD_WG", "COMP_NODE_a_BWD_IG", "COMM_COLL_NODE_a_ALLREDUCE",
                                      "COMP_NODE_a_BWD_WG"}));
}

TEST(TextWorkload, UnknownCollectiveInReferenceTypeWarnsAndBecomesAllReduce) {
  TextWorkload w = chakra::parse_text_workload("MICRO\n1\nx -1 5 NONE 0 5 NONE 0 5 BARRIER 64 5\n", "u.txt");
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_NE(w.warnings[0].find("u.txt:3: unknown collective 'BARRIER'"), std::string::npos);
  chakra::Trace t = chakra::text_workload_trace(w, 1, 0);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.find_attr(0, "comm_type")->as_int64(), 0);
  EXPECT_EQ(t.find_attr(0, "comm_size")->as_int64(), 64);
}

TEST(TextWorkload, BlankLinesAndWindowsNewlinesAreAccepted) {
  TextWorkload w =
      chakra::parse_text_workload("MICRO\r\n1\r\n\r\nx -1 5 NONE 0 5 NONE 0 5 ALLGATHER 64 5\r\n\r\n", "w.txt");
  ASSERT_EQ(w.layers.size(), 1u);
  EXPECT_EQ(w.text, "MICRO\n1\n\nx -1 5 NONE 0 5 NONE 0 5 ALLGATHER 64 5\n\n");  // as Python reads it
}

TEST(TextWorkload, BadFilesGiveErrorsNamingFileAndLine) {
  auto error_of = [](const std::string& text) {
    try {
      chakra::parse_text_workload(text, "bad.txt");
    } catch (const chakra::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(""), "bad.txt:1: empty file: expected the parallelism type on line 1");
  EXPECT_NE(error_of("PIPELINE\n1\n").find("bad.txt:1: unknown parallelism type 'PIPELINE'"), std::string::npos);
  EXPECT_NE(error_of("DATA_REORDER\n1\n").find("DATA_REORDER is not supported"), std::string::npos);
  EXPECT_EQ(error_of("DATA\n"), "bad.txt:2: expected the number of layers on line 2");
  EXPECT_EQ(error_of("DATA\nx\n"), "bad.txt:2: the number of layers is not an integer: 'x'");
  EXPECT_NE(error_of("DATA\n1\nl -1 5 NONE 0 5\n").find("bad.txt:3: a layer needs 12 columns"), std::string::npos);
  EXPECT_EQ(error_of("DATA\n1\nl -1 5x NONE 0 5 NONE 0 5 NONE 0 5\n"),
            "bad.txt:3: forward compute time is not an integer: '5x'");
  EXPECT_EQ(error_of("DATA\n1\nl -1 5 NONE 0 -5 NONE 0 5 NONE 0 5\n"),
            "bad.txt:3: input-gradient compute time is negative: -5");
  EXPECT_EQ(error_of("DATA\n1\nl -1 5 NONE 0 5 NONE 0 5 NONE 99999999999999999999 5\n"),
            "bad.txt:3: weight-gradient comm size is not an integer: '99999999999999999999'");
  EXPECT_EQ(error_of("DATA\n1\n"), "bad.txt:2: no layers");
  EXPECT_EQ(error_of("HYBRID_DLRM\n1\nl -1 5 NONE 0 5 NONE 0 5 NONE 0 5\n"),
            "bad.txt:1: HYBRID_DLRM needs the last bottom-MLP layer index after the type");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER\n1\nl -1 5 FOO 0 5 NONE 0 5 NONE 0 5\n"),
            "bad.txt:3: unknown collective 'FOO'");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 1 4\n1\nl -1 5 NONE 0 5 NONE 0 5 NONE 0 5\n"),
            "bad.txt:1: checkpoint layer 4 does not exist");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER checkpoints: 3 1\n1\n"), "bad.txt:1: missing value after 'checkpoints:'");
  EXPECT_EQ(error_of("HYBRID_CUSTOMIZED\n1\nl -1 5 NONE 0 5 NONE 0 5 NONE 0 5 SIDEWAYS\n"),
            "bad.txt:3: unknown layer parallelism 'SIDEWAYS'");
}

// ---- the types the reference rejects ----

TEST(TextWorkload, TransformerFollowsAstraSimLoop) {
  std::string text =
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n2\n"
      "emb -1 10 ALLGATHER 64 11 NONE 0 12 ALLREDUCE 128 1\n"
      "att -1 20 ALLREDUCE 32 21 ALLREDUCE 32 22 ALLREDUCE 256 1\n";
  TextWorkload w = chakra::parse_text_workload(text, "t.txt");
  EXPECT_EQ(w.model_parallel_group, 2);
  chakra::Trace t = chakra::text_workload_trace(w, 2, 0);
  // NONE collectives are not issued; every phase's collective is named by its phase.
  std::vector<std::string> pass = {"COMP_NODE_emb_FWD",
                                   "COMM_COLL_NODE_emb_FWD_ALLGATHER",
                                   "COMP_NODE_att_FWD",
                                   "COMM_COLL_NODE_att_FWD_ALLREDUCE",
                                   "COMP_NODE_att_BWD_IG",
                                   "COMM_COLL_NODE_att_IG_ALLREDUCE",
                                   "COMP_NODE_att_BWD_WG",
                                   "COMM_COLL_NODE_att_WG_ALLREDUCE",
                                   "COMP_NODE_emb_BWD_IG",
                                   "COMP_NODE_emb_BWD_WG",
                                   "COMM_COLL_NODE_emb_WG_ALLREDUCE"};
  std::vector<std::string> two = pass;
  two.insert(two.end(), pass.begin(), pass.end());
  EXPECT_EQ(names(t), two);
  // Blocking forward collective; IG of a layer waits for the next layer's WG and IG collective.
  EXPECT_EQ(dep_names(t, find(t, "COMP_NODE_att_FWD")), (std::vector<std::string>{"COMM_COLL_NODE_emb_FWD_ALLGATHER"}));
  EXPECT_EQ(dep_names(t, find(t, "COMP_NODE_emb_BWD_IG")),
            (std::vector<std::string>{"COMP_NODE_att_BWD_WG", "COMM_COLL_NODE_att_IG_ALLREDUCE"}));
  // Second pass: a layer's forward waits for its weight-gradient all-reduce.
  EXPECT_EQ(dep_names(t, find(t, "COMP_NODE_emb_FWD", 1)),
            (std::vector<std::string>{"COMM_COLL_NODE_emb_WG_ALLREDUCE", "COMP_NODE_emb_BWD_WG"}));
  EXPECT_EQ(dep_names(t, find(t, "COMP_NODE_att_FWD", 1)),
            (std::vector<std::string>{"COMM_COLL_NODE_att_WG_ALLREDUCE", "COMM_COLL_NODE_emb_FWD_ALLGATHER"}));
  EXPECT_EQ(t.find_attr(find(t, "COMM_COLL_NODE_emb_FWD_ALLGATHER"), "comm_type")->as_int64(), 2);
  EXPECT_EQ(t.duration_micros(find(t, "COMP_NODE_att_BWD_WG")), 22u);
}

TEST(TextWorkload, FwdInBckwdRecomputesFromTheCheckpoint) {
  std::string text =
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 1 1 checkpoint_initiates: 1 3\n4\n"
      "l0 -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"
      "l1 -1 2 ALLREDUCE 8 1 NONE 0 1 NONE 0 1\n"
      "l2 -1 3 NONE 0 1 NONE 0 1 NONE 0 1\n"
      "l3 -1 4 NONE 0 1 NONE 0 1 NONE 0 1\n";
  TextWorkload w = chakra::parse_text_workload(text, "f.txt");
  EXPECT_EQ(w.checkpoints, std::vector<uint32_t>{1});
  EXPECT_EQ(w.recompute_initiators, std::vector<uint32_t>{3});
  chakra::Trace t = chakra::text_workload_trace(w, 1, 0);
  EXPECT_EQ(names(t),
            (std::vector<std::string>{
                "COMP_NODE_l0_FWD", "COMP_NODE_l1_FWD", "COMM_COLL_NODE_l1_FWD_ALLREDUCE", "COMP_NODE_l2_FWD",
                "COMP_NODE_l3_FWD",
                // before the initiator's input gradient: forward again from checkpoint l1 up to l3
                "COMP_NODE_l1_FWD_RECOMPUTE", "COMM_COLL_NODE_l1_FWD_RECOMPUTE_ALLREDUCE", "COMP_NODE_l2_FWD_RECOMPUTE",
                "COMP_NODE_l3_BWD_IG", "COMP_NODE_l3_BWD_WG", "COMP_NODE_l2_BWD_IG", "COMP_NODE_l2_BWD_WG",
                "COMP_NODE_l1_BWD_IG", "COMP_NODE_l1_BWD_WG", "COMP_NODE_l0_BWD_IG", "COMP_NODE_l0_BWD_WG"}));
  EXPECT_EQ(dep_names(t, find(t, "COMP_NODE_l1_FWD_RECOMPUTE")), (std::vector<std::string>{"COMP_NODE_l3_FWD"}));
  EXPECT_EQ(dep_names(t, find(t, "COMP_NODE_l3_BWD_IG")), (std::vector<std::string>{"COMP_NODE_l2_FWD_RECOMPUTE"}));
  EXPECT_EQ(t.duration_micros(find(t, "COMP_NODE_l2_FWD_RECOMPUTE")), 3u);
}

TEST(TextWorkload, InferenceIsAForwardChainAcrossPasses) {
  TextWorkload w = parse_shared("data/text_workloads/astra-sim-2020__InferenceBaseline.txt");
  ASSERT_EQ(w.layers.size(), 2u);
  chakra::Trace t = chakra::text_workload_trace(w, 2, 0);
  EXPECT_EQ(names(t), (std::vector<std::string>{"COMP_NODE_Layer0_FWD", "COMM_COLL_NODE_Layer0_FWD_ALLTOALL",
                                                "COMP_NODE_Layer1_FWD", "COMM_COLL_NODE_Layer1_FWD_ALLTOALL",
                                                "COMP_NODE_Layer0_FWD", "COMM_COLL_NODE_Layer0_FWD_ALLTOALL",
                                                "COMP_NODE_Layer1_FWD", "COMM_COLL_NODE_Layer1_FWD_ALLTOALL"}));
  for (uint32_t n = 1; n < t.size(); ++n) EXPECT_EQ(t.data_deps(n).size(), 1u) << n;
  EXPECT_EQ(t.find_attr(3, "comm_size")->as_int64(), 32000);
}

// Every shared text workload converts (valid graph, no cycles) or is one we reject with a reason.
TEST(TextWorkload, EverySharedWorkloadConvertsToAValidGraph) {
  int converted = 0;
  std::vector<std::string> files = find_files(shared("data/text_workloads"), {".txt"});
  for (const std::string& f : find_files(shared("reference/chakra/inputs/text"), {".txt"})) files.push_back(f);
  for (const std::string& f : files) {
    TextWorkload w = chakra::parse_text_workload(read_raw(f), f);
    chakra::Trace t = chakra::text_workload_trace(w, 2, 0);
    chakra::ValidationReport r = chakra::validate(t);
    EXPECT_EQ(r.errors, 0u) << f << ": " << (r.findings.empty() ? "" : r.findings[0].message);
    EXPECT_GT(t.size(), 0u) << f;
    ++converted;
  }
  EXPECT_EQ(converted, 31);
}

TEST(TextWorkload, CustomizedUsesTheHybridLoopWithoutLayer0InputGradientCollective) {
  TextWorkload w = chakra::parse_text_workload(
      "HYBRID_CUSTOMIZED\n2\n"
      "a -1 1 NONE 0 2 ALLREDUCE 8 3 ALLREDUCE 16 1 MODEL\n"
      "b -1 1 NONE 0 2 ALLREDUCE 8 3 ALLREDUCE 16 1 DATA\n",
      "c.txt");
  EXPECT_EQ(w.layers[1].parallelism, "DATA");
  chakra::Trace t = chakra::text_workload_trace(w, 1, 0);
  EXPECT_EQ(names(t), (std::vector<std::string>{"COMP_NODE_a_FWD", "COMP_NODE_b_FWD", "COMP_NODE_b_BWD_IG",
                                                "COMM_COLL_NODE_b_IG_ALLREDUCE", "COMP_NODE_b_BWD_WG",
                                                "COMM_COLL_NODE_b_WG_ALLREDUCE", "COMP_NODE_a_BWD_IG",
                                                "COMP_NODE_a_BWD_WG", "COMM_COLL_NODE_a_WG_ALLREDUCE"}));
}

TEST(TextWorkload, DlrmWithoutTopLayersWarns) {
  TextWorkload w = chakra::parse_text_workload(
      "HYBRID_DLRM 1\n2\n"
      "e -1 1 ALLTOALL 8 1 ALLTOALL 8 1 NONE 0 1\n"
      "m -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 1\n",
      "d.txt");
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_NE(w.warnings[0].find("last bottom layer 1 leaves no top layer"), std::string::npos);
}
