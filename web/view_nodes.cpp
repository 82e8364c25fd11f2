// The Nodes view: the current rank's nodes as a searchable, sortable table.
#include <algorithm>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_context.h"

namespace chakra_web {

namespace {

class NodesView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "nodes"; }
  const char* title() const override { return "Nodes"; }
  void draw() override;
  void write_state(chakra::ShareState& s) const override {
    if (!query_.empty()) s["q"] = query_;
  }
  std::function<void()> read_state(const chakra::ShareState& s) override {
    return [this, q = s.count("q") ? s.at("q") : std::string()] { query_ = q; };
  }
  void ranks_changed() override { rows_ = Rows(); }

 private:
  std::string query_;  // the search box
  // The rows shown: the current rank's nodes that match, sorted as the table asks.
  struct Rows {
    const chakra::RankTrace* rank = nullptr;
    std::string query;
    int sort_column = -1;
    bool ascending = true;
    std::vector<uint32_t> nodes;
  } rows_;
};

void NodesView::draw() {
  RankCache* c = app.cache();
  if (!c) {
    ImGui::TextDisabled("No trace loaded.");
    return;
  }
  const chakra::Trace& t = c->rank->trace;
  ImGui::SetNextItemWidth(320);
  ImGui::InputTextWithHint("##search", "search name, type or attribute value", &query_);
  ImGui::SameLine();
  ImGui::Text("%zu of %u nodes", rows_.nodes.size(), t.size());
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                          ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("nodes", 6, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("id", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_WidthFixed, 70);
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("type", ImGuiTableColumnFlags_WidthFixed, 130);
  ImGui::TableSetupColumn("start (us)", ImGuiTableColumnFlags_WidthFixed, 90);
  ImGui::TableSetupColumn("duration (us)", ImGuiTableColumnFlags_WidthFixed, 100);
  ImGui::TableSetupColumn("deps", ImGuiTableColumnFlags_WidthFixed, 50);
  ImGui::TableHeadersRow();
  int column = 0;
  bool ascending = true;
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsCount > 0) {
    column = specs->Specs[0].ColumnIndex;
    ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
  }
  if (rows_.rank != c->rank || rows_.query != query_ || rows_.sort_column != column || rows_.ascending != ascending) {
    rows_.nodes = chakra::search_nodes(t, query_);
    auto key = [&](uint32_t n) -> uint64_t {
      switch (column) {
        case 3: return t.start_time_micros(n);
        case 4: return t.duration_micros(n);
        case 5: return t.data_deps(n).size() + t.ctrl_deps(n).size();
        case 2: return static_cast<uint64_t>(t.type(n));
        default: return t.id(n);
      }
    };
    if (column == 1)
      std::stable_sort(rows_.nodes.begin(), rows_.nodes.end(),
                       [&](uint32_t a, uint32_t b) { return t.name(a) < t.name(b); });
    else
      std::stable_sort(rows_.nodes.begin(), rows_.nodes.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    if (!ascending) std::reverse(rows_.nodes.begin(), rows_.nodes.end());
    rows_.rank = c->rank;
    rows_.query = query_;
    rows_.sort_column = column;
    rows_.ascending = ascending;
  }
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows_.nodes.size()));
  while (clipper.Step()) {
    for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
      uint32_t n = rows_.nodes[row];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      char label[32];
      std::snprintf(label, sizeof label, "%llu", static_cast<unsigned long long>(t.id(n)));
      if (ImGui::Selectable(label, app.selected == n, ImGuiSelectableFlags_SpanAllColumns)) app.selected = n;
      ImGui::TableNextColumn();
      std::string name(t.name(n));
      ImGui::TextUnformatted(name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(node_type_colour(t.type(n))), "%s",
                         std::string(chakra::node_type_name(t.type(n))).c_str());
      NumberFont numbers(app.platform);
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(t.start_time_micros(n)));
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(t.duration_micros(n)));
      ImGui::TableNextColumn();
      ImGui::Text("%zu", t.data_deps(n).size() + t.ctrl_deps(n).size());
    }
  }
  ImGui::EndTable();
  // Ctrl+C (not while typing) copies the selected row, tab-separated as the columns show it.
  const ImGuiIO& io = ImGui::GetIO();
  if (app.selected && *app.selected < t.size() && io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed('C', false)) {
    const uint32_t n = *app.selected;
    const std::string row = std::to_string(t.id(n)) + "\t" + std::string(t.name(n)) + "\t" +
                            std::string(chakra::node_type_name(t.type(n))) + "\t" +
                            std::to_string(t.start_time_micros(n)) + "\t" + std::to_string(t.duration_micros(n)) +
                            "\t" + std::to_string(t.data_deps(n).size() + t.ctrl_deps(n).size());
    ImGui::SetClipboardText(row.c_str());
  }
}

}  // namespace

std::unique_ptr<View> make_nodes_view(AppContext& app) { return std::make_unique<NodesView>(app); }

}  // namespace chakra_web
