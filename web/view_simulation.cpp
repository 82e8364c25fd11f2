// Simulation view: cluster settings (a preset, then any field edited), runs of chakra::sim on the
// loaded ranks, results per NPU, and two runs side by side.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_context.h"
#include "run_charts.h"
#include "chart.h"
#include "chakra/app/sim_job.h"
#include "chakra/analysis/sim_report.h"
#include "chakra/app/sim_presets.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra_web {

namespace astra = chakra::astra;
namespace sim = chakra::sim;

namespace {
const char* kTopologies[] = {"Ring", "FullyConnected", "Switch"};

// The collective algorithms' config spellings, in astra::Algorithm order (the menu's index is the kind).
const std::vector<const char*>& algorithm_spellings() {
  static const std::vector<const char*> names = [] {
    std::vector<const char*> v;
    for (const astra::AlgorithmInfo& a : astra::collective_algorithms()) v.push_back(a.spelling);
    return v;
  }();
  return names;
}

class SimulationView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "simulation"; }
  const char* title() const override { return "Simulation"; }
  void draw() override;

 private:
  void draw_network_settings();  // the preset and the network's dimensions
  void draw_system_settings();   // the system layer and the compute model
  void draw_slowdowns();
  void draw_run_results();
  void draw_run_charts(const SimRun& a, const SimRun* b);
  void draw_npu_table(const SimRun& a, const SimRun* b);
};

// Stragglers: the spec as text, and a table of the NPUs (and dimensions) that edits it.
void SimulationView::draw_slowdowns() {
  const uint32_t npus = static_cast<uint32_t>(app.runs.settings.network.total_npus());
  if (!app.runs.settings.slowdown.empty()) ImGui::SetNextItemOpen(true, ImGuiCond_Once);  // a link or command set some
  const bool open =
      ImGui::CollapsingHeader(app.runs.settings.slowdown.empty() ? "Slowdowns (stragglers, slower links)###slowdowns"
                                                                 : "Slowdowns: on###slowdowns");
  if (!open) return;
  ImGui::TextDisabled("npu=3:compute=1.5; npu=0-7:comm=2; npu=5:delay=20us; dim=1:bandwidth=0.5");
  std::string text = app.runs.settings.slowdown;
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputTextWithHint("##slowdown", "none: every NPU and link at full speed", &text))
    app.runs.set_slowdown(text);
  if (!app.runs.slowdown_error.empty())
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", app.runs.slowdown_error.c_str());
  sim::Slowdowns s;
  try {
    s = sim::parse_slowdowns(app.runs.settings.slowdown, "slowdowns");
  } catch (const chakra::Error&) {
    return;  // the error is shown above
  }
  bool changed = false;
  const float em = ImGui::GetFontSize();
  if (ImGui::BeginTable("npu_slowdowns", 4,
                        ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV,
                        ImVec2(std::min(ImGui::GetContentRegionAvail().x, 36 * em),
                               std::min(8.0f, static_cast<float>(npus) + 1.5f) * ImGui::GetFrameHeightWithSpacing()))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("NPU", ImGuiTableColumnFlags_WidthFixed, 4 * em);
    for (const char* h : {"compute x", "comm x", "start delay (us)"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(npus));
    while (clipper.Step())
      for (int n = clipper.DisplayStart; n < clipper.DisplayEnd; ++n) {
        const uint32_t u = static_cast<uint32_t>(n);
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%d", n);
        ImGui::PushID(n);
        auto factor = [&](const char* id, std::vector<double>& list, double rest, double value) {
          ImGui::TableNextColumn();
          ImGui::SetNextItemWidth(-1);
          if (ImGui::InputDouble(id, &value, 0, 0, "%.4g", ImGuiInputTextFlags_EnterReturnsTrue) && value > 0 &&
              value <= 1e6) {
            if (list.size() <= u) list.resize(u + 1, rest);
            list[u] = value;
            changed = true;
          }
        };
        factor("##compute", s.compute, s.compute_rest, s.compute_of(u));
        factor("##comm", s.comm, s.comm_rest, s.comm_of(u));
        ImGui::TableNextColumn();
        double us = static_cast<double>(s.delay_of(u)) / 1000;
        ImGui::SetNextItemWidth(-1);
        if (ImGui::InputDouble("##delay", &us, 0, 0, "%.6g", ImGuiInputTextFlags_EnterReturnsTrue) && us >= 0 &&
            us < 1e12) {
          if (s.delay.size() <= u) s.delay.resize(u + 1, s.delay_rest);
          s.delay[u] = static_cast<uint64_t>(std::llround(us * 1000));
          changed = true;
        }
        ImGui::PopID();
      }
    ImGui::EndTable();
  }
  for (uint32_t d = 0; d < app.runs.settings.network.npus.size(); ++d) {
    double k = s.bandwidth_of(d);
    ImGui::SetNextItemWidth(120);
    if (ImGui::InputDouble(("bandwidth x, dim " + std::to_string(d)).c_str(), &k, 0, 0, "%.4g",
                           ImGuiInputTextFlags_EnterReturnsTrue) &&
        k > 0 && k <= 1e6) {
      if (s.bandwidth.size() <= d) s.bandwidth.resize(d + 1, s.bandwidth_rest);
      s.bandwidth[d] = k;
      changed = true;
    }
    if (d + 1 < app.runs.settings.network.npus.size()) ImGui::SameLine();
  }
  if (changed) app.runs.set_slowdown(sim::format_slowdowns(s));
}

