#include "chakra/astra/timeline.h"

#include <charconv>
#include <map>
#include <set>

#include "chakra/format/chrome_trace.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra {

int timeline_track(std::string_view n) {
  auto has = [&](std::string_view s) { return n.find(s) != std::string_view::npos; };
  if (has("MEM_LOAD_NODE") || has("MEM_STORE_NODE")) {
    if (has("LOCAL_MEMORY")) return 1;
    if (has("REMOTE_MEMORY")) return 2;
  }
  if (has("COMP_NODE")) return 3;
  if (has("COMM_SEND_NODE") || has("COMM_RECV_NODE") || has("COMM_COLL_NODE")) return 4;
  return 0;
}

std::string_view timeline_track_name(int track) {
  switch (track) {
    case 1: return "local memory";
    case 2: return "remote memory";
    case 3: return "compute";
    case 4: return "communication";
    default: return "other";
  }
}

std::vector<TimelineSlice> parse_astra_sim_log(std::string_view text, const std::string& name, uint32_t num_npus,
                                               bool known_tracks_only) {
  std::vector<TimelineSlice> slices;
  std::map<std::pair<uint32_t, uint64_t>, TimelineSlice> open;  // issued, not called back
  uint64_t line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    size_t at = line.find("issue,");
    bool issue = at != std::string_view::npos;
    if (!issue) at = line.find("callback,");
    if (at == std::string_view::npos) continue;
    auto fail = [&](const std::string& what) -> void {
      throw Error(name + ": line " + std::to_string(line_no) + ": " + what);
    };
    // Fields: kind, npu, cycle, node id, node name; each value after "key=".
    std::string_view fields[5];
    std::string_view rest = line.substr(at);
    for (int k = 0; k < 5; ++k) {
      size_t comma = k < 4 ? rest.find(',') : std::string_view::npos;
      if (k < 4 && comma == std::string_view::npos) fail("expected 5 comma-separated fields");
      fields[k] = rest.substr(0, comma);
      if (k < 4) rest.remove_prefix(comma + 1);
    }
    auto value = [&](int k) {
      size_t eq = fields[k].find('=');
      if (eq == std::string_view::npos) fail("field " + std::to_string(k + 1) + " has no '='");
      std::string_view v = fields[k].substr(eq + 1);
      return k == 4 ? v.substr(0, v.find('=')) : trim_blanks(v.substr(0, v.find('=')));
    };
    auto number = [&](int k) {
      std::string_view v = value(k);
      uint64_t x = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (ec != std::errc() || p != v.data() + v.size()) fail(quoted_excerpt(v) + " is not a non-negative integer");
      return x;
    };
    uint64_t npu = number(1), cycle = number(2), id = number(3);
    std::string_view node_name = value(4);
    if (!node_name.empty() && node_name.back() == '\r') node_name.remove_suffix(1);
    if (npu >= num_npus) fail("NPU " + std::to_string(npu) + " is not below --num-npus " + std::to_string(num_npus));
    auto key = std::make_pair(static_cast<uint32_t>(npu), id);
    if (issue) {
      TimelineSlice s;
      s.npu = key.first;
      s.node_id = id;
      s.name = std::string(node_name);
      s.issue_cycle = cycle;
      s.track = timeline_track(node_name);
      if (s.track == 0 && known_tracks_only) fail("Node type cannot be identified from " + s.name);
      open[key] = std::move(s);
    } else {
      auto it = open.find(key);
      if (it == open.end())
        fail("callback for node " + std::to_string(id) + " on NPU " + std::to_string(npu) + " without an issue");
      if (cycle < it->second.issue_cycle) fail("callback before its issue (cycle " + std::to_string(cycle) + ")");
      it->second.callback_cycle = cycle;
      slices.push_back(std::move(it->second));
      open.erase(it);
    }
  }
  // Other lines are skipped, so a wrong file (a trace, a config) would give an empty timeline.
  if (slices.empty() && open.empty() && text.find_first_not_of(" \t\r\n") != std::string_view::npos)
    throw Error(name +
                ": no issue or callback lines: not an ASTRA-sim log (the simulator writes them "
                "with its issue/callback logging on)");
  return slices;
}

void write_timeline(const std::vector<TimelineSlice>& slices, const TimelineOptions& o, ByteSink& out) {
  if (o.npu_frequency_mhz == 0) throw Error("the NPU frequency must be positive");
  const double freq = static_cast<double>(o.npu_frequency_mhz);
  if (o.reference_units) {
    ChromeTraceWriter w(out, {{"meta_user", "\"aras\""}});
    const double per_ms = freq * 1000.0;  // exact wherever the product fits a double's 53 bits
    for (const TimelineSlice& s : slices) {
      // The reference's arithmetic: cycle / freq / 1000 and (cb - issue) / (freq * 1000).
      double dur = static_cast<double>(s.callback_cycle - s.issue_cycle) / per_ms;
      w.complete(s.npu, s.track, static_cast<double>(s.issue_cycle) / freq / 1000.0, dur, s.name, {},
                 [&](JsonWriter& a) { a.key("ms").value_double(dur); });
    }
    std::string count = std::to_string(o.num_npus);
    w.finish({{"meta_cpu_count", count}});
    return;
  }
  ChromeTraceWriter w(out);
  std::set<std::pair<uint32_t, int>> tracks;
  for (const TimelineSlice& s : slices) tracks.insert({s.npu, s.track});
  for (uint32_t npu = 0; npu < o.num_npus; ++npu) {
    w.process_name(npu, "NPU " + std::to_string(npu));
    w.process_sort_index(npu, npu);
  }
  for (const auto& [npu, track] : tracks) {
    w.thread_name(npu, track, timeline_track_name(track));
    w.thread_sort_index(npu, track, track);
  }
  for (const TimelineSlice& s : slices) {
    double dur_us = static_cast<double>(s.callback_cycle - s.issue_cycle) / freq;
    w.complete(s.npu, s.track, static_cast<double>(s.issue_cycle) / freq, dur_us, s.name, timeline_track_name(s.track),
               [&](JsonWriter& a) {
                 a.key("node_id").value_uint(s.node_id);
                 a.key("issue_cycle").value_uint(s.issue_cycle);
                 a.key("callback_cycle").value_uint(s.callback_cycle);
                 a.key("ms").value_double(dur_us / 1000.0);
               });
  }
  w.finish({{"displayTimeUnit", "\"ns\""}});
}

}  // namespace chakra
