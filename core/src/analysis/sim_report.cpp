#include "chakra/analysis/sim_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chakra/analysis/critical_path.h"
#include "chakra/format/chrome_trace.h"
#include "chakra/format/json_writer.h"

namespace chakra {

using namespace sim;

namespace {

std::string ns_text(Tick t) {
  char buf[64];
  if (t >= 1000000000) std::snprintf(buf, sizeof buf, "%.3f s", double(t) / 1e9);
  else if (t >= 1000000) std::snprintf(buf, sizeof buf, "%.3f ms", double(t) / 1e6);
  else if (t >= 1000) std::snprintf(buf, sizeof buf, "%.3f us", double(t) / 1e3);
  else std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(t));
  return buf;
}

template <class... A>
void appendf(std::string& out, const char* format, A... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  out += buf;
}

}  // namespace

std::string astra_finish_lines(const SimResult& r) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < r.npus.size(); ++i)
    if (r.npus[i].finished) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return r.npus[a].finish < r.npus[b].finish; });
  std::string out;
  for (uint32_t i : order)
    out += "sys[" + std::to_string(i) + "] finished, " + std::to_string(r.npus[i].finish) +
           " cycles, exposed communication " + std::to_string(r.npus[i].exposed_comm) + " cycles.\n";
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

std::string measured_vs_simulated_text(const SimResult& r) {
  std::string out;
  std::vector<uint32_t> measured;
  for (uint32_t i = 0; i < r.npus.size(); ++i)
    if (r.npus[i].finished && r.npus[i].measured_step > 0) measured.push_back(i);
  if (!measured.empty()) {
    auto error = [&](uint32_t i) { return percent_off(r.npus[i].step(), r.npus[i].measured_step); };
    double sum = 0;
    uint32_t worst = measured[0];
    for (uint32_t i : measured) {
      sum += std::abs(error(i));
      if (std::abs(error(i)) > std::abs(error(worst))) worst = i;
    }
    appendf(out, "  measured vs simulated step (span of the trace's measured times; mean |error| %.1f%%, worst NPU %u %+.1f%%)\n",
            sum / double(measured.size()), worst, error(worst));
    // Every NPU up to a screenful; beyond that the mean and the worst say it.
    if (measured.size() <= 64) {
      bool exposed = false;  // a column only when some collective was measured on every rank
      for (uint32_t i : measured) exposed = exposed || r.npus[i].measured_exposed_comm > 0;
      appendf(out, "  %-8s %14s %14s %9s%s\n", "NPU", "measured", "simulated", "error", exposed ? "  measured exposed comm*" : "");
      for (uint32_t i : measured) {
        std::string column;
        if (exposed) appendf(column, "  %22s", ns_text(r.npus[i].measured_exposed_comm).c_str());
        appendf(out, "  %-8u %14s %14s %+8.1f%%%s\n", i, ns_text(r.npus[i].measured_step).c_str(),
                ns_text(r.npus[i].step()).c_str(), error(i), column.c_str());
      }
      if (exposed)
        appendf(out, "  * from each collective's last measured arrival to its end, less compute kernel time\n");
    }
  }
  if (r.start_error.nodes > 0)
    appendf(out, "  node starts vs measured (%llu nodes): median |error| %s, p90 %s\n",
            static_cast<unsigned long long>(r.start_error.nodes), ns_text(r.start_error.median).c_str(),
            ns_text(r.start_error.p90).c_str());
  if (!r.measured_collectives.empty()) {
    appendf(out, "  %-16s %10s %17s %17s %9s\n", "collective", "count", "median measured", "median simulated", "error");
    for (const CollectiveFit& c : r.measured_collectives) {
      const std::string_view name = comm_type_name(c.comm_type);
      appendf(out, "  %-16s %10llu %17s %17s %+8.1f%%\n", std::string(name.empty() ? "?" : name).c_str(),
              static_cast<unsigned long long>(c.count), ns_text(c.measured_median).c_str(),
              ns_text(c.simulated_median).c_str(), percent_off(c.simulated_median, c.measured_median));
    }
  }
  return out;
}