// Where each NPU's step went; against the compared run, each NPU's finish Δ; how the
// finishes spread.
void SimulationView::draw_run_charts(const SimRun& a, const SimRun* b) {
  const auto ns = [](double v) { return format_duration(v, "ns"); };
  const std::vector<sim::NpuResult>& npus = a.result.npus;
  ColumnChart split;
  split.title = "Step per NPU (from its start), run " + std::to_string(a.id);
  split.category_name = "NPU";
  split.series = {{"compute alone", span_kind_colour(static_cast<int>(sim::SpanKind::Compute))},
                  {"compute and communication", IM_COL32(150, 120, 220, 255)},
                  {"communication alone", span_kind_colour(static_cast<int>(sim::SpanKind::Collective))},
                  {"neither (CPU, waiting)", IM_COL32(90, 94, 106, 255)}};
  split.format = ns;
  for (size_t i = 0; i < npus.size(); ++i) {
    const chakra::NpuTimeSplit t = chakra::time_split(npus[i]);
    split.categories.push_back(std::to_string(i));
    for (sim::Tick v : {t.compute_only, t.overlapped, t.comm_only, t.idle})
      split.values.push_back(static_cast<double>(v));
  }
  draw_column_chart("split", split, 130, app.platform, app.take_save_request(split.title));
  if (b && b->result.npus.size() == npus.size()) {
    ColumnChart delta;
    delta.title = "Finish of run " + std::to_string(b->id) + " against run " + std::to_string(a.id);
    delta.category_name = "NPU";
    delta.series = {{"change", IM_COL32(120, 170, 255, 255)}};
    delta.format = [](double v) {
      char text[32];
      std::snprintf(text, sizeof text, "%+.1f%%", v);
      return std::string(text);
    };
    for (size_t i = 0; i < npus.size(); ++i) {
      delta.categories.push_back(std::to_string(i));
      delta.values.push_back(chakra::percent_off(b->result.npus[i].finish, npus[i].finish));
    }
    draw_column_chart("delta", delta, 100, app.platform, app.take_save_request(delta.title));
  }
  // The spread of finish times: NPUs per twentieth of [earliest, latest].
  sim::Tick first = UINT64_MAX, last = 0;
  for (const sim::NpuResult& n : npus)
    if (n.finished) first = std::min(first, n.finish), last = std::max(last, n.finish);
  if (first < last) {
    constexpr int kBuckets = 20;
    ColumnChart spread;
    spread.title = "Finish spread, run " + std::to_string(a.id);
    spread.category_name = "finish from";
    spread.series = {{"NPUs", IM_COL32(120, 200, 160, 255)}};
    spread.format = [](double v) { return chakra::format_number(std::round(v)); };
    spread.min_tick_step = 1;
    spread.values.assign(kBuckets, 0);
    const double width = static_cast<double>(last - first) / kBuckets;
    for (int k = 0; k < kBuckets; ++k) spread.categories.push_back(ns(static_cast<double>(first) + k * width));
    for (const sim::NpuResult& n : npus)
      if (n.finished)
        spread.values[std::min(kBuckets - 1, static_cast<int>(static_cast<double>(n.finish - first) / width))] += 1;
    draw_column_chart("spread", spread, 80, app.platform, app.take_save_request(spread.title));
  }
}

