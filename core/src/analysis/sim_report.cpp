#include "chakra/analysis/sim_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chakra/analysis/critical_path.h"
#include "chakra/format/chrome_trace.h"
#include "chakra/format/json_writer.h"
#include "chakra/support/text.h"

namespace chakra {

using namespace sim;

namespace {

std::string ns_text(Tick t) {
  char buf[64];
  if (t >= 1000000000)
    std::snprintf(buf, sizeof buf, "%.3f s", double(t) / 1e9);
  else if (t >= 1000000)
    std::snprintf(buf, sizeof buf, "%.3f ms", double(t) / 1e6);
  else if (t >= 1000)
    std::snprintf(buf, sizeof buf, "%.3f us", double(t) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(t));
  return buf;
}

}  // namespace

std::string astra_finish_lines(const SimResult& r) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < r.npus.size(); ++i)
    if (r.npus[i].finished) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return r.npus[a].finish < r.npus[b].finish; });
  std::string out;
  for (uint32_t i : order)
    out += "sys[" + std::to_string(i) + "] finished, " + std::to_string(r.npus[i].finish) +
           " cycles, exposed communication " + std::to_string(r.npus[i].astra_exposed_comm) + " cycles.\n";
  return out;
}

NpuTimeSplit time_split(const NpuResult& n) {
  NpuTimeSplit t;
  const Tick overlap = std::min({n.overlap, n.compute, n.comm});
  t.compute_only = n.compute - overlap;
  t.overlapped = overlap;
  t.comm_only = n.comm - overlap;
  const Tick busy = t.compute_only + t.overlapped + t.comm_only;
  t.idle = n.step() - std::min(n.step(), busy);
  return t;
}

double percent_off(Tick simulated, Tick measured) {
  return measured ? 100.0 * (static_cast<double>(simulated) / static_cast<double>(measured) - 1) : 0;
}

namespace {

// "−0.3%".
std::string percent_text(double percent) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", percent);
  return buf;
}

// Each NPU's own step (finish less start) over the finished ones: the shortest, the longest and
// the mean.
struct Steps {
  uint32_t shortest = 0, longest = 0, finished = 0;
  double mean = 0;
};
Steps steps_of(const SimResult& r) {
  Steps s;
  for (uint32_t i = 0; i < r.npus.size(); ++i) {
    const NpuResult& n = r.npus[i];
    if (!n.finished) continue;
    if (s.finished == 0 || n.step() < r.npus[s.shortest].step()) s.shortest = i;
    if (s.finished == 0 || n.step() >= r.npus[s.longest].step()) s.longest = i;
    s.mean += double(n.step());
    ++s.finished;
  }
  if (s.finished) s.mean /= s.finished;
  return s;
}

