#include "chakra/analysis/critical_path.h"

#include "chakra/analysis/host_stalls.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>

#include "chakra/support/text.h"
#include "chakra/trace/graph.h"
#include "chakra/trace/schema.h"

namespace chakra {

namespace {

constexpr uint64_t kUntimed = RankTimes::kUntimed;

std::optional<int64_t> int_attr(const Trace& t, uint32_t n, StrId name) {
  if (name == StringPool::kEmpty) return std::nullopt;
  auto a = t.find_attr(n, name);
  return a ? a->as_int64() : std::nullopt;
}

StrId find_name(const Trace& t, std::string_view s) {
  StrId id = StringPool::kEmpty;
  t.strings().find(s, &id);
  return id;
}

// What one rank needs for the walk, built once.
struct RankIndex {
  DepGraph deps;
  std::vector<PathKind> kind;
  // Per lane, its timed ops of positive duration: by start, and those enclosing no other (the
  // leaves; a CPU op's children run inside it on its thread) by end. Each node's lane
  // (UINT32_MAX: none) and whether it encloses another op of its lane.
  struct Lane {
    std::vector<uint32_t> by_start, leaves_by_end;
  };
  std::vector<Lane> lanes;
  std::vector<uint32_t> lane_of;
  std::vector<bool> encloses;

  // Per node, the innermost op of its lane that encloses it (UINT32_MAX: none).
  std::vector<uint32_t> parent;
  // The rank's GPU ops (timed, positive duration, not CPU ops, on a stream) by end: what a
  // synchronising host call waited for.
  std::vector<uint32_t> gpu_by_end;
  std::vector<bool> host_sync;  // a CPU op that blocks until GPU work is done (waits_for_gpu)

  // The innermost op enclosing both node n and the gap [a, n's start) before it on its lane, or
  // UINT32_MAX: whose own time that gap is.
  uint32_t owner_of_gap(const RankTimes& tm, uint32_t n, uint64_t a) const {
    for (uint32_t p = parent[n]; p != UINT32_MAX; p = parent[p])
      if (tm.start[p] <= a) return p;
    return UINT32_MAX;
  }
  // Per node, the instance it takes part in (UINT32_MAX: none) and its position k there.
  std::vector<uint32_t> instance_key, instance_index;
};

// A communication instance: per rank, its nodes of that key in start order.
struct InstanceKey {
  std::vector<std::vector<uint32_t>> per_rank;  // empty inner vector: the rank has none
  bool matched = false;                         // every rank that has it has the same count
};

// Host calls that block until GPU work finishes: CUDA/HIP device, stream and event
// synchronisation, and memory copies (a copy to pageable memory waits for its stream).
bool waits_for_gpu(std::string_view name) {
  for (std::string_view prefix : {"cuda", "hip", "cu"}) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string_view rest = name.substr(prefix.size());
    return rest.find("Synchronize") != std::string_view::npos || rest.rfind("Memcpy", 0) == 0;
  }
  return false;
}

PathKind kind_of(const Trace& t, uint32_t n, StrId is_cpu_op) {
  const auto type = static_cast<NodeType>(t.type(n));
  if (type == NodeType::CommColl || type == NodeType::CommSend || type == NodeType::CommRecv)
    return PathKind::Communication;
  if (type == NodeType::MemLoad || type == NodeType::MemStore) return PathKind::Memory;
  if (is_cpu_op != StringPool::kEmpty)
    if (auto a = t.find_attr(n, is_cpu_op); a && a->as_bool().value_or(false)) return PathKind::Cpu;
  switch (classify_gpu_op(t.name(n), t.type(n))) {
    case GpuKind::Communication: return PathKind::Communication;
    case GpuKind::Memory: return PathKind::Memory;
    case GpuKind::Computation: break;
  }
  return PathKind::Compute;
}

}  // namespace

