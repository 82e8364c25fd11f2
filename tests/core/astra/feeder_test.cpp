// The feeder: zero-time walks against the reference ETFeeder v1 / feeder_v3 walks, bounded
// windows, and the inputs on which the reference feeders hang or abort.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "chakra/astra/feeder.h"
#include "chakra/format/et_io.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;

namespace {

// Issue the smallest-id issuable node, finish it at once, repeat (the reference drivers' loop),
// writing the reference walk TSV: step, id, type, runtime[, is_cpu_op, #dependants, dependants].
std::string walk(chakra::Feeder& f, bool v1_columns) {
  std::ostringstream out;
  uint64_t step = 0;
  while (std::optional<uint64_t> id = f.take_next()) {
    chakra::FeederNode n = f.node(*id);
    out << step++ << '\t' << *id << '\t' << chakra::node_type_name(static_cast<int32_t>(n.type())) << '\t'
        << n.duration_micros();
    if (v1_columns) {
      std::vector<uint64_t> deps = f.dependants(*id);
      out << '\t' << (n.is_cpu_op() ? 1 : 0) << '\t' << deps.size() << '\t';
      for (size_t k = 0; k < deps.size(); ++k) out << (k ? "," : "") << deps[k];
    }
    out << '\n';
    f.mark_done(*id);
  }
  return out.str();
}

// The reference walk without its trailing summary line ("# issued=…").
std::string reference_walk(const std::string& file) {
  std::string text = read_raw(shared("reference/chakra/outputs/feeder/" + file));
  size_t summary = text.find("# issued=");
  return summary == std::string::npos ? text : text.substr(0, summary);
}

const std::map<std::string, std::string> kWalkInputs = {
    {"chakra.0", "reference/chakra/inputs/chakra.0.et.gz"},
    {"1.0.2-chakra.0.0.4", "reference/chakra/outputs/converter_pytorch/1.0.2-chakra.0.0.4.et"},
    {"DLRM_HybridParallel.0", "reference/chakra/outputs/converter_text/DLRM_HybridParallel.0.et"},
    {"MLP_ModelParallel.0", "reference/chakra/outputs/converter_text/MLP_ModelParallel.0.et"},
    {"Resnet50_DataParallel.1", "reference/chakra/outputs/converter_text/Resnet50_DataParallel.1.et"},
    {"resnet_2gpu_rank1", "reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz"},
    {"two_comp_nodes_dependent.0", "reference/chakra/outputs/generator/npus2/two_comp_nodes_dependent.0.et"},
};

// A trace from (id, data deps, ctrl deps) triples, encoded as an .et file.
struct Spec {
  uint64_t id;
  std::vector<uint64_t> data = {}, ctrl = {};  // default initializers: specs may leave them out
};
std::string encode(const std::vector<Spec>& specs) {
  chakra::Trace t;
  chakra::NodeDraft d;
  for (const Spec& s : specs) {
    d.clear();
    d.id = s.id;
    d.name = t.intern("n" + std::to_string(s.id));
    d.type = static_cast<int32_t>(chakra::NodeType::Comp);
    d.duration_micros = s.id;
    d.data_deps = s.data;
    d.ctrl_deps = s.ctrl;
    t.append(d);
  }
  return chakra::encode_et(t);
}

std::unique_ptr<chakra::Feeder> feeder(const std::string& bytes, chakra::FeederOptions o = {}) {
  static std::vector<std::unique_ptr<std::string>> keep;  // memory_input borrows the bytes
  keep.push_back(std::make_unique<std::string>(bytes));
  return std::make_unique<chakra::Feeder>(chakra::memory_input(as_bytes(*keep.back()), "t.et"), o);
}

std::vector<uint64_t> order(chakra::Feeder& f) {
  std::vector<uint64_t> out;
  while (std::optional<uint64_t> id = f.take_next()) {
    out.push_back(*id);
    f.mark_done(*id);
  }
  return out;
}

}  // namespace

