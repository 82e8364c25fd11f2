// Each validation rule on a small trace that breaks it, and a clean trace that breaks none.
#include <gtest/gtest.h>

#include <algorithm>

#include "chakra/analysis/validate.h"
#include "chakra/format/et_io.h"
#include "test_support.h"

using chakra::AttrKind;
using chakra::NodeType;
using chakra::Severity;

namespace {

class TraceBuilder {
 public:
  TraceBuilder() { t.set_metadata(t.intern("1.0.0"), {}); }

  TraceBuilder& node(uint64_t id, NodeType type, std::vector<uint64_t> data = {}, std::vector<uint64_t> ctrl = {}) {
    flush();
    d.clear();
    d.id = id;
    d.name = t.intern("n" + std::to_string(id));
    d.type = static_cast<int32_t>(type);
    d.duration_micros = type == NodeType::Comp ? 1 : 0;  // compute takes time (see no-durations)
    d.data_deps = std::move(data);
    d.ctrl_deps = std::move(ctrl);
    open = true;
    return *this;
  }
  TraceBuilder& lasting(uint64_t micros) {
    d.duration_micros = micros;
    return *this;
  }
  TraceBuilder& i64(const char* name, int64_t v) {
    d.attrs.add_int64(t.intern(name), v);
    return *this;
  }
  TraceBuilder& i32(const char* name, int32_t v) {
    d.attrs.add_int32(t.intern(name), v);
    return *this;
  }
  TraceBuilder& u64(const char* name, uint64_t v) {
    d.attrs.add_uint64(t.intern(name), v);
    return *this;
  }
  TraceBuilder& boolean(const char* name, bool v) {
    d.attrs.add_bool(t.intern(name), v);
    return *this;
  }
  TraceBuilder& str(const char* name, const char* v) {
    d.attrs.add_string(t.intern(name), t.intern(v));
    return *this;
  }
  TraceBuilder& collective(uint64_t id, std::vector<uint64_t> data = {}) {
    return node(id, NodeType::CommColl, std::move(data))
        .boolean("is_cpu_op", false)
        .i64("comm_type", 0)
        .i64("comm_size", 1024);
  }
  chakra::Trace& done() {
    flush();
    return t;
  }

 private:
  void flush() {
    if (open) t.append(d);
    open = false;
  }
  chakra::Trace t;
  chakra::NodeDraft d;
  bool open = false;
};

std::vector<std::string> codes(const chakra::ValidationReport& r, Severity s) {
  std::vector<std::string> out;
  for (const auto& [code, n] : r.counts)
    for (const auto& f : r.findings)
      if (f.code == code && f.severity == s) {
        out.push_back(code);
        break;
      }
  return out;
}

using Codes = std::vector<std::string>;

TEST(Validate, CleanTraceHasNoFindings) {
  TraceBuilder b;
  b.node(1, NodeType::Comp).boolean("is_cpu_op", false);
  b.collective(2, {1});
  b.node(3, NodeType::CommSend, {2}).i64("comm_size", 8).i32("comm_src", 0).i32("comm_dst", 1).i32("comm_tag", 5);
  b.node(4, NodeType::CommRecv, {2}).i64("comm_size", 8).i32("comm_src", 1).i32("comm_dst", 0).i32("comm_tag", 5);
  b.node(5, NodeType::MemLoad, {3, 4}).u64("tensor_size", 64);
  auto r = chakra::validate(b.done());
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].message;
  EXPECT_TRUE(r.ok());
}

// Compute nodes that all last 0 µs (a host ET converted without its Kineto trace) leave a
// simulation nothing to time but communication; one duration or a roofline's num_ops is enough.
TEST(Validate, WarnsWhenNoComputeNodeHasADuration) {
  TraceBuilder zero;
  zero.node(1, NodeType::Comp).lasting(0);
  zero.node(2, NodeType::Comp, {1}).lasting(0);
  zero.collective(3, {2});
  auto r = chakra::validate(zero.done());
  EXPECT_EQ(codes(r, Severity::Warning), (Codes{"no-durations"}));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NE(r.findings[0].message.find("all 2 compute nodes last 0 µs"), std::string::npos) << r.findings[0].message;
  TraceBuilder one;
  one.node(1, NodeType::Comp).lasting(0);
  one.node(2, NodeType::Comp, {1}).lasting(3);
  EXPECT_TRUE(chakra::validate(one.done()).findings.empty());
  TraceBuilder roofline;
  roofline.node(1, NodeType::Comp).lasting(0).i64("num_ops", 100).u64("tensor_size", 10);
  EXPECT_TRUE(codes(chakra::validate(roofline.done()), Severity::Warning).empty());
}