// Per NPU with stalls, their length per class (only the classes that occur), and which replay
// ran and what the other gave.
std::string stalls_text(const SimResult& r) {
  std::array<Tick, kStallClassCount> total{};
  for (const NpuResult& n : r.npus)
    for (int c = 0; c < kStallClassCount; ++c) total[c] += n.stalls[c];
  if (std::all_of(total.begin(), total.end(), [](Tick t) { return t == 0; })) return "";
  std::string out;
  const StallMode other = r.stall_mode == StallMode::Keep ? StallMode::Wait : StallMode::Keep;
  appendf(out,
          "  host stalls (host ops far longer than their kind takes; core/docs/pytorch-replay.md) replayed %s "
          "(--stalls %s)\n",
          r.stall_mode == StallMode::Keep ? "as the CPU time they were measured as"
                                          : "as waits for the GPU work they ended after",
          std::string(stall_mode_name(r.stall_mode)).c_str());
  if (r.other_stall_mode.ran) {
    const Steps s = steps_of(r);
    Tick shortest = UINT64_MAX, longest = 0;
    for (uint32_t i = 0; i < r.npus.size() && i < r.other_stall_mode.steps.size(); ++i)
      if (r.npus[i].finished)
        shortest = std::min(shortest, r.other_stall_mode.steps[i]),
        longest = std::max(longest, r.other_stall_mode.steps[i]);
    appendf(out, "  with --stalls %s instead: makespan %s (%s), step per NPU %s ... %s (%s on the longest)%s\n",
            std::string(stall_mode_name(other)).c_str(), ns_text(r.other_stall_mode.end).c_str(),
            percent_text(percent_off(r.other_stall_mode.end, r.end())).c_str(),
            ns_text(shortest == UINT64_MAX ? 0 : shortest).c_str(), ns_text(longest).c_str(),
            percent_text(s.finished ? percent_off(r.other_stall_mode.steps[s.longest], r.npus[s.longest].step()) : 0)
                .c_str(),
            r.other_stall_mode.deadlock ? "; that run deadlocked" : "");
  } else {
    appendf(out, "  (no stall ended just after GPU work: --stalls %s replays them the same)\n",
            std::string(stall_mode_name(other)).c_str());
  }
  std::string header;
  appendf(header, "  %-8s %-14s", "NPU", "stalls");
  for (int c = 0; c < kStallClassCount; ++c)
    if (total[c]) appendf(header, " %13s", std::string(stall_class_name(StallClass(c))).c_str());
  out += header + "  share of step\n";
  size_t shown = 0;
  for (uint32_t i = 0; i < r.npus.size(); ++i) {
    const NpuResult& n = r.npus[i];
    Tick all = 0;
    for (Tick t : n.stalls) all += t;
    if (!all) continue;
    if (++shown > 64) {
      out += "  ...\n";
      break;
    }
    appendf(out, "  %-8u %-14s", i, ns_text(all).c_str());
    for (int c = 0; c < kStallClassCount; ++c)
      if (total[c]) appendf(out, " %13s", n.stalls[c] ? ns_text(n.stalls[c]).c_str() : "-");
    appendf(out, "  %5.1f%%\n", n.step() ? 100.0 * double(all) / double(n.step()) : 0.0);
  }
  return out;
}

}  // namespace