TEST(Feeder, ZeroTimeWalksMatchEtFeederV1) {
  for (const auto& [name, input] : kWalkInputs) {
    chakra::Feeder f(shared(input));
    EXPECT_TRUE(walk(f, true) == reference_walk("feeder_v1_walk_" + name + ".tsv")) << name;
    EXPECT_TRUE(f.finished()) << name;
    EXPECT_EQ(f.dangling_count(), 0u) << name;
  }
}

// feeder_v3 gates on control dependencies too. Its walks are compared where its order is
// defined (it pops an unordered_set, so ties between unrelated free nodes follow hash order),
// which is every walk it finished except the ResNet rank.
TEST(Feeder, ZeroTimeWalksWithControlDependenciesMatchFeederV3) {
  chakra::FeederOptions o;
  o.gate = chakra::DepKind::Both;
  for (const std::string name : {"1.0.2-chakra.0.0.4", "DLRM_HybridParallel.0", "MLP_ModelParallel.0",
                                 "Resnet50_DataParallel.1", "two_comp_nodes_dependent.0"}) {
    chakra::Feeder f(shared(kWalkInputs.at(name)), o);
    EXPECT_TRUE(walk(f, false) == reference_walk("feeder_v3_walk_" + name + ".tsv")) << name;
    EXPECT_TRUE(f.finished()) << name;
  }
  // feeder_v3 aborts on chakra.0.et: ctrl dependencies on nodes the converter pruned (its walk
  // is empty). Here those wait for the end of the file and are reported; then the walk stops at
  // a real cycle (3317 data-depends on 3318, which ctrl-depends on 3317), which is reported
  // instead of spinning.
  chakra::Feeder f(shared(kWalkInputs.at("chakra.0")), o);
  std::vector<uint64_t> issued = order(f);
  EXPECT_EQ(issued.size(), 1381u);
  EXPECT_TRUE(f.stalled());
  EXPECT_NE(f.stall_report().find("2283 nodes can never run: they wait on each other (node 3317 -> 3318 -> 3317"),
            std::string::npos)
      << f.stall_report();
  EXPECT_EQ(f.dangling_count(), 1277u);
  EXPECT_EQ(f.dangling().size(), 1000u);  // the first 1000 are kept, by missing id
  EXPECT_EQ(f.dangling()[0].node, 3176u);
  EXPECT_EQ(f.dangling()[0].missing, 2u);
}

// A small window gives up exact v1 order but never correctness: each node once, after its
// dependencies, and the memory held stays bounded by what is unfinished.
TEST(Feeder, SmallWindowsIssueEveryNodeAfterItsDependencies) {
  const std::string path = shared(kWalkInputs.at("resnet_2gpu_rank1"));
  chakra::Trace whole = chakra::read_et(path);
  std::map<uint64_t, std::vector<uint64_t>> deps;
  for (uint32_t n = 0; n < whole.size(); ++n)
    deps[whole.id(n)].assign(whole.data_deps(n).begin(), whole.data_deps(n).end());
  for (uint32_t window : {1u, 7u, 500u}) {
    chakra::FeederOptions o;
    o.window = window;
    chakra::Feeder f(path, o);
    std::set<uint64_t> done;
    uint64_t issued = 0;
    // ASTRA-sim's pattern: take every issuable node, then finish them.
    for (std::vector<uint64_t> round = f.take_all(); !round.empty(); round = f.take_all()) {
      for (uint64_t id : round) {
        for (uint64_t d : deps.at(id)) EXPECT_TRUE(done.count(d) || !deps.count(d)) << id << " before " << d;
        EXPECT_EQ(f.node(id).id(), id);
        ++issued;
      }
      for (uint64_t id : round) {
        f.mark_done(id);
        done.insert(id);
      }
    }
    EXPECT_EQ(issued, whole.size()) << window;
    EXPECT_TRUE(f.finished()) << window;
    EXPECT_EQ(f.nodes_read(), whole.size());
    EXPECT_EQ(f.nodes_done(), whole.size());
    EXPECT_EQ(f.in_flight(), 0u);
    EXPECT_TRUE(f.fully_read());
    EXPECT_EQ(f.metadata().has_metadata(), whole.has_metadata());
    EXPECT_EQ(f.metadata().metadata_version(), whole.metadata_version());
  }
}