void SimulationView::draw() {
  draw_network_settings();
  draw_system_settings();
  draw_slowdowns();
  if (app.runs.running()) {
    draw_run_progress(app.runs, 320);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) app.runs.cancel();
  } else if (ImGui::Button("Run simulation")) {
    app.runs.start();
  }
  ImGui::SameLine();
  if (ImGui::Button("Export configs")) {
    app.platform.download("network.yml", astra::format_network(app.runs.settings.network));
    app.platform.download("system.json", astra::format_system(app.runs.settings.system));
  }
  if (!app.runs.error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", app.runs.error.c_str());
  draw_run_results();
}

// The preset and the network's dimensions.
void SimulationView::draw_network_settings() {
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo("preset", app.runs.settings.preset.c_str())) {
    for (const chakra::ClusterPreset& p : chakra::cluster_presets())
      if (ImGui::Selectable((p.name + " - " + p.title).c_str(), p.name == app.runs.settings.preset))
        app.runs.use_preset(p.name);
    ImGui::EndCombo();
  }
  for (const chakra::ClusterPreset& p : chakra::cluster_presets())
    if (p.name == app.runs.settings.preset && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.source.c_str());
  ImGui::SameLine();
  uint64_t ranks = app.workspace.ranks().size();
  bool fits = app.runs.settings.network.total_npus() == ranks;
  if (!fits && ranks >= 2) {
    if (ImGui::Button("Fit network to ranks")) {
      try {
        app.runs.fit_to_ranks();
      } catch (const std::exception& e) {
        app.runs.error = e.what();
      }
    }
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "network: %llu NPUs, loaded: %llu ranks",
                       static_cast<unsigned long long>(app.runs.settings.network.total_npus()),
                       static_cast<unsigned long long>(ranks));
  }
  astra::NetworkConfig& net = app.runs.settings.network;
  if (ImGui::BeginTable("dims", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    for (const char* h : {"dim", "topology", "NPUs", "bandwidth (GB/s)", "latency (ns)", ""})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (size_t d = 0; d < net.topology.size(); ++d) {
      ImGui::PushID(static_cast<int>(d));
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%zu", d);
      ImGui::TableNextColumn();
      int topo = static_cast<int>(net.topology[d]);
      ImGui::SetNextItemWidth(140);
      if (ImGui::Combo("##topo", &topo, kTopologies, 3)) net.topology[d] = static_cast<astra::TopologyKind>(topo);
      ImGui::TableNextColumn();
      int npus = static_cast<int>(net.npus[d]);
      ImGui::SetNextItemWidth(100);
      if (ImGui::InputInt("##npus", &npus)) net.npus[d] = static_cast<uint32_t>(std::clamp(npus, 2, 1 << 20));
      ImGui::TableNextColumn();
      ImGui::SetNextItemWidth(120);
      ImGui::InputDouble("##bw", &net.bandwidth[d], 0, 0, "%.6g");
      net.bandwidth[d] = std::max(net.bandwidth[d], 1e-6);
      ImGui::TableNextColumn();
      ImGui::SetNextItemWidth(120);
      ImGui::InputDouble("##lat", &net.latency[d], 0, 0, "%.6g");
      net.latency[d] = std::max(net.latency[d], 0.0);
      ImGui::TableNextColumn();
      if (net.topology.size() > 1 && ImGui::SmallButton("remove")) {
        net.topology.erase(net.topology.begin() + static_cast<long>(d));
        net.npus.erase(net.npus.begin() + static_cast<long>(d));
        net.bandwidth.erase(net.bandwidth.begin() + static_cast<long>(d));
        net.latency.erase(net.latency.begin() + static_cast<long>(d));
        chakra::fit_system(app.runs.settings.system, net.topology.size());
        ImGui::PopID();
        break;
      }
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  if (net.topology.size() < 4 && ImGui::SmallButton("add dimension")) {
    net.topology.push_back(astra::TopologyKind::Switch);
    net.npus.push_back(2);
    net.bandwidth.push_back(net.bandwidth.empty() ? 50 : net.bandwidth.back());
    net.latency.push_back(net.latency.empty() ? 500 : net.latency.back());
    chakra::fit_system(app.runs.settings.system, net.topology.size());
  }
}

// The system layer's settings and the compute model.
void SimulationView::draw_system_settings() {
  astra::SystemConfig& sys = app.runs.settings.system;
  ImGui::Separator();
  ImGui::TextUnformatted("System");
  for (int c = 0; c < astra::kCollectiveTypes; ++c) {
    if (sys.algorithms[c].empty()) continue;
    int a = static_cast<int>(sys.algorithms[c][0].kind);
    ImGui::SetNextItemWidth(170);
    if (ImGui::Combo(astra::collective_name(static_cast<astra::Collective>(c)), &a, algorithm_spellings().data(),
                     static_cast<int>(algorithm_spellings().size())))
      for (auto& choice : sys.algorithms[c]) choice = {static_cast<astra::Algorithm>(a), false, -1};
    if (c % 2 == 0) ImGui::SameLine(360);
  }
  int splits = static_cast<int>(sys.preferred_dataset_splits);
  ImGui::SetNextItemWidth(120);
  if (ImGui::InputInt("chunks per collective", &splits))
    sys.preferred_dataset_splits = static_cast<uint32_t>(std::clamp(splits, 1, 1 << 16));
  ImGui::SameLine(360);
  int active = static_cast<int>(sys.active_chunks_per_dimension);
  ImGui::SetNextItemWidth(120);
  if (ImGui::InputInt("active chunks per dim", &active))
    sys.active_chunks_per_dimension = static_cast<uint32_t>(std::clamp(active, 1, 1 << 16));
  int sched = static_cast<int>(sys.scheduling);
  const char* kSched[] = {"LIFO", "FIFO"};
  ImGui::SetNextItemWidth(120);
  if (ImGui::Combo("scheduling", &sched, kSched, 2)) sys.scheduling = static_cast<astra::SchedulingPolicy>(sched);
  ImGui::SameLine(360);
  ImGui::SetNextItemWidth(120);
  ImGui::InputDouble("endpoint delay (ns)", &sys.endpoint_delay, 0, 0, "%.6g");
  sys.endpoint_delay = std::max(0.0, std::floor(sys.endpoint_delay));
  ImGui::Checkbox("congestion-aware network", &app.runs.settings.congestion_aware);
  ImGui::SameLine(360);
  ImGui::Checkbox("host stalls as waits", &app.runs.settings.stalls_wait);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Replayed PyTorch traces: host ops far longer than their kind takes that ended just after GPU work\n"
        "wait for that work instead of spending their measured time (chakra simulate --stalls wait)");
  ImGui::TextUnformatted("Compute");
  ImGui::SetNextItemWidth(120);
  ImGui::InputDouble("peak TFLOP/s", &sys.peak_perf, 0, 0, "%.6g");
  ImGui::SameLine(360);
  ImGui::SetNextItemWidth(120);
  ImGui::InputDouble("memory GB/s", &sys.local_mem_bw, 0, 0, "%.6g");
  sys.peak_perf = std::max(0.0, sys.peak_perf);
  sys.local_mem_bw = std::max(0.0, sys.local_mem_bw);
  ImGui::Checkbox("roofline compute (from num_ops and tensor_size instead of recorded durations)", &sys.roofline);
}

// The run shown (and the one compared with): its summary, charts, fit to the measured run, and
// per-NPU table.
void SimulationView::draw_run_results() {
  if (app.runs.all().empty()) return;
  ImGui::Separator();
  SimRun* a = app.runs.by_id(app.runs.shown);
  SimRun* b = app.runs.by_id(app.runs.compared);
  auto run_combo = [&](const char* label, int& id) {
    std::string current = app.runs.by_id(id) ? "run " + std::to_string(id) : "none";
    ImGui::SetNextItemWidth(180);
    if (ImGui::BeginCombo(label, current.c_str())) {
      if (ImGui::Selectable("none", id == 0)) id = 0;
      for (const auto& r : app.runs.all())
        if (ImGui::Selectable(("run " + std::to_string(r->id) + ": " + r->label).c_str(), r->id == id)) id = r->id;
      ImGui::EndCombo();
    }
  };
  run_combo("shown", app.runs.shown);
  ImGui::SameLine();
  run_combo("compared with", app.runs.compared);
  if (a) {
    ImGui::SameLine();
    if (ImGui::Button("Open in timeline")) app.command("timeline " + std::to_string(a->id));
  }
  if (!a) return;
  auto summary = [&](SimRun* r) {
    ImGui::Text("run %d: %s", r->id, r->label.c_str());
    char wall[48] = "";
    if (app.platform.show_timings()) std::snprintf(wall, sizeof wall, ", simulated in %.1f ms", r->wall_ms);
    ImGui::Text("end %s (%llu ns), %llu events, %llu messages%s%s",
                format_duration(static_cast<double>(r->result.end()), "ns").c_str(),
                static_cast<unsigned long long>(r->result.end()), static_cast<unsigned long long>(r->result.events),
                static_cast<unsigned long long>(r->result.messages), wall, r->result.deadlock ? "  DEADLOCK" : "");
  };
  summary(a);
  if (b) summary(b);
  if (b)
    ImGui::Text("run %d / run %d end time: %.4f", b->id, a->id,
                a->result.end() ? static_cast<double>(b->result.end()) / static_cast<double>(a->result.end()) : 0.0);
  // Host stalls: which replay ran and what the other gives (as chakra simulate's summary).
  uint64_t stalled = 0;
  for (const sim::NpuResult& n : a->result.npus)
    for (uint64_t t : n.stalls) stalled += t;
  if (stalled) {
    const bool wait = a->result.stall_mode == sim::StallMode::Wait;
    ImGui::TextWrapped(
        "Host stalls (%s over all NPUs) replayed %s.%s", format_duration(static_cast<double>(stalled), "ns").c_str(),
        wait ? "as waits for the GPU work they ended after" : "as the CPU time they were measured as",
        a->result.other_stall_mode.ran
            ? (" The other way the end would be " + format_duration(double(a->result.other_stall_mode.end), "ns") + ".")
                  .c_str()
            : " No stall ended just after GPU work: the other way replays them the same.");
  }
  if (ImGui::CollapsingHeader("Charts", ImGuiTreeNodeFlags_DefaultOpen)) draw_run_charts(*a, b);
  if (const sim::StartError& e = a->result.start_error; e.nodes > 0)  // as chakra simulate's summary
    ImGui::Text("node starts vs measured (%llu nodes): median |error| %s, p90 %s",
                static_cast<unsigned long long>(e.nodes), format_duration(static_cast<double>(e.median), "ns").c_str(),
                format_duration(static_cast<double>(e.p90), "ns").c_str());
  if (!a->result.measured_collectives.empty() &&
      ImGui::BeginTable("collective fit", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    for (const char* h : {"collective", "count", "median measured", "median simulated", "error"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const sim::CollectiveFit& c : a->result.measured_collectives) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(std::string(chakra::comm_type_name(c.comm_type)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(c.count));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_duration(static_cast<double>(c.measured_median), "ns").c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_duration(static_cast<double>(c.simulated_median), "ns").c_str());
      ImGui::TableNextColumn();
      if (c.measured_median) ImGui::Text("%+.1f%%", chakra::percent_off(c.simulated_median, c.measured_median));
    }
    ImGui::EndTable();
  }
  if (ImGui::CollapsingHeader("Network load")) draw_network_load(*a, app.platform);
  draw_npu_table(*a, b);
}

// One row per NPU of run `a` (and run `b`'s figures beside them).
void SimulationView::draw_npu_table(const SimRun& a, const SimRun* b) {
  // Replays of measured traces: each NPU's measured step beside its simulated one.
  const bool measured = std::any_of(a.result.npus.begin(), a.result.npus.end(),
                                    [](const sim::NpuResult& n) { return n.measured_step > 0; });
  // Durations with units; the exact nanoseconds in each cell's tooltip (and in --json exports).
  auto duration_cell = [&](uint64_t ns) {
    ImGui::TableNextColumn();
    NumberFont numbers(app.platform);
    ImGui::TextUnformatted(format_duration(static_cast<double>(ns), "ns").c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%llu ns", static_cast<unsigned long long>(ns));
  };
  ImGui::TextDisabled("exposed comm: communication running while no compute runs (measured and simulated alike)");
  int cols = (b ? 9 : 6) + (measured ? 4 : 0);
  if (ImGui::BeginTable("npus", cols, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"NPU", "finish", "compute", "comm", "exposed comm", "nodes"}) ImGui::TableSetupColumn(h);
    if (measured)
      for (const char* h : {"measured step", "simulated step", "error", "measured exposed comm"})
        ImGui::TableSetupColumn(h);
    if (b) {
      ImGui::TableSetupColumn(("finish, run " + std::to_string(b->id)).c_str());
      ImGui::TableSetupColumn(("exposed comm, run " + std::to_string(b->id)).c_str());
      ImGui::TableSetupColumn("finish ratio");
    }
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(a.result.npus.size()));
    while (clipper.Step())
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const sim::NpuResult& n = a.result.npus[i];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%d", i);
        for (uint64_t v : {n.finish, n.compute, n.comm, n.exposed_comm()}) duration_cell(v);
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(n.nodes));
        if (measured) {
          if (n.measured_step)
            duration_cell(n.measured_step);
          else
            ImGui::TableNextColumn();
          duration_cell(n.step());
          ImGui::TableNextColumn();
          if (n.measured_step) ImGui::Text("%+.1f%%", chakra::percent_off(n.step(), n.measured_step));
          if (n.measured_step)
            duration_cell(n.measured_exposed_comm);
          else
            ImGui::TableNextColumn();
        }
        if (b) {
          const bool has = static_cast<size_t>(i) < b->result.npus.size();
          if (has) {
            duration_cell(b->result.npus[i].finish);
            duration_cell(b->result.npus[i].exposed_comm());
          } else {
            ImGui::TableNextColumn();
            ImGui::TableNextColumn();
          }
          ImGui::TableNextColumn();
          if (has && n.finish)
            ImGui::Text("%.4f", static_cast<double>(b->result.npus[i].finish) / static_cast<double>(n.finish));
        }
      }
    ImGui::EndTable();
  }
}

}  // namespace

std::unique_ptr<View> make_simulation_view(AppContext& app) { return std::make_unique<SimulationView>(app); }

}  // namespace chakra_web
