// The Overview view: what was opened, per rank its summary and validation findings.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_context.h"
#include "chart.h"
#include "chakra/support/error.h"

namespace chakra_web {

namespace {

class OverviewView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "overview"; }
  const char* title() const override { return "Overview"; }
  void draw() override;
  void add_commands(std::vector<Command>& out) override {
    out.push_back({"export anonymized", [this](std::string_view) { return export_anonymized(""); }});
    out.push_back({"export anonymized KEY", [this](std::string_view w) { return export_anonymized(std::string(w)); }});
  }

 private:
  // Downloads anonymized.zip (chakra::anonymized_archive); an empty key is a random one.
  bool export_anonymized(const std::string& key);
  std::string key_;  // the export's key (empty: a random one per export)
};

void OverviewView::draw() {
  if (app.workspace.ranks().empty()) {
    ImGui::TextDisabled("No trace loaded.");
    return;
  }
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                          ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  std::vector<int32_t> types;
  for (int32_t t = 0; t < chakra::kNodeTypeCount; ++t)
    for (const auto& r : app.workspace.ranks())
      if (r->summary.by_type[t].nodes) {
        types.push_back(t);
        break;
      }
  int columns = 7 + static_cast<int>(types.size());
  if (ImGui::BeginTable("overview", columns, flags, ImVec2(0, ImGui::GetContentRegionAvail().y * 0.6f))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("rank");
    ImGui::TableSetupColumn("source");
    ImGui::TableSetupColumn("nodes");
    for (int32_t t : types) ImGui::TableSetupColumn(std::string(chakra::node_type_name(t)).c_str());
    ImGui::TableSetupColumn("collectives");
    ImGui::TableSetupColumn("comm bytes");
    ImGui::TableSetupColumn("compute (us)");
    ImGui::TableSetupColumn("validate");
    ImGui::TableHeadersRow();
    for (const auto& r : app.workspace.ranks()) {
      const chakra::TraceSummary& m = r->summary;
      uint64_t colls = 0, bytes = 0;
      for (const auto& [type, c] : m.collectives) {
        colls += c.count;
        bytes += c.bytes;
      }
      bytes += m.sends.bytes;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%u", r->rank);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r->source.c_str());
      {
        NumberFont numbers(app.platform);
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(m.nodes));
        for (int32_t t : types) {
          ImGui::TableNextColumn();
          ImGui::Text("%llu", static_cast<unsigned long long>(m.by_type[t].nodes));
        }
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(colls));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(chakra::format_bytes(bytes).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(
                                m.by_type[static_cast<int>(chakra::NodeType::Comp)].duration_micros));
      }
      ImGui::TableNextColumn();
      const uint64_t warnings = r->report.warnings + r->warnings.size();  // validation's and loading's
      if (!r->checked)
        ImGui::TextDisabled("checking");
      else if (r->report.errors)
        ImGui::TextColored(kErrorColour, "%llu errors", static_cast<unsigned long long>(r->report.errors));
      else if (warnings)
        ImGui::TextColored(kWarningColour, "%llu warnings", static_cast<unsigned long long>(warnings));
      else
        ImGui::TextColored(ImVec4(0.4f, 1, 0.5f, 1), "ok");
    }
    ImGui::EndTable();
  }
  // Sharing: every rank with names and strings replaced by keyed tokens (chakra anonymize).
  if (ImGui::Button("Export anonymized copy")) export_anonymized(key_);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("key (empty: random, kept nowhere)").x +
                          2 * ImGui::GetStyle().FramePadding.x);
  ImGui::InputTextWithHint("##anonymize_key", "key (empty: random, kept nowhere)", &key_, ImGuiInputTextFlags_Password);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The same key gives the same tokens on every rank and in every export, so two exports can be\n"
        "compared; names, op schemas, strings and paths are replaced, times, sizes and groups kept.");
  const chakra::RankTrace* r = app.current_rank();
  if (!r) return;
  if (app.platform.show_timings())
    ImGui::Text("rank %u: %s, decoded in %.1f ms", r->rank, r->source.c_str(), r->load_ms);
  else
    ImGui::Text("rank %u: %s", r->rank, r->source.c_str());
  for (const auto& [type, c] : r->summary.collectives) {
    std::string name(chakra::comm_type_name(type));
    ImGui::BulletText("%s: %llu, %s", name.empty() ? "(unknown comm_type)" : name.c_str(),
                      static_cast<unsigned long long>(c.count), chakra::format_bytes(c.bytes).c_str());
  }
  // Its communication by size, power-of-two buckets from the smallest to the largest seen.
  const auto& sizes = r->summary.comm_sizes_log2;
  const auto used = [](uint64_t c) { return c != 0; };
  if (auto first = std::find_if(sizes.begin(), sizes.end(), used); first != sizes.end()) {
    const auto last = std::find_if(sizes.rbegin(), sizes.rend(), used).base();
    ColumnChart chart;
    chart.title = "Communication sizes, rank " + std::to_string(r->rank);
    chart.category_name = "size from";
    chart.series = {
        {"collectives, sends and receives", span_kind_colour(static_cast<int>(chakra::sim::SpanKind::Collective))}};
    chart.format = [](double v) { return chakra::format_number(std::round(v)); };
    chart.min_tick_step = 1;
    for (auto k = first; k != last; ++k) {
      const size_t bucket = static_cast<size_t>(k - sizes.begin());
      chart.categories.push_back(chakra::format_bytes(bucket ? uint64_t{1} << bucket : 0));
      chart.values.push_back(static_cast<double>(*k));
    }
    draw_column_chart("sizes", chart, 90, app.platform, app.take_save_request(chart.title));
  }
  for (const std::string& n : r->notes) ImGui::BulletText("%s", n.c_str());
  for (const std::string& w : r->warnings) {
    ImGui::Bullet();
    // Wrapped: linking warnings name files and counts, often wider than the pane.
    ImGui::PushStyleColor(ImGuiCol_Text, kWarningColour);
    ImGui::TextWrapped("warning: %s", w.c_str());
    ImGui::PopStyleColor();
  }
  for (const chakra::Finding& f : r->report.findings) {
    ImGui::TextColored(f.severity == chakra::Severity::Error ? kErrorColour : kWarningColour, "%s", f.code.c_str());
    ImGui::SameLine();
    ImGui::TextWrapped("%s", f.message.c_str());
  }
}

bool OverviewView::export_anonymized(const std::string& key) {
  if (app.workspace.ranks().empty()) {
    app.note("error: nothing loaded to export");
    return false;
  }
  chakra::AnonymizeOptions options;
  // Empty: random, and held nowhere but here until the export is made.
  options.key = key.empty() ? chakra::random_anonymize_key() : key;
  try {
    chakra::AnonymizeReport report;
    app.platform.download("anonymized.zip", chakra::anonymized_archive(app.workspace, options, report));
    app.note("exported anonymized.zip: " + std::to_string(app.workspace.ranks().size()) + " ranks, " +
             std::to_string(report.names) + " names and " +
             std::to_string(report.io_literals + report.metadata_strings) + " other strings replaced" +
             (key.empty() ? " (random key)" : ""));
    return true;
  } catch (const chakra::Error& e) {
    app.note(std::string("error: ") + e.what());
    return false;
  }
}

}  // namespace

std::unique_ptr<View> make_overview_view(AppContext& app) { return std::make_unique<OverviewView>(app); }

}  // namespace chakra_web
