// Graph view: the layered DAG of the selected rank from chakra::layout_graph (long chains
// collapsed), drawn with culling and level of detail so only what is on screen costs anything.
#include <algorithm>
#include <cmath>

#include <imgui.h>

#include "app_state.h"
#include "chakra/trace/schema.h"

namespace chakra_web {

namespace {
constexpr size_t kMaxEdgesDrawn = 30000;
constexpr size_t kMaxHighlight = 200000;
}  // namespace

void App::Impl::draw_graph() {
  RankCache* c = cache();
  if (!c) {
    ImGui::TextDisabled("No trace loaded.");
    return;
  }
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("collapse chains of", &collapse_chains, 0, 64);
  ImGui::SameLine();
  ImGui::Checkbox("ctrl edges", &ctrl_edges);
  ImGui::SameLine();
  ImGui::Checkbox("critical path", &show_critical);
  ImGui::SameLine();
  if (ImGui::Button("Fit")) graph_fit = true;
  prepare_graph(*c);
  draw_graph_legend(*c);
  draw_graph_canvas(*c);
}

// The layout for the settings, the critical path when shown, and what the selection reaches.
void App::Impl::prepare_graph(RankCache& c) {
  const chakra::Trace& t = c.rank->trace;
  if (!c.layout_ready || c.layout_collapse != static_cast<uint32_t>(collapse_chains) || c.layout_ctrl != ctrl_edges) {
    std::vector<uint32_t> all(t.size());
    for (uint32_t n = 0; n < t.size(); ++n) all[n] = n;
    chakra::SvgOptions o;
    o.collapse_chains = static_cast<uint32_t>(collapse_chains);
    o.ctrl_edges = ctrl_edges;
    c.layout = chakra::layout_graph(t, all, o);
    c.layout_index = chakra::index_layout(c.layout);
    c.layout_collapse = o.collapse_chains;
    c.layout_ctrl = ctrl_edges;
    c.layout_ready = true;
    graph_fit = true;
  }
  if (show_critical && !c.critical) c.critical = chakra::critical_path(t, c.deps);
  // Ancestors / descendants of the selection, per node.
  if (selected != highlight_for) {
    highlight.assign(t.size(), 0);
    if (selected && *selected < t.size()) {
      for (uint32_t n : chakra::reachable(c.deps, *selected, kMaxHighlight)) highlight[n] = 1;
      for (uint32_t n : chakra::reachable(c.dependants, *selected, kMaxHighlight)) highlight[n] = 2;
    }
    highlight_for = selected;
  }
}

// Counts, the legend of node types and outlines, and the critical path's list when shown.
void App::Impl::draw_graph_legend(RankCache& c) {
  const chakra::Trace& t = c.rank->trace;
  const chakra::GraphLayout& L = c.layout;
  ImGui::SameLine();
  ImGui::TextDisabled("%zu boxes, %zu edges, %u layers%s", L.boxes.size(), L.edges.size(), L.layers,
                      L.cycle_edges ? " (has cycles)" : "");
  // The legend: the node types drawn, and what the outlines mean.
  {
    std::vector<bool> present(chakra::kNodeTypeCount, false);
    for (const auto& b : L.boxes)
      if (t.type(b.first) >= 0 && t.type(b.first) < chakra::kNodeTypeCount) present[t.type(b.first)] = true;
    bool first = true;
    for (int32_t k = 0; k < chakra::kNodeTypeCount; ++k) {
      if (!present[k]) continue;
      if (!first) ImGui::SameLine(0, 10);
      first = false;
      legend_item(node_type_colour(k), std::string(chakra::node_type_name(k)));
    }
    ImGui::SameLine(0, 16);
    ImGui::TextDisabled("outlines: selected (white), its dependencies (blue), dependants (green)%s",
                        show_critical ? ", critical path (red)" : "");
  }
  if (show_critical && c.critical) {
    ImGui::Text("critical path: %zu nodes, %s", c.critical->nodes.size(),
                format_duration(static_cast<double>(c.critical->duration_micros), "us").c_str());
    ImGui::BeginChild("critical list", ImVec2(360, 0), true);
    draw_critical_path_list(t, *c.critical);
    ImGui::EndChild();
    ImGui::SameLine();
  }
}

// The graph itself: fit, follow the selection, zoom and pan, then the boxes and edges on screen.
void App::Impl::draw_graph_canvas(RankCache& c) {
  const chakra::Trace& t = c.rank->trace;
  const chakra::GraphLayout& L = c.layout;
  ImVec2 origin = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  if (size.x < 50 || size.y < 50) return;
  ImGui::InvisibleButton("graph_canvas", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (graph_fit && L.width > 0) {
    graph_zoom = static_cast<float>(std::min(size.x / L.width, size.y / L.height));
    graph_zoom = std::clamp(graph_zoom, 0.002f, 2.0f);
    graph_x = 0;
    graph_y = 0;
    graph_fit = false;
  }
  // A selection made elsewhere (the table, the critical path list, a link) is brought into view,
  // zoomed in far enough to read its label; the view is left alone while the selection stays.
  if (selected != graph_shown) {
    graph_shown = selected;
    if (selected && *selected < L.box_of.size()) {
      const auto& b = L.boxes[L.box_of[*selected]];
      const ImVec2 a(static_cast<float>(b.x) * graph_zoom - graph_x, static_cast<float>(b.y) * graph_zoom - graph_y);
      const bool on_screen = a.x >= 0 && a.y >= 0 && a.x + static_cast<float>(b.w) * graph_zoom <= size.x &&
                             a.y + static_cast<float>(b.h) * graph_zoom <= size.y;
      if (!on_screen || static_cast<float>(b.w) * graph_zoom < 40) {
        graph_zoom = std::max(graph_zoom, std::min(2.0f, 60.0f / std::max(1.0f, static_cast<float>(b.w))));
        graph_x = static_cast<float>(b.x + b.w / 2) * graph_zoom - size.x / 2;
        graph_y = static_cast<float>(b.y + b.h / 2) * graph_zoom - size.y / 2;
      }
    }
  }
  if (hovered && io.MouseWheel != 0) {
    float old = graph_zoom;
    graph_zoom = std::clamp(graph_zoom * std::pow(1.2f, std::clamp(io.MouseWheel, -5.0f, 5.0f)), 0.002f, 8.0f);
    ImVec2 m(io.MousePos.x - origin.x, io.MousePos.y - origin.y);
    graph_x = (graph_x + m.x) * graph_zoom / old - m.x;  // keep the point under the cursor
    graph_y = (graph_y + m.y) * graph_zoom / old - m.y;
  }
  if (ImGui::IsItemActive() && (ImGui::IsMouseDragging(ImGuiMouseButton_Left) || ImGui::IsMouseDragging(ImGuiMouseButton_Right))) {
    graph_x -= io.MouseDelta.x;
    graph_y -= io.MouseDelta.y;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), IM_COL32(24, 26, 31, 255));
  auto to_screen = [&](double x, double y) {
    return ImVec2(origin.x + static_cast<float>(x) * graph_zoom - graph_x, origin.y + static_cast<float>(y) * graph_zoom - graph_y);
  };
  auto visible = [&](const chakra::GraphLayout::Box& b) {
    ImVec2 a = to_screen(b.x, b.y), z = to_screen(b.x + b.w, b.y + b.h);
    return z.x >= origin.x && a.x <= origin.x + size.x && z.y >= origin.y && a.y <= origin.y + size.y;
  };
  std::vector<uint8_t> on_path;
  if (show_critical && c.critical) {
    on_path.assign(L.boxes.size(), 0);
    for (uint32_t n : c.critical->nodes) on_path[L.box_of[n]] = 1;
  }
  auto box_highlight = [&](uint32_t b) -> uint8_t { return highlight.empty() ? 0 : highlight[L.boxes[b].first]; };
  // What the window shows, from the layout's index: the cost follows the boxes on screen.
  std::vector<uint32_t> boxes_shown;
  c.layout_index.boxes_in(L, graph_x / graph_zoom, (graph_x + size.x) / graph_zoom, graph_y / graph_zoom,
                           (graph_y + size.y) / graph_zoom, boxes_shown);
  // Edges with an end on screen: only when they can be seen (zoomed in, or touching the
  // selection), and bounded. Each is drawn from its `from` box, or from its `to` box when `from`
  // is off screen.
  size_t drawn = 0;
  for (uint32_t box : boxes_shown)
    for (uint32_t ei : c.layout_index.edges_of(box)) {
      if (drawn >= kMaxEdgesDrawn) break;
      const chakra::GraphLayout::Edge& e = L.edges[ei];
      const auto& a = L.boxes[e.from];
      const auto& b = L.boxes[e.to];
      if (e.from != box && visible(a)) continue;  // drawn from its `from` box
      bool related = box_highlight(e.from) || box_highlight(e.to) ||
                     (selected && (L.box_of[*selected] == e.from || L.box_of[*selected] == e.to));
      const bool path_edge = !on_path.empty() && on_path[e.from] && on_path[e.to];
      if (graph_zoom < 0.15f && !related && !path_edge) continue;
      ImU32 colour = related     ? IM_COL32(240, 220, 120, 220)
                     : path_edge ? IM_COL32(255, 80, 80, 230)
                     : !on_path.empty() ? IM_COL32(150, 160, 180, 40)  // the path shown: the rest recedes
                     : e.ctrl    ? IM_COL32(120, 120, 140, 90)
                                 : IM_COL32(150, 160, 180, 140);
      dl->AddLine(to_screen(a.x + a.w, a.y + a.h / 2), to_screen(b.x, b.y + b.h / 2), colour);
      ++drawn;
    }
  std::optional<uint32_t> hovered_box;
  for (uint32_t bi : boxes_shown) {
    const auto& b = L.boxes[bi];
    ImVec2 p0 = to_screen(b.x, b.y), p1 = to_screen(b.x + b.w, b.y + b.h);
    if (p1.x - p0.x < 1) p1.x = p0.x + 1;
    uint8_t h = box_highlight(bi);
    float alpha = (!highlight.empty() && selected && h == 0 && L.box_of[*selected] != bi) ? 0.35f : 1.0f;
    dl->AddRectFilled(p0, p1, node_type_colour(t.type(b.first), alpha), p1.x - p0.x > 8 ? 3.0f : 0.0f);
    if (h == 1) dl->AddRect(p0, p1, IM_COL32(100, 170, 255, 255), 0, 0, 2);
    if (h == 2) dl->AddRect(p0, p1, IM_COL32(120, 230, 120, 255), 0, 0, 2);
    if (!on_path.empty() && on_path[bi]) dl->AddRect(p0, p1, IM_COL32(255, 80, 80, 255), 0, 0, 2.5f);
    if (selected && L.box_of[*selected] == bi) dl->AddRect(p0, p1, IM_COL32(255, 255, 255, 255), 0, 0, 3);
    if (p1.x - p0.x > 40 && p1.y - p0.y > 10) {
      std::string label(t.name(b.first));
      if (b.count > 1) label += " (+" + std::to_string(b.count - 1) + ")";
      dl->PushClipRect(p0, p1, true);
      dl->AddText(ImVec2(p0.x + 3, p0.y + 1), IM_COL32(15, 15, 20, 255), label.c_str());
      dl->PopClipRect();
    }
    if (hovered && io.MousePos.x >= p0.x && io.MousePos.x <= p1.x && io.MousePos.y >= p0.y && io.MousePos.y <= p1.y)
      hovered_box = bi;
  }
  dl->PopClipRect();
  if (hovered_box) {
    const auto& b = L.boxes[*hovered_box];
    ImGui::SetTooltip("%llu %s%s", static_cast<unsigned long long>(t.id(b.first)), std::string(t.name(b.first)).c_str(),
                      b.count > 1 ? (" and " + std::to_string(b.count - 1) + " chained nodes").c_str() : "");
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 16) selected = b.first;
  }
}

// The critical path's nodes by how much of it they take: node, duration, share; a click selects
// (and shows) one.
void App::Impl::draw_critical_path_list(const chakra::Trace& t, const chakra::CriticalPath& path) {
  std::vector<uint32_t> order = path.nodes;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return t.duration_micros(a) > t.duration_micros(b); });
  const double total = std::max<double>(1.0, static_cast<double>(path.duration_micros));
  if (!ImGui::BeginTable("critical", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("node", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("duration", ImGuiTableColumnFlags_WidthFixed, 80);
  ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_WidthFixed, 50);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(order.size()));
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const uint32_t n = order[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string label = std::to_string(t.id(n)) + " " + std::string(t.name(n));
      if (selectable_row(label, i, selected == n)) selected = n;
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_duration(static_cast<double>(t.duration_micros(n)), "us").c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", 100.0 * static_cast<double>(t.duration_micros(n)) / total);
    }
  ImGui::EndTable();
}

}  // namespace chakra_web
