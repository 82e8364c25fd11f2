// Two traces compared op by op (HTA's TraceDiff, on any traces chakra reads): per name, the count
// and total duration in each, their difference, and whether the name is new or gone; the step
// (the span of everything with a start time) and, where both have measured GPU work, the
// temporal breakdown of each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chakra/analysis/gpu_analysis.h"
#include "chakra/trace/trace.h"

namespace chakra {

struct TraceDiff {
  struct Name {
    std::string name;
    uint64_t count_a = 0, count_b = 0;
    uint64_t total_a = 0, total_b = 0;  // µs, summed duration_micros
    int64_t delta() const { return static_cast<int64_t>(total_b) - static_cast<int64_t>(total_a); }
    // Δ as a share of A's total; 0 when A has none.
    double delta_percent() const {
      return total_a ? 100.0 * static_cast<double>(delta()) / static_cast<double>(total_a) : 0.0;
    }
    bool added() const { return count_a == 0; }
    bool removed() const { return count_b == 0; }
    bool same() const { return count_a == count_b && total_a == total_b; }
  };
  // Every name of either trace; by |Δ total| descending, then by |Δ count|, then by name.
  std::vector<Name> names;
  // First start to last end over the nodes with a start time (0 when none has one).
  uint64_t step_a = 0, step_b = 0;
  // The GPU analyses of each (ops == 0 when a trace has no measured GPU work).
  GpuAnalysis gpu_a, gpu_b;

  // Names whose count or total differ.
  size_t changed() const;
};

// O(n log n) in the nodes of both.
TraceDiff diff_traces(const Trace& a, const Trace& b);

// Two GPU analyses compared the same way, per GPU op name (how the web app compares any two
// sources of one rank: its measured times, simulation runs). Each side's times are multiplied
// by its `scale` first, to a common unit (1000 for a trace's µs against a run's ns); the steps
// are the GPU spans. O(n log n) in the names.
TraceDiff diff_gpu_analyses(const GpuAnalysis& a, uint64_t scale_a, const GpuAnalysis& b, uint64_t scale_b);

// The diff's fields as chakra diff --json writes them, into the object `w` is in: step_a,
// step_b, changed, gpu_a, gpu_b (the breakdowns) and names (each with its status: same, new,
// gone or changed).
void write_trace_diff_json(const TraceDiff& d, JsonWriter& w);

}  // namespace chakra
