// The Sweep view: a design-space sweep (chakra/app/sweep.h, as `chakra sweep`) edited and run in
// the page, its points simulated in the host's workers, or a table `chakra sweep` wrote opened
// from a file; the step time (or another figure) against one axis as lines, or two as a heat
// map, and the table.
#include <algorithm>
#include <cmath>
#include <optional>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_context.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chart.h"

namespace chakra_web {

namespace sweep = chakra::sweep;

namespace {

// What the editor starts with: assets/sweeps/ has more.
const char* kExampleSpec = R"(# A sweep: a workload, a network, a system, and axes over their fields
# (chakra sweep's format; core/docs/sweeps.md). Edit it and press Run.
workload:
  collective: {type: all_reduce, size: 1MiB, npus: 16}
network:
  topology: [Ring, Switch]
  npus: [4, 4]
  bandwidth: [200, 50]
  latency: [500, 1500]
system:
  preset: h100-ib-2x8
axes:
  workload.collective.size: [256KiB, 1MiB, 4MiB, 16MiB, 64MiB]
  network.bandwidth: [[200, 25], [200, 50], [200, 100], [400, 200]]
  system.all-reduce-implementation: [[ring, ring], [direct, ring], [ring, halvingDoubling]]
)";

// The figures a plot can show, in the table's units.
// Indexes are share-link values: new metrics go last.
const char* const kMetrics[] = {
    "step_ns", "exposed_communication_ns", "compute_ns", "peak_mem_bytes", "messages", "events", "non_compute_ns"};

class SweepView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "sweep"; }
  const char* title() const override { return "Sweep"; }
  void draw() override;
  // The spec, when it was edited (the example is what a fresh page shows anyway); read back as
  // it was, run when asked.
  void write_state(chakra::ShareState& s) const override {
    if (!spec_text_.empty() && spec_text_ != kExampleSpec) s["sweep"] = spec_text_;
  }
  std::function<void()> read_state(const chakra::ShareState& s) override {
    if (!s.count("sweep")) return {};
    if (s.at("sweep").size() > (1u << 16)) throw chakra::Error("share link: 'sweep' is longer than 64 KiB");
    return [this, text = s.at("sweep")] { spec_text_ = text; };
  }
  void add_commands(std::vector<Command>& out) override {
    out.push_back({"sweep run", [this](std::string_view) { return app.sweeps.start(spec_text_); }});
    out.push_back({"sweep cancel", [this](std::string_view) { return app.sweeps.cancel(), true; }});
    out.push_back(
        {"sweep example", [this](std::string_view) { return spec_text_ = kExampleSpec, app.show_view(name()), true; }});
    out.push_back({"sweep spec YAML", [this](std::string_view w) { return spec_text_ = std::string(w), true; }});
  }
  void cleared() override { plot_ = Plot(); }  // the editor keeps what was typed

 private:
  void draw_editor();      // the spec's editor and its buttons
  std::string spec_text_;  // the editor's
  // The plot: x and split axes (indices into the sweep's axes; split -1: none), the metric
  // column, for the sweep `serial`.
  struct Plot {
    uint64_t serial = UINT64_MAX;
    int x = 0, split = -1, metric = 0;
    bool heat_map = false;
  } plot_;
  // What the view draws every frame, made again only when the rows or the choices change.
  struct Drawn {
    uint64_t version = UINT64_MAX;
    int x = -1, split = -2, metric = -1;
    sweep::Grid grid;
    std::vector<size_t> order;  // the rows in point order
  } drawn_;
};

// The spec's editor and its buttons.
void SweepView::draw_editor() {
  Sweeps& w = app.sweeps;
  const float editor_w = std::min(440.0f, ImGui::GetContentRegionAvail().x * 0.38f);
  ImGui::BeginChild("sweep_spec", ImVec2(editor_w, 0));
  ImGui::TextUnformatted("Spec (YAML, as chakra sweep reads it)");
  ImGui::InputTextMultiline("##spec", &spec_text_, ImVec2(-1, ImGui::GetContentRegionAvail().y - 90),
                            ImGuiInputTextFlags_AllowTabInput);
  if (w.running) {
    if (ImGui::Button("Cancel")) w.cancel();
    ImGui::SameLine();
    ImGui::ProgressBar(
        w.points.empty() ? 0.0f : static_cast<float>(w.rows.size()) / static_cast<float>(w.points.size()),
        ImVec2(-1, 0), (std::to_string(w.rows.size()) + " / " + std::to_string(w.points.size()) + " points").c_str());
  } else {
    if (ImGui::Button("Run sweep")) w.start(spec_text_);
    ImGui::SameLine();
    if (ImGui::Button("Example")) spec_text_ = kExampleSpec;
    ImGui::SameLine();
    if (ImGui::Button("Download spec")) app.platform.download("sweep.yaml", spec_text_);
  }
  if (!w.error.empty()) ImGui::TextColored(kErrorColour, "%s", w.error.c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "Points run in the page's workers. Larger sweeps: chakra sweep (--shard, --slurm); drop its RESULTS.jsonl here.");
  ImGui::PopStyleColor();
  ImGui::EndChild();
}

