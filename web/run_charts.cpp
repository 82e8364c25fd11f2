#include "run_charts.h"

#include <cstdio>

#include <imgui.h>

#include "chakra/analysis/sim_report.h"
#include "chakra/support/text.h"
#include "chart.h"
#include "widgets.h"

namespace chakra_web {

namespace sim = chakra::sim;

namespace {
std::string gbps(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB/s", v);
  return text;
}
}  // namespace

void draw_network_load(const SimRun& run, const Platform& platform) {
  const sim::SimResult& r = run.result;
  if (r.dimensions.empty()) return;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("dimensions", 5, flags)) {
    for (const char* h : {"dimension", "messages", "bytes", "busy (bytes / bandwidth)", "busy per NPU"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (size_t dim = 0; dim < r.dimensions.size(); ++dim) {
      const sim::DimensionLoad& l = r.dimensions[dim];
      ImGui::TableNextRow();
      NumberFont numbers(platform);
      char busy[32];
      std::snprintf(busy, sizeof busy, "%.2f%%", 100.0 * chakra::dimension_utilisation(r, dim));
      text_cells({std::to_string(dim), std::to_string(l.messages), chakra::format_bytes(l.bytes),
                  format_duration(static_cast<double>(l.busy), "ns"), busy});
    }
    ImGui::EndTable();
  }
  if (r.links.empty()) {
    ImGui::TextDisabled("Per link: run with the congestion-aware network.");
    return;
  }
  ImGui::Text("Busiest links (%zu used):", r.links.size());
  if (ImGui::BeginTable("links", 6, flags | ImGuiTableFlags_ScrollY, ImVec2(0, 180))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"link", "messages", "bytes", "busy", "of the run", "queued"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(r.links.size()));
    while (clipper.Step())
      for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
        const sim::LinkLoad& l = r.links[static_cast<size_t>(k)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%s -> %s (dim %u)", chakra::device_name(r, l.from).c_str(), chakra::device_name(r, l.to).c_str(),
                    l.dim);
        NumberFont numbers(platform);
        text_cells({std::to_string(l.messages), chakra::format_bytes(l.bytes),
                    format_duration(static_cast<double>(l.busy), "ns"), chakra::format_share(l.busy, r.end()),
                    format_duration(static_cast<double>(l.queued), "ns")});
      }
    ImGui::EndTable();
  }
}

void draw_collective_buckets(const std::vector<chakra::CollectiveBucket>& buckets, uint32_t n, bool simulated,
                             const std::string& title, Platform& platform, bool save) {
  if (buckets.empty()) {
    ImGui::TextWrapped(
        "No collective with a size and a duration: collectives need comm_type and comm_size (a Kineto trace alone has "
        "no sizes; open it with its host ET) and a %s.",
        simulated ? "span in the run" : "recorded duration");
    return;
  }
  ImGui::TextWrapped(
      "Collectives of all %s by type and size (from comm_size): bandwidths as nccl-tests reports them, from %s "
      "(algorithm bandwidth = bytes / time; bus bandwidth scales it by what each of the %u ranks moves).",
      simulated ? "NPUs" : "ranks",
      simulated ? "the simulated durations" : "the measured kernel durations, which include waiting for the last rank",
      n);
  auto label = [](const chakra::CollectiveBucket& b) {
    return std::string(chakra::comm_type_name(b.comm_type)) + " " + chakra::format_bytes(uint64_t{1} << b.size_log2) +
           "+";
  };
  ColumnChart chart;
  chart.title = title;
  chart.category_name = "collective, size from";
  chart.series = {{"bus bandwidth", activity_colour(static_cast<int>(chakra::TimelineActivity::Communication))}};
  chart.format = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g GB/s", v);
    return std::string(text);
  };
  for (const auto& b : buckets) {
    chart.categories.push_back(label(b));
    chart.values.push_back(b.bus_gbps(n));
  }
  draw_column_chart("collectives", chart, 130, platform, save);
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
  if (ImGui::BeginTable("collective_table", 7, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"collective", "size from", "count", "bytes", "time", "algorithm bandwidth", "bus bandwidth"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const auto& b : buckets) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(std::string(chakra::comm_type_name(b.comm_type)).c_str());
      NumberFont numbers(platform);
      text_cells({chakra::format_bytes(uint64_t{1} << b.size_log2), std::to_string(b.count),
                  chakra::format_bytes(b.bytes), format_duration(static_cast<double>(b.micros), "us"),
                  gbps(b.algorithm_gbps()), gbps(b.bus_gbps(n))});
    }
    ImGui::EndTable();
  }
}

}  // namespace chakra_web