TEST(Feeder, NodesOutOfOrderAndDanglingDependencies) {
  // Reverse topological file order; node 5 depends on 9, which is not in the file, and lists
  // its parent twice (ETFeeder v1 deadlocks on both).
  auto f = feeder(encode({{4, {3}}, {5, {4, 4, 9}}, {3, {1, 2}}, {2, {1}}, {1, {}}}));
  EXPECT_EQ(order(*f), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(f->finished());
  ASSERT_EQ(f->dangling_count(), 1u);
  EXPECT_EQ(f->dangling()[0].node, 5u);
  EXPECT_EQ(f->dangling()[0].missing, 9u);

  chakra::FeederOptions strict;
  strict.dangling_is_error = true;
  try {
    auto g = feeder(encode({{1, {}}, {2, {9}}}), strict);
    order(*g);
    FAIL() << "no error";
  } catch (const chakra::Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("t.et: 1 dependencies name nodes that are not in the file (node 2 depends on 9)"),
        std::string::npos)
        << e.what();
  }
  // Control dependencies gate only when asked.
  auto data_only = feeder(encode({{2, {}, {1}}, {1, {}}}));
  EXPECT_EQ(order(*data_only), (std::vector<uint64_t>{1, 2}));  // both free: by id
  chakra::FeederOptions both;
  both.gate = chakra::DepKind::Both;
  auto gated = feeder(encode({{1, {}, {2}}, {2, {}}}), both);
  EXPECT_EQ(order(*gated), (std::vector<uint64_t>{2, 1}));
}

// Node entries are kept by id in a vector while ids stay near the count read, in a hash map past
// that: an id first far out (kept in the map) and later covered by the growing vector is found,
// waited for and refused as a repeat all the same; an id near 2^60 stays in the map.
TEST(Feeder, IdsFarApartAndThenCoveredAreFound) {
  std::vector<Spec> specs{{100000, {}}};
  for (uint64_t id = 0; id < 30000; ++id)
    specs.push_back({id, id ? std::vector<uint64_t>{id - 1} : std::vector<uint64_t>{}});
  specs.push_back({100001, {100000, 29999}});
  specs.push_back({uint64_t{1} << 60, {100001}});
  auto f = feeder(encode(specs));
  std::vector<uint64_t> expected;
  for (uint64_t id = 0; id < 30000; ++id) expected.push_back(id);
  expected.insert(expected.end(), {100000, 100001, uint64_t{1} << 60});
  EXPECT_EQ(order(*f), expected);
  EXPECT_TRUE(f->finished());

  specs.push_back({100000, {}});  // read after the vector grew past it
  try {
    auto g = feeder(encode(specs));
    order(*g);
    FAIL() << "no error";
  } catch (const chakra::Error& e) {
    EXPECT_NE(std::string(e.what()).find("node id 100000 appears twice"), std::string::npos) << e.what();
  }
}

TEST(Feeder, CyclesStallWithAReportInsteadOfHanging) {
  auto f = feeder(encode({{1, {}}, {2, {1, 4}}, {3, {2}}, {4, {3}}, {5, {4}}}));
  EXPECT_EQ(order(*f), (std::vector<uint64_t>{1}));
  EXPECT_FALSE(f->finished());
  EXPECT_TRUE(f->stalled());
  EXPECT_EQ(f->stall_report(),
            "t.et: 4 nodes can never run: they wait on each other (node 2 -> 4 -> 3 -> 2, each waiting for the next)");
  // A node waiting for itself.
  auto self = feeder(encode({{1, {1}}}));
  EXPECT_FALSE(self->take_next());
  EXPECT_NE(self->stall_report().find("(node 1 -> 1,"), std::string::npos) << self->stall_report();
}

