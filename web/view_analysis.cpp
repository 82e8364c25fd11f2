// The Analysis view: HolisticTraceAnalysis's analyses of the open ranks' measured GPU work or of a
// simulation run (chakra/analysis/gpu_analysis.h, as `chakra analyze`): per-rank temporal
// breakdown as a chart and a table, time by kernel kind, the rank's top kernels (a click finds
// them on the timeline) and stragglers across ranks; the critical path across ranks
// (critical_path.h); and any two sources compared per rank and kernel (trace_diff.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include <imgui.h>

#include "app_context.h"
#include "chakra/analysis/analysis_report.h"
#include "run_charts.h"
#include "chakra/analysis/sim_report.h"
#include "chakra/analysis/trace_diff.h"
#include "chakra/support/text.h"
#include "chart.h"

namespace chakra_web {

namespace sim = chakra::sim;

namespace {

class AnalysisView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "analysis"; }
  const char* title() const override { return "Analysis"; }
  void draw() override;
  void write_status(chakra::JsonWriter& w, bool shown) override;
  void add_commands(std::vector<Command>& out) override;
  void ranks_changed() override {
    cache_.reset();
    comparison_ = {};
    path_order_for_ = nullptr;
  }
  void cleared() override {
    source_ = 0;
    compare_ = -1;
  }

 private:
  // The figures of the measured times, per rank in workspace order, made on first use after the
  // ranks change.
  struct Figures {
    std::vector<chakra::GpuAnalysis> ranks;
    std::vector<std::vector<chakra::HostStallEntry>> stalls;  // per rank
    chakra::Stragglers stragglers;
    std::unique_ptr<CriticalPathData> critical_path;
    CollectiveBuckets collectives;
  };
  Figures& figures();
  // Per rank (workspace order), the GPU analyses of a source, and its unit ("us", "ns"); empty
  // for a source that does not exist.
  std::vector<const chakra::GpuAnalysis*> analyses_of(int source, const char** unit);
  const CriticalPathData& critical_path_of(int source);  // the source must exist
  // The measured figures as chakra analyze writes them: "json" (every analysis) or "csv" (the
  // breakdown per rank), downloaded.
  bool export_analysis(std::string_view format);

  void draw_downloads();
  void draw_breakdown(const std::vector<const chakra::GpuAnalysis*>& per, const std::vector<std::string>& labels,
                      const chakra::Stragglers* stragglers, const char* unit, SimRun* run);
  void draw_critical_path(int source, const std::vector<std::string>& labels, const char* unit);
  void draw_kernel_names(const chakra::GpuAnalysis& g, const std::string& label, const char* unit);
  void draw_host_stalls(const std::vector<std::string>& labels);
  void draw_comparison(int source, const std::vector<std::string>& labels);
  void draw_collectives(SimRun* run);

  std::optional<Figures> cache_;
  int source_ = 0;    // 0: the traces' measured times, n > 0: simulation run n
  int compare_ = -1;  // the source compared with it: -1 none, else as source_
  enum class AnalysisTab { Breakdown, CriticalPath, Collectives, Compare };
  AnalysisTab tab_ = AnalysisTab::Breakdown;
  bool tab_requested_ = false;  // select tab_ in the next frame (a command did)
  // The critical path table's row order (longest first, or time order) for the path shown.
  std::vector<uint32_t> path_order_;
  const chakra::CrossRankPath* path_order_for_ = nullptr;
  bool path_time_order_ = false;
  struct Comparison {
    int a = -1, b = -1;                    // the sources compared
    std::vector<chakra::TraceDiff> diffs;  // per rank
  } comparison_;
};

}  // namespace

AnalysisView::Figures& AnalysisView::figures() {
  if (!cache_) {
    cache_.emplace();
    for (const auto& r : app.workspace.ranks()) {
      cache_->ranks.push_back(chakra::analyze_gpu(r->trace));
      cache_->stalls.push_back(chakra::host_stalls_of(r->trace));
    }
    cache_->stragglers = chakra::find_stragglers(app.workspace.traces());
  }
  return *cache_;
}

