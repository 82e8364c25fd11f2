#include "chakra/analysis/trace_diff.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

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
  std::sort(d.names.begin(), d.names.end(), [](const TraceDiff::Name& x, const TraceDiff::Name& y) {
    const uint64_t dx = static_cast<uint64_t>(std::llabs(x.delta())), dy = static_cast<uint64_t>(std::llabs(y.delta()));
    if (dx != dy) return dx > dy;
    const int64_t cx = std::llabs(static_cast<int64_t>(x.count_b) - static_cast<int64_t>(x.count_a));
    const int64_t cy = std::llabs(static_cast<int64_t>(y.count_b) - static_cast<int64_t>(y.count_a));
    if (cx != cy) return cx > cy;
    return x.name < y.name;
  });
  d.step_a = step_of(a);
  d.step_b = step_of(b);
  d.gpu_a = analyze_gpu(a);
  d.gpu_b = analyze_gpu(b);
  return d;
}

}  // namespace chakra
