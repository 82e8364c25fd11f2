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

}  // namespace chakra