std::string measured_vs_simulated_text(const SimResult& r) {
  std::string out;
  if (!r.times_origin.empty()) {
    appendf(
        out,
        "  (no measured-vs-simulated figures: these traces' times are %s, not measured on the NPUs they describe)\n",
        r.times_origin.c_str());
    return out;
  }
  std::vector<uint32_t> measured;
  for (uint32_t i = 0; i < r.npus.size(); ++i)
    if (r.npus[i].finished && r.npus[i].measured_step > 0) measured.push_back(i);
  // Measured against simulated per NPU: mean |error|, the worst NPU, a line per NPU up to a
  // screenful (beyond that the mean and the worst say it).
  auto table = [&](const std::string& title, const std::vector<std::pair<Tick, Tick>>& figures,  // per `measured`
                   const std::vector<std::string>& extra_header, const std::vector<std::string>& extra) {
    double sum = 0;
    size_t worst = 0;
    for (size_t k = 0; k < figures.size(); ++k) {
      const double e = std::abs(percent_off(figures[k].second, figures[k].first));
      sum += e;
      if (e > std::abs(percent_off(figures[worst].second, figures[worst].first))) worst = k;
    }
    appendf(out, "  measured vs simulated %s: mean |error| %.1f%%, worst NPU %u %s\n", title.c_str(),
            sum / double(figures.size()), measured[worst],
            percent_text(percent_off(figures[worst].second, figures[worst].first)).c_str());
    if (measured.size() > 64) return;
    std::string head;
    for (const std::string& h : extra_header) head += h;
    appendf(out, "  %-8s %14s %14s %9s%s\n", "NPU", "measured", "simulated", "error", head.c_str());
    for (size_t k = 0; k < figures.size(); ++k)
      appendf(out, "  %-8u %14s %14s %9s%s\n", measured[k], ns_text(figures[k].first).c_str(),
              ns_text(figures[k].second).c_str(),
              percent_text(percent_off(figures[k].second, figures[k].first)).c_str(),
              extra.empty() ? "" : extra[k].c_str());
  };
  if (!measured.empty()) {
    std::vector<std::pair<Tick, Tick>> figures;
    std::vector<std::string> extra;
    bool exposed = false;  // columns only when some collective was measured
    for (uint32_t i : measured)
      exposed = exposed || r.npus[i].measured_exposed_comm > 0 || r.npus[i].measured_exposed_transfer > 0;
    for (uint32_t i : measured) {
      const NpuResult& n = r.npus[i];
      figures.emplace_back(n.measured_step, n.step());
      std::string column;
      if (exposed)
        appendf(column, "  %12s %12s  %12s %12s", ns_text(n.measured_exposed_comm).c_str(),
                ns_text(n.exposed_comm()).c_str(), ns_text(n.measured_exposed_transfer).c_str(),
                ns_text(n.exposed_transfer).c_str());
      extra.push_back(column);
    }
    std::vector<std::string> header;
    if (exposed) header.push_back("  exposed comm (measured  simulated)*  exposed transfer (measured  simulated)**");
    table("over the whole trace, from each NPU's first measured start to its last measured end", figures, header,
          extra);
    if (exposed)
      out +=
          "  * communication running while no compute runs     ** from each collective's last arrival to its end, "
          "less compute\n";
  }
  // The profiler's steps: the figure people quote.
  std::vector<std::string> step_names;
  for (uint32_t i : measured)
    for (const NpuResult::StepWindow& w : r.npus[i].profiler_steps)
      if (std::find(step_names.begin(), step_names.end(), w.name) == step_names.end()) step_names.push_back(w.name);
  for (const std::string& name : step_names) {
    std::vector<std::pair<Tick, Tick>> figures;
    std::vector<uint32_t> with;
    std::vector<std::string> extra;
    for (uint32_t i : measured)
      for (const NpuResult::StepWindow& w : r.npus[i].profiler_steps)
        if (w.name == name && w.nodes > 0) {
          figures.emplace_back(w.measured, w.simulated);
          with.push_back(i);
          std::string column;
          appendf(column, "  %14s %8llu", ns_text(w.annotated).c_str(), static_cast<unsigned long long>(w.nodes));
          extra.push_back(column);
        }
    if (figures.empty()) continue;
    std::swap(measured, with);
    std::string header;
    appendf(header, "  %14s %8s", "annotated", "nodes");
    table("in " + name + ", over the nodes measured inside it (first start to last end)", figures, {header}, extra);
    std::swap(measured, with);
  }
  if (r.start_error.nodes > 0)
    appendf(out, "  node starts vs measured (%llu nodes): median |error| %s, p90 %s\n",
            static_cast<unsigned long long>(r.start_error.nodes), ns_text(r.start_error.median).c_str(),
            ns_text(r.start_error.p90).c_str());
  if (!r.measured_collectives.empty()) {
    appendf(out, "  %-16s %10s %17s %17s %9s\n", "collective", "count", "median measured", "median simulated", "error");
    for (const CollectiveFit& c : r.measured_collectives) {
      const std::string_view name = comm_type_name(c.comm_type);
      appendf(out, "  %-16s %10llu %17s %17s %9s\n", std::string(name.empty() ? "?" : name).c_str(),
              static_cast<unsigned long long>(c.count), ns_text(c.measured_median).c_str(),
              ns_text(c.simulated_median).c_str(),
              percent_text(percent_off(c.simulated_median, c.measured_median)).c_str());
    }
  }
  return out;
}

