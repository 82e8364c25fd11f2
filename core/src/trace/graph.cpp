#include "chakra/trace/graph.h"

#include <algorithm>
#include <optional>

namespace chakra {

IdIndex::IdIndex(const Trace& trace) {
  const uint32_t n = trace.size();
  for (uint32_t i = 1; i < n && ascending_; ++i) ascending_ = trace.id(i - 1) < trace.id(i);
  if (n > 0) {
    uint64_t lo = trace.id(0), hi = lo;
    for (uint32_t i = 1; i < n; ++i) lo = std::min(lo, trace.id(i)), hi = std::max(hi, trace.id(i));
    if (hi - lo < uint64_t{4} * n + 1024) {
      first_id_ = lo;
      dense_.assign(static_cast<size_t>(hi - lo + 1), kNone);
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t& slot = dense_[static_cast<size_t>(trace.id(i) - lo)];
        if (slot == kNone)
          slot = i;
        else
          duplicates_.push_back(trace.id(i));
      }
      std::sort(duplicates_.begin(), duplicates_.end());
      duplicates_.erase(std::unique(duplicates_.begin(), duplicates_.end()), duplicates_.end());
      return;
    }
  }
  if (ascending_) {
    trace_ = &trace;
    return;
  }
  sorted_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) sorted_.push_back({trace.id(i), i});
  std::stable_sort(sorted_.begin(), sorted_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < sorted_.size(); ++i)
    if (sorted_[i].first == sorted_[i - 1].first && (duplicates_.empty() || duplicates_.back() != sorted_[i].first))
      duplicates_.push_back(sorted_[i].first);
}

std::optional<uint32_t> IdIndex::find(uint64_t id) const {
  if (!dense_.empty()) {
    if (id < first_id_ || id - first_id_ >= dense_.size()) return std::nullopt;
    const uint32_t p = dense_[static_cast<size_t>(id - first_id_)];
    if (p == kNone) return std::nullopt;
    return p;
  }
  if (trace_) {
    uint32_t lo = 0, hi = trace_->size();
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (trace_->id(mid) < id)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < trace_->size() && trace_->id(lo) == id) return lo;
    return std::nullopt;
  }
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), id, [](const auto& e, uint64_t v) { return e.first < v; });
  if (it == sorted_.end() || it->first != id) return std::nullopt;
  return it->second;
}

DepGraph DepGraph::build(const Trace& trace, const IdIndex& index, DepKind kinds) {
  DepGraph g;
  const uint32_t n = trace.size();
  g.offsets.reserve(n + 1);
  g.offsets.push_back(0);
  auto add = [&](std::span<const uint64_t> ids) {
    for (uint64_t id : ids) {
      if (auto p = index.find(id))
        g.targets.push_back(*p);
      else
        ++g.dangling;
    }
  };
  for (uint32_t i = 0; i < n; ++i) {
    if (static_cast<uint8_t>(kinds) & static_cast<uint8_t>(DepKind::Data)) add(trace.data_deps(i));
    if (static_cast<uint8_t>(kinds) & static_cast<uint8_t>(DepKind::Ctrl)) add(trace.ctrl_deps(i));
    g.offsets.push_back(static_cast<uint32_t>(g.targets.size()));
  }
  return g;
}

namespace {

// Shortest cycle through `root` inside its component (breadth-first over dependencies).
std::vector<uint32_t> cycle_through(const DepGraph& g, uint32_t root, const std::vector<uint32_t>& comp,
                                    uint32_t comp_id) {
  // BFS tree as (node, index of its parent in `visited`) in visit order.
  std::vector<std::pair<uint32_t, uint32_t>> visited{{root, UINT32_MAX}};
  std::vector<bool> seen(g.size(), false);
  seen[root] = true;
  for (size_t head = 0; head < visited.size(); ++head) {
    const uint32_t u = visited[head].first;
    for (uint32_t v : g.deps(u)) {
      if (comp[v] != comp_id) continue;
      if (v == root) {  // close the cycle: walk back the BFS tree
        std::vector<uint32_t> path;
        for (size_t k = head;;) {
          path.push_back(visited[k].first);
          uint32_t p = visited[k].second;
          if (p == UINT32_MAX) break;
          k = p;
        }
        std::reverse(path.begin(), path.end());
        return path;
      }
      if (seen[v]) continue;
      seen[v] = true;
      visited.push_back({v, static_cast<uint32_t>(head)});
    }
  }
  return {root};
}

}  // namespace