std::vector<const chakra::GpuAnalysis*> AnalysisView::analyses_of(int source, const char** unit) {
  std::vector<const chakra::GpuAnalysis*> per;
  if (source > 0) {
    SimRun* run = app.runs.by_id(source);
    if (!run) return per;
    if (run->analysis.empty())
      for (uint32_t npu = 0; npu < run->result.npus.size(); ++npu)
        run->analysis.push_back(chakra::analyze_spans(run->result.spans, npu));
    for (const auto& g : run->analysis) per.push_back(&g);
    *unit = "ns";
  } else if (source == 0) {
    for (const auto& g : figures().ranks) per.push_back(&g);
    *unit = "us";
  }
  return per;
}

const CriticalPathData& AnalysisView::critical_path_of(int source) {
  SimRun* run = source > 0 ? app.runs.by_id(source) : nullptr;
  std::unique_ptr<CriticalPathData>& slot = run ? run->critical_path : figures().critical_path;
  if (!slot) {
    slot = std::make_unique<CriticalPathData>();
    const auto& ranks = app.workspace.ranks();
    for (size_t i = 0; i < ranks.size(); ++i)
      slot->times.push_back(run ? chakra::simulated_times(ranks[i]->trace, run->result.spans, static_cast<uint32_t>(i))
                                : chakra::measured_times(ranks[i]->trace));
    slot->path = chakra::critical_path_across_ranks(slot->times);
  }
  return *slot;
}

namespace {

std::string source_name(int source, const std::string& label) {
  return source > 0 ? "simulation run " + std::to_string(source) + (label.empty() ? "" : ": " + label)
                    : "measured times (the traces)";
}

}  // namespace

void AnalysisView::draw() {
  if (app.workspace.ranks().empty()) {
    ImGui::TextDisabled("No trace loaded.");
    return;
  }
  // Source: the measured times, or a simulation run's spans (the same analyses of a what-if).
  SimRun* run = source_ > 0 ? app.runs.by_id(source_) : nullptr;
  if (source_ > 0 && !run) source_ = 0;
  if (compare_ > 0 && !app.runs.by_id(compare_)) compare_ = -1;
  ImGui::SetNextItemWidth(280);
  if (ImGui::BeginCombo("source##analysis", source_name(source_, "").c_str())) {
    if (ImGui::Selectable(source_name(0, "").c_str(), source_ == 0)) source_ = 0;
    for (const auto& r : app.runs.all())
      if (ImGui::Selectable(source_name(r->id, r->label).c_str(), source_ == r->id)) source_ = r->id;
    ImGui::EndCombo();
  }
  const char* unit = "us";
  std::vector<const chakra::GpuAnalysis*> per = analyses_of(source_, &unit);
  std::vector<std::string> labels;
  for (size_t i = 0; i < per.size(); ++i)
    labels.push_back(run ? std::to_string(i) : std::to_string(app.workspace.ranks()[i]->rank));
  ImGui::SameLine();
  ImGui::TextDisabled(run ? "The run's spans, as HolisticTraceAnalysis would see its GPU work."
                          : "As HolisticTraceAnalysis defines them, over each rank's GPU span.");
  if (ImGui::BeginTabBar("analysis_tabs")) {
    auto tab = [&](const char* name, AnalysisTab which) {
      const ImGuiTabItemFlags f = tab_requested_ && tab_ == which ? ImGuiTabItemFlags_SetSelected : 0;
      const bool open = ImGui::BeginTabItem(name, nullptr, f);
      if (open && !tab_requested_) tab_ = which;
      return open;
    };
    if (tab("Breakdown", AnalysisTab::Breakdown)) {
      if (!run) draw_host_stalls(labels);
      draw_breakdown(per, labels, run ? nullptr : &figures().stragglers, unit, run);
      ImGui::EndTabItem();
    }
    if (tab("Critical path", AnalysisTab::CriticalPath)) {
      draw_critical_path(source_, labels, unit);
      ImGui::EndTabItem();
    }
    if (tab("Collectives", AnalysisTab::Collectives)) {
      draw_collectives(run);
      ImGui::EndTabItem();
    }
    if (tab("Compare", AnalysisTab::Compare)) {
      draw_comparison(source_, labels);
      ImGui::EndTabItem();
    }
    tab_requested_ = false;
    ImGui::EndTabBar();
  }
}

// The measured figures, as the CLI writes them.
void AnalysisView::draw_downloads() {
  ImGui::TextDisabled("Download, as chakra analyze writes them:");
  ImGui::SameLine();
  if (ImGui::SmallButton("analysis.json")) export_analysis("json");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Every analysis of every rank (chakra analyze --json)");
  ImGui::SameLine();
  if (ImGui::SmallButton("breakdown.csv")) export_analysis("csv");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The breakdown per rank (chakra analyze --csv)");
}