std::string sim_summary_text(const SimResult& r) {
  const Steps steps = steps_of(r);
  Tick compute = 0, comm = 0, overlap = 0, exposed = 0, astra_exposed = 0;
  uint32_t last = 0;
  for (uint32_t i = 0; i < r.npus.size(); ++i) {
    const NpuResult& n = r.npus[i];
    if (!n.finished) continue;
    if (n.finish >= r.npus[last].finish) last = i;
    compute += n.compute, comm += n.comm, overlap += n.overlap, exposed += n.exposed_comm(),
        astra_exposed += n.astra_exposed_comm;
  }
  std::string out;
  appendf(out, "\nsummary: %u NPUs, %u finished, %llu messages, %llu events\n", static_cast<unsigned>(r.npus.size()),
          steps.finished, static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.events));
  if (r.simulated_npus == 1 && r.npus.size() > 1)
    appendf(out,
            "  (every NPU's trace is alike up to node ids, groups and peers, and nothing tells them apart: NPU 0 ran "
            "for all %zu; --every-npu runs each)\n",
            r.npus.size());
  else if (r.simulated_npus > 1 && r.simulated_npus < r.npus.size())
    appendf(out,
            "  (the NPUs fall into %llu classes, alike up to node ids, groups and peers, that nothing else tells "
            "apart: one NPU of each ran for all %zu; --every-npu runs each)\n",
            static_cast<unsigned long long>(r.simulated_npus), r.npus.size());
  if (r.closed_form_contended)
    out +=
        "  (a ring phase solved in closed form shared links with other traffic: the run was redone with every message "
        "simulated)\n";
  if (steps.finished) {
    double k = 1.0 / steps.finished;
    const NpuResult &longest = r.npus[steps.longest], &shortest = r.npus[steps.shortest];
    appendf(out, "  makespan              %14s  (the first NPU's start to the last NPU's finish; last: NPU %u)\n",
            ns_text(r.end()).c_str(), last);
    if (steps.finished == 1)
      appendf(out, "  step                  %14s  (NPU %u's finish less its start)\n", ns_text(longest.step()).c_str(),
              steps.longest);
    else
      appendf(out, "  step per NPU          %14s  (each NPU's finish less its start: NPU %u %s ... NPU %u %s)\n",
              ns_text(Tick(steps.mean)).c_str(), steps.shortest, ns_text(shortest.step()).c_str(), steps.longest,
              ns_text(longest.step()).c_str());
    appendf(out, "  mean compute busy     %14s\n", ns_text(Tick(compute * k)).c_str());
    appendf(out, "  mean comm busy        %14s\n", ns_text(Tick(comm * k)).c_str());
    appendf(out, "  mean overlap          %14s\n", ns_text(Tick(overlap * k)).c_str());
    appendf(out, "  mean exposed comm     %14s  (communication running while no compute runs)\n",
            ns_text(Tick(exposed * k)).c_str());
    appendf(out,
            "  mean non-compute      %14s  (step less compute time: ASTRA-sim's \"exposed communication\" above)\n",
            ns_text(Tick(astra_exposed * k)).c_str());
    // CPU ops replay their recorded durations: when they fill the longest step, no network
    // makes it shorter. Unless some of that CPU time is host stalls, which may be waits.
    const Tick step = longest.step();
    if (step > 0 && double(longest.cpu) >= 0.95 * double(step)) {
      Tick stalled = 0;
      for (Tick t : longest.stalls) stalled += t;
      std::string qualifier = "no network makes it shorter";
      if (stalled && r.stall_mode == StallMode::Keep)
        qualifier = ns_text(stalled) +
                    " of it are host stalls replayed as CPU time (see below): if they are waits, this is "
                    "not what bounds it";
      appendf(out, "  bound by CPU ops      %14s  (NPU %u's CPU ops are busy %.0f%% of its step: %s)\n",
              ns_text(longest.cpu).c_str(), steps.longest, 100.0 * double(longest.cpu) / double(step),
              qualifier.c_str());
    }
  }
  out += stalls_text(r);
  out += measured_vs_simulated_text(r);
  static const char* names[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast"};
  bool header = false;
  for (int t = 0; t <= astra::kCollectiveTypes; ++t) {
    const CollectiveTotals& c = r.collectives[t];
    if (!c.count) continue;
    if (!header) appendf(out, "  %-16s %10s %16s %16s\n", "collective", "count", "bytes", "mean time");
    header = true;
    appendf(out, "  %-16s %10llu %16llu %16s\n", names[t], static_cast<unsigned long long>(c.count),
            static_cast<unsigned long long>(c.bytes), ns_text(c.time / c.count).c_str());
  }
  out += network_load_text(r, 5);
  return out;
}

void set_simulated_times(Trace& trace, std::span<const Span> spans, uint32_t npu, uint64_t origin_micros) {
  trace.set_metadata_string(kTimesOriginAttr, "simulated (chakra simulate --times-out)");
  const RankTimes times = simulated_times(trace, spans, npu);
  auto micros = [](Tick ns) { return (ns + 500) / 1000; };
  for (uint32_t n = 0; n < trace.size(); ++n) {
    if (times.start[n] == RankTimes::kUntimed)
      trace.set_times(n, 0, 0);
    else
      trace.set_times(n, origin_micros + micros(times.start[n]), micros(times.end[n]) - micros(times.start[n]));
  }
}

