#include "run_charts.h"

#include <cstdio>

#include <imgui.h>

#include "chakra/analysis/sim_report.h"
#include "chakra/support/text.h"
#include "widgets.h"

namespace chakra_web {

namespace sim = chakra::sim;

void draw_network_load(const SimRun& run, const Platform& platform) {
  const sim::SimResult& r = run.result;
  if (r.dimensions.empty()) return;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("dimensions", 5, flags)) {
    for (const char* h : {"dimension", "messages", "bytes", "busy (bytes / bandwidth)", "busy per NPU"}) ImGui::TableSetupColumn(h);
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
        ImGui::Text("%s -> %s (dim %u)", chakra::device_name(r, l.from).c_str(), chakra::device_name(r, l.to).c_str(), l.dim);
        NumberFont numbers(platform);
        text_cells({std::to_string(l.messages), chakra::format_bytes(l.bytes), format_duration(static_cast<double>(l.busy), "ns"),
                    share_text(l.busy, r.end()), format_duration(static_cast<double>(l.queued), "ns")});
      }
    ImGui::EndTable();
  }
}

}  // namespace chakra_web
