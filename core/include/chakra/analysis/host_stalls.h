// The host stalls a trace carries (node attributes kStallClassAttr, kStallMicrosAttr and
// "stall_evidence": Kineto traces read with kineto_activity, traces linked with --sync-deps and
// converted), for the analyses to list them before anyone believes a "CPU-bound" verdict
// (core/docs/pytorch-replay.md, "Host stalls").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/format/json_writer.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"

namespace chakra {

struct HostStallEntry {
  uint32_t node = 0;  // position in the trace
  StallClass cls = StallClass::Unexplained;
  uint64_t micros = 0;  // the stall's own stretch, not blocked
  std::string_view evidence;
};

// Every stall of the trace, longest first (ties in node order). O(n) in the nodes; none when
// the trace's metadata does not count any (kHostStallsAttr).
std::vector<HostStallEntry> host_stalls_of(const Trace& trace);
// The class of node `n`'s stall, if it is one.
std::optional<StallClass> stall_class_of(const Trace& trace, uint32_t n);

}  // namespace chakra