std::string network_load_text(const SimResult& r, size_t top_links) {
  std::string out;
  const Tick end = r.end();
  bool header = false;
  for (size_t d = 0; d < r.dimensions.size(); ++d) {
    const DimensionLoad& l = r.dimensions[d];
    if (!l.messages) continue;
    if (!header) appendf(out, "  network dimension %10s %16s %16s %s\n", "messages", "bytes", "busy", " busy per NPU");
    header = true;
    appendf(out, "  dim %-14zu %10llu %16llu %16s  %6.2f%%\n", d, static_cast<unsigned long long>(l.messages),
            static_cast<unsigned long long>(l.bytes), ns_text(l.busy).c_str(), 100.0 * dimension_utilisation(r, d));
  }
  if (!r.links.empty()) {
    appendf(out, "  busiest links (of %zu used)    %10s %16s %16s  %6s %16s\n", r.links.size(), "messages", "bytes",
            "busy", "busy", "queued");
    for (size_t i = 0; i < r.links.size() && i < top_links; ++i) {
      const LinkLoad& l = r.links[i];
      char name[64];
      std::snprintf(name, sizeof name, "%s -> %s (dim %u)", device_name(r, l.from).c_str(),
                    device_name(r, l.to).c_str(), l.dim);
      appendf(out, "  %-29s %10llu %16llu %16s  %5.1f%% %16s\n", name, static_cast<unsigned long long>(l.messages),
              static_cast<unsigned long long>(l.bytes), ns_text(l.busy).c_str(),
              end ? 100.0 * double(l.busy) / double(end) : 0.0, ns_text(l.queued).c_str());
    }
  }
  return out;
}

double dimension_utilisation(const SimResult& r, size_t dim) {
  const double capacity = double(r.end()) * double(r.npus.size());
  return capacity > 0 ? double(r.dimensions[dim].busy) / capacity : 0.0;
}

std::string device_name(const SimResult& r, uint32_t device) {
  return device < r.npus.size() ? "NPU " + std::to_string(device) : "switch " + std::to_string(device - r.npus.size());
}

void write_sim_json(const SimResult& r, ByteSink& out, const std::function<void(JsonWriter&)>& more) {
  JsonWriter w(out, JsonStyle{});
  write_sim_json(r, w, more);
  w.raw("\n");
  w.flush();
}

