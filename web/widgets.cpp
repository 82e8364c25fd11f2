#include "widgets.h"

#include <cmath>
#include <cstdio>

#include "chakra/sim/simulate.h"
#include "chakra/viz/timeline_model.h"

namespace chakra_web {

ImU32 node_type_colour(int32_t type, float alpha) {
  static const ImVec4 colours[] = {{0.55f, 0.55f, 0.55f, 1}, {0.45f, 0.62f, 0.85f, 1}, {0.65f, 0.50f, 0.85f, 1},
                                   {0.50f, 0.75f, 0.55f, 1}, {0.90f, 0.62f, 0.30f, 1}, {0.85f, 0.45f, 0.50f, 1},
                                   {0.40f, 0.78f, 0.80f, 1}, {0.90f, 0.40f, 0.70f, 1}};
  ImVec4 c = colours[(type >= 0 && type < 8) ? type : 0];
  c.w = alpha;
  return ImGui::ColorConvertFloat4ToU32(c);
}

ImU32 span_kind_colour(int kind, float alpha) {
  using K = chakra::sim::SpanKind;
  switch (static_cast<K>(kind)) {
    case K::Compute: return node_type_colour(4, alpha);
    case K::Cpu: return node_type_colour(1, alpha);  // blue, as CPU ops in measured timelines
    case K::Collective: return node_type_colour(7, alpha);
    case K::Send: return node_type_colour(5, alpha);
    case K::Recv: return node_type_colour(6, alpha);
    case K::Memory: return node_type_colour(1, alpha);
    default: return node_type_colour(0, alpha);
  }
}

ImU32 activity_colour(int kind, float alpha) {
  using A = chakra::TimelineActivity;
  switch (static_cast<A>(kind)) {
    case A::CpuOp: return node_type_colour(1, alpha);
    case A::Kernel: return node_type_colour(4, alpha);  // orange: compute, as in simulated timelines
    case A::Copy: return node_type_colour(3, alpha);
    case A::Communication: return node_type_colour(7, alpha);
    default: return node_type_colour(0, alpha);
  }
}

void legend_item(ImU32 colour, const std::string& label, float swatch) {
  ImGui::PushID(label.c_str());
  ImGui::ColorButton("##swatch", ImGui::ColorConvertU32ToFloat4(colour), ImGuiColorEditFlags_NoTooltip,
                     ImVec2(swatch, swatch));
  ImGui::PopID();
  ImGui::SameLine(0, 4);
  ImGui::TextUnformatted(label.c_str());
}

std::string format_duration(double v, const std::string& unit) {
  double ns = (unit == "us" ? v * 1e3 : v) + 0.0;  // no "-0 ns"
  if (std::fabs(ns) < 0.5) ns = 0;
  char buf[48];
  const double size = std::fabs(ns);  // the unit by magnitude: times left of the start are negative
  if (size < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (size < 1e6)
    std::snprintf(buf, sizeof buf, "%.3g \u00b5s", ns / 1e3);
  else if (size < 1e9)
    std::snprintf(buf, sizeof buf, "%.4g ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.4g s", ns / 1e9);
  return buf;
}

bool selectable_row(const std::string& text, int id, bool selected) {
  const float x = ImGui::GetCursorPosX();
  ImGui::PushID(id);
  const bool clicked = ImGui::Selectable("##row", selected, ImGuiSelectableFlags_SpanAllColumns);
  ImGui::PopID();
  ImGui::SameLine();
  ImGui::SetCursorPosX(x);
  ImGui::TextUnformatted(text.c_str());
  return clicked;
}

void text_cells(std::initializer_list<std::string> cells) {
  for (const std::string& c : cells) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(c.c_str());
  }
}

}  // namespace chakra_web