const char* path_kind_name(PathKind k) {
  switch (k) {
    case PathKind::Compute: return "compute";
    case PathKind::Communication: return "communication";
    case PathKind::Memory: return "memory";
    case PathKind::Cpu: return "cpu";
    case PathKind::Waiting: return "waiting";
  }
  return "?";
}

RankTimes measured_times(const Trace& trace) {
  RankTimes r;
  r.trace = &trace;
  r.start.assign(trace.size(), kUntimed);
  r.end.assign(trace.size(), 0);
  for (uint32_t n = 0; n < trace.size(); ++n)
    if (const uint64_t s = trace.start_time_micros(n); s > 0) r.start[n] = s, r.end[n] = s + trace.duration_micros(n);
  return r;
}

RankTimes simulated_times(const Trace& trace, std::span<const sim::Span> spans, uint32_t npu) {
  RankTimes r;
  r.trace = &trace;
  r.start.assign(trace.size(), kUntimed);
  r.end.assign(trace.size(), 0);
  const IdIndex index(trace);
  for (const sim::Span& s : spans)
    if (s.npu == npu)
      if (auto n = index.find(s.node)) r.start[*n] = s.start, r.end[*n] = s.end;
  return r;
}

CrossRankPath critical_path_across_ranks(std::span<const RankTimes> ranks) {
  CrossRankPath path;
  const uint32_t nranks = static_cast<uint32_t>(ranks.size());
  std::vector<RankIndex> idx(nranks);
  std::vector<InstanceKey> keys;
  std::map<std::string, uint32_t, std::less<>> key_ids;
  uint64_t total_nodes = 0;
  for (uint32_t r = 0; r < nranks; ++r) {
    const Trace& t = *ranks[r].trace;
    const RankTimes& tm = ranks[r];
    RankIndex& x = idx[r];
    const IdIndex ids(t);
    x.deps = DepGraph::build(t, ids, DepKind::Both);
    const StrId is_cpu_op = find_name(t, "is_cpu_op"), stream = find_name(t, "stream"), tid = find_name(t, "tid"),
                pg_name = find_name(t, "pg_name"), comm_src = find_name(t, "comm_src"),
                comm_dst = find_name(t, "comm_dst"), comm_tag = find_name(t, "comm_tag");
    x.kind.resize(t.size());
    x.host_sync.assign(t.size(), false);
    x.lane_of.assign(t.size(), UINT32_MAX);
    x.instance_key.assign(t.size(), UINT32_MAX);
    x.instance_index.assign(t.size(), 0);
    std::map<std::pair<int, int64_t>, uint32_t> lane_ids;  // (class, value) → lane
    std::vector<uint32_t> comm;                            // timed communication nodes
    for (uint32_t n = 0; n < t.size(); ++n) {
      total_nodes += 1;
      x.kind[n] = kind_of(t, n, is_cpu_op);
      x.host_sync[n] = x.kind[n] == PathKind::Cpu && waits_for_gpu(t.name(n));
      if (tm.start[n] == kUntimed) continue;
      const auto type = static_cast<NodeType>(t.type(n));
      // Lanes: a stream or a thread when the trace names them, else the simulator's resources.
      std::optional<std::pair<int, int64_t>> lane;
      if (auto s = int_attr(t, n, stream); s && x.kind[n] != PathKind::Cpu)
        lane = {{1, *s}};
      else if (x.kind[n] == PathKind::Cpu)
        lane = {{0, int_attr(t, n, tid).value_or(-1)}};
      else if (type == NodeType::Comp)
        lane = {{2, 0}};
      else if (type == NodeType::CommColl || type == NodeType::CommSend)
        lane = {{3, 0}};
      if (lane) {
        auto [it, fresh] = lane_ids.emplace(*lane, static_cast<uint32_t>(x.lanes.size()));
        if (fresh) x.lanes.emplace_back();
        x.lane_of[n] = it->second;
        if (tm.end[n] > tm.start[n]) x.lanes[it->second].by_start.push_back(n);
      }
      if (x.kind[n] == PathKind::Communication) comm.push_back(n);
      if (lane && lane->first == 1 && tm.end[n] > tm.start[n]) x.gpu_by_end.push_back(n);
    }
    std::sort(x.gpu_by_end.begin(), x.gpu_by_end.end(), [&](uint32_t a, uint32_t b) { return tm.end[a] < tm.end[b]; });
    x.encloses.assign(t.size(), false);
    x.parent.assign(t.size(), UINT32_MAX);
    for (auto& lane : x.lanes) {
      auto& v = lane.by_start;
      // Outer ops first among equal starts, so that the op after an enclosing one starts inside it.
      std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) {
        return tm.start[a] != tm.start[b] ? tm.start[a] < tm.start[b]
               : tm.end[a] != tm.end[b]   ? tm.end[a] > tm.end[b]
                                          : a < b;
      });
      for (size_t i = 0; i + 1 < v.size(); ++i) x.encloses[v[i]] = tm.start[v[i + 1]] < tm.end[v[i]];
      // Parents: the ops still open when each one starts, innermost on top.
      std::vector<uint32_t> open;
      for (uint32_t n : v) {
        while (!open.empty() && tm.end[open.back()] <= tm.start[n]) open.pop_back();
        if (!open.empty() && tm.end[open.back()] >= tm.end[n]) x.parent[n] = open.back();
        open.push_back(n);
      }
      for (uint32_t n : v)
        if (!x.encloses[n]) lane.leaves_by_end.push_back(n);
      std::sort(lane.leaves_by_end.begin(), lane.leaves_by_end.end(),
                [&](uint32_t a, uint32_t b) { return tm.end[a] < tm.end[b] || (tm.end[a] == tm.end[b] && a < b); });
    }
    // Instances: each communication node's key, then its rank in start order within the key.
    std::stable_sort(comm.begin(), comm.end(), [&](uint32_t a, uint32_t b) { return tm.start[a] < tm.start[b]; });
    for (uint32_t n : comm) {
      const auto type = static_cast<NodeType>(t.type(n));
      std::string key;
      if (type == NodeType::CommSend || type == NodeType::CommRecv) {
        const bool send = type == NodeType::CommSend;
        const int64_t peer = int_attr(t, n, send ? comm_dst : comm_src).value_or(-1);
        const int64_t self = int_attr(t, n, send ? comm_src : comm_dst).value_or(r);
        const int64_t tag = int_attr(t, n, comm_tag).value_or(0);
        key = "p2p " + std::to_string(send ? self : peer) + ">" + std::to_string(send ? peer : self) + " #" +
              std::to_string(tag);
      } else if (auto pg = pg_name == StringPool::kEmpty ? std::nullopt : t.find_attr(n, pg_name);
                 pg && type == NodeType::CommColl) {
        key = "pg " + std::string(pg->as_string().value_or(""));
      } else if (type == NodeType::CommColl) {
        key = "pg ";
      } else {
        key = "kernel " + std::string(t.name(n));
      }
      auto [it, fresh] = key_ids.emplace(std::move(key), static_cast<uint32_t>(keys.size()));
      if (fresh) keys.push_back({std::vector<std::vector<uint32_t>>(nranks), false});
      auto& mine = keys[it->second].per_rank[r];
      x.instance_key[n] = it->second;
      x.instance_index[n] = static_cast<uint32_t>(mine.size());
      mine.push_back(n);
    }
  }
  for (InstanceKey& k : keys) {
    size_t count = 0, holders = 0;
    k.matched = true;
    for (const auto& v : k.per_rank) {
      if (v.empty()) continue;
      if (holders++ && v.size() != count) k.matched = false;
      count = v.size();
    }
    k.matched = k.matched && holders > 1;
  }

  // The step: earliest timed start to the latest end. The walk starts at the op that ends last
  // among those enclosing no other (an enclosing op ends when its last child has, and then
  // the rest of it, after that child, is the path's tail).
  uint32_t cur_rank = UINT32_MAX, cur = UINT32_MAX, last_rank = 0, last = UINT32_MAX;
  path.begin = UINT64_MAX;
  for (uint32_t r = 0; r < nranks; ++r)
    for (uint32_t n = 0; n < ranks[r].start.size(); ++n) {
      if (ranks[r].start[n] == kUntimed) continue;
      path.begin = std::min(path.begin, ranks[r].start[n]);
      if (last == UINT32_MAX || ranks[r].end[n] > path.end) path.end = ranks[r].end[n], last_rank = r, last = n;
      if (!idx[r].encloses[n] && (cur == UINT32_MAX || ranks[r].end[n] > ranks[cur_rank].end[cur]))
        cur_rank = r, cur = n;
    }
  if (last == UINT32_MAX) {
    path.begin = 0;
    return path;
  }

  std::vector<CrossRankPath::Step> rev;
  auto emit = [&](uint32_t r, uint32_t n, uint64_t from, uint64_t to, CrossRankPath::Via via) {
    if (to <= from) return;
    rev.push_back({r, n, from, to - from, n == UINT32_MAX ? PathKind::Waiting : idx[r].kind[n], via});
  };
  // A gap on rank r before node n: the own time of the op that encloses it on n's lane, if any.
  auto emit_gap = [&](uint32_t r, uint32_t n, uint64_t from, uint64_t to, CrossRankPath::Via via) {
    emit(r, to <= from ? UINT32_MAX : idx[r].owner_of_gap(ranks[r], n, from), from, to, via);
  };
  if (cur == UINT32_MAX) cur_rank = last_rank, cur = last;
  if (ranks[cur_rank].end[cur] < path.end)  // the op ending last encloses others: its tail
    emit(last_rank, last, ranks[cur_rank].end[cur], path.end, CrossRankPath::Via::End);
  uint64_t t = std::min(ranks[cur_rank].end[cur], path.end);
  CrossRankPath::Via via = CrossRankPath::Via::End;
  bool from_peer = false;
  // Every move either follows a dependency edge (acyclic), moves the cursor back, or crosses to
  // a peer once: a bound far above any consistent walk's length stops inconsistent inputs.
  uint64_t budget = 4 * total_nodes + 16;
  while (budget-- > 0) {
    const RankTimes& tm = ranks[cur_rank];
    const RankIndex& x = idx[cur_rank];
    const uint64_t s = std::min(tm.start[cur], t);
    // A collective or message waits for its last peer: the path continues on that rank.
    if (!from_peer && x.instance_key[cur] != UINT32_MAX && keys[x.instance_key[cur]].matched) {
      const InstanceKey& k = keys[x.instance_key[cur]];
      uint32_t late_rank = cur_rank, late_node = cur;  // the participant that arrived last
      for (uint32_t q = 0; q < nranks; ++q) {
        if (k.per_rank[q].empty()) continue;
        const uint32_t m = k.per_rank[q][x.instance_index[cur]];
        if (ranks[q].start[m] > ranks[late_rank].start[late_node]) late_rank = q, late_node = m;
      }
      const uint64_t arrival = ranks[late_rank].start[late_node];
      if (late_rank != cur_rank && arrival > s && arrival <= t) {
        emit(cur_rank, cur, arrival, t, via);
        t = arrival;
        cur_rank = late_rank, cur = late_node, via = CrossRankPath::Via::Peer, from_peer = true;
        continue;
      }
    }
    // A host call that waits for the GPU returns after the last GPU op it waited for.
    if (x.host_sync[cur] && !x.gpu_by_end.empty()) {
      const auto& g = x.gpu_by_end;
      auto it = std::upper_bound(g.begin(), g.end(), t, [&](uint64_t v, uint32_t n) { return v < tm.end[n]; });
      if (it != g.begin() && tm.end[*(it - 1)] > s) {
        const uint32_t gpu = *(it - 1);
        emit(cur_rank, cur, tm.end[gpu], t, via);
        t = tm.end[gpu];
        cur = gpu, via = CrossRankPath::Via::Sync;
        from_peer = false;
        continue;
      }
    }
    emit(cur_rank, cur, s, t, via);
    t = s;
    // A peer's collective adds no step of its own (it starts at the arrival): the link from the
    // step before it is the crossing.
    const bool crossed = from_peer;
    from_peer = false;
    // What it waited for: the dependency that ended last, or the lane's previous op if later.
    uint32_t best = UINT32_MAX;
    uint64_t best_end = 0;
    bool by_lane = false;
    for (uint32_t d : x.deps.deps(cur)) {
      if (tm.start[d] == kUntimed || tm.start[d] > t) continue;
      const uint64_t e = std::min(tm.end[d], t);
      if (best == UINT32_MAX || e > best_end) best = d, best_end = e, by_lane = false;
    }
    if (x.lane_of[cur] != UINT32_MAX) {
      const auto& lane = x.lanes[x.lane_of[cur]].leaves_by_end;
      // The last op of the lane that ended by t (and is not this one).
      auto it = std::upper_bound(lane.begin(), lane.end(), t, [&](uint64_t v, uint32_t n) { return v < tm.end[n]; });
      while (it != lane.begin() && *(it - 1) == cur) --it;
      if (it != lane.begin()) {
        const uint32_t w = *(it - 1);
        if (best == UINT32_MAX || tm.end[w] > best_end) best = w, best_end = tm.end[w], by_lane = true;
      }
    }
    if (best == UINT32_MAX) break;
    via = crossed ? CrossRankPath::Via::Peer : by_lane ? CrossRankPath::Via::Lane : CrossRankPath::Via::Dependency;
    emit_gap(cur_rank, cur, best_end, t, via);
    t = best_end;
    cur = best;
  }
  path.complete = budget != UINT64_MAX;
  emit_gap(cur_rank, cur, path.begin, t, CrossRankPath::Via::End);
  path.steps.assign(rev.rbegin(), rev.rend());
  for (const auto& st : path.steps) path.by_kind[static_cast<int>(st.kind)] += st.duration;
  return path;
}

