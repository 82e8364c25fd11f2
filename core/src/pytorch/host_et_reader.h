// The PyTorch host execution trace (or linked trace) as the converter reads it: the nodes, what
// `chakra link --sync-deps` added (sync dependencies, blocked spans, host stalls' wait replay),
// the profiler's steps and the document's metadata. Private to the pytorch layer.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "chakra/format/io.h"
#include "chakra/format/json_pull.h"
#include "chakra/support/progress.h"
#include "chakra/trace/column.h"
#include "chakra/trace/trace.h"

namespace chakra::convert {

// The host-ET attributes the reference copies into every node, in its order (int64 values).
constexpr std::string_view kIntAttrs[] = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"};
constexpr int kIntAttrCount = 6;

// One host-ET node, as much as the conversion needs.
struct HostNode {
  int64_t id = 0;
  int64_t parent = 0;
  bool has_parent = false;
  StrId name = StringPool::kEmpty;
  bool gpu = false;  // has a non-null "cat" (a Kineto GPU event joined by the linker)
  double exclusive_dur = 0;
  double inclusive_dur = NAN;    // NaN: none (traces linked without times)
  double blocked_dur = 0;        // of which blocked in CUDA synchronisation (chakra link --sync-deps)
  double ts = NAN;               // measured start in µs (linked traces); NaN: none
  int64_t inter_thread_dep = 0;  // 0: none (the reference tests truthiness)
  bool stream_null = false;
  int64_t stream = 0;
  StrId pg_name = StringPool::kEmpty;
  int64_t int_attr[kIntAttrCount] = {};
  uint8_t int_attr_present = 0;  // bit per kIntAttrs entry
  bool has_op_schema = false;
  StrId op_schema = StringPool::kEmpty;
  IoStrings inputs, outputs;
  uint64_t input_tensor_bytes = 0;  // Σ numel × itemsize over Tensor-typed inputs
  bool malformed_tensor = false;
  // Integer inputs 1 and 2 (c10d::send/recv_: peer rank and tag).
  std::optional<int64_t> int_input1, int_input2;
  // A host stall (chakra link --sync-deps): its class (-1: none), unblocked µs and evidence.
  int8_t stall_class = -1;
  double stall_dur = 0;
  StrId stall_evidence = StringPool::kEmpty;
};

// When a host node was blocked (`blocked_spans`, written by chakra link --sync-deps): µs.
struct BlockedSpan {
  uint32_t position;  // of the node in the "nodes" list
  double begin, end;
};

// String equality without a library call: the keys compared here are a few bytes long, and

struct HostEt {
  Column<HostNode> nodes;  // huge-page backed: far fewer first-touch page faults than a std::vector
  std::vector<std::pair<uint32_t, int64_t>> sync_deps;  // (node position, node id it waits for)
  std::vector<BlockedSpan> blocked_spans;               // chakra link --sync-deps: when each node was blocked
  // chakra link --sync-deps: what the wait replay of host stalls adds, as the two above.
  std::vector<std::pair<uint32_t, int64_t>> stall_deps;
  std::vector<BlockedSpan> stall_spans;
  // chakra link --sync-deps: the Kineto trace's ProfilerStep#N annotations (µs).
  struct ProfilerStep {
    std::string name;
    double ts = 0, dur = 0;
  };
  std::vector<ProfilerStep> profiler_steps;
  std::map<std::string, nlohmann::json> metadata;  // schema, pid, time, start_ts, finish_ts
};

// Reads the document at `json` (its strings interned into `strings`); errors through the reader
// name the input and the byte.
HostEt read_host_et(JsonPull& json, Trace& strings, Progress* progress, const ByteSource& src);

}  // namespace chakra::convert