TEST(Feeder, MisuseAndBadFilesAreErrors) {
  try {
    feeder(encode({{1, {}}, {2, {}}, {1, {}}}));
    FAIL() << "no error";
  } catch (const chakra::Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.et: node id 1 appears twice"), std::string::npos) << e.what();
  }
  auto f = feeder(encode({{1, {}}, {2, {1}}}));
  EXPECT_THROW(f->mark_done(2), chakra::Error);  // not taken
  EXPECT_THROW(f->node(7), chakra::Error);       // not in the file
  uint64_t id = *f->take_next();
  f->untake(id);
  EXPECT_EQ(*f->take_next(), id);
  f->mark_done(id);
  EXPECT_THROW(f->node(id), chakra::Error);  // done: released
  EXPECT_THROW(f->mark_done(id), chakra::Error);
  // A truncated file fails while reading, naming it.
  std::string bytes = encode({{1, {}}, {2, {1}}, {3, {2}}});
  bytes.resize(bytes.size() - 3);
  try {
    auto g = feeder(bytes);
    order(*g);
    FAIL() << "no error";
  } catch (const chakra::Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.et"), std::string::npos) << e.what();
  }
}

TEST(Feeder, AttributeAccessors) {
  chakra::Trace t;
  chakra::NodeDraft d;
  d.id = 1;
  d.name = t.intern("allreduce");
  d.type = static_cast<int32_t>(chakra::NodeType::CommColl);
  d.attrs.add_bool(t.intern("is_cpu_op"), false);
  d.attrs.add_int32(t.intern("comm_type"), 0);         // int32 read as int64 (feeder_v3 converts)
  d.attrs.add_uint64(t.intern("comm_size"), 1 << 20);  // uint64 read as int64
  d.attrs.add_string(t.intern("pg_name"), t.intern("3"));
  d.attrs.add_double(t.intern("num_ops"), 1.5);  // a fraction cannot be an integer
  t.append(d);
  auto f = feeder(chakra::encode_et(t));
  chakra::FeederNode n = f->node(*f->take_next());
  EXPECT_FALSE(n.is_cpu_op());
  EXPECT_EQ(n.comm_type(), 0);
  EXPECT_EQ(n.comm_size(), 1 << 20);
  EXPECT_EQ(n.pg_name(), "3");
  EXPECT_FALSE(n.comm_src().has_value());
  EXPECT_EQ(n.comm_priority(), 0);
  EXPECT_EQ(n.double_attr("comm_size"), double(1 << 20));
  EXPECT_THROW(n.num_ops(), chakra::Error);
  EXPECT_THROW(n.int_attr("pg_name"), chakra::Error);
}

// The feeder resolves attribute names once per block of nodes; a name that first appears in a
// node read after an earlier node of the block was handed out is still found.
TEST(Feeder, AttributesFirstNamedLaterInABlockAreFound) {
  chakra::Trace t;
  chakra::NodeDraft d;
  d.id = 1;
  d.name = t.intern("compute");
  d.type = static_cast<int32_t>(chakra::NodeType::Comp);
  t.append(d);
  d.clear();
  d.id = 2;
  d.name = t.intern("allreduce");
  d.type = static_cast<int32_t>(chakra::NodeType::CommColl);
  d.attrs.add_int64(t.intern("comm_type"), 4);
  d.attrs.add_int64(t.intern("tid"), 9);
  t.append(d);
  chakra::FeederOptions o;
  o.window = 1;  // node 2 is read only after node 1 is done
  auto f = feeder(chakra::encode_et(t), o);
  const uint64_t first = *f->take_next();
  ASSERT_EQ(f->nodes_read(), 1u);
  chakra::FeederNode n1 = f->node(first);
  EXPECT_FALSE(n1.comm_type().has_value());
  EXPECT_FALSE(n1.int_attr(chakra::NodeAttr::tid).has_value());
  f->mark_done(first);
  const uint64_t second = *f->take_next();
  chakra::FeederNode n2 = f->node(second);
  EXPECT_EQ(second, 2u);
  EXPECT_EQ(n2.comm_type(), 4);
  EXPECT_EQ(n2.int_attr(chakra::NodeAttr::tid), 9);
  EXPECT_EQ(n2.int_attr("tid"), 9);
}
