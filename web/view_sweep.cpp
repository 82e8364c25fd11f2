// The Sweep view: a design-space sweep (chakra/app/sweep.h, as `chakra sweep`) edited and run in
// the page, its points simulated in the host's workers, or a table `chakra sweep` wrote opened
// from a file; the step time (or another figure) against one axis as lines, or two as a heat
// map, and the table.
#include <algorithm>
#include <cmath>
#include <optional>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_state.h"
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

}  // namespace

const char* sweep_example_spec() { return kExampleSpec; }

namespace {

// The figures a plot can show, in the table's units.
// Indexes are share-link values: new metrics go last.
const char* const kMetrics[] = {"step_ns", "exposed_communication_ns", "compute_ns", "peak_mem_bytes", "messages", "events",
                                "non_compute_ns"};

}  // namespace

bool App::Impl::start_sweep() {
  cancel_sweep();
  SweepState& w = sweep;
  w.error.clear();
  try {
    auto spec = std::make_unique<sweep::Spec>(sweep::parse_spec(w.spec_text, "sweep spec", ""));
    sweep::Expansion e = sweep::expand(*spec, 100000);
    if (e.points.size() > 20000)
      throw chakra::Error("sweep spec: " + std::to_string(e.points.size()) + " points; the page runs at most 20000 (chakra sweep runs any number)");
    w.runner = std::make_unique<sweep::Runner>(*spec, false);
    w.spec = std::move(spec);
    w.points = std::move(e.points);
    w.product = e.product;
    w.dropped = e.dropped;
  } catch (const std::exception& e) {
    w.error = e.what();
    note("error: " + w.error);
    return false;
  }
  w.rows.clear();
  ++w.version;
  w.axes = w.points.empty() ? std::vector<std::string>{} : sweep::axis_columns(w.runner->row_of(w.points.front()));
  w.source = "run";
  w.failed = 0;
  w.next = w.in_flight = 0;
  w.running = !w.points.empty();
  w.started = std::chrono::steady_clock::now();
  w.x = 0, w.split = w.axes.size() > 1 ? 1 : -1, w.metric = 0;
  note("sweep: " + std::to_string(w.points.size()) + " points");
  return true;
}

void App::Impl::cancel_sweep() {
  SweepState& w = sweep;
  if (!w.running) return;
  platform.cancel_sweep();
  ++w.generation;
  w.running = false;
  w.in_flight = 0;
  note("sweep cancelled: " + std::to_string(w.rows.size()) + " of " + std::to_string(w.points.size()) + " points done");
}

void App::Impl::sweep_work(double budget_ms) {
  SweepState& w = sweep;
  if (!w.running) return;
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] { return budget_ms - std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(); };
  // In workers: a few points queued ahead of each, so none waits for the page's next frame.
  const size_t ahead = 16;
  while (w.next < w.points.size() && left() > 0) {
    const sweep::Point& p = w.points[w.next];
    if (platform.runs_sweep_points()) {
      if (w.in_flight >= ahead) break;
      sweep::Row row;
      std::optional<chakra::sim::SimJob> job = w.runner->job(p, row);
      ++w.next;
      if (!job) {
        sweep_point_done(std::move(row));
        continue;
      }
      ++w.in_flight;
      platform.start_sweep_point(p.index, w.generation, std::move(*job));
    } else {
      ++w.next;
      sweep_point_done(w.runner->run(p));
    }
  }
}

void App::Impl::sweep_point_done(sweep::Row row) {
  SweepState& w = sweep;
  if (row.contains("error") && row["error"].is_string() && row["error"] != "") ++w.failed;
  w.rows.push_back(std::move(row));
  ++w.version;
  if (w.rows.size() == w.points.size()) {
    w.running = false;
    w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w.started).count();
    note("sweep: " + std::to_string(w.rows.size()) + " points done" + (w.failed ? ", " + std::to_string(w.failed) + " failed" : ""));
  }
}

void App::sweep_point_finished(uint64_t point, uint64_t generation, const chakra::sim::SimResult& result, double ms) {
  Impl& s = *impl_;
  SweepState& w = s.sweep;
  if (generation != w.generation || !w.running || point >= w.points.size()) return;
  --w.in_flight;
  sweep::Row row = w.runner->row_of(w.points[point]);
  w.runner->finish(row, result, ms);
  s.sweep_point_done(std::move(row));
}

void App::sweep_point_failed(uint64_t point, uint64_t generation, const std::string& message) {
  Impl& s = *impl_;
  SweepState& w = s.sweep;
  if (generation != w.generation || !w.running || point >= w.points.size()) return;
  --w.in_flight;
  sweep::Row row = w.runner->row_of(w.points[point]);
  w.runner->fail(row, message);
  s.sweep_point_done(std::move(row));
}

