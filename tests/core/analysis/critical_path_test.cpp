// The critical path across ranks on crafted graphs whose longest path is known, and on the
// shared DLRM ranks (measured).
#include <gtest/gtest.h>

#include <filesystem>

#include "chakra/analysis/critical_path.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/trace/schema.h"
#include "test_support.h"

using chakra::CrossRankPath;
using chakra::PathKind;
namespace fs = std::filesystem;

namespace {

struct Op {
  uint64_t id;
  const char* name;
  chakra::NodeType type;
  uint64_t start, duration;
  std::vector<uint64_t> deps = {};
  const char* pg = nullptr;  // collectives: pg_name
  int64_t peer = -1;         // send: comm_dst, recv: comm_src
};

// Measured start 0 means "not recorded": crafted times are stored kBase later.
constexpr uint64_t kBase = 1000;

chakra::Trace trace_of(std::initializer_list<Op> ops) {
  chakra::Trace t;
  const chakra::StrId pg = t.intern("pg_name"), src = t.intern("comm_src"), dst = t.intern("comm_dst"),
                      tag = t.intern("comm_tag");
  chakra::NodeDraft d;
  for (const Op& op : ops) {
    d.clear();
    d.id = op.id;
    d.name = t.intern(op.name);
    d.type = static_cast<int32_t>(op.type);
    d.start_time_micros = kBase + op.start;
    d.duration_micros = op.duration;
    d.data_deps = op.deps;
    if (op.pg) d.attrs.add_string(pg, t.intern(op.pg));
    if (op.type == chakra::NodeType::CommSend) d.attrs.add_int64(dst, op.peer), d.attrs.add_int64(tag, 7);
    if (op.type == chakra::NodeType::CommRecv) d.attrs.add_int64(src, op.peer), d.attrs.add_int64(tag, 7);
    t.append(d);
  }
  return t;
}

CrossRankPath path_of(std::initializer_list<const chakra::Trace*> traces,
                      std::vector<chakra::RankTimes>* keep = nullptr) {
  std::vector<chakra::RankTimes> ranks;
  for (const chakra::Trace* t : traces) ranks.push_back(chakra::measured_times(*t));
  CrossRankPath p = chakra::critical_path_across_ranks(ranks);
  if (keep) *keep = std::move(ranks);
  return p;
}

// (rank, node position, start − kBase, duration) of each step; node -1 for a wait.
std::vector<std::tuple<uint32_t, int64_t, uint64_t, uint64_t>> steps_of(const CrossRankPath& p) {
  std::vector<std::tuple<uint32_t, int64_t, uint64_t, uint64_t>> out;
  for (const auto& s : p.steps)
    out.emplace_back(s.rank, s.node == UINT32_MAX ? -1 : int64_t(s.node), s.start - kBase, s.duration);
  return out;
}

// Steps tile [begin, end] and the kinds sum to the step.
void expect_contiguous(const CrossRankPath& p) {
  uint64_t t = p.begin, kinds = 0;
  for (const auto& s : p.steps) {
    EXPECT_EQ(s.start, t);
    t += s.duration;
  }
  EXPECT_EQ(t, p.end);
  for (uint64_t k : p.by_kind) kinds += k;
  EXPECT_EQ(kinds, p.step());
}

constexpr auto kComp = chakra::NodeType::Comp;
constexpr auto kColl = chakra::NodeType::CommColl;

}  // namespace

// One rank: the longest chain of dependencies, with the gap before a late node as waiting; the
// shorter branch is not on the path.
TEST(CriticalPath, FollowsTheLatestDependencyAndNamesGaps) {
  const chakra::Trace t = trace_of({{1, "a", kComp, 100, 10},
                                    {2, "b", kComp, 110, 20, {1}},
                                    {3, "short", kComp, 110, 5, {1}},
                                    {4, "c", kComp, 135, 15, {2, 3}}});
  const CrossRankPath p = path_of({&t});
  using S = std::tuple<uint32_t, int64_t, uint64_t, uint64_t>;
  EXPECT_EQ(steps_of(p), (std::vector<S>{{0, 0, 100, 10}, {0, 1, 110, 20}, {0, -1, 130, 5}, {0, 3, 135, 15}}));
  EXPECT_EQ(p.step(), 50u);
  EXPECT_EQ(p.by_kind[int(PathKind::Compute)], 45u);
  EXPECT_EQ(p.by_kind[int(PathKind::Waiting)], 5u);
  EXPECT_TRUE(p.complete);
  expect_contiguous(p);
}

// A collective waits for its last rank: before that arrival the path runs on the late rank.
TEST(CriticalPath, CrossesToTheRankThatArrivedLastAtACollective) {
  const chakra::Trace r0 =
      trace_of({{1, "fwd", kComp, 0, 10}, {2, "allreduce", kColl, 10, 90, {1}, "1"}, {3, "opt", kComp, 100, 5, {2}}});
  const chakra::Trace r1 =
      trace_of({{1, "fwd", kComp, 0, 60}, {2, "allreduce", kColl, 60, 40, {1}, "1"}, {3, "opt", kComp, 100, 2, {2}}});
  const CrossRankPath p = path_of({&r0, &r1});
  using S = std::tuple<uint32_t, int64_t, uint64_t, uint64_t>;
  EXPECT_EQ(steps_of(p), (std::vector<S>{{1, 0, 0, 60}, {0, 1, 60, 40}, {0, 2, 100, 5}}));
  EXPECT_EQ(p.steps[1].kind, PathKind::Communication);
  EXPECT_EQ(p.steps[1].via, CrossRankPath::Via::Dependency);
  EXPECT_EQ(p.steps[0].via, CrossRankPath::Via::Peer);
  EXPECT_EQ(p.step(), 105u);
  expect_contiguous(p);
}