CycleReport find_cycles(const DepGraph& g, size_t max_examples) {
  // Iterative Tarjan.
  const uint32_t n = g.size();
  constexpr uint32_t kUnvisited = UINT32_MAX;
  std::vector<uint32_t> index(n, kUnvisited), low(n, 0), comp(n, kUnvisited);
  std::vector<uint32_t> stack;
  std::vector<bool> on_stack(n, false);
  std::vector<std::pair<uint32_t, uint32_t>> call;  // (node, next edge offset)
  uint32_t counter = 0, comp_count = 0;
  CycleReport report;

  for (uint32_t start = 0; start < n; ++start) {
    if (index[start] != kUnvisited) continue;
    call.push_back({start, g.offsets[start]});
    index[start] = low[start] = counter++;
    stack.push_back(start);
    on_stack[start] = true;
    while (!call.empty()) {
      auto& [u, edge] = call.back();
      if (edge < g.offsets[u + 1]) {
        uint32_t v = g.targets[edge++];
        if (index[v] == kUnvisited) {
          index[v] = low[v] = counter++;
          stack.push_back(v);
          on_stack[v] = true;
          call.push_back({v, g.offsets[v]});
        } else if (on_stack[v]) {
          low[u] = std::min(low[u], index[v]);
        }
        continue;
      }
      const uint32_t done = u;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
      if (low[done] != index[done]) continue;
      // `done` roots a component: pop it.
      const uint32_t id = comp_count++;
      size_t members = 0;
      uint32_t v;
      do {
        v = stack.back();
        stack.pop_back();
        on_stack[v] = false;
        comp[v] = id;
        ++members;
      } while (v != done);
      bool self_loop = false;
      if (members == 1)
        for (uint32_t t : g.deps(done)) self_loop |= t == done;
      if (members > 1 || self_loop) {
        ++report.components;
        if (report.examples.size() < max_examples) report.examples.push_back(cycle_through(g, done, comp, id));
      }
    }
  }
  return report;
}

}  // namespace chakra

namespace chakra {

DepGraph reverse(const DepGraph& graph) {
  DepGraph out;
  uint32_t n = graph.size();
  out.offsets.assign(n + 1, 0);
  for (uint32_t t : graph.targets) ++out.offsets[t + 1];
  for (uint32_t i = 0; i < n; ++i) out.offsets[i + 1] += out.offsets[i];
  out.targets.resize(graph.targets.size());
  std::vector<uint32_t> fill(out.offsets.begin(), out.offsets.end() - 1);
  for (uint32_t from = 0; from < n; ++from)
    for (uint32_t to : graph.deps(from)) out.targets[fill[to]++] = from;
  out.dangling = graph.dangling;
  return out;
}

std::vector<uint32_t> reachable(const DepGraph& graph, uint32_t from, size_t max_nodes) {
  std::vector<uint32_t> out;
  if (from >= graph.size()) return out;
  std::vector<bool> seen(graph.size());
  seen[from] = true;
  std::vector<uint32_t> frontier{from};
  for (size_t head = 0; head < frontier.size() && out.size() < max_nodes; ++head)
    for (uint32_t next : graph.deps(frontier[head])) {
      if (seen[next]) continue;
      seen[next] = true;
      frontier.push_back(next);
      out.push_back(next);
      if (out.size() >= max_nodes) break;
    }
  return out;
}

CriticalPath critical_path(const Trace& trace, const DepGraph& graph) {
  // Kahn's order over "dependency before dependant"; nodes on cycles never become ready.
  uint32_t n = graph.size();
  DepGraph dependants = reverse(graph);
  std::vector<uint32_t> waiting(n);
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i) {
    waiting[i] = static_cast<uint32_t>(graph.deps(i).size());
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::vector<uint64_t> finish(n, 0);
  std::vector<uint32_t> via(n, UINT32_MAX);
  CriticalPath best;
  uint32_t best_end = UINT32_MAX;
  for (size_t head = 0; head < ready.size(); ++head) {
    uint32_t i = ready[head];
    finish[i] += trace.duration_micros(i);
    if (best_end == UINT32_MAX || finish[i] > finish[best_end]) best_end = i;
    for (uint32_t d : dependants.deps(i)) {
      if (via[d] == UINT32_MAX || finish[i] > finish[d]) {
        finish[d] = finish[i];
        via[d] = i;
      }
      if (--waiting[d] == 0) ready.push_back(d);
    }
  }
  if (best_end == UINT32_MAX) return best;
  best.duration_micros = finish[best_end];
  for (uint32_t i = best_end; i != UINT32_MAX; i = via[i]) best.nodes.push_back(i);
  std::reverse(best.nodes.begin(), best.nodes.end());
  return best;
}

std::vector<uint32_t> launch_peers(const Trace& trace, const DepGraph& deps, const DepGraph& dependants, uint32_t n) {
  auto on_cpu = [&](uint32_t m) -> std::optional<bool> {
    auto a = trace.find_attr(m, "is_cpu_op");
    return a ? a->as_bool() : std::nullopt;
  };
  std::vector<uint32_t> peers;
  const std::optional<bool> cpu = on_cpu(n);
  if (!cpu) return peers;
  for (uint32_t m : (*cpu ? dependants : deps).deps(n))
    if (on_cpu(m) == !*cpu) peers.push_back(m);
  std::sort(peers.begin(), peers.end());  // a node on both kinds of dependency comes twice
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

}  // namespace chakra
