#include "chakra/analysis/trace_diff.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <tuple>
#include <unordered_map>

#include "chakra/format/json_writer.h"

namespace chakra {

namespace {

uint64_t step_of(const Trace& t) {
  uint64_t first = UINT64_MAX, last = 0;
  for (uint32_t n = 0; n < t.size(); ++n) {
    const uint64_t start = t.start_time_micros(n);
    if (start == 0) continue;
    first = std::min(first, start);
    last = std::max(last, start + t.duration_micros(n));
  }
  return first == UINT64_MAX ? 0 : last - first;
}

void sort_by_change(std::vector<TraceDiff::Name>& names) {
  std::sort(names.begin(), names.end(), [](const TraceDiff::Name& x, const TraceDiff::Name& y) {
    const uint64_t dx = static_cast<uint64_t>(std::llabs(x.delta())), dy = static_cast<uint64_t>(std::llabs(y.delta()));
    if (dx != dy) return dx > dy;
    const int64_t cx = std::llabs(static_cast<int64_t>(x.count_b) - static_cast<int64_t>(x.count_a));
    const int64_t cy = std::llabs(static_cast<int64_t>(y.count_b) - static_cast<int64_t>(y.count_a));
    if (cx != cy) return cx > cy;
    return x.name < y.name;
  });
}

// The analysis with every time multiplied by k (per-name statistics other than the sums, launches
// and idle per stream are not compared and left out).
GpuAnalysis scaled(const GpuAnalysis& g, uint64_t k) {
  GpuAnalysis s;
  s.ops = g.ops;
  s.span = g.span * k, s.idle = g.idle * k, s.compute = g.compute * k, s.non_compute = g.non_compute * k;
  s.communication = g.communication * k, s.comm_overlapped = g.comm_overlapped * k;
  for (size_t i = 0; i < std::size(g.by_kinds); ++i) s.by_kinds[i] = g.by_kinds[i] * k;
  return s;
}

}  // namespace

size_t TraceDiff::changed() const {
  return static_cast<size_t>(std::count_if(names.begin(), names.end(), [](const Name& n) { return !n.same(); }));
}

TraceDiff diff_traces(const Trace& a, const Trace& b) {
  TraceDiff d;
  std::unordered_map<std::string_view, size_t> slot;
  auto add = [&](const Trace& t, bool is_a) {
    for (uint32_t n = 0; n < t.size(); ++n) {
      const std::string_view name = t.name(n);
      auto [it, fresh] = slot.emplace(name, d.names.size());
      if (fresh) d.names.push_back({std::string(name)});
      TraceDiff::Name& e = d.names[it->second];
      (is_a ? e.count_a : e.count_b) += 1;
      (is_a ? e.total_a : e.total_b) += t.duration_micros(n);
    }
  };
  add(a, true);
  add(b, false);
  sort_by_change(d.names);
  d.step_a = step_of(a);
  d.step_b = step_of(b);
  d.gpu_a = analyze_gpu(a);
  d.gpu_b = analyze_gpu(b);
  return d;
}

TraceDiff diff_gpu_analyses(const GpuAnalysis& a, uint64_t scale_a, const GpuAnalysis& b, uint64_t scale_b) {
  TraceDiff d;
  std::unordered_map<std::string_view, size_t> slot;
  for (const auto& [g, scale, is_a] : {std::tuple{&a, scale_a, true}, std::tuple{&b, scale_b, false}})
    for (const GpuAnalysis::Name& n : g->names) {
      auto [it, fresh] = slot.emplace(n.name, d.names.size());
      if (fresh) d.names.push_back({n.name});
      TraceDiff::Name& e = d.names[it->second];
      (is_a ? e.count_a : e.count_b) += n.count;
      (is_a ? e.total_a : e.total_b) += n.sum * scale;
    }
  sort_by_change(d.names);
  d.gpu_a = scaled(a, scale_a);
  d.gpu_b = scaled(b, scale_b);
  d.step_a = d.gpu_a.span;
  d.step_b = d.gpu_b.span;
  return d;
}

void write_trace_diff_json(const TraceDiff& d, JsonWriter& w) {
  w.key("step_a").value_uint(d.step_a);
  w.key("step_b").value_uint(d.step_b);
  w.key("changed").value_uint(d.changed());
  for (const auto& [key, g] : {std::pair{"gpu_a", &d.gpu_a}, std::pair{"gpu_b", &d.gpu_b}}) {
    w.key(key).begin_object();
    write_breakdown_json(*g, w);
    w.end_object();
  }
  w.key("names").begin_array();
  for (const TraceDiff::Name& n : d.names) {
    w.begin_object();
    w.key("name").value(n.name);
    w.key("count_a").value_uint(n.count_a);
    w.key("count_b").value_uint(n.count_b);
    w.key("total_a").value_uint(n.total_a);
    w.key("total_b").value_uint(n.total_b);
    w.key("delta").value_int(n.delta());
    w.key("delta_percent").value_double(n.delta_percent());
    w.key("status").value(n.same() ? "same" : n.added() ? "new" : n.removed() ? "gone" : "changed");
    w.end_object();
  }
  w.end_array();
}

}  // namespace chakra
