// summarize() against counts taken independently with the protobuf-generated classes.
#include <gtest/gtest.h>

#include <array>

#include <google/protobuf/io/coded_stream.h>

#include "chakra/analysis/summary.h"
#include "chakra/format/et_io.h"
#include "et_def.pb.h"
#include "test_support.h"

using namespace testing_support;
namespace pb = ChakraProtoMsg;

namespace {

struct Expected {
  uint64_t nodes = 0, data_deps = 0, ctrl_deps = 0, duration = 0;
  std::map<int, uint64_t> per_type;
  std::map<int64_t, std::pair<uint64_t, uint64_t>> collectives;  // comm_type → (count, bytes)
  std::array<uint64_t, 64> size_buckets{};                       // communication nodes by floor(log2(comm_size))
};

Expected count_with_protobuf(const std::string& bytes, bool has_metadata) {
  Expected e;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  uint64_t len;
  bool first = true;
  while (in.ReadVarint64(&len)) {
    std::string rec;
    in.ReadString(&rec, static_cast<int>(len));
    if (first && has_metadata) {
      first = false;
      continue;
    }
    first = false;
    pb::Node n;
    EXPECT_TRUE(n.ParseFromString(rec));
    ++e.nodes;
    ++e.per_type[n.type()];
    e.data_deps += n.data_deps_size();
    e.ctrl_deps += n.ctrl_deps_size();
    e.duration += n.duration_micros();
    if (n.type() == pb::COMM_COLL_NODE || n.type() == pb::COMM_SEND_NODE || n.type() == pb::COMM_RECV_NODE)
      for (const auto& a : n.attr())
        if (a.name() == "comm_size") {
          uint64_t v = a.has_int64_val() ? static_cast<uint64_t>(a.int64_val()) : a.uint64_val();
          int bucket = 0;
          while (v > 1) v /= 2, ++bucket;
          ++e.size_buckets[bucket];
          break;
        }
    if (n.type() != pb::COMM_COLL_NODE) continue;
    int64_t type = -1;
    uint64_t size = 0;
    for (const auto& a : n.attr()) {
      if (a.name() == "comm_type" && type == -1) type = a.int64_val();
      if (a.name() == "comm_size" && size == 0) size = static_cast<uint64_t>(a.int64_val());
    }
    ++e.collectives[type].first;
    e.collectives[type].second += size;
  }
  return e;
}

TEST(Summary, AgreesWithAnIndependentCount) {
  const char* files[] = {
      "data/chakra_et/astra-sim_resnet50_dp_64npus_2023-11_no_metadata/resnet50_DataParallel.0.et",
      "data/chakra_et/ericding_pytorch_converted_2rank/chakra_trace.1.et",
      "reference/chakra/inputs/chakra.0.et.gz",
      "reference/chakra/outputs/converter_text/DLRM_HybridParallel.0.et",
      "data/chakra_et/astra-sim_custom_ring_allreduce_8npus_1MB/custom_allreduce.3.et",
  };
  for (const char* f : files) {
    SCOPED_TRACE(f);
    const std::string bytes = read_decompressed(shared(f));
    const chakra::Trace t = decode(bytes, f);
    const chakra::TraceSummary s = chakra::summarize(t);
    const Expected e = count_with_protobuf(bytes, t.has_metadata());
    EXPECT_EQ(s.nodes, e.nodes);
    EXPECT_EQ(s.data_deps, e.data_deps);
    EXPECT_EQ(s.ctrl_deps, e.ctrl_deps);
    EXPECT_EQ(s.total_duration_micros, e.duration);
    for (int type = 0; type < chakra::kNodeTypeCount; ++type)
      EXPECT_EQ(s.by_type[type].nodes, e.per_type.count(type) ? e.per_type.at(type) : 0u) << type;
    ASSERT_EQ(s.collectives.size(), e.collectives.size());
    for (const auto& [type, c] : e.collectives) {
      EXPECT_EQ(s.collectives.at(type).count, c.first);
      EXPECT_EQ(s.collectives.at(type).bytes, c.second);
    }
    EXPECT_EQ(s.comm_sizes_log2, e.size_buckets);
  }
}

TEST(Summary, AttributeKindsAndMetadata) {
  const chakra::Trace t =
      chakra::read_et(shared("reference/chakra/outputs/generator/npus2/one_metadata_node_all_types.0.et"));
  const chakra::TraceSummary s = chakra::summarize(t);
  EXPECT_TRUE(s.has_metadata);
  EXPECT_EQ(s.version, "1.0.0");
  EXPECT_EQ(s.attrs.size(), 30u);  // one attribute of every value kind
  for (const auto& a : s.attrs) EXPECT_EQ(a.nodes, 1u) << a.name;
  EXPECT_FALSE(s.legacy_schema);
}

TEST(Summary, FlagsLegacyExecutionGraphs) {
  const chakra::TraceSummary s =
      chakra::summarize(chakra::read_et(shared("data/other/legacy_eg_2023-11/transformer_2stack.0.eg")));
  EXPECT_TRUE(s.legacy_schema);
  EXPECT_EQ(s.nodes_with_unknown_fields, s.nodes);
}

}  // namespace
