// same_up_to_node_ids: traces that differ only in how their nodes are numbered are the same;
// any other difference (a field, an attribute's value, the order of ids, a dependency) is not.
#include <gtest/gtest.h>

#include <functional>

#include "chakra/format/et_io.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"

using namespace chakra;

namespace {

struct Tweak {
  uint64_t first_id = 10;   // ids first_id, first_id + 1, ...
  bool swap_ids = false;    // the first two nodes' ids exchanged
  uint64_t dangling = 0;    // node 2 also depends on this id when non-zero (no node has it)
  std::string label = "a";  // a string attribute of node 1
  uint64_t duration = 5;    // node 2's duration
  uint64_t repeat_id = 0;   // node 2's id is node 1's when set
  std::string version = "0.0.4";
};

// Three nodes: 1 depends on 0 (data), 2 on 1 (ctrl) and on 0 (data); attributes of several kinds.
Trace make(const Tweak& w) {
  Trace t;
  AttrDrafts meta;
  meta.add_string(t.intern("schema"), t.intern("test"));
  t.set_metadata(t.intern(w.version), meta);
  std::vector<uint64_t> id = {w.first_id, w.first_id + 1, w.first_id + 2};
  if (w.swap_ids) std::swap(id[0], id[1]);
  if (w.repeat_id) id[2] = id[1];
  NodeDraft d;
  for (uint32_t n = 0; n < 3; ++n) {
    d.clear();
    d.id = id[n];
    d.name = t.intern("op" + std::to_string(n));
    d.type = int32_t(n == 1 ? NodeType::CommColl : NodeType::Comp);
    d.duration_micros = n == 2 ? w.duration : 1;
    if (n == 1) {
      d.data_deps = {id[0]};
      d.attrs.add_string(t.intern("label"), t.intern(w.label));
      d.attrs.add_int64(t.intern("comm_size"), 1024);
      const uint64_t dims[] = {1, 0};
      d.attrs.add_list(t.intern("involved_dim"), AttrKind::BoolList, dims);
    }
    if (n == 2) {
      d.ctrl_deps = {id[1]};
      d.data_deps = {id[0]};
      if (w.dangling) d.data_deps.push_back(w.dangling);
    }
    t.append(d);
  }
  return t;
}

}  // namespace

TEST(SameUpToNodeIds, NumberingAloneDoesNotMatter) {
  EXPECT_TRUE(same_up_to_node_ids(make({}), make({})));
  Tweak shifted;
  shifted.first_id = 1000;  // as the reference converter numbers NPU n's nodes
  EXPECT_TRUE(same_up_to_node_ids(make({}), make(shifted)));
  Tweak gaps_a, gaps_b;
  gaps_a.dangling = gaps_b.dangling = 7;  // the same id of no node in both
  EXPECT_TRUE(same_up_to_node_ids(make(gaps_a), make(gaps_b)));
}

TEST(SameUpToNodeIds, EveryOtherDifferenceCounts) {
  const Trace base = make({});
  auto differs = [&](const std::function<void(Tweak&)>& change, const char* what) {
    Tweak w;
    change(w);
    EXPECT_FALSE(same_up_to_node_ids(base, make(w))) << what;
    EXPECT_FALSE(same_up_to_node_ids(make(w), base)) << what;
  };
  differs([](Tweak& w) { w.swap_ids = true; }, "ids in another order (the simulator issues smallest id first)");
  differs([](Tweak& w) { w.label = "b"; }, "a string attribute");
  differs([](Tweak& w) { w.duration = 6; }, "a duration");
  differs([](Tweak& w) { w.dangling = 7; }, "a dependency on no node");
  differs([](Tweak& w) { w.version = "0.0.3"; }, "the metadata");
  Tweak other_gap_a, other_gap_b;
  other_gap_a.dangling = 7, other_gap_b.dangling = 8;
  EXPECT_FALSE(same_up_to_node_ids(make(other_gap_a), make(other_gap_b))) << "dependencies on different missing ids";
  Tweak repeated;
  repeated.repeat_id = 1;
  EXPECT_FALSE(same_up_to_node_ids(make(repeated), make(repeated))) << "a repeated id";
  Trace shorter = make({});
  shorter.clear_nodes();
  EXPECT_FALSE(same_up_to_node_ids(base, shorter));
}