void SweepView::draw() {
  Sweeps& w = app.sweeps;
  if (spec_text_.empty()) spec_text_ = kExampleSpec;
  if (plot_.serial != w.serial)  // a new sweep or table: its first axes
    plot_ = {w.serial, 0, w.axes.size() > 1 ? 1 : -1, 0, plot_.heat_map};
  draw_editor();  // on the left; the plot and the table on the right
  ImGui::SameLine();
  ImGui::BeginChild("sweep_results", ImVec2(0, 0));
  if (w.rows.empty()) {
    ImGui::TextWrapped(w.running ? "Running..."
                                 : "Run the spec on the left, or drop a table chakra sweep wrote (RESULTS.jsonl).");
    ImGui::EndChild();
    return;
  }
  std::string summary = (w.source == "run" ? "Run: " : w.source + ": ") + std::to_string(w.rows.size()) + " points";
  if (w.product)
    summary += " of " + chakra::with_article(std::to_string(w.product) + "-point product") +
               (w.dropped ? " (" + std::to_string(w.dropped) + " dropped by constraints)" : "");
  if (w.failed) summary += ", " + std::to_string(w.failed) + " failed";
  if (!w.running && w.source == "run" && app.platform.show_timings()) {
    char took[48];
    std::snprintf(took, sizeof took, ", %.2f s", w.seconds);
    summary += took;
  }
  ImGui::TextUnformatted(summary.c_str());
  if (w.axes.empty()) {
    ImGui::TextDisabled("The table has no axes.");
    ImGui::EndChild();
    return;
  }
  // The plot's choices.
  auto axis_combo = [&](const char* label, int& index, bool allow_none) {
    ImGui::SetNextItemWidth(220);
    const std::string current = index < 0 ? "(none)" : w.axes[static_cast<size_t>(index)];
    if (ImGui::BeginCombo(label, current.c_str())) {
      if (allow_none && ImGui::Selectable("(none)", index < 0)) index = -1;
      for (size_t i = 0; i < w.axes.size(); ++i)
        if (ImGui::Selectable(w.axes[i].c_str(), index == static_cast<int>(i))) index = static_cast<int>(i);
      ImGui::EndCombo();
    }
  };
  plot_.x = std::clamp(plot_.x, 0, static_cast<int>(w.axes.size()) - 1);
  if (plot_.split >= static_cast<int>(w.axes.size())) plot_.split = -1;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Plot");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  ImGui::Combo("##metric", &plot_.metric, kMetrics, static_cast<int>(std::size(kMetrics)));
  ImGui::SameLine();
  ImGui::TextUnformatted("against");
  ImGui::SameLine();
  axis_combo("##x", plot_.x, false);
  ImGui::SameLine();
  ImGui::TextUnformatted("by");
  ImGui::SameLine();
  axis_combo("##split", plot_.split, true);
  ImGui::SameLine();
  ImGui::Checkbox("heat map", &plot_.heat_map);
  const std::string metric = kMetrics[plot_.metric];
  const std::string split = plot_.split < 0 ? "" : w.axes[static_cast<size_t>(plot_.split)];
  Drawn& d = drawn_;
  if (d.version != w.version || d.x != plot_.x || d.split != plot_.split || d.metric != plot_.metric) {
    d = {w.version,
         plot_.x,
         plot_.split,
         plot_.metric,
         sweep::grid_of(w.rows, w.axes[static_cast<size_t>(plot_.x)], split, metric),
         sweep::point_order(w.rows)};
  }
  const sweep::Grid& g = d.grid;
  GridChart chart;
  chart.title = metric + " (mean over the other axes)";
  chart.x_name = w.axes[static_cast<size_t>(plot_.x)];
  chart.split_name = split;
  chart.x_labels = g.x_values;
  chart.split_labels = g.split_values;
  chart.values = g.mean;
  const bool ns = metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_ns") == 0;
  const bool bytes = metric.size() > 6 && metric.compare(metric.size() - 6, 6, "_bytes") == 0;
  chart.format = [ns, bytes](double v) {
    return ns      ? format_duration(v, "ns")
           : bytes ? chakra::format_bytes(static_cast<uint64_t>(std::max(0.0, v)))
                   : chakra::format_number(std::round(v));
  };
  if (plot_.heat_map && plot_.split >= 0)
    draw_heat_map("sweep_heat", chart, app.platform, app.take_save_request(chart.title));
  else
    draw_line_chart("sweep_lines", chart, 180, app.platform, app.take_save_request(chart.title));
  // The table, in point order.
  std::vector<std::string> columns = {"point"};
  for (const std::string& a : w.axes) columns.push_back(a);
  for (const char* c : {"step_ns", "compute_ns", "exposed_communication_ns", "messages", "error"}) columns.push_back(c);
  if (ImGui::SmallButton("Download table (CSV)")) {
    std::vector<std::string> all;
    for (const auto& [key, v] : w.rows.front().items()) all.push_back(key);
    app.platform.download("sweep.csv", sweep::table_csv(all, w.rows));
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX;
  if (ImGui::BeginTable("sweep_rows", static_cast<int>(columns.size()), flags,
                        ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    for (const std::string& c : columns) ImGui::TableSetupColumn(c.c_str());
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(d.order.size()));
    while (clipper.Step())
      for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
        const sweep::Row& r = w.rows[d.order[static_cast<size_t>(k)]];
        ImGui::TableNextRow();
        for (const std::string& c : columns) {
          ImGui::TableNextColumn();
          if (!r.contains(c) || r[c].is_null()) continue;
          const sweep::Json& v = r[c];
          if (c.size() > 3 && c.compare(c.size() - 3, 3, "_ns") == 0 && v.is_number()) {
            NumberFont numbers(app.platform);
            ImGui::TextUnformatted(format_duration(v.get<double>(), "ns").c_str());
          } else if (c == "error") {
            ImGui::TextColored(kErrorColour, "%s", v.is_string() ? v.get<std::string>().c_str() : v.dump().c_str());
          } else {
            ImGui::TextUnformatted(v.is_string() ? v.get<std::string>().c_str() : v.dump().c_str());
          }
        }
      }
    ImGui::EndTable();
  }
  ImGui::EndChild();
}

}  // namespace

std::unique_ptr<View> make_sweep_view(AppContext& app) { return std::make_unique<SweepView>(app); }

}  // namespace chakra_web
