#include "chakra/analysis/host_stalls.h"

#include <algorithm>
#include <cstdio>

#include "chakra/support/text.h"

namespace chakra {

std::vector<HostStallEntry> host_stalls_of(const Trace& trace) {
  std::vector<HostStallEntry> out;
  bool marked = false;
  for (uint32_t a = 0; a < trace.metadata_attrs().size(); ++a)
    marked |= trace.metadata_attr(a).name() == kHostStallsAttr && trace.metadata_attr(a).as_uint64().value_or(0) > 0;
  StrId cls, micros, evidence;
  if (!marked || !trace.strings().find(kStallClassAttr, &cls)) return out;
  const bool has_micros = trace.strings().find(kStallMicrosAttr, &micros);
  const bool has_evidence = trace.strings().find("stall_evidence", &evidence);
  for (uint32_t n = 0; n < trace.size(); ++n) {
    const auto c = trace.find_attr(n, cls);
    if (!c) continue;
    const auto parsed = parse_stall_class(c->as_string().value_or(""));
    if (!parsed) continue;
    HostStallEntry e;
    e.node = n;
    e.cls = *parsed;
    if (has_micros)
      if (auto m = trace.find_attr(n, micros)) e.micros = m->as_uint64().value_or(0);
    if (has_evidence)
      if (auto t = trace.find_attr(n, evidence)) e.evidence = t->as_string().value_or("");
    out.push_back(e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const HostStallEntry& a, const HostStallEntry& b) { return a.micros > b.micros; });
  return out;
}

std::optional<StallClass> stall_class_of(const Trace& trace, uint32_t n) {
  const auto c = trace.find_attr(n, kStallClassAttr);
  return c ? parse_stall_class(c->as_string().value_or("")) : std::nullopt;
}

std::string host_stalls_text(std::span<const Trace* const> traces, std::span<const std::vector<HostStallEntry>> stalls,
                             std::span<const uint32_t> rank_ids, size_t top) {
  if (std::all_of(stalls.begin(), stalls.end(), [](const auto& s) { return s.empty(); })) return "";
  std::string out =
      "\nhost stalls: host ops one stretch of whose own time is far longer than their kind takes, with what the trace "
      "shows "
      "(classes and evidence: core/docs/pytorch-replay.md); a replay charges them as CPU time unless told otherwise "
      "(chakra simulate --stalls wait)\n";
  for (size_t r = 0; r < stalls.size(); ++r) {
    if (stalls[r].empty()) continue;
    std::array<uint64_t, kStallClassCount> by_class{};
    uint64_t total = 0;
    for (const HostStallEntry& e : stalls[r]) by_class[static_cast<int>(e.cls)] += e.micros, total += e.micros;
    out += "  rank " + std::to_string(rank_ids[r]) + ": " + std::to_string(stalls[r].size()) + " stalls, " +
           format_number(static_cast<double>(total)) + " µs (";
    bool first = true;
    for (int c = 0; c < kStallClassCount; ++c)
      if (by_class[c]) {
        out += (first ? "" : ", ") + std::string(stall_class_name(StallClass(c))) + " " +
               format_number(static_cast<double>(by_class[c])) + " µs";
        first = false;
      }
    out += ")\n";
    for (size_t i = 0; i < stalls[r].size() && i < top; ++i) {
      const HostStallEntry& e = stalls[r][i];
      const Trace& t = *traces[r];
      char head[96];
      std::snprintf(head, sizeof head,
                    "    %10s µs  %-13s node %llu at %s: ", format_number(static_cast<double>(e.micros)).c_str(),
                    std::string(stall_class_name(e.cls)).c_str(), static_cast<unsigned long long>(t.id(e.node)),
                    std::to_string(t.start_time_micros(e.node)).c_str());
      std::string name(t.name(e.node));
      if (name.size() > 60) name = name.substr(0, 57) + "...";
      out += head + name + (e.evidence.empty() ? "" : "\n      " + std::string(e.evidence)) + "\n";
    }
    if (stalls[r].size() > top) out += "    ... " + std::to_string(stalls[r].size() - top) + " more (--top, --json)\n";
  }
  return out;
}

void write_host_stalls_json(const Trace& trace, const std::vector<HostStallEntry>& stalls, JsonWriter& w) {
  std::array<uint64_t, kStallClassCount> by_class{};
  uint64_t total = 0;
  for (const HostStallEntry& e : stalls) by_class[static_cast<int>(e.cls)] += e.micros, total += e.micros;
  w.key("host_stalls").begin_object();
  w.key("total_us").value_uint(total);
  w.key("by_class").begin_object();
  for (int c = 0; c < kStallClassCount; ++c)
    w.key(std::string(stall_class_name(StallClass(c)))).value_uint(by_class[c]);
  w.end_object();
  w.key("stalls").begin_array();
  for (const HostStallEntry& e : stalls) {
    w.begin_object();
    w.key("node_id").value_uint(trace.id(e.node));
    w.key("name").value(trace.name(e.node));
    w.key("start").value_uint(trace.start_time_micros(e.node));
    w.key("class").value(std::string(stall_class_name(e.cls)));
    w.key("us").value_uint(e.micros);
    w.key("evidence").value(std::string(e.evidence));
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace chakra