TEST(Validate, GraphErrors) {
  TraceBuilder b;
  b.node(1, NodeType::Comp);
  b.node(1, NodeType::Comp);            // duplicate id
  b.node(2, NodeType::Comp, {99});      // dangling data dep
  b.node(3, NodeType::Comp, {}, {98});  // dangling ctrl dep
  b.node(4, NodeType::Comp, {5});       // 4 <-> 5 cycle
  b.node(5, NodeType::Comp, {4});
  b.node(6, NodeType::Comp, {6});     // self dependency
  b.node(7, NodeType::Comp, {1, 1});  // duplicate entry
  auto r = chakra::validate(b.done());
  EXPECT_EQ(codes(r, Severity::Error), (Codes{"cycle", "dangling-ctrl-dep", "dangling-data-dep", "duplicate-id"}));
  EXPECT_EQ(codes(r, Severity::Warning), (Codes{"duplicate-dep"}));
  EXPECT_EQ(r.counts.at("cycle"), 2u);
  auto cycle = std::find_if(r.findings.begin(), r.findings.end(), [](auto& f) { return f.code == "cycle"; });
  EXPECT_NE(cycle->message.find("node id 4 \"n4\" -> node id 5 \"n5\" -> node id 4"), std::string::npos)
      << cycle->message;
}

// Validation in steps (a page's frames) finds what validate() finds, in the same order, whatever
// the step size; the whole-trace checks are steps of their own.
TEST(Validate, InStepsGivesTheSameReport) {
  TraceBuilder b;
  b.node(1, NodeType::Comp);
  b.node(1, NodeType::Comp);
  b.node(2, NodeType::Comp, {99});
  b.node(4, NodeType::Comp, {5});
  b.node(5, NodeType::Comp, {4});
  for (uint64_t i = 10; i < 40; ++i) b.node(i, NodeType::Comp, {i + 1000});
  b.node(7, NodeType::Comp, {1, 1});
  const chakra::Trace& t = b.done();
  chakra::ValidateOptions o;
  o.max_per_code = 5;
  const chakra::ValidationReport whole = chakra::validate(t, o);
  ASSERT_GT(whole.findings.size(), 5u);
  for (uint32_t step : {1u, 7u, 1000u}) {
    chakra::Validator v(t, o);
    int steps = 1;
    while (!v.step(step)) ++steps;
    // the whole-trace checks, the nodes a step at a time, the cycles (a data cycle: no second
    // pass for ctrl deps), then timing ends it
    EXPECT_EQ(steps, 3 + static_cast<int>((t.size() + step - 1) / step)) << step;
    EXPECT_TRUE(v.step(step));
    const chakra::ValidationReport r = v.take_report();
    EXPECT_EQ(r.counts, whole.counts);
    EXPECT_EQ(r.errors, whole.errors);
    EXPECT_EQ(r.warnings, whole.warnings);
    ASSERT_EQ(r.findings.size(), whole.findings.size());
    for (size_t i = 0; i < r.findings.size(); ++i) {
      EXPECT_EQ(r.findings[i].message, whole.findings[i].message);
      EXPECT_EQ(r.findings[i].node, whole.findings[i].node);
    }
  }
}

TEST(Validate, CycleThroughControlDependencies) {
  TraceBuilder b;
  b.node(1, NodeType::Comp, {}, {2});
  b.node(2, NodeType::Comp, {1});
  const chakra::Trace& t = b.done();
  auto r = chakra::validate(t);
  EXPECT_EQ(codes(r, Severity::Error), (Codes{"ctrl-cycle"}));
  // A step at a time (the page's way): with no cycle through data deps alone, the cycles take two
  // steps, one pass over the graph each: whole-trace checks, 2 nodes, data, data + ctrl, timing.
  chakra::Validator v(t, {});
  int steps = 1;
  while (!v.step(1)) ++steps;
  EXPECT_EQ(steps, 6);
  EXPECT_EQ(codes(v.take_report(), Severity::Error), (Codes{"ctrl-cycle"}));
}

