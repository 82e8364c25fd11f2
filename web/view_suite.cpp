// The Suite view: the benchmark suite (chakra/app/suite.h, as `chakra suite run`) run on the
// Simulation view's cluster in the host's workers, and results chakra suite run wrote, opened
// from files; the scores per class and overall as columns (one result) or a heat map of systems
// by class (several, side by side), and the entries of each.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "app_context.h"
#include "chakra/app/sim_presets.h"
#include "chakra/astra/config.h"
#include "chakra/support/error.h"
#include "chart.h"

namespace chakra_web {

namespace suite = chakra::suite;

namespace {

std::string score_text(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3f", v);
  return s;
}

class SuiteView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "suite"; }
  const char* title() const override { return "Suite"; }
  void draw() override;
  // A link says the suite was run; opening it runs it again on the link's cluster.
  void write_state(chakra::ShareState& s) const override {
    if (app.suites.running || std::any_of(app.suites.results.begin(), app.suites.results.end(),
                                          [](const Suites::Shown& r) { return r.source == "run"; }))
      s["suite"] = "run";
  }
  std::function<void()> read_state(const chakra::ShareState& s) override {
    if (!s.count("suite")) return {};
    if (s.at("suite") != "run") throw chakra::Error("share link: 'suite' is 'run' or absent");
    return [this] { run(); };
  }
  void add_commands(std::vector<Command>& out) override {
    out.push_back({"suite run", [this](std::string_view) { return run(); }});
    out.push_back({"suite cancel", [this](std::string_view) { return app.suites.cancel(), true; }});
  }

 private:
  // The cluster the Simulation view sets up, as the suite takes a system: the preset itself
  // when only its size differs (so the result is the one chakra suite run --preset writes).
  suite::System cluster() const {
    const SimSettings& s = app.runs.settings;
    const std::string network = chakra::astra::format_network(s.network);
    const std::string system = chakra::astra::format_system(s.system);
    for (const chakra::ClusterPreset& p : chakra::cluster_presets())
      if (p.name == s.preset &&
          chakra::astra::format_network(chakra::fit_network(p.network, s.network.total_npus())) == network &&
          chakra::astra::format_system(p.system) == system)
        return suite::system_from_preset(p.name);
    return {s.preset + " (edited)", network, system};
  }
  bool run() { return app.suites.start(cluster()); }
  void draw_scores();
  void draw_entries();
  size_t entries_of_ = 0;  // the result whose entries are listed
};

void SuiteView::draw() {
  Suites& u = app.suites;
  ImGui::TextWrapped(
      "The benchmark suite (chakra-suite-v1, as chakra suite run): dense LLM, mixture-of-experts and long-context "
      "training steps synthesized at 64, 512 and 4,096 NPUs, inference prefill and decode steps at 64, the bundled "
      "DLRM and ResNet-50 runs grown to those scales; each simulated on a system and on the suite's reference, and "
      "scored as speed-ups (geometric means per workload, class and overall).");
  if (u.running) {
    if (ImGui::Button("Cancel")) u.cancel();
    ImGui::SameLine();
    ImGui::ProgressBar(
        u.entries ? static_cast<float>(u.done) / static_cast<float>(u.entries) : 0.0f, ImVec2(-1, 0),
        (u.system_name + ": " + std::to_string(u.done) + " / " + std::to_string(u.entries) + " entries").c_str());
  } else {
    const suite::System system = cluster();
    if (ImGui::Button(("Run on " + system.name).c_str())) run();
    ImGui::SameLine();
    ImGui::TextDisabled("the Simulation view's cluster, its network fitted to each scale");
  }
  if (!u.error.empty()) ImGui::TextColored(kErrorColour, "%s", u.error.c_str());
  if (u.results.empty()) {
    ImGui::TextWrapped(u.running ? "Running in the page's workers..."
                                 : "Run it, or drop results chakra suite run wrote (RESULT.json) or a board "
                                   "(BOARD.json) to compare systems.");
    return;
  }
  draw_scores();
  draw_entries();
}

// The scores per class and overall, a bar per result (side by side when several), the
// reference's 1.0 marked.
void SuiteView::draw_scores() {
  const std::vector<Suites::Shown>& results = app.suites.results;
  GridChart chart;
  chart.title = "Scores (speed-up over the suite's reference system)";
  chart.x_name = "class";
  chart.split_name = "system";
  for (const auto& r : results)
    for (const auto& [name, v] : r.result["classes"].items())
      if (std::find(chart.x_labels.begin(), chart.x_labels.end(), name) == chart.x_labels.end())
        chart.x_labels.push_back(name);
  chart.x_labels.push_back("overall");
  for (const auto& r : results) {
    chart.split_labels.push_back(r.result["system"]["name"].get<std::string>());
    for (const std::string& c : chart.x_labels) {
      const suite::Json& j = c == "overall" ? r.result["overall"] : r.result["classes"].value(c, suite::Json());
      chart.values.push_back(j.is_number() ? j.get<double>() : NAN);
    }
  }
  chart.format = score_text;
  draw_grouped_bars("suite_scores", chart, 1.0, "reference", app.platform, app.take_save_request(chart.title));
}

// The entries of one result (chosen when there are several): steps, scores, exposed share,
// the network's utilisation per dimension.
void SuiteView::draw_entries() {
  const std::vector<Suites::Shown>& results = app.suites.results;
  entries_of_ = std::min(entries_of_, results.size() - 1);
  if (results.size() > 1) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Entries of");
    for (size_t i = 0; i < results.size(); ++i) {
      ImGui::SameLine();
      const std::string label = results[i].result["system"]["name"].get<std::string>() + "##" + std::to_string(i);
      if (ImGui::RadioButton(label.c_str(), entries_of_ == i)) entries_of_ = i;
    }
  }
  const Suites::Shown& r = results[entries_of_];
  const suite::Json& system = r.result["system"];
  ImGui::Text("%s: %s on %s (system %s), %s", r.source == "run" ? "Run" : r.source.c_str(),
              r.result["suite"].get<std::string>().c_str(), system["name"].get<std::string>().c_str(),
              system["hash"].get<std::string>().substr(0, 12).c_str(), r.result["tool"].get<std::string>().c_str());
  if (r.source == "run") {
    ImGui::SameLine();
    if (ImGui::SmallButton("Download result (JSON)")) app.platform.download("result.json", r.result.dump(1) + "\n");
  }
  const char* columns[] = {"workload",       "class", "NPUs",          "step",
                           "reference step", "score", "exposed comm.", "network busy per dimension"};
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
  if (!ImGui::BeginTable("suite_entries", static_cast<int>(std::size(columns)), flags,
                         ImVec2(0, ImGui::GetContentRegionAvail().y)))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* c : columns) ImGui::TableSetupColumn(c);
  ImGui::TableHeadersRow();
  for (const suite::Json& e : r.result["entries"]) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(e["workload"].get<std::string>().c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(e["class"].get<std::string>().c_str());
    NumberFont numbers(app.platform);
    ImGui::TableNextColumn();
    ImGui::Text("%llu", static_cast<unsigned long long>(e["npus"].get<uint64_t>()));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_duration(e["step_ns"].get<double>(), "ns").c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_duration(e["reference_step_ns"].get<double>(), "ns").c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(score_text(e["score"].get<double>()).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%%", 100 * e["exposed_communication_share"].get<double>());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(suite::network_utilisation_text(e).c_str());
  }
  ImGui::EndTable();
}

}  // namespace

std::unique_ptr<View> make_suite_view(AppContext& app) { return std::make_unique<SuiteView>(app); }

}  // namespace chakra_web