void AnalysisView::draw_breakdown(const std::vector<const chakra::GpuAnalysis*>& per,
                                  const std::vector<std::string>& labels, const chakra::Stragglers* stragglers,
                                  const char* unit, SimRun* run) {
  if (std::all_of(per.begin(), per.end(), [](const chakra::GpuAnalysis* g) { return g->ops == 0; })) {
    ImGui::TextWrapped(run ? "This run recorded no compute or communication spans."
                           : "No measured GPU work in these traces. The analyses read GPU ops with start times: open "
                             "Kineto traces, host ET + Kineto pairs, or .et traces converted with their times; or pick "
                             "a simulation run above.");
    return;
  }
  if (!run) draw_downloads();
  auto us = [&](uint64_t v) { return format_duration(static_cast<double>(v), unit); };
  auto share = [](uint64_t part, uint64_t whole) { return chakra::format_share(part, whole); };

  // Temporal breakdown: a chart and its table.
  ColumnChart chart;
  chart.title = run ? "GPU time per NPU" : "GPU time per rank";
  chart.category_name = run ? "NPU" : "rank";
  chart.series = {
      {"compute", activity_colour(static_cast<int>(chakra::TimelineActivity::Kernel))},
      {"communication and memory only", activity_colour(static_cast<int>(chakra::TimelineActivity::Communication))},
      {"idle", IM_COL32(90, 94, 104, 255)}};
  chart.format = [unit](double v) { return format_duration(v, unit); };
  for (size_t i = 0; i < per.size(); ++i) {
    chart.categories.push_back(labels[i]);
    chart.values.insert(chart.values.end(),
                        {static_cast<double>(per[i]->compute), static_cast<double>(per[i]->non_compute),
                         static_cast<double>(per[i]->idle)});
  }
  draw_column_chart("temporal", chart, 140, app.platform);

  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
  const float table_h = std::min(ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(per.size() + 2), 180.0f);
  if (ImGui::BeginTable("breakdown", 9, flags, ImVec2(0, table_h))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    for (const char* h : {run ? "NPU" : "rank", "GPU span", "idle", "compute", "non-compute", "comm overlapped",
                          "exposed comm", "launch delay (median)", "GPU ops"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < per.size(); ++i) {
      NumberFont numbers(app.platform);  // pushed and popped inside the table's own window
      const chakra::GpuAnalysis& g = *per[i];
      const chakra::LaunchSummary launches = chakra::summarize_launches(g);
      ImGui::TableNextRow();
      const std::string cells[] = {labels[i],
                                   us(g.span),
                                   us(g.idle) + " " + share(g.idle, g.span),
                                   us(g.compute) + " " + share(g.compute, g.span),
                                   us(g.non_compute) + " " + share(g.non_compute, g.span),
                                   share(g.comm_overlapped, g.communication),
                                   us(g.exposed_communication()),
                                   launches.launches ? us(launches.median) : "-",
                                   std::to_string(g.ops)};
      for (const std::string& c : cells) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.c_str());
      }
    }
    ImGui::EndTable();
  }

  // Time by kernel kind over all ranks, and the stragglers, side by side.
  uint64_t by_kinds[1 << chakra::kGpuKinds] = {}, all = 0;
  for (const chakra::GpuAnalysis* g : per)
    for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set)
      by_kinds[set] += g->by_kinds[set], all += g->by_kinds[set];
  const float half = ImGui::GetContentRegionAvail().x / 2 - 8;
  ImGui::BeginChild("kinds", ImVec2(half, 150));
  ImGui::TextUnformatted(run ? "Time by kind, all NPUs" : "Time by kernel kind, all ranks");
  if (ImGui::BeginTable("kind_table", 3, flags)) {
    for (const char* h : {"kinds running", "time", "share"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set) {
      if (!by_kinds[set]) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(chakra::gpu_kinds_label(set).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(us(by_kinds[set]).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(share(by_kinds[set], all).c_str());
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("stragglers", ImVec2(0, 150));
  if (!stragglers || per.size() < 2 || stragglers->instances.empty()) {
    ImGui::TextDisabled(run ? "Stragglers: from measured times only."
                            : "Stragglers: open two or more ranks with collectives.");
  } else {
    ImGui::Text("Stragglers: %zu collective instances (arrival = kernel start)", stragglers->instances.size());
    if (ImGui::BeginTable("straggler_table", 4, flags)) {
      for (const char* h : {"rank", "arrived last", "made others wait", "waited"}) ImGui::TableSetupColumn(h);
      ImGui::TableHeadersRow();
      for (const auto& r : stragglers->ranks) {
        NumberFont numbers(app.platform);  // pushed and popped inside the table's own window
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(labels[r.rank].c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(r.last));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(us(r.caused).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(us(r.waited).c_str());
      }
      ImGui::EndTable();
    }
  }
  ImGui::EndChild();

  // The selected rank's kernels by time.
  const auto& ranks = app.workspace.ranks();
  const size_t i = run ? std::min<size_t>(app.rank, per.size() - 1)
                       : static_cast<size_t>(std::find_if(ranks.begin(), ranks.end(),
                                                          [&](const auto& r) { return r->rank == app.rank; }) -
                                             ranks.begin());
  if (i >= per.size()) return;
  draw_kernel_names(*per[i], (run ? "NPU " : "Rank ") + labels[i], unit);
}
// One rank's (or NPU's) kernels by total time; a click finds them on the timeline of the same source.
void AnalysisView::draw_kernel_names(const chakra::GpuAnalysis& g, const std::string& label, const char* unit) {
  auto us = [&](uint64_t v) { return format_duration(static_cast<double>(v), unit); };
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
  ImGui::Text("%s: %zu names by time (click one to find it on the timeline)", label.c_str(), g.names.size());
  if (ImGui::BeginTable("names", 8, flags | ImGuiTableFlags_ScrollX, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"total", "count", "mean", "min", "max", "stddev", "kind", "name"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(g.names.size()));
    while (clipper.Step())
      for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
        const auto& n = g.names[static_cast<size_t>(k)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        {
          NumberFont numbers(app.platform);
          ImGui::TextUnformatted(us(n.sum).c_str());
          ImGui::TableNextColumn();
          ImGui::Text("%llu", static_cast<unsigned long long>(n.count));
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(format_duration(n.mean, unit).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(us(n.min).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(us(n.max).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(format_duration(n.stddev, unit).c_str());
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(chakra::gpu_kind_name(n.kind));
        ImGui::TableNextColumn();
        if (selectable_row(n.name, k)) app.command("find " + std::to_string(source_) + " " + n.name);
      }
    ImGui::EndTable();
  }
}

// ---- host stalls ------------------------------------------------------------------------------

// Shown above the breakdown, so that the stalls are seen before any "CPU-bound" reading of it.
void AnalysisView::draw_host_stalls(const std::vector<std::string>& labels) {
  const auto& per = figures().stalls;
  size_t count = 0;
  uint64_t total = 0;
  for (const auto& stalls : per)
    for (const chakra::HostStallEntry& e : stalls) ++count, total += e.micros;
  if (count == 0) return;
  const std::string header = std::to_string(count) + " host stalls, " +
                             format_duration(static_cast<double>(total), "us") +
                             " of host time: host ops far longer than their kind takes (waits, or CPU work)###stalls";
  if (!ImGui::CollapsingHeader(header.c_str())) return;
  ImGui::TextWrapped(
      "Each is classed by what the trace shows (core/docs/pytorch-replay.md); a simulation replays them as CPU "
      "time unless its stall mode is 'wait'. Hover a row for the evidence.");
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
  const float height = std::min(ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(count + 2), 200.0f);
  if (!ImGui::BeginTable("host_stalls", 5, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"rank", "stall", "class", "start", "op"}) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  int row = 0;
  for (size_t r = 0; r < per.size(); ++r)
    for (const chakra::HostStallEntry& e : per[r]) {
      const chakra::Trace& t = app.workspace.ranks()[r]->trace;
      ImGui::TableNextRow();
      text_cells({labels[r], format_duration(static_cast<double>(e.micros), "us"),
                  std::string(chakra::stall_class_name(e.cls)), std::to_string(t.start_time_micros(e.node))});
      ImGui::TableNextColumn();
      const std::string name(t.name(e.node));
      if (selectable_row(name.empty() ? "(unnamed)" : name, 100000 + row++)) {
        app.rank = app.workspace.ranks()[r]->rank;
        app.selected = e.node;
        app.command("find 0 " + name);
      }
      if (ImGui::IsItemHovered() && !e.evidence.empty()) ImGui::SetTooltip("%s", std::string(e.evidence).c_str());
    }
  ImGui::EndTable();
}

// ---- critical path ---------------------------------------------------------------------------

void AnalysisView::draw_critical_path(int source, const std::vector<std::string>& labels, const char* unit) {
  const CriticalPathData& d = critical_path_of(source);
  const chakra::CrossRankPath& p = d.path;
  if (p.steps.empty()) {
    ImGui::TextWrapped(source > 0 ? "This run recorded no spans."
                                  : "No node of these traces has a recorded time: the critical path "
                                    "needs measured start times, or a simulation run as the source.");
    return;
  }
  auto t = [&](uint64_t v) { return format_duration(static_cast<double>(v), unit); };
  ImGui::Text("Step %s (first start to last end over all ranks): %zu steps on the critical path%s", t(p.step()).c_str(),
              p.steps.size(), p.complete ? "" : " (the walk stopped early: inconsistent times)");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "What the step's end waited for, back to its start: a dependency, the previous op of its stream or thread, "
      "a collective's last rank, the GPU work a host call waited for. Click a step to find it on the timeline.");
  ImGui::PopStyleColor();

  // Time on the path per rank, by kind.
  static const chakra::PathKind kinds[] = {chakra::PathKind::Compute, chakra::PathKind::Communication,
                                           chakra::PathKind::Memory, chakra::PathKind::Cpu, chakra::PathKind::Waiting};
  auto colour = [](chakra::PathKind k) {
    switch (k) {
      case chakra::PathKind::Compute: return activity_colour(static_cast<int>(chakra::TimelineActivity::Kernel));
      case chakra::PathKind::Communication:
        return activity_colour(static_cast<int>(chakra::TimelineActivity::Communication));
      case chakra::PathKind::Memory: return activity_colour(static_cast<int>(chakra::TimelineActivity::Copy));
      case chakra::PathKind::Cpu: return activity_colour(static_cast<int>(chakra::TimelineActivity::CpuOp));
      case chakra::PathKind::Waiting: break;
    }
    return IM_COL32(90, 94, 104, 255);
  };
  ColumnChart chart;
  chart.title = "Critical path time per " + std::string(source > 0 ? "NPU" : "rank");
  chart.category_name = source > 0 ? "NPU" : "rank";
  for (chakra::PathKind k : kinds) chart.series.push_back({chakra::path_kind_name(k), colour(k)});
  chart.format = [unit](double v) { return format_duration(v, unit); };
  std::vector<double> per_rank(labels.size() * std::size(kinds), 0.0);
  for (const auto& s : p.steps)
    if (s.rank < labels.size())
      per_rank[s.rank * std::size(kinds) + static_cast<size_t>(s.kind)] += static_cast<double>(s.duration);
  chart.categories = labels;
  chart.values = per_rank;
  draw_column_chart("critical_path", chart, 110, app.platform, app.take_save_request(chart.title));
  std::string kinds_line = "On the path:";
  for (chakra::PathKind k : kinds)
    if (uint64_t v = p.by_kind[static_cast<int>(k)])
      kinds_line +=
          std::string("  ") + chakra::path_kind_name(k) + " " + t(v) + " (" + chakra::format_share(v, p.step()) + ")";
  ImGui::TextUnformatted(kinds_line.c_str());

  // What-if along the path; for a run, the exact answer is one simulation away.
  static char name_part[96] = "";
  static float speedup = 2.0f;
  ImGui::SetNextItemWidth(220);
  ImGui::InputTextWithHint("##whatif_name", "op name contains...", name_part, sizeof name_part);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  ImGui::DragFloat("times faster##whatif", &speedup, 0.05f, 1.0f, 100.0f, "%.2fx");
  if (name_part[0]) {
    const uint64_t step = chakra::path_step_if_faster(p, d.times, name_part, speedup);
    ImGui::SameLine();
    ImGui::Text("step %s -> %s (%s shorter) along this path", t(p.step()).c_str(), t(step).c_str(),
                chakra::format_share(p.step() - step, p.step()).c_str());
    if (SimRun* run = source > 0 ? app.runs.by_id(source) : nullptr) {
      ImGui::SameLine();
      if (ImGui::Button("Simulate it")) {
        SimSettings what_if = run->settings;
        what_if.faster_name = name_part;
        what_if.faster_by = speedup;
        app.runs.start(what_if);
      }
    } else {
      ImGui::SameLine();
      ImGui::TextDisabled("(at most: other paths may become critical; simulate for the exact step)");
    }
  }

  // The steps, longest first (what to look at) or in time order (the chain itself).
  static bool time_order = false;
  ImGui::Checkbox("in time order", &time_order);
  ImGui::SameLine();
  ImGui::TextDisabled(time_order ? "(the chain from the step's start to its end)" : "(longest first)");
  std::vector<uint32_t>& order = path_order_;
  if (order.size() != p.steps.size() || path_order_for_ != &p || path_time_order_ != time_order) {
    order.resize(p.steps.size());
    for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    if (!time_order)
      std::stable_sort(order.begin(), order.end(),
                       [&](uint32_t x, uint32_t y) { return p.steps[x].duration > p.steps[y].duration; });
    path_order_for_ = &p;
    path_time_order_ = time_order;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX;
  if (ImGui::BeginTable("path_steps", 7, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {source > 0 ? "NPU" : "rank", "start", "duration", "share", "kind", "reached by", "name"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(p.steps.size()));
    static const char* via_names[] = {"step boundary", "dependency", "stream/thread order", "last peer", "host sync"};
    while (clipper.Step())
      for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
        const auto& st = p.steps[order[static_cast<size_t>(k)]];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(st.rank < labels.size() ? labels[st.rank].c_str() : "?");
        {
          NumberFont numbers(app.platform);
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(t(st.start - p.begin).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(t(st.duration).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(chakra::format_share(st.duration, p.step()).c_str());
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(chakra::path_kind_name(st.kind));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(via_names[static_cast<int>(st.via)]);
        ImGui::TableNextColumn();
        if (st.node == UINT32_MAX) {
          ImGui::TextDisabled("(waiting)");
          continue;
        }
        const chakra::Trace& trace = *d.times[st.rank].trace;
        const std::string name(trace.name(st.node));
        std::string shown = name.empty() ? "(unnamed node " + std::to_string(trace.id(st.node)) + ")" : name;
        if (const auto stall = chakra::stall_class_of(trace, st.node))  // may be a wait, not CPU work
          shown += "  [host stall: " + std::string(chakra::stall_class_name(*stall)) + "]";
        if (selectable_row(shown, k)) {
          app.rank = app.workspace.ranks()[st.rank]->rank;
          app.selected = st.node;
          app.command("find " + std::to_string(source) + " " + name);
        }
      }
    ImGui::EndTable();
  }
}

// ---- collectives by type and size ------------------------------------------------------------

void AnalysisView::draw_collectives(SimRun* run) {
  const std::vector<const chakra::Trace*> traces = app.workspace.traces();
  CollectiveBuckets& cached = run ? run->collectives : figures().collectives;
  if (!cached) {  // made once per source: a run's takes a pass over its spans per NPU
    std::vector<std::vector<uint64_t>> micros;
    if (run)
      for (uint32_t npu = 0; npu < traces.size(); ++npu)
        micros.push_back(chakra::simulated_micros(*traces[npu], run->result.spans, npu));
    cached = chakra::collective_buckets(traces, micros);
  }
  const std::string title = "Bus bandwidth by collective and size";
  draw_collective_buckets(*cached, static_cast<uint32_t>(traces.size()), run != nullptr, title, app.platform,
                          app.take_save_request(title));
}

// ---- two sources compared ----------------------------------------------------------------------

void AnalysisView::draw_comparison(int source, const std::vector<std::string>& labels) {
  ImGui::SetNextItemWidth(280);
  const std::string none = "(choose a source)";
  auto name_of = [&](int id) {
    if (id < 0) return none;
    const SimRun* r = id > 0 ? app.runs.by_id(id) : nullptr;
    return source_name(id, r ? r->label : "");
  };
  if (ImGui::BeginCombo("compared with##analysis", name_of(compare_).c_str())) {
    if (source != 0 && ImGui::Selectable(name_of(0).c_str(), compare_ == 0)) compare_ = 0;
    for (const auto& r : app.runs.all())
      if (r->id != source && ImGui::Selectable(name_of(r->id).c_str(), compare_ == r->id)) compare_ = r->id;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::TextDisabled("Per rank: the GPU span and kernel times of the source (A) against this one (B).");
  const char* unit_a = "us";
  const char* unit_b = "us";
  const std::vector<const chakra::GpuAnalysis*> a = analyses_of(source, &unit_a);
  const std::vector<const chakra::GpuAnalysis*> b =
      compare_ >= 0 && compare_ != source ? analyses_of(compare_, &unit_b) : std::vector<const chakra::GpuAnalysis*>{};
  if (b.empty()) {
    ImGui::TextWrapped(
        "Pick a second source: the measured times or a simulation run (run one in the Simulation view). "
        "Comparing a run with the measured times shows what the model changed, kernel by kernel.");
    return;
  }
  // A common unit: ns when either side is a run.
  const bool ns = std::string(unit_a) == "ns" || std::string(unit_b) == "ns";
  const uint64_t scale_a = ns && std::string(unit_a) == "us" ? 1000 : 1,
                 scale_b = ns && std::string(unit_b) == "us" ? 1000 : 1;
  const char* unit = ns ? "ns" : "us";
  const size_t n = std::min(a.size(), b.size());
  if (comparison_.a != source || comparison_.b != compare_ || comparison_.diffs.size() != n) {
    comparison_ = {source, compare_, {}};
    for (size_t i = 0; i < n; ++i)
      comparison_.diffs.push_back(chakra::diff_gpu_analyses(*a[i], scale_a, *b[i], scale_b));
  }
  const auto& diffs = comparison_.diffs;
  auto t = [&](int64_t v) {
    return (v > 0 ? "+" : v < 0 ? "-" : "") + format_duration(static_cast<double>(v < 0 ? -v : v), unit);
  };
  ColumnChart chart;
  chart.title = "GPU span change per rank (B - A)";
  chart.category_name = "rank";
  chart.series = {{"B - A", IM_COL32(120, 170, 255, 255)}};
  chart.format = [unit](double v) { return (v < 0 ? "-" : "") + format_duration(std::abs(v), unit); };
  for (size_t i = 0; i < n; ++i) {
    chart.categories.push_back(labels[i]);
    chart.values.push_back(static_cast<double>(diffs[i].step_b) - static_cast<double>(diffs[i].step_a));
  }
  draw_column_chart("compare", chart, 90, app.platform, app.take_save_request(chart.title));
  const size_t i = std::min<size_t>(std::find_if(app.workspace.ranks().begin(), app.workspace.ranks().end(),
                                                 [&](const auto& r) { return r->rank == app.rank; }) -
                                        app.workspace.ranks().begin(),
                                    n - 1);
  const chakra::TraceDiff& d = diffs[i];
  auto delta = [&](uint64_t x, uint64_t y) { return t(static_cast<int64_t>(y) - static_cast<int64_t>(x)); };
  ImGui::Text("Rank %s: GPU span %s -> %s (%s); idle %s; compute %s; non-compute %s. %zu of %zu kernel names differ.",
              labels[i].c_str(), format_duration(double(d.step_a), unit).c_str(),
              format_duration(double(d.step_b), unit).c_str(), delta(d.step_a, d.step_b).c_str(),
              delta(d.gpu_a.idle, d.gpu_b.idle).c_str(), delta(d.gpu_a.compute, d.gpu_b.compute).c_str(),
              delta(d.gpu_a.non_compute, d.gpu_b.non_compute).c_str(), d.changed(), d.names.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX;
  if (ImGui::BeginTable("compare_names", 7, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"count A", "count B", "total A", "total B", "change", "change %", "name"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(d.names.size()));
    while (clipper.Step())
      for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
        const auto& e = d.names[static_cast<size_t>(k)];
        ImGui::TableNextRow();
        NumberFont numbers(app.platform);
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(e.count_a));
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(e.count_b));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(double(e.total_a), unit).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(double(e.total_b), unit).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t(e.delta()).c_str());
        ImGui::TableNextColumn();
        if (e.added())
          ImGui::TextUnformatted("new");
        else if (e.removed())
          ImGui::TextUnformatted("gone");
        else
          ImGui::Text("%+.1f%%", e.delta_percent());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(e.name.c_str());
      }
    ImGui::EndTable();
  }
}

void AnalysisView::add_commands(std::vector<Command>& out) {
  out.push_back({"analysis tab breakdown|path|collectives|compare", [this](std::string_view w) {
                   using Tab = AnalysisTab;
                   if (w != "breakdown" && w != "path" && w != "collectives" && w != "compare") return false;
                   tab_ = w == "breakdown"     ? Tab::Breakdown
                          : w == "path"        ? Tab::CriticalPath
                          : w == "collectives" ? Tab::Collectives
                                               : Tab::Compare;
                   tab_requested_ = true;
                   app.show_view(name());
                   return true;
                 }});
  out.push_back({"analysis RUN", [this](std::string_view w) {  // the Analysis view of run RUN (0: the measured times)
                   const std::optional<int> n = command_run_id(w);
                   if (!n || (*n != 0 && !app.runs.by_id(*n))) return false;
                   source_ = *n;
                   app.show_view(name());
                   return true;
                 }});
  out.push_back({"compare RUN", [this](std::string_view w) {  // the second source: a run, 0 the measured times, "none"
                   if (w == "none") return compare_ = -1, true;
                   const std::optional<int> n = command_run_id(w);
                   if (!n || (*n != 0 && !app.runs.by_id(*n))) return false;
                   compare_ = *n;
                   return true;
                 }});
  out.push_back({"export analysis json|csv", [this](std::string_view w) { return export_analysis(w); }});
}

bool AnalysisView::export_analysis(std::string_view format) {
  if (format != "json" && format != "csv") return false;
  if (app.workspace.ranks().empty()) {
    app.note("error: nothing loaded to analyse");
    return false;
  }
  const Figures& a = figures();
  std::vector<chakra::RankDigest> ranks;
  for (size_t i = 0; i < app.workspace.ranks().size(); ++i) {
    const chakra::RankTrace& r = *app.workspace.ranks()[i];
    ranks.push_back(chakra::digest_rank(r.trace, r.rank, r.source, a.ranks[i], a.stalls[i]));
  }
  if (format == "json")
    app.platform.download("analysis.json", chakra::analysis_json(ranks, {}));
  else
    app.platform.download("breakdown.csv", chakra::breakdown_csv(ranks));
  app.note(std::string("exported ") +
           (format == "json" ? "analysis.json (as chakra analyze --json)" : "breakdown.csv (as chakra analyze --csv)"));
  return true;
}

// Per-rank figures, the critical path, the comparison, while they show.
void AnalysisView::write_status(chakra::JsonWriter& w, bool shown) {
  // The per-rank figures of the measured times while it shows (as `chakra analyze --json`), and
  // the source it shows.
  w.key("analysis_source").value_int(source_);
  w.key("analysis").begin_array();
  if (shown && !app.workspace.ranks().empty()) {
    const Figures& a = figures();
    for (size_t i = 0; i < a.ranks.size(); ++i) {
      w.begin_object();
      w.key("rank").value_uint(app.workspace.ranks()[i]->rank);
      chakra::write_breakdown_json(a.ranks[i], w);
      w.end_object();
    }
  }
  w.end_array();
  // The critical path and the comparison of its sources, while their tab shows.
  w.key("critical_path").begin_object();
  if (shown && tab_ == AnalysisTab::CriticalPath && !app.workspace.ranks().empty()) {
    const CriticalPathData& d = critical_path_of(source_);
    std::vector<uint32_t> ids;
    for (const auto& r : app.workspace.ranks()) ids.push_back(r->rank);
    chakra::write_critical_path_json(d.path, d.times, ids, w);
  }
  w.end_object();
  w.key("comparison").begin_array();
  if (shown && tab_ == AnalysisTab::Compare && comparison_.a == source_ && comparison_.b == compare_)
    for (size_t i = 0; i < comparison_.diffs.size(); ++i) {
      const chakra::TraceDiff& d = comparison_.diffs[i];
      w.begin_object();
      w.key("rank").value_uint(app.workspace.ranks()[i]->rank);
      w.key("step_a").value_uint(d.step_a);
      w.key("step_b").value_uint(d.step_b);
      w.key("changed").value_uint(d.changed());
      w.key("names").value_uint(d.names.size());
      w.end_object();
    }
  w.end_array();
  w.key("analysis_compare").value_int(compare_);
}

std::unique_ptr<View> make_analysis_view(AppContext& app) { return std::make_unique<AnalysisView>(app); }

}  // namespace chakra_web