TEST(Validate, CommunicationContract) {
  TraceBuilder b;
  b.node(1, NodeType::CommColl).i64("comm_type", 0);                                        // no comm_size
  b.node(2, NodeType::CommColl).i64("comm_size", 8);                                        // no comm_type
  b.node(3, NodeType::CommSend).i64("comm_size", 8).i32("comm_src", 0);                     // no comm_dst, comm_tag
  b.node(4, NodeType::CommRecv).i64("comm_size", 8).i32("comm_src", 0).i32("comm_tag", 1);  // no comm_dst: warning
  b.collective(5).boolean("is_cpu_op", true);                                               // duplicate attr + on CPU
  b.node(6, NodeType::CommColl).i64("comm_type", 9).i64("comm_size", 0);                    // BARRIER
  b.node(7, NodeType::CommColl).i64("comm_type", 42).i64("comm_size", 0);                   // not a collective
  b.node(8, NodeType::CommColl).i64("comm_type", 0).i64("comm_size", -4);                   // negative size
  b.node(9, NodeType::CommColl).i64("comm_type", 0).i64("comm_size", 4).str("pg_name", "tp_group");
  auto r = chakra::validate(b.done());
  EXPECT_EQ(codes(r, Severity::Error), (Codes{"bad-comm-size", "bad-comm-type", "missing-comm-attr"}));
  EXPECT_EQ(codes(r, Severity::Warning),
            (Codes{"defaulted-comm-attr", "duplicate-attr", "pg-name", "unsupported-collective"}));
  EXPECT_EQ(r.counts.at("missing-comm-attr"), 4u);
  // is_cpu_op=true is the second is_cpu_op of node 5; readers use the first (false), so no
  // comm-on-cpu error there. A lone one is an error:
  TraceBuilder c;
  c.node(1, NodeType::CommColl).boolean("is_cpu_op", true).i64("comm_type", 0).i64("comm_size", 1);
  EXPECT_EQ(codes(chakra::validate(c.done()), Severity::Error), (Codes{"comm-on-cpu"}));
}

TEST(Validate, AttributeKindsTheFeedersMisread) {
  TraceBuilder b;
  b.node(1, NodeType::CommColl).i64("comm_type", 0).u64("comm_size", 8);    // v1 reads 0
  b.node(2, NodeType::CommColl).i64("comm_type", 0).str("comm_size", "8");  // nobody reads it
  b.node(3, NodeType::CommColl).i64("comm_type", 0).i64("comm_size", 8).boolean("involved_dim", true);
  b.node(4, NodeType::Comp).i64("num_ops", 100);    // roofline without bytes
  b.node(5, NodeType::MemStore);                    // no tensor_size
  b.node(6, NodeType::Comp).i64("is_cpu_op", 1);    // STAGE's int: v1 reads false
  b.node(7, NodeType::Comp).str("is_cpu_op", "1");  // nobody reads it
  auto r = chakra::validate(b.done());
  EXPECT_EQ(codes(r, Severity::Error), (Codes{"attr-kind", "missing-mem-attr"}));
  EXPECT_EQ(codes(r, Severity::Warning), (Codes{"attr-kind-v1", "roofline-attrs"}));
  EXPECT_EQ(r.counts.at("attr-kind"), 3u);
  EXPECT_EQ(r.counts.at("attr-kind-v1"), 2u);
}

TEST(Validate, NodeTypesMetadataAndStrings) {
  chakra::Trace t;
  chakra::NodeDraft d;
  d.id = 1;
  d.type = 12;
  t.append(d);
  d.id = 2;
  d.type = 0;
  d.name = t.intern("bad \xff name");
  t.append(d);
  auto r = chakra::validate(t);
  EXPECT_EQ(codes(r, Severity::Error), (Codes{"unknown-node-type"}));
  EXPECT_EQ(codes(r, Severity::Warning), (Codes{"invalid-node", "invalid-utf8", "no-metadata"}));
}

TEST(Validate, ListsAtMostMaxPerCodeButCountsAll) {
  TraceBuilder b;
  for (uint64_t i = 0; i < 50; ++i) b.node(i, NodeType::Comp, {1000 + i});
  chakra::ValidateOptions o;
  o.max_per_code = 3;
  auto r = chakra::validate(b.done(), o);
  EXPECT_EQ(r.counts.at("dangling-data-dep"), 50u);
  EXPECT_EQ(r.errors, 50u);
  EXPECT_EQ(r.findings.size(), 3u);
}

TEST(Validate, RealTraces) {
  using testing_support::shared;
  // A linked+converted trace: ctrl_deps point at the pruned process root, and the converter
  // writes SEND/RECV nodes without the peer and tag ASTRA-sim needs.
  auto r = chakra::validate(chakra::read_et(shared("reference/chakra/outputs/trace_link/p2p_collectives.et")));
  EXPECT_EQ(r.counts["dangling-ctrl-dep"], 2u);  // both thread roots
  EXPECT_EQ(r.counts["missing-comm-attr"], 4u);
  // ASTRA-sim's own microbenchmark is clean.
  r = chakra::validate(
      chakra::read_et(shared("data/chakra_et/astra-sim_microbenchmarks/all_reduce/8npus_1MB/all_reduce.3.et")));
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].message;
  // The pre-0.0.4 format is recognised as such.
  r = chakra::validate(chakra::read_et(shared("data/other/legacy_eg_2023-11/transformer_2stack.0.eg")));
  EXPECT_EQ(r.counts["legacy-schema"], 1u);
  EXPECT_EQ(r.counts.count("missing-mem-attr"), 0u) << "type-based checks are skipped";
}

}  // namespace