// A receive waits for its send; ops of one stream follow each other without dependencies.
TEST(CriticalPath, FollowsMessagesAndLanes) {
  const chakra::Trace r0 =
      trace_of({{1, "produce", kComp, 0, 50}, {2, "send", chakra::NodeType::CommSend, 50, 20, {1}, nullptr, 1}});
  const chakra::Trace r1 =
      trace_of({{1, "recv", chakra::NodeType::CommRecv, 5, 65, {}, nullptr, 0}, {2, "consume", kComp, 70, 20, {1}}});
  const CrossRankPath p = path_of({&r0, &r1});
  using S = std::tuple<uint32_t, int64_t, uint64_t, uint64_t>;
  EXPECT_EQ(steps_of(p), (std::vector<S>{{0, 0, 0, 50}, {1, 0, 50, 20}, {1, 1, 70, 20}}));
  expect_contiguous(p);

  // Two kernels of one stream, no dependency: the second waited for the first.
  chakra::Trace lane;
  const chakra::StrId stream = lane.intern("stream"), cpu = lane.intern("is_cpu_op");
  chakra::NodeDraft d;
  for (uint64_t i = 0; i < 2; ++i) {
    d.clear();
    d.id = i + 1;
    d.name = lane.intern(i ? "second" : "first");
    d.start_time_micros = kBase + 10 + 30 * i;
    d.duration_micros = 30;
    d.attrs.add_int64(stream, 7);
    d.attrs.add_bool(cpu, false);
    lane.append(d);
  }
  const CrossRankPath q = path_of({&lane});
  EXPECT_EQ(steps_of(q), (std::vector<S>{{0, 0, 10, 30}, {0, 1, 40, 30}}));
  EXPECT_EQ(q.steps[0].via, CrossRankPath::Via::Lane);
}

// What-if along the path: only the matching ops on it shrink.
TEST(CriticalPath, WhatIfScalesTheMatchingOpsOnThePath) {
  const chakra::Trace r0 =
      trace_of({{1, "fwd", kComp, 0, 10}, {2, "allreduce", kColl, 10, 90, {1}, "1"}, {3, "opt", kComp, 100, 5, {2}}});
  const chakra::Trace r1 =
      trace_of({{1, "fwd", kComp, 0, 60}, {2, "allreduce", kColl, 60, 40, {1}, "1"}, {3, "opt", kComp, 100, 2, {2}}});
  std::vector<chakra::RankTimes> ranks;
  const CrossRankPath p = path_of({&r0, &r1}, &ranks);
  EXPECT_EQ(chakra::path_step_if_faster(p, ranks, "fwd", 2.0), 105u - 30u);        // rank 1's fwd, 60 µs
  EXPECT_EQ(chakra::path_step_if_faster(p, ranks, "allreduce", 4.0), 105u - 30u);  // its 40 µs after the arrival
  EXPECT_EQ(chakra::path_step_if_faster(p, ranks, "nothing", 4.0), 105u);
}

// Inconsistent input (a dependency cycle with times) ends without hanging, the steps still
// covering the step.
TEST(CriticalPath, SurvivesCyclesAndEmptyTraces) {
  const chakra::Trace t =
      trace_of({{1, "a", kComp, 10, 0, {2}}, {2, "b", kComp, 10, 0, {1}}, {3, "c", kComp, 10, 5, {1}}});
  const CrossRankPath p = path_of({&t});
  expect_contiguous(p);
  const chakra::Trace empty;
  const CrossRankPath e = path_of({&empty});
  EXPECT_TRUE(e.steps.empty());
  EXPECT_EQ(e.step(), 0u);
}

// Measured DLRM ranks (Kineto traces): the path covers the step from the first rank's start to
// the last end, crosses ranks at collectives, and is mostly work, not unexplained waiting.
TEST(CriticalPath, MeasuredDlrmRanks) {
  std::vector<chakra::Trace> traces;
  for (int r = 0; r < 8; ++r)
    for (const auto& e :
         fs::directory_iterator(testing_support::shared("data/pairs/dlrm_8rank_v100/rank" + std::to_string(r))))
      if (e.path().string().find(".pt.trace.json") != std::string::npos)
        traces.push_back(chakra::kineto_activity(chakra::open_input(e.path().string())));
  ASSERT_EQ(traces.size(), 8u);
  std::vector<chakra::RankTimes> ranks;
  for (const auto& t : traces) ranks.push_back(chakra::measured_times(t));
  const CrossRankPath p = chakra::critical_path_across_ranks(ranks);
  EXPECT_TRUE(p.complete);
  expect_contiguous(p);
  uint64_t first = UINT64_MAX, last = 0;
  for (const auto& t : traces)
    for (uint32_t n = 0; n < t.size(); ++n)
      if (t.start_time_micros(n))
        first = std::min(first, t.start_time_micros(n)),
        last = std::max(last, t.start_time_micros(n) + t.duration_micros(n));
  EXPECT_EQ(p.begin, first);
  EXPECT_EQ(p.end, last);
  size_t peers = 0;
  for (const auto& s : p.steps) peers += s.via == CrossRankPath::Via::Peer;
  EXPECT_GT(peers, 0u);
  EXPECT_LT(p.by_kind[int(PathKind::Waiting)], p.step() / 2);
}