uint64_t path_step_if_faster(const CrossRankPath& path, std::span<const RankTimes> ranks, std::string_view name_part,
                             double speedup) {
  if (!(speedup > 0)) return path.step();
  double saved = 0;
  for (const auto& s : path.steps)
    if (s.node != UINT32_MAX && ranks[s.rank].trace->name(s.node).find(name_part) != std::string_view::npos)
      saved += static_cast<double>(s.duration) * (1.0 - 1.0 / speedup);
  const double step = static_cast<double>(path.step()) - saved;
  return step <= 0 ? 0 : static_cast<uint64_t>(step + 0.5);
}

namespace {

const char* via_name(CrossRankPath::Via v) {
  switch (v) {
    case CrossRankPath::Via::End: return "end";
    case CrossRankPath::Via::Dependency: return "dependency";
    case CrossRankPath::Via::Lane: return "lane";
    case CrossRankPath::Via::Peer: return "peer";
    case CrossRankPath::Via::Sync: return "sync";
  }
  return "?";
}

}  // namespace

std::string critical_path_text(const CrossRankPath& path, std::span<const RankTimes> ranks,
                               std::span<const uint32_t> rank_ids, size_t top, std::string_view unit) {
  const std::string u(unit);
  std::string out = "critical path across " + std::to_string(ranks.size()) + (ranks.size() == 1 ? " rank" : " ranks") +
                    ": step " + format_number(double(path.step())) + " " + u + " (first start to last end), " +
                    std::to_string(path.steps.size()) + " steps" +
                    (path.complete ? "" : " (walk stopped early: inconsistent times)") + "\n  by kind:";
  for (int k = 0; k < kPathKinds; ++k)
    if (path.by_kind[k])
      out += std::string(" ") + path_kind_name(static_cast<PathKind>(k)) + " " +
             format_number(double(path.by_kind[k])) + " " + u + " (" + format_share(path.by_kind[k], path.step()) + ")";
  // Host stalls on the path: CPU time only if they were not waits (core/docs/pytorch-replay.md).
  uint64_t stalled = 0, stalled_steps = 0;
  for (const auto& s : path.steps)
    if (s.node != UINT32_MAX && stall_class_of(*ranks[s.rank].trace, s.node)) stalled += s.duration, ++stalled_steps;
  if (stalled)
    out += "\n  host stalls on the path: " + format_number(double(stalled)) + " " + u + " (" +
           format_share(stalled, path.step()) + ") in " + std::to_string(stalled_steps) +
           " steps, marked below: they may be waits (for the GPU, the allocator, another "
           "thread), not CPU work";
  // The longest steps, shown in time order.
  std::vector<size_t> order(path.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return path.steps[a].duration > path.steps[b].duration; });
  order.resize(std::min(order.size(), top));
  std::sort(order.begin(), order.end());
  out += "\n  the " + std::to_string(order.size()) + " longest steps, in time order (" + u + "):\n" +
         "    rank        start     duration   share  kind           via         name\n";
  for (size_t i : order) {
    const auto& s = path.steps[i];
    std::string name = s.node == UINT32_MAX ? "(waiting)" : std::string(ranks[s.rank].trace->name(s.node));
    if (name.size() > 100) name = name.substr(0, 97) + "...";
    char row[160];
    std::snprintf(row, sizeof row, "    %4u %12s %12s %7s  %-14s %-11s ", rank_ids[s.rank],
                  format_number(double(s.start - path.begin)).c_str(), format_number(double(s.duration)).c_str(),
                  format_share(s.duration, path.step()).c_str(), path_kind_name(s.kind), via_name(s.via));
    out += row + name;
    if (s.node != UINT32_MAX)
      if (const auto stall = stall_class_of(*ranks[s.rank].trace, s.node))
        out += "  [host stall: " + std::string(stall_class_name(*stall)) + "]";
    out += "\n";
  }
  return out;
}

