// Graph view: the layered DAG of the selected rank from chakra::layout_graph (long chains
// collapsed), drawn with culling and level of detail so only what is on screen costs anything.
#include <algorithm>
#include <cmath>
#include <map>

#include <imgui.h>

#include "app_context.h"
#include "chakra/trace/schema.h"

namespace chakra_web {

namespace {
constexpr size_t kMaxEdgesDrawn = 30000;
constexpr size_t kMaxHighlight = 200000;

// The layout of one rank's graph for the chosen settings, and its critical path when shown.
struct GraphData {
  const chakra::RankTrace* rank = nullptr;
  bool layout_ready = false;
  uint32_t layout_collapse = 0;
  bool layout_ctrl = false;
  chakra::GraphLayout layout;
  chakra::GraphLayoutIndex layout_index;
  std::optional<chakra::CriticalPath> critical;
};

class GraphView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "graph"; }
  const char* title() const override { return "Graph"; }
  void draw() override;
  void write_state(chakra::ShareState& s) const override {
    s["g.collapse"] = std::to_string(collapse_chains_);
    if (ctrl_edges_) s["g.ctrl"] = "1";
    if (show_critical_) s["g.critical"] = "1";
  }
  std::function<void()> read_state(const chakra::ShareState& s) override {
    const int collapse = static_cast<int>(chakra::share_int(s, "g.collapse", 0, 1000000, 8));
    const bool ctrl = s.count("g.ctrl") && s.at("g.ctrl") == "1",
               critical = s.count("g.critical") && s.at("g.critical") == "1";
    return [=, this] {
      collapse_chains_ = collapse;
      ctrl_edges_ = ctrl;
      show_critical_ = critical;
    };
  }
  void ranks_changed() override {
    data_.clear();
    highlight_.clear();
    highlight_for_.reset();
    highlight_rank_ = nullptr;
  }

 private:
  void prepare(const RankCache& rc, GraphData& c);  // the layout, the critical path, what the selection reaches
  void draw_legend(GraphData& c);
  void draw_canvas(GraphData& c);
  void draw_critical_path_list(const chakra::Trace& t, const chakra::CriticalPath& path);

  int collapse_chains_ = 8;
  bool ctrl_edges_ = false;
  bool show_critical_ = false;
  float zoom_ = 1, x_ = 0, y_ = 0;
  bool fit_ = true;
  std::optional<uint32_t> shown_;       // the selection last brought into view
  std::map<uint32_t, GraphData> data_;  // per rank
  std::vector<uint8_t> highlight_;      // per node of the rank: 1 ancestor, 2 descendant
  std::optional<uint32_t> highlight_for_;
  const chakra::RankTrace* highlight_rank_ = nullptr;
};

void GraphView::draw() {
  RankCache* rc = app.cache();
  if (!rc) {
    ImGui::TextDisabled("No trace loaded.");
    return;
  }
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("collapse chains of", &collapse_chains_, 0, 64);
  ImGui::SameLine();
  ImGui::Checkbox("ctrl edges", &ctrl_edges_);
  ImGui::SameLine();
  ImGui::Checkbox("critical path", &show_critical_);
  ImGui::SameLine();
  if (ImGui::Button("Fit")) fit_ = true;
  GraphData& c = data_[app.rank];
  if (c.rank != rc->rank) {
    c = GraphData();
    c.rank = rc->rank;
  }
  prepare(*rc, c);
  draw_legend(c);
  draw_canvas(c);
}