// A pairing takes the attributes it names out of the comparison and is told each pair of values,
// the first trace's first; what it refuses makes the traces differ. Others still count.
TEST(SameUpToNodeIds, PairedAttributesAreToldNotCompared) {
  Tweak b;
  b.label = "b";
  b.first_id = 1000;
  std::vector<std::pair<std::string, std::string>> told;
  bool accept = true;
  const AttrPairing pairing{{"label"}, [&](std::string_view name, const AttrView& x, const AttrView& y) {
                              EXPECT_EQ(name, "label");
                              told.emplace_back(std::string(*x.as_string()), std::string(*y.as_string()));
                              return accept;
                            }};
  EXPECT_TRUE(same_up_to_node_ids(make({}), make(b), &pairing));
  EXPECT_EQ(told, (std::vector<std::pair<std::string, std::string>>{{"a", "b"}}));
  accept = false;
  EXPECT_FALSE(same_up_to_node_ids(make({}), make(b), &pairing));
  accept = true;
  b.duration = 6;
  EXPECT_FALSE(same_up_to_node_ids(make({}), make(b), &pairing)) << "a field the pairing does not name";
}

// The walk over encoded records that spares decoding most traces of a many-rank step: where it
// says "same" the decoded comparison does too, with the same values told (identical ones
// included); where it cannot tell (other ids, an attribute kind it does not read, gzip, damaged
// bytes) it says "not the same", and the caller decodes.
TEST(SameRecordsButPaired, AgreesWithTheDecodedComparisonOrDefersToIt) {
  std::vector<std::pair<std::string, std::string>> told;
  bool accept = true;
  const std::vector<std::string_view> label = {"label"}, size = {"comm_size"}, dims = {"involved_dim"};
  auto pair = [&](std::string_view name, const EncodedScalar& x, const EncodedScalar& y) {
    auto text = [](const EncodedScalar& v) {
      return std::holds_alternative<std::string_view>(v) ? std::string(std::get<std::string_view>(v))
                                                         : std::to_string(std::get<int64_t>(v));
    };
    told.emplace_back(std::string(name) + "=" + text(x), text(y));
    return accept;
  };
  const std::string a = encode_et(make({}));
  Tweak w;
  w.label = "b";
  const std::string b = encode_et(make(w));
  EXPECT_TRUE(same_records_but_paired(a, b, label, pair));
  EXPECT_EQ(told, (std::vector<std::pair<std::string, std::string>>{{"label=a", "b"}}));
  told.clear();
  EXPECT_TRUE(same_records_but_paired(a, a, label, pair));  // identical records: values told all the same
  EXPECT_EQ(told, (std::vector<std::pair<std::string, std::string>>{{"label=a", "a"}}));
  told.clear();
  EXPECT_TRUE(same_records_but_paired(a, a, size, pair));  // an int64 value
  EXPECT_EQ(told, (std::vector<std::pair<std::string, std::string>>{{"comm_size=1024", "1024"}}));
  EXPECT_FALSE(same_records_but_paired(a, b, size, pair)) << "a difference outside the paired values";
  EXPECT_FALSE(same_records_but_paired(a, a, dims, pair)) << "a list: not read here";
  accept = false;
  EXPECT_FALSE(same_records_but_paired(a, b, label, pair));
  accept = true;

  w.first_id = 1000;  // the same up to node ids, which only decoding tells
  const std::string renumbered = encode_et(make(w));
  const AttrPairing decoded{{"label"}, [](std::string_view, const AttrView&, const AttrView&) { return true; }};
  EXPECT_TRUE(same_up_to_node_ids(make({}), make(w), &decoded));
  EXPECT_FALSE(same_records_but_paired(a, renumbered, label, pair));
  w.first_id = 10;
  w.duration = 6;
  EXPECT_FALSE(same_records_but_paired(a, encode_et(make(w)), label, pair));
  EXPECT_FALSE(same_records_but_paired(a, a.substr(0, a.size() - 3), label, pair)) << "truncated";
  EXPECT_FALSE(same_records_but_paired(a, a + "\x05", label, pair)) << "a record length past the end";
  const std::string gz = "\x1f\x8b" + a;
  EXPECT_FALSE(same_records_but_paired(gz, gz, label, pair)) << "gzip";
}