void write_critical_path_json(const CrossRankPath& path, std::span<const RankTimes> ranks,
                              std::span<const uint32_t> rank_ids, JsonWriter& w) {
  w.key("step").value_uint(path.step());
  w.key("begin").value_uint(path.begin);
  w.key("end").value_uint(path.end);
  w.key("complete").value(path.complete);
  w.key("by_kind").begin_object();
  for (int k = 0; k < kPathKinds; ++k) w.key(path_kind_name(static_cast<PathKind>(k))).value_uint(path.by_kind[k]);
  w.end_object();
  w.key("steps").begin_array();
  for (const auto& s : path.steps) {
    w.begin_object();
    w.key("rank").value_uint(rank_ids[s.rank]);
    if (s.node == UINT32_MAX) {
      w.key("node_id").value_null().key("name").value_null();
    } else {
      w.key("node_id").value_uint(ranks[s.rank].trace->id(s.node));
      w.key("name").value(ranks[s.rank].trace->name(s.node));
      if (const auto stall = stall_class_of(*ranks[s.rank].trace, s.node))
        w.key("stall_class").value(std::string(stall_class_name(*stall)));
    }
    w.key("kind").value(path_kind_name(s.kind));
    w.key("via").value(via_name(s.via));
    w.key("start").value_uint(s.start);
    w.key("duration").value_uint(s.duration);
    w.key("share").value_double(path.step() ? static_cast<double>(s.duration) / static_cast<double>(path.step()) : 0.0);
    w.end_object();
  }
  w.end_array();
}

}  // namespace chakra