// The layout for the settings, the critical path when shown, and what the selection reaches.
void GraphView::prepare(const RankCache& rc, GraphData& c) {
  const chakra::Trace& t = c.rank->trace;
  if (!c.layout_ready || c.layout_collapse != static_cast<uint32_t>(collapse_chains_) || c.layout_ctrl != ctrl_edges_) {
    std::vector<uint32_t> all(t.size());
    for (uint32_t n = 0; n < t.size(); ++n) all[n] = n;
    chakra::SvgOptions o;
    o.collapse_chains = static_cast<uint32_t>(collapse_chains_);
    o.ctrl_edges = ctrl_edges_;
    c.layout = chakra::layout_graph(t, all, o);
    c.layout_index = chakra::index_layout(c.layout);
    c.layout_collapse = o.collapse_chains;
    c.layout_ctrl = ctrl_edges_;
    c.layout_ready = true;
    fit_ = true;
  }
  if (show_critical_ && !c.critical) c.critical = chakra::critical_path(t, rc.deps);
  // Ancestors / descendants of the selection, per node.
  if (app.selected != highlight_for_ || highlight_rank_ != c.rank) {
    highlight_.assign(t.size(), 0);
    if (app.selected && *app.selected < t.size()) {
      for (uint32_t n : chakra::reachable(rc.deps, *app.selected, kMaxHighlight)) highlight_[n] = 1;
      for (uint32_t n : chakra::reachable(rc.dependants, *app.selected, kMaxHighlight)) highlight_[n] = 2;
    }
    highlight_for_ = app.selected;
    highlight_rank_ = c.rank;
  }
}

// Counts, the legend of node types and outlines, and the critical path's list when shown.
void GraphView::draw_legend(GraphData& c) {
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
                        show_critical_ ? ", critical path (red)" : "");
  }
  if (show_critical_ && c.critical) {
    ImGui::Text("critical path: %zu nodes, %s", c.critical->nodes.size(),
                format_duration(static_cast<double>(c.critical->duration_micros), "us").c_str());
    ImGui::BeginChild("critical list", ImVec2(360, 0), true);
    draw_critical_path_list(t, *c.critical);
    ImGui::EndChild();
    ImGui::SameLine();
  }
}