std::string sim_summary_text(const SimResult& r) {
  Tick end = r.end();
  uint32_t slowest = 0;
  Tick compute = 0, comm = 0, overlap = 0, exposed = 0;
  uint32_t finished = 0;
  for (uint32_t i = 0; i < r.npus.size(); ++i) {
    const NpuResult& n = r.npus[i];
    if (!n.finished) continue;
    ++finished;
    if (n.finish >= r.npus[slowest].finish) slowest = i;
    compute += n.compute, comm += n.comm, overlap += n.overlap, exposed += n.exposed_comm;
  }
  std::string out;
  appendf(out, "\nsummary: %u NPUs, %u finished, %llu messages, %llu events\n", static_cast<unsigned>(r.npus.size()),
          finished, static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.events));
  if (r.simulated_npus == 1 && r.npus.size() > 1)
    appendf(out, "  (every NPU's trace is alike up to node ids, groups and peers, and nothing tells them apart: NPU 0 ran for all %zu; --every-npu runs each)\n",
            r.npus.size());
  else if (r.simulated_npus > 1 && r.simulated_npus < r.npus.size())
    appendf(out, "  (the NPUs fall into %llu classes, alike up to node ids, groups and peers, that nothing else tells apart: one NPU of each ran for all %zu; --every-npu runs each)\n",
            static_cast<unsigned long long>(r.simulated_npus), r.npus.size());
  if (r.closed_form_contended)
    out += "  (a ring phase solved in closed form shared links with other traffic: the run was redone with every message simulated)\n";
  if (finished) {
    double k = 1.0 / finished;
    appendf(out, "  step time             %14s  (slowest: NPU %u)\n", ns_text(end).c_str(), slowest);
    appendf(out, "  mean compute busy     %14s\n", ns_text(Tick(compute * k)).c_str());
    appendf(out, "  mean comm busy        %14s\n", ns_text(Tick(comm * k)).c_str());
    appendf(out, "  mean overlap          %14s\n", ns_text(Tick(overlap * k)).c_str());
    appendf(out, "  mean exposed comm     %14s\n", ns_text(Tick(exposed * k)).c_str());
    // CPU ops replay their recorded durations, which for real traces include time blocked on
    // the GPU: when they fill the slowest NPU's step, no network makes it shorter, and its
    // "exposed communication" is not what bounds it.
    const NpuResult& s = r.npus[slowest];
    const Tick step = s.step();
    if (step > 0 && double(s.cpu) >= 0.95 * double(step))
      appendf(out, "  bound by CPU ops      %14s  (NPU %u's CPU ops are busy %.0f%% of its step: no network "
              "makes it shorter)\n", ns_text(s.cpu).c_str(), slowest, 100.0 * double(s.cpu) / double(step));
  }
  out += measured_vs_simulated_text(r);
  static const char* names[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast"};
  bool header = false;
  for (int t = 0; t <= kCollectiveTypes; ++t) {
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
  const RankTimes times = simulated_times(trace, spans, npu);
  auto micros = [](Tick ns) { return (ns + 500) / 1000; };
  for (uint32_t n = 0; n < trace.size(); ++n) {
    if (times.start[n] == RankTimes::kUntimed) trace.set_times(n, 0, 0);
    else trace.set_times(n, origin_micros + micros(times.start[n]), micros(times.end[n]) - micros(times.start[n]));
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
    appendf(out, "  busiest links (of %zu used)    %10s %16s %16s  %6s %16s\n", r.links.size(), "messages", "bytes", "busy", "busy", "queued");
    for (size_t i = 0; i < r.links.size() && i < top_links; ++i) {
      const LinkLoad& l = r.links[i];
      char name[64];
      std::snprintf(name, sizeof name, "%s -> %s (dim %u)", device_name(r, l.from).c_str(), device_name(r, l.to).c_str(), l.dim);
      appendf(out, "  %-29s %10llu %16llu %16s  %5.1f%% %16s\n", name, static_cast<unsigned long long>(l.messages),
              static_cast<unsigned long long>(l.bytes), ns_text(l.busy).c_str(), end ? 100.0 * double(l.busy) / double(end) : 0.0,
              ns_text(l.queued).c_str());
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

void write_sim_json(const SimResult& r, ByteSink& out) {
  JsonWriter w(out, JsonStyle{});
  w.begin_object();
  w.key("end_ns").value_uint(r.end());
  w.key("deadlock").value(r.deadlock);
  w.key("messages").value_uint(r.messages);
  w.key("events").value_uint(r.events);
  w.key("closed_form_contended").value(r.closed_form_contended);
  w.key("simulated_npus").value_uint(r.simulated_npus);
  w.key("npus").begin_array();
  for (const NpuResult& n : r.npus) {
    w.begin_object();
    w.key("finished").value(n.finished);
    w.key("finish_ns").value_uint(n.finish);
    w.key("exposed_comm_ns").value_uint(n.exposed_comm);
    w.key("compute_ns").value_uint(n.compute);
    w.key("comm_ns").value_uint(n.comm);
    w.key("cpu_ns").value_uint(n.cpu);
    w.key("memory_ns").value_uint(n.memory);
    w.key("overlap_ns").value_uint(n.overlap);
    w.key("nodes").value_uint(n.nodes);
    if (n.measured_step) {
      w.key("measured_step_ns").value_uint(n.measured_step);
      w.key("start_ns").value_uint(n.start);
      w.key("measured_exposed_comm_ns").value_uint(n.measured_exposed_comm);
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
  for (int t = 0; t <= kCollectiveTypes; ++t) {
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
  w.end_object();
  w.raw("\n");
  w.flush();
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
