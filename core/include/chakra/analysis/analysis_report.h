// What `chakra analyze` reports for a set of ranks, written in one place: the CLI's --json and
// --csv and the page's Analysis downloads call these, so both give the same keys and columns.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chakra/analysis/gpu_analysis.h"
#include "chakra/analysis/host_stalls.h"
#include "chakra/format/json_writer.h"
#include "chakra/trace/trace.h"

namespace chakra {

// One rank's measured trace and its analyses (not owned).
struct AnalyzedRank {
  uint32_t rank = 0;
  std::string file;
  const Trace* trace = nullptr;
  const GpuAnalysis* analysis = nullptr;
  const std::vector<HostStallEntry>* stalls = nullptr;
};

// One JSON object: unit, per rank (breakdown, time by kind set, per-name statistics, unknown
// kernels, launches, host stalls, idle per stream), collectives of all ranks by type and size,
// stragglers, notes. Times in µs.
// With `every_launch`, each rank also lists every launch (`launch_list`: the GPU op's id and name,
// the call's and the op's durations, the time from the call's start and from its end).
void write_analysis_json(std::span<const AnalyzedRank> ranks, std::span<const std::string> notes, JsonWriter& w,
                         bool every_launch = false);
std::string analysis_json(std::span<const AnalyzedRank> ranks, std::span<const std::string> notes,
                          bool every_launch = false);

// HTA's temporal_breakdown table, a row per rank (µs).
std::string breakdown_csv(std::span<const AnalyzedRank> ranks);

}  // namespace chakra