void App::Impl::open_sweep_table(chakra::Workspace::SweepTableFile file) {
  try {
    sweep::ReadRows& r = file.table;
    const std::string& name = file.name;
    cancel_sweep();
    SweepState& w = sweep;
    w.spec.reset();
    w.runner.reset();
    w.points.clear();
    w.rows = std::move(r.rows);
    ++w.version;
    w.axes = sweep::axis_columns(w.rows.front());
    w.source = name;
    w.failed = static_cast<uint64_t>(std::count_if(w.rows.begin(), w.rows.end(), [](const sweep::Row& x) {
      return x.contains("error") && x["error"].is_string() && x["error"] != "";
    }));
    w.product = w.dropped = 0;
    w.x = 0, w.split = w.axes.size() > 1 ? 1 : -1, w.metric = 0;
    view = View::Sweep;
    view_changed = true;
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void App::Impl::draw_sweep() {
  SweepState& w = sweep;
  if (w.spec_text.empty()) w.spec_text = kExampleSpec;
  // The editor and its buttons, on the left; the plot and the table on the right.
  const float editor_w = std::min(440.0f, ImGui::GetContentRegionAvail().x * 0.38f);
  ImGui::BeginChild("sweep_spec", ImVec2(editor_w, 0));
  ImGui::TextUnformatted("Spec (YAML, as chakra sweep reads it)");
  ImGui::InputTextMultiline("##spec", &w.spec_text, ImVec2(-1, ImGui::GetContentRegionAvail().y - 90),
                            ImGuiInputTextFlags_AllowTabInput);
  if (w.running) {
    if (ImGui::Button("Cancel")) cancel_sweep();
    ImGui::SameLine();
    ImGui::ProgressBar(w.points.empty() ? 0.0f : static_cast<float>(w.rows.size()) / static_cast<float>(w.points.size()), ImVec2(-1, 0),
                       (std::to_string(w.rows.size()) + " / " + std::to_string(w.points.size()) + " points").c_str());
  } else {
    if (ImGui::Button("Run sweep")) start_sweep();
    ImGui::SameLine();
    if (ImGui::Button("Example")) w.spec_text = kExampleSpec;
    ImGui::SameLine();
    if (ImGui::Button("Download spec")) platform.download("sweep.yaml", w.spec_text);
  }
  if (!w.error.empty()) ImGui::TextColored(kErrorColour, "%s", w.error.c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("Points run in the page's workers. Larger sweeps: chakra sweep (--shard, --slurm); drop its RESULTS.jsonl here.");
  ImGui::PopStyleColor();
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("sweep_results", ImVec2(0, 0));
  if (w.rows.empty()) {
    ImGui::TextWrapped(w.running ? "Running..." : "Run the spec on the left, or drop a table chakra sweep wrote (RESULTS.jsonl).");
    ImGui::EndChild();
    return;
  }
  std::string summary = (w.source == "run" ? "Run: " : w.source + ": ") + std::to_string(w.rows.size()) + " points";
  if (w.product)
    summary += " of " + chakra::with_article(std::to_string(w.product) + "-point product") +
               (w.dropped ? " (" + std::to_string(w.dropped) + " dropped by constraints)" : "");
  if (w.failed) summary += ", " + std::to_string(w.failed) + " failed";
  if (!w.running && w.source == "run" && platform.show_timings()) {
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
  w.x = std::clamp(w.x, 0, static_cast<int>(w.axes.size()) - 1);
  if (w.split >= static_cast<int>(w.axes.size())) w.split = -1;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Plot");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  ImGui::Combo("##metric", &w.metric, kMetrics, static_cast<int>(std::size(kMetrics)));
  ImGui::SameLine();
  ImGui::TextUnformatted("against");
  ImGui::SameLine();
  axis_combo("##x", w.x, false);
  ImGui::SameLine();
  ImGui::TextUnformatted("by");
  ImGui::SameLine();
  axis_combo("##split", w.split, true);
  ImGui::SameLine();
  ImGui::Checkbox("heat map", &w.heat_map);
  const std::string metric = kMetrics[w.metric];
  const std::string split = w.split < 0 ? "" : w.axes[static_cast<size_t>(w.split)];
  SweepState::Drawn& d = w.drawn;
  if (d.version != w.version || d.x != w.x || d.split != w.split || d.metric != w.metric) {
    d = {w.version, w.x, w.split, w.metric, sweep::grid_of(w.rows, w.axes[static_cast<size_t>(w.x)], split, metric), sweep::point_order(w.rows)};
  }
  const sweep::Grid& g = d.grid;
  GridChart chart;
  chart.title = metric + " (mean over the other axes)";
  chart.x_name = w.axes[static_cast<size_t>(w.x)];
  chart.split_name = split;
  chart.x_labels = g.x_values;
  chart.split_labels = g.split_values;
  chart.values = g.mean;
  const bool ns = metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_ns") == 0;
  const bool bytes = metric.size() > 6 && metric.compare(metric.size() - 6, 6, "_bytes") == 0;
  chart.format = [ns, bytes](double v) {
    return ns ? format_duration(v, "ns") : bytes ? chakra::format_bytes(static_cast<uint64_t>(std::max(0.0, v))) : chakra::format_number(std::round(v));
  };
  if (w.heat_map && w.split >= 0) draw_heat_map("sweep_heat", chart, platform, take_save_request(chart.title));
  else draw_line_chart("sweep_lines", chart, 180, platform, take_save_request(chart.title));
  // The table, in point order.
  std::vector<std::string> columns = {"point"};
  for (const std::string& a : w.axes) columns.push_back(a);
  for (const char* c : {"step_ns", "compute_ns", "exposed_communication_ns", "messages", "error"}) columns.push_back(c);
  if (ImGui::SmallButton("Download table (CSV)")) {
    std::vector<std::string> all;
    for (const auto& [key, v] : w.rows.front().items()) all.push_back(key);
    platform.download("sweep.csv", sweep::table_csv(all, w.rows));
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX;
  if (ImGui::BeginTable("sweep_rows", static_cast<int>(columns.size()), flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
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
            NumberFont numbers(platform);
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

}  // namespace chakra_web
