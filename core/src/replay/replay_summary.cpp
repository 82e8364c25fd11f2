// What a replay measured, over every rank: per collective kind, group size and size, the count,
// median time and nccl-tests' bandwidths; per rank its step.
#include <algorithm>
#include <map>
#include <tuple>

#include "chakra/format/json_writer.h"
#include "chakra/replay/replay.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::replay {

const char* op_kind_name(OpKind k) {
  static constexpr const char* kNames[kOpKinds] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                   "broadcast",  "barrier",    "send",           "recv"};
  return kNames[static_cast<int>(k)];
}

// nccl-tests (doc/PERFORMANCE.md): algbw = size / time, with all-gather's size the output;
// busbw = algbw × (n−1)/n for all-gather, reduce-scatter and all-to-all, × 2(n−1)/n for
// all-reduce, × 1 for broadcast and messages.
Bandwidth nccl_tests_bandwidth(OpKind kind, uint64_t bytes, uint32_t ranks, uint64_t ns) {
  Bandwidth b;
  if (ns == 0 || ranks == 0) return b;
  const double n = ranks;
  const double size = kind == OpKind::AllGather ? double(bytes) * n : double(bytes);
  b.algbw_gbs = size / double(ns);  // bytes per ns = GB/s
  double factor = 1;
  switch (kind) {
    case OpKind::AllReduce: factor = 2 * (n - 1) / n; break;
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
    case OpKind::AllToAll: factor = (n - 1) / n; break;
    default: break;
  }
  b.busbw_gbs = b.algbw_gbs * factor;
  return b;
}

std::vector<SummaryRow> summarize(std::span<const RankResult> ranks) {
  std::map<std::tuple<int, uint32_t, uint64_t>, std::vector<uint64_t>> times;
  for (const RankResult& r : ranks)
    for (const CommRecord& c : r.comms) times[{static_cast<int>(c.kind), c.group_size, c.bytes}].push_back(c.ns);
  std::vector<SummaryRow> rows;
  for (auto& [key, ns] : times) {
    std::sort(ns.begin(), ns.end());
    SummaryRow row;
    row.kind = static_cast<OpKind>(std::get<0>(key));
    row.ranks = std::get<1>(key);
    row.bytes = std::get<2>(key);
    row.count = ns.size();
    row.median_ns = ns[ns.size() / 2];
    row.bw = nccl_tests_bandwidth(row.kind, row.bytes, row.ranks, row.median_ns);
    rows.push_back(row);
  }
  return rows;
}

std::string summary_json(std::span<const RankResult> ranks, const std::string& description) {
  StringSink sink;
  JsonWriter w(sink, JsonStyle{});
  w.begin_object();
  w.key("replayed_by").value(description);
  w.key("ranks").begin_array();
  for (const RankResult& r : ranks) {
    w.begin_object();
    w.key("rank").value_uint(r.rank);
    w.key("trace_rank").value_uint(r.trace_rank);
    w.key("nodes").value_uint(r.nodes);
    w.key("step_ns").value_uint(r.step_ns);
    w.end_object();
  }
  w.end_array();
  w.key("collectives").begin_array();
  for (const SummaryRow& row : summarize(ranks)) {
    w.begin_object();
    w.key("type").value(op_kind_name(row.kind));
    w.key("ranks").value_uint(row.ranks);
    w.key("bytes").value_uint(row.bytes);
    w.key("count").value_uint(row.count);
    w.key("median_ns").value_uint(row.median_ns);
    w.key("algbw_gbs").value_double(row.bw.algbw_gbs);
    w.key("busbw_gbs").value_double(row.bw.busbw_gbs);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.raw("\n");
  w.flush();
  return sink.out;
}

std::string summary_text(std::span<const RankResult> ranks) {
  std::string out = "rank  trace rank          nodes        step\n";
  for (const RankResult& r : ranks)
    appendf(out, "%4u  %10u  %13llu  %10.3f ms\n", r.rank, r.trace_rank, static_cast<unsigned long long>(r.nodes),
            double(r.step_ns) / 1e6);
  const std::vector<SummaryRow> rows = summarize(ranks);
  if (!rows.empty()) {
    out += "\ncollective      ranks          size    count     median (us)  algbw (GB/s)  busbw (GB/s)\n";
    for (const SummaryRow& row : rows)
      appendf(out, "%-14s %6u %13s %8llu %15.2f %13.3f %13.3f\n", op_kind_name(row.kind), row.ranks,
              format_bytes(row.bytes).c_str(), static_cast<unsigned long long>(row.count), double(row.median_ns) / 1e3,
              row.bw.algbw_gbs, row.bw.busbw_gbs);
  }
  return out;
}

std::string encode_records(const RankResult& r) {
  std::string out;
  appendf(out, "%u %u %llu %llu\n", r.rank, r.trace_rank, static_cast<unsigned long long>(r.nodes),
          static_cast<unsigned long long>(r.step_ns));
  for (const CommRecord& c : r.comms)
    appendf(out, "%d %u %llu %llu\n", static_cast<int>(c.kind), c.group_size, static_cast<unsigned long long>(c.bytes),
            static_cast<unsigned long long>(c.ns));
  return out;
}

RankResult decode_records(std::string_view text) {
  RankResult r;
  bool first = true;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    unsigned a = 0, b = 0;
    unsigned long long c = 0, d = 0;
    if (std::sscanf(std::string(line).c_str(), "%u %u %llu %llu", &a, &b, &c, &d) != 4 || (!first && a >= kOpKinds))
      throw Error("a replay record reads wrong: '" + std::string(line) + "'");
    if (first)
      r.rank = a, r.trace_rank = b, r.nodes = c, r.step_ns = d, first = false;
    else
      r.comms.push_back({static_cast<OpKind>(a), b, c, d});
  }
  return r;
}

}  // namespace chakra::replay
