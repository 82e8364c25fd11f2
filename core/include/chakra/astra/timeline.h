// ASTRA-sim issue/callback logs → Chrome trace JSON: mlcommons/chakra's
// `chakra_timeline_visualizer` (chakra-reference-tools.md §8), with its unit bug fixed.
//
// Log lines `issue,sys->id=N,tick=C,node->id=I,node->name=NAME` and `callback,...` (the same
// fields) pair up per (NPU, node id) into one slice from issue to callback. Lines may carry a
// log prefix before "issue,"/"callback," (newer ASTRA-sim's spdlog header); other lines are
// ignored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/format/io.h"

namespace chakra {

struct TimelineSlice {
  uint32_t npu = 0;
  uint64_t node_id = 0;
  std::string name;
  uint64_t issue_cycle = 0, callback_cycle = 0;
  int track = 0;  // 1 local memory, 2 remote memory, 3 compute, 4 communication, 0 unknown
};

// Track from the node name, as the reference decides it (MEM_LOAD/STORE_NODE with
// LOCAL_MEMORY / REMOTE_MEMORY, COMP_NODE, COMM_SEND/RECV/COLL_NODE); 0 if none applies.
int timeline_track(std::string_view node_name);
std::string_view timeline_track_name(int track);

// Slices in callback order. Errors name the file and line: a callback without its issue, an
// NPU id not below `num_npus`, malformed fields; with `known_tracks_only` (the reference's rule)
// also a name that gives no track.
std::vector<TimelineSlice> parse_astra_sim_log(std::string_view text, const std::string& name, uint32_t num_npus,
                                               bool known_tracks_only);

struct TimelineOptions {
  uint32_t num_npus = 1;
  uint64_t npu_frequency_mhz = 1000;  // cycles per microsecond
  // The reference's output byte for byte: ts/dur in milliseconds (Chrome reads microseconds,
  // so the timeline shows 1000x compressed), no track names, args {"ms": dur}.
  bool reference_units = false;
};

// Writes the Chrome trace: one process per NPU, one thread per track, slices in µs with args
// node_id, issue_cycle, callback_cycle and ms (the duration in milliseconds).
void write_timeline(const std::vector<TimelineSlice>& slices, const TimelineOptions& options, ByteSink& out);

}  // namespace chakra