// The graph itself: fit, follow the selection, zoom and pan, then the boxes and edges on screen.
void GraphView::draw_canvas(GraphData& c) {
  const chakra::Trace& t = c.rank->trace;
  const chakra::GraphLayout& L = c.layout;
  ImVec2 origin = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  if (size.x < 50 || size.y < 50) return;
  ImGui::InvisibleButton("graph_canvas", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (fit_ && L.width > 0) {
    zoom_ = static_cast<float>(std::min(size.x / L.width, size.y / L.height));
    zoom_ = std::clamp(zoom_, 0.002f, 2.0f);
    x_ = 0;
    y_ = 0;
    fit_ = false;
  }
  // A selection made elsewhere (the table, the critical path list, a link) is brought into view,
  // zoomed in far enough to read its label; the view is left alone while the selection stays.
  if (app.selected != shown_) {
    shown_ = app.selected;
    if (app.selected && *app.selected < L.box_of.size()) {
      const auto& b = L.boxes[L.box_of[*app.selected]];
      const ImVec2 a(static_cast<float>(b.x) * zoom_ - x_, static_cast<float>(b.y) * zoom_ - y_);
      const bool on_screen = a.x >= 0 && a.y >= 0 && a.x + static_cast<float>(b.w) * zoom_ <= size.x &&
                             a.y + static_cast<float>(b.h) * zoom_ <= size.y;
      if (!on_screen || static_cast<float>(b.w) * zoom_ < 40) {
        zoom_ = std::max(zoom_, std::min(2.0f, 60.0f / std::max(1.0f, static_cast<float>(b.w))));
        x_ = static_cast<float>(b.x + b.w / 2) * zoom_ - size.x / 2;
        y_ = static_cast<float>(b.y + b.h / 2) * zoom_ - size.y / 2;
      }
    }
  }
  if (hovered && io.MouseWheel != 0) {
    float old = zoom_;
    zoom_ = std::clamp(zoom_ * std::pow(1.2f, std::clamp(io.MouseWheel, -5.0f, 5.0f)), 0.002f, 8.0f);
    ImVec2 m(io.MousePos.x - origin.x, io.MousePos.y - origin.y);
    x_ = (x_ + m.x) * zoom_ / old - m.x;  // keep the point under the cursor
    y_ = (y_ + m.y) * zoom_ / old - m.y;
  }
  if (ImGui::IsItemActive() &&
      (ImGui::IsMouseDragging(ImGuiMouseButton_Left) || ImGui::IsMouseDragging(ImGuiMouseButton_Right))) {
    x_ -= io.MouseDelta.x;
    y_ -= io.MouseDelta.y;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), IM_COL32(24, 26, 31, 255));
  auto to_screen = [&](double x, double y) {
    return ImVec2(origin.x + static_cast<float>(x) * zoom_ - x_, origin.y + static_cast<float>(y) * zoom_ - y_);
  };
  auto visible = [&](const chakra::GraphLayout::Box& b) {
    ImVec2 a = to_screen(b.x, b.y), z = to_screen(b.x + b.w, b.y + b.h);
    return z.x >= origin.x && a.x <= origin.x + size.x && z.y >= origin.y && a.y <= origin.y + size.y;
  };
  std::vector<uint8_t> on_path;
  if (show_critical_ && c.critical) {
    on_path.assign(L.boxes.size(), 0);
    for (uint32_t n : c.critical->nodes) on_path[L.box_of[n]] = 1;
  }
  auto box_highlight = [&](uint32_t b) -> uint8_t { return highlight_.empty() ? 0 : highlight_[L.boxes[b].first]; };
  // What the window shows, from the layout's index: the cost follows the boxes on screen.
  std::vector<uint32_t> boxes_shown;
  c.layout_index.boxes_in(L, x_ / zoom_, (x_ + size.x) / zoom_, y_ / zoom_, (y_ + size.y) / zoom_, boxes_shown);
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
                     (app.selected && (L.box_of[*app.selected] == e.from || L.box_of[*app.selected] == e.to));
      const bool path_edge = !on_path.empty() && on_path[e.from] && on_path[e.to];
      if (zoom_ < 0.15f && !related && !path_edge) continue;
      ImU32 colour = related            ? IM_COL32(240, 220, 120, 220)
                     : path_edge        ? IM_COL32(255, 80, 80, 230)
                     : !on_path.empty() ? IM_COL32(150, 160, 180, 40)  // the path shown: the rest recedes
                     : e.ctrl           ? IM_COL32(120, 120, 140, 90)
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
    float alpha = (!highlight_.empty() && app.selected && h == 0 && L.box_of[*app.selected] != bi) ? 0.35f : 1.0f;
    dl->AddRectFilled(p0, p1, node_type_colour(t.type(b.first), alpha), p1.x - p0.x > 8 ? 3.0f : 0.0f);
    if (h == 1) dl->AddRect(p0, p1, IM_COL32(100, 170, 255, 255), 0, 0, 2);
    if (h == 2) dl->AddRect(p0, p1, IM_COL32(120, 230, 120, 255), 0, 0, 2);
    if (!on_path.empty() && on_path[bi]) dl->AddRect(p0, p1, IM_COL32(255, 80, 80, 255), 0, 0, 2.5f);
    if (app.selected && L.box_of[*app.selected] == bi) dl->AddRect(p0, p1, IM_COL32(255, 255, 255, 255), 0, 0, 3);
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
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 16) app.selected = b.first;
  }
}

// The critical path's nodes by how much of it they take: node, duration, share; a click selects
// (and shows) one.
void GraphView::draw_critical_path_list(const chakra::Trace& t, const chakra::CriticalPath& path) {
  std::vector<uint32_t> order = path.nodes;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return t.duration_micros(a) > t.duration_micros(b); });
  const double total = std::max<double>(1.0, static_cast<double>(path.duration_micros));
  if (!ImGui::BeginTable("critical", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp))
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
      if (selectable_row(label, i, app.selected == n)) app.selected = n;
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_duration(static_cast<double>(t.duration_micros(n)), "us").c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", 100.0 * static_cast<double>(t.duration_micros(n)) / total);
    }
  ImGui::EndTable();
}

}  // namespace

std::unique_ptr<View> make_graph_view(AppContext& app) { return std::make_unique<GraphView>(app); }

}  // namespace chakra_web
