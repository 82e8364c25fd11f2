// The Analysis view: HolisticTraceAnalysis's analyses of the measured GPU work of the open ranks
// (chakra/analysis/gpu_analysis.h, as `chakra analyze`): per-rank temporal breakdown as a chart
// and a table, time by kernel kind, the rank's top kernels (a click finds them on the timeline)
// and stragglers across ranks.
#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "app_state.h"
#include "chart.h"

namespace chakra_web {

const App::Impl::AnalysisCache& App::Impl::analysis() {
  if (!analysis_cache) {
    analysis_cache.emplace();
    std::vector<const chakra::Trace*> traces;
    for (const auto& r : workspace.ranks()) {
      analysis_cache->ranks.push_back(chakra::analyze_gpu(r->trace));
      traces.push_back(&r->trace);
    }
    analysis_cache->stragglers = chakra::find_stragglers(traces);
  }
  return *analysis_cache;
}

void App::Impl::draw_analysis() {
  if (workspace.ranks().empty()) {
    ImGui::TextDisabled("No trace loaded.");
    return;
  }
  // Source: the measured times, or a simulation run's spans (the same analyses of a what-if).
  SimRun* run = analysis_source > 0 ? run_by_id(analysis_source) : nullptr;
  if (analysis_source > 0 && !run) analysis_source = 0;
  const std::string current = run ? "simulation run " + std::to_string(run->id) : "measured times (the traces)";
  ImGui::SetNextItemWidth(280);
  if (ImGui::BeginCombo("source##analysis", current.c_str())) {
    if (ImGui::Selectable("measured times (the traces)", analysis_source == 0)) analysis_source = 0;
    for (const auto& r : runs)
      if (ImGui::Selectable(("simulation run " + std::to_string(r->id) + ": " + r->label).c_str(), analysis_source == r->id))
        analysis_source = r->id;
    ImGui::EndCombo();
  }
  std::vector<const chakra::GpuAnalysis*> per;
  std::vector<std::string> labels;
  const chakra::Stragglers* stragglers = nullptr;
  const char* unit = "us";
  if (run) {
    if (run->analysis.empty())
      for (uint32_t npu = 0; npu < run->result.npus.size(); ++npu) run->analysis.push_back(chakra::analyze_spans(run->result.spans, npu));
    for (uint32_t npu = 0; npu < run->analysis.size(); ++npu) {
      per.push_back(&run->analysis[npu]);
      labels.push_back(std::to_string(npu));
    }
    unit = "ns";
  } else {
    const AnalysisCache& a = analysis();
    for (size_t i = 0; i < a.ranks.size(); ++i) {
      per.push_back(&a.ranks[i]);
      labels.push_back(std::to_string(workspace.ranks()[i]->rank));
    }
    stragglers = &a.stragglers;
  }
  if (std::all_of(per.begin(), per.end(), [](const chakra::GpuAnalysis* g) { return g->ops == 0; })) {
    ImGui::TextWrapped(run ? "This run recorded no compute or communication spans."
                           : "No measured GPU work in these traces. The analyses read GPU ops with start times: open "
                             "Kineto traces, host ET + Kineto pairs, or .et traces converted with their times; or pick "
                             "a simulation run above.");
    return;
  }
  auto us = [&](uint64_t v) { return format_duration(static_cast<double>(v), unit); };
  auto share = [](uint64_t part, uint64_t whole) {
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
    return std::string(text);
  };
  ImGui::SameLine();
  ImGui::TextDisabled(run ? "The run's spans, as HolisticTraceAnalysis would see its GPU work."
                          : "As HolisticTraceAnalysis defines them, over each rank's GPU span.");

  // Temporal breakdown: a chart and its table.
  ColumnChart chart;
  chart.title = run ? "GPU time per NPU" : "GPU time per rank";
  chart.category_name = run ? "NPU" : "rank";
  chart.series = {{"compute", activity_colour(static_cast<int>(chakra::TimelineActivity::Kernel))},
                  {"communication and memory only", activity_colour(static_cast<int>(chakra::TimelineActivity::Communication))},
                  {"idle", IM_COL32(90, 94, 104, 255)}};
  chart.format = [unit](double v) { return format_duration(v, unit); };
  for (size_t i = 0; i < per.size(); ++i) {
    chart.categories.push_back(labels[i]);
    chart.values.insert(chart.values.end(), {static_cast<double>(per[i]->compute), static_cast<double>(per[i]->non_compute),
                                             static_cast<double>(per[i]->idle)});
  }
  draw_column_chart("temporal", chart, 140, platform);

  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
  const float table_h = std::min(ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(per.size() + 2), 180.0f);
  if (ImGui::BeginTable("breakdown", 8, flags, ImVec2(0, table_h))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    for (const char* h : {run ? "NPU" : "rank", "GPU span", "idle", "compute", "non-compute", "comm overlapped", "launch delay (median)", "GPU ops"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < per.size(); ++i) {
      NumberFont numbers(platform);  // pushed and popped inside the table's own window
      const chakra::GpuAnalysis& g = *per[i];
      const chakra::LaunchSummary launches = chakra::summarize_launches(g);
      ImGui::TableNextRow();
      const std::string cells[] = {labels[i], us(g.span), us(g.idle) + " " + share(g.idle, g.span),
                                   us(g.compute) + " " + share(g.compute, g.span), us(g.non_compute) + " " + share(g.non_compute, g.span),
                                   share(g.comm_overlapped, g.communication), launches.launches ? us(launches.median) : "-",
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
    for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set) by_kinds[set] += g->by_kinds[set], all += g->by_kinds[set];
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
    ImGui::TextDisabled(run ? "Stragglers: from measured times only." : "Stragglers: open two or more ranks with collectives.");
  } else {
    ImGui::Text("Stragglers: %zu collective instances (arrival = kernel start)", stragglers->instances.size());
    if (ImGui::BeginTable("straggler_table", 4, flags)) {
      for (const char* h : {"rank", "arrived last", "made others wait", "waited"}) ImGui::TableSetupColumn(h);
      ImGui::TableHeadersRow();
      for (const auto& r : stragglers->ranks) {
        NumberFont numbers(platform);  // pushed and popped inside the table's own window
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

  // The selected rank's kernels by time; a click finds them on the timeline of the same source.
  const auto& ranks = workspace.ranks();
  const size_t i = run ? std::min<size_t>(rank, per.size() - 1)
                       : static_cast<size_t>(std::find_if(ranks.begin(), ranks.end(), [&](const auto& r) { return r->rank == rank; }) - ranks.begin());
  if (i >= per.size()) return;
  const chakra::GpuAnalysis& g = *per[i];
  ImGui::Text("%s %s: %zu names by time (click one to find it on the timeline)", run ? "NPU" : "Rank", labels[i].c_str(), g.names.size());
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
          NumberFont numbers(platform);
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
        if (ImGui::Selectable((n.name + "##name" + std::to_string(k)).c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
          timeline.source = analysis_source;
          timeline.query = n.name;
          view = View::Timeline;
          view_changed = true;
        }
      }
    ImGui::EndTable();
  }
}

}  // namespace chakra_web
