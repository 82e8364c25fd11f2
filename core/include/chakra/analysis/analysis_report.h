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

// All the report needs of one rank's trace, so that the trace can be dropped once it is taken:
// ranks are analysed one at a time, in bounded memory, or in shards on other machines
// (write_digest_json / read_digest_json).
struct RankDigest {
  uint32_t rank = 0;
  std::string file;
  GpuAnalysis analysis;
  struct Stall {
    uint64_t node_id = 0, start = 0, micros = 0;
    StallClass cls = StallClass::Unexplained;
    std::string name, evidence;
  };
  std::vector<Stall> stalls;  // longest first, as host_stalls_of
  std::vector<CollectiveBucket> collectives;
  CommStarts comm_starts;  // for the stragglers
  // The launch list's GPU op ids and names, parallel to analysis.launches (only when asked).
  std::vector<std::pair<uint64_t, std::string>> launch_ops;
  // When the trace has no GPU op: why, as its reader tells (a note of the report).
  std::string no_gpu_op;
};

// One rank's digest; `launch_ops` with every_launch. O(n log n).
RankDigest digest_rank(const Trace& trace, uint32_t rank, std::string file, bool every_launch = false);
// The same, reusing analyses already made of the trace.
RankDigest digest_rank(const Trace& trace, uint32_t rank, std::string file, GpuAnalysis analysis,
                       std::span<const HostStallEntry> stalls, bool every_launch = false);

// One JSON object: unit, per rank (breakdown, time by kind set, per-name statistics, unknown
// kernels, launches, host stalls, idle per stream), collectives of all ranks by type and size,
// stragglers, notes. Times in µs.
// With `every_launch`, each rank also lists every launch (`launch_list`: the GPU op's id and name,
// the call's and the op's durations, the time from the call's start and from its end).
void write_analysis_json(std::span<const RankDigest> ranks, std::span<const std::string> notes, JsonWriter& w,
                         bool every_launch = false);
std::string analysis_json(std::span<const RankDigest> ranks, std::span<const std::string> notes,
                          bool every_launch = false);

// HTA's temporal_breakdown table, a row per rank (µs).
std::string breakdown_csv(std::span<const RankDigest> ranks);

// Per rank: the stalls' total and per class, then the `top` longest with their evidence; empty
// when no rank has a stall.
std::string host_stalls_text(std::span<const RankDigest> ranks, size_t top);

// A digest as JSON and back, exactly (a shard of `chakra analyze` writes its ranks' digests; the
// merge reads them). read_digest_json throws chakra::Error naming `source` for anything else.
void write_digest_json(const RankDigest& d, JsonWriter& w);
RankDigest read_digest_json(std::string_view json, const std::string& source);

}  // namespace chakra