void write_sim_json(const SimResult& r, JsonWriter& w, const std::function<void(JsonWriter&)>& more) {
  w.begin_object();
  w.key("end_ns").value_uint(r.end());
  w.key("makespan_ns").value_uint(r.end());
  w.key("deadlock").value(r.deadlock);
  w.key("messages").value_uint(r.messages);
  w.key("events").value_uint(r.events);
  w.key("closed_form_contended").value(r.closed_form_contended);
  w.key("simulated_npus").value_uint(r.simulated_npus);
  w.key("stall_mode").value(std::string(stall_mode_name(r.stall_mode)));
  if (r.other_stall_mode.ran) {
    w.key("other_stall_mode").begin_object();
    w.key("stall_mode")
        .value(std::string(stall_mode_name(r.stall_mode == StallMode::Keep ? StallMode::Wait : StallMode::Keep)));
    w.key("deadlock").value(r.other_stall_mode.deadlock);
    w.key("makespan_ns").value_uint(r.other_stall_mode.end);
    w.key("step_ns").begin_array();
    for (Tick t : r.other_stall_mode.steps) w.value_uint(t);
    w.end_array();
    w.end_object();
  }
  if (!r.times_origin.empty()) w.key("times_origin").value(r.times_origin);
  w.key("npus").begin_array();
  for (const NpuResult& n : r.npus) {
    w.begin_object();
    w.key("finished").value(n.finished);
    w.key("finish_ns").value_uint(n.finish);
    w.key("start_ns").value_uint(n.start);
    w.key("step_ns").value_uint(n.step());
    w.key("non_compute_ns").value_uint(n.astra_exposed_comm);
    w.key("exposed_communication_ns").value_uint(n.exposed_comm());
    w.key("compute_ns").value_uint(n.compute);
    w.key("comm_ns").value_uint(n.comm);
    w.key("cpu_ns").value_uint(n.cpu);
    w.key("memory_ns").value_uint(n.memory);
    w.key("overlap_ns").value_uint(n.overlap);
    w.key("nodes").value_uint(n.nodes);
    if (n.measured_step) {
      w.key("measured_step_ns").value_uint(n.measured_step);
      w.key("measured_exposed_communication_ns").value_uint(n.measured_exposed_comm);
      w.key("measured_exposed_transfer_ns").value_uint(n.measured_exposed_transfer);
      w.key("exposed_transfer_ns").value_uint(n.exposed_transfer);
    }
    if (!n.profiler_steps.empty()) {
      w.key("profiler_steps").begin_array();
      for (const NpuResult::StepWindow& s : n.profiler_steps) {
        w.begin_object();
        w.key("name").value(s.name);
        w.key("annotated_ns").value_uint(s.annotated);
        w.key("nodes").value_uint(s.nodes);
        w.key("measured_ns").value_uint(s.measured);
        w.key("simulated_ns").value_uint(s.simulated);
        w.end_object();
      }
      w.end_array();
    }
    if (std::any_of(n.stalls.begin(), n.stalls.end(), [](Tick t) { return t > 0; })) {
      w.key("stalls_ns").begin_object();
      for (int c = 0; c < kStallClassCount; ++c)
        w.key(std::string(stall_class_name(StallClass(c)))).value_uint(n.stalls[c]);
      w.end_object();
      w.key("stall_waits").value_uint(n.stall_waits);
    }
    if (!n.stuck.empty()) {
      w.key("stuck").begin_array();
      for (const std::string& s : n.stuck) w.value(s);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array();
  w.key("collectives").begin_object();
  for (int t = 0; t <= astra::kCollectiveTypes; ++t) {
    w.key(collective_totals_name(t)).begin_object();
    w.key("count").value_uint(r.collectives[t].count);
    w.key("bytes").value_uint(r.collectives[t].bytes);
    w.key("time_ns").value_uint(r.collectives[t].time);
    w.end_object();
  }
  w.end_object();
  if (!r.measured_collectives.empty()) {
    w.key("measured_collectives").begin_array();
    for (const CollectiveFit& c : r.measured_collectives) {
      w.begin_object();
      w.key("comm_type").value(std::string(comm_type_name(c.comm_type)));
      w.key("count").value_uint(c.count);
      w.key("measured_median_ns").value_uint(c.measured_median);
      w.key("simulated_median_ns").value_uint(c.simulated_median);
      w.end_object();
    }
    w.end_array();
  }
  w.key("network").begin_object();
  w.key("dimensions").begin_array();
  for (size_t d = 0; d < r.dimensions.size(); ++d) {
    const DimensionLoad& l = r.dimensions[d];
    w.begin_object();
    w.key("messages").value_uint(l.messages);
    w.key("bytes").value_uint(l.bytes);
    w.key("busy_ns").value_uint(l.busy);
    w.key("busy_per_npu").value_double(dimension_utilisation(r, d));
    w.end_object();
  }
  w.end_array();
  w.key("links").begin_array();
  for (const LinkLoad& l : r.links) {
    w.begin_object();
    w.key("from").value(device_name(r, l.from));
    w.key("to").value(device_name(r, l.to));
    w.key("dim").value_uint(l.dim);
    w.key("messages").value_uint(l.messages);
    w.key("bytes").value_uint(l.bytes);
    w.key("busy_ns").value_uint(l.busy);
    w.key("queued_ns").value_uint(l.queued);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  if (r.start_error.nodes > 0) {
    w.key("start_error").begin_object();
    w.key("nodes").value_uint(r.start_error.nodes);
    w.key("median_ns").value_uint(r.start_error.median);
    w.key("p90_ns").value_uint(r.start_error.p90);
    w.end_object();
  }
  if (more) more(w);
  w.end_object();
}

void write_sim_chrome_trace(const SimResult& r, ByteSink& out) {
  ChromeTraceWriter w(out);
  static const char* tracks[] = {"compute", "cpu", "collectives", "sends", "receives", "memory", "other"};
  for (uint32_t n = 0; n < r.npus.size(); ++n) {
    w.process_name(n, "NPU " + std::to_string(n));
    w.process_sort_index(n, n);
    for (int t = 0; t < 7; ++t) w.thread_name(n, t, tracks[t]);
  }
  for (const Span& s : r.spans)
    w.complete(s.npu, int64_t(s.kind), double(s.start) / 1000.0, double(s.end - s.start) / 1000.0, s.name,
               tracks[int(s.kind)], [&](JsonWriter& a) { a.key("node").value_uint(s.node); });
  w.finish();
}

}  // namespace chakra
