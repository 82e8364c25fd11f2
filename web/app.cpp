#include "app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_impl.h"
#include "chakra/analysis/sim_report.h"
#include "chakra/app/sim_presets.h"
#include "chakra/format/io.h"
#include "chakra/format/json_writer.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/synth/synth.h"
#include "chakra/trace/schema.h"

namespace chakra_web {

using chakra::ShareState;

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

// ---- App ------------------------------------------------------------------------------------

App::App(Platform& platform) : impl_(std::make_unique<Impl>(platform)) {
  impl_->workspace.defer_checks = true;  // see work()
  impl_->views = make_views(*impl_);
  add_commands();
  for (const auto& v : impl_->views) v->add_commands(impl_->commands);
}
App::~App() = default;

void App::queue_file(std::span<const uint8_t> bytes, const std::string& name) {
  const uint32_t id = begin_file(name, bytes.size());
  if (!bytes.empty()) file_piece(id, bytes);
}

void App::expect_files(int delta) { impl_->files_expected = std::max(0, impl_->files_expected + delta); }

uint32_t App::begin_file(const std::string& name, uint64_t size) {
  Impl& s = *impl_;
  if (s.files_expected > 0) --s.files_expected;
  const uint32_t id = s.next_file_id++;
  try {
    s.queue.push_back({id, s.workspace.begin_pieces(name, size)});
  } catch (const std::exception& e) {
    s.fail(e.what());
  }
  return id;
}

bool App::file_piece(uint32_t id, std::span<const uint8_t> piece) {
  Impl& s = *impl_;
  chakra::Workspace::Loading* file = s.file_by_id(id);
  if (!file) return false;
  try {
    file->add_bytes(piece);
    return true;
  } catch (const std::exception& e) {  // of no kind the page reads: say so, keep nothing of it
    s.drop_file(id);
    s.fail(e.what());
    return false;
  }
}

int64_t App::file_bytes_wanted(uint32_t id) const {
  const chakra::Workspace::Loading* file = impl_->file_by_id(id);
  return file ? static_cast<int64_t>(file->bytes_wanted()) : -1;
}

void App::abandon_file(uint32_t id, const std::string& reason) {
  Impl& s = *impl_;
  chakra::Workspace::Loading* file = s.file_by_id(id);
  if (!file) return;
  const std::string name = file->name();
  s.drop_file(id);
  s.fail(name + ": could not be read to its end (" + reason + ")");
}

chakra::Workspace::Loading* App::Impl::file_by_id(uint32_t id) const {
  if (loading && loading_id == id) return loading.get();
  for (const Pending& p : queue)
    if (p.id == id) return p.file.get();
  return nullptr;
}

void App::Impl::drop_file(uint32_t id) {
  if (loading && loading_id == id) loading.reset();
  std::erase_if(queue, [&](const Pending& p) { return p.id == id; });
}

void App::Impl::start_conversions() {
  // The files of one drop come one after another: a rank's host ET and Kineto trace are
  // converted together once both are in (or the other is not coming).
  auto pytorch_coming = [](const chakra::Workspace::Loading* f) {
    return f && (f->kind() == chakra::InputKind::PytorchHostEt || f->kind() == chakra::InputKind::KinetoTrace ||
                 f->kind() == chakra::InputKind::Unknown);  // Unknown: its first bytes are still coming
  };
  if (files_expected > 0 || (loading_id != 0 && pytorch_coming(loading.get())) ||
      std::any_of(queue.begin(), queue.end(),
                  [&](const Pending& p) { return p.id != 0 && pytorch_coming(p.file.get()); }))
    return;
  for (chakra::RankConversion& job : workspace.take_conversions()) {
    if (!platform.runs_conversions()) {  // here and now
      try {
        open_converted(platform.convert_here(job));
      } catch (const std::exception& e) {
        if (workspace.conversion_failed(job.rank, job.generation)) fail(e.what());
      }
      continue;
    }
    const bool host = !job.host.empty(), kineto = !job.kineto.empty();
    converting.push_back({job.rank, job.generation,
                          host && kineto ? job.host_name + " + " + job.kineto_name
                          : host         ? job.host_name
                                         : job.kineto_name,
                          host && kineto ? "linking and converting"
                          : host         ? "converting"
                                         : "reading its activity"});
    platform.start_conversion(std::move(job));
  }
}

void App::conversion_finished(chakra::ConvertedRank result) {
  Impl& s = *impl_;
  std::erase_if(s.converting,
                [&](const Impl::Converting& c) { return c.rank == result.rank && c.generation == result.generation; });
  s.open_converted(std::move(result));
}

void App::Impl::open_converted(chakra::ConvertedRank result) {
  try {
    // Opened before any file still waiting: the rank shows as soon as it can.
    if (auto l = workspace.begin_converted(std::move(result))) queue.push_front({0, std::move(l)});
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void App::conversion_failed(uint32_t rank, uint64_t generation, const std::string& message) {
  Impl& s = *impl_;
  std::erase_if(s.converting, [&](const Impl::Converting& c) { return c.rank == rank && c.generation == generation; });
  if (s.workspace.conversion_failed(rank, generation)) s.fail(message);
}

bool App::working_here() const {
  if (impl_->loading || !impl_->queue.empty() || impl_->workspace.conversions_waiting()) return true;
  if (impl_->sweeps.work_waiting()) return true;  // points still to hand out (or to run here)
  if (impl_->suites.work_waiting()) return true;
  for (const auto& r : impl_->workspace.ranks())
    if (!r->checked) return true;
  return false;
}

bool App::busy() const { return working_here() || !impl_->converting.empty() || impl_->files_expected > 0; }

void App::work(double budget_ms) {
  Impl& s = *impl_;
  auto start = Clock::now();
  auto left = [&] { return budget_ms - std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  // Ranks are validated at the start of a frame, not in the one that decoded their last nodes,
  // and a part at a time (a 268k-node trace takes ~150 ms in wasm: over several frames).
  while (left() > 0 && s.workspace.check_one(32768)) {}
  s.sweeps.work(left());
  s.suites.work(left());
  while (left() > 0) {
    try {
      if (!s.loading) {
        if (s.queue.empty()) break;
        Impl::Pending p = std::move(s.queue.front());
        s.queue.pop_front();
        s.loading = std::move(p.file);
        s.loading_id = p.id;
      }
      if (!s.loading->step(4096)) {
        if (s.loading->waiting_for_bytes()) break;  // the page's next slice comes between frames
        continue;
      }
      std::string message = s.workspace.finish(*s.loading);
      if (s.loading_id != 0) {  // a file, not a conversion's result
        s.files.push_back(s.loading->name());
        s.files_fingerprint += s.loading->fingerprint();
      }
      chakra::InputKind kind = s.loading->kind();
      s.loading.reset();
      if (!message.empty()) s.note(message);
      s.error.clear();
      s.file_opened(kind);
    } catch (const std::exception& e) {
      s.loading.reset();
      s.fail(e.what());
    }
  }
  s.start_conversions();
  if (!busy() && !s.pending_hash.empty()) {
    std::string h = std::move(s.pending_hash);
    s.pending_hash.clear();
    apply_hash(h);
  }
  // A link's runs: its traces are here now, so run the link's settings once each.
  std::deque<SimSettings>& link_runs = s.runs.link_runs;
  if (!link_runs.empty() && !busy() && !s.workspace.ranks().empty() && s.files.size() >= s.link_files &&
      !s.runs.running()) {
    const SimSettings settings = std::move(link_runs.front());
    link_runs.pop_front();
    if (!s.runs.start(settings)) link_runs.clear();  // the error says why; the rest would fail alike
  }
}

void App::Impl::file_opened(chakra::InputKind kind) {
  if (!workspace.suite_results.empty()) {
    for (chakra::Workspace::SuiteResultFile& r : std::exchange(workspace.suite_results, {}))
      suites.open_result(std::move(r));
    show_view("suite");
  }
  if (workspace.sweep_table) {
    try {
      sweeps.open_table(*std::exchange(workspace.sweep_table, std::nullopt));
      show_view("sweep");
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }
  // The new file may replace any rank: keep the selection by node id, not position.
  if (selected && current_rank() && !deferred_selection)
    deferred_selection = std::make_pair(rank, current_rank()->trace.id(*selected));
  ranks_changed();
  if (!workspace.ranks().empty() && !workspace.rank(rank)) rank = workspace.ranks().front()->rank;
  if (deferred_selection && workspace.rank(deferred_selection->first)) {
    rank = deferred_selection->first;
    if (RankCache* c = cache())
      if (auto pos = c->index->find(deferred_selection->second)) {
        selected = *pos;
        deferred_selection.reset();
      }
  }
  // A dropped network or system file replaces the settings, once both are known; other files
  // leave the (perhaps edited) settings alone.
  bool config = kind == chakra::InputKind::NetworkYaml || kind == chakra::InputKind::SystemJson;
  if (config && workspace.network && workspace.system) {
    runs.settings.preset = "(dropped files)";
    runs.settings.network = *workspace.network;
    runs.settings.system = *workspace.system;
  }
}

bool App::set_view(std::string_view name) { return impl_->show_view(name); }

bool App::run_simulation() { return impl_->runs.start(); }
void App::cancel_simulation() { impl_->runs.cancel(); }
bool App::generate_synthetic() { return impl_->generate_synthetic(); }

void App::fit_network_to_ranks() {
  try {
    impl_->runs.fit_to_ranks();
  } catch (const std::exception& e) {
    impl_->fail(e.what());
  }
}

void App::clear() {
  Impl& s = *impl_;
  s.runs.clear();
  s.workspace.clear();  // conversions still out come back stale and are ignored
  s.converting.clear();
  if (s.loading && s.loading_id == 0) s.loading.reset();
  std::erase_if(s.queue, [](const Impl::Pending& p) { return p.id == 0; });
  s.files.clear();
  s.files_fingerprint = 0;
  s.shown_run = 0;
  s.sweeps.clear();
  s.suites.clear();
  for (const auto& v : s.views) v->cleared();
  s.synth.active = false;
  s.error.clear();
  s.log.clear();  // a clean slate: the messages were about what is gone
  s.ranks_changed();
}

void App::simulation_progress(uint64_t nodes_done, uint64_t nodes_total) {
  impl_->runs.progress(nodes_done, nodes_total);
}
void App::simulation_finished(chakra::sim::SimResult result) { impl_->runs.finished(std::move(result)); }
void App::simulation_failed(const std::string& message) { impl_->runs.failed(message); }
void App::sweep_point_finished(uint64_t point, uint64_t generation, const chakra::sim::SimResult& result, double ms) {
  impl_->sweeps.point_finished(point, generation, result, ms);
}
void App::sweep_point_failed(uint64_t point, uint64_t generation, const std::string& message) {
  impl_->sweeps.point_failed(point, generation, message);
}

void App::suite_entry_finished(uint64_t entry, uint64_t generation, const std::string& rows_json) {
  impl_->suites.entry_finished(entry, generation, rows_json);
}
void App::suite_entry_failed(uint64_t entry, uint64_t generation, const std::string& message) {
  impl_->suites.entry_failed(entry, generation, message);
}

void App::select_node(uint32_t rank, uint32_t node) {
  impl_->rank = rank;
  impl_->selected = node;
}

// ---- AppContext --------------------------------------------------------------------------------

AppContext::AppContext(Platform& p)
    : platform(p),
      runs(p, workspace, [this](const std::string& line) { note(line); }),
      sweeps(p, [this](const std::string& line) { note(line); }),
      suites(p, [this](const std::string& line) { note(line); }) {}
AppContext::~AppContext() = default;

void AppContext::note(const std::string& line) {
  log.push_back(line);
  if (log.size() > 200) log.erase(log.begin());
}

void AppContext::fail(const std::string& what) {
  error = what;
  note("error: " + what);
}

RankCache* AppContext::cache() {
  const chakra::RankTrace* r = current_rank();
  if (!r) return nullptr;
  RankCache& c = caches_[rank];
  if (c.rank != r) {
    c = RankCache();
    c.rank = r;
    c.index = std::make_unique<chakra::IdIndex>(r->trace);
    c.deps = chakra::DepGraph::build(r->trace, *c.index, chakra::DepKind::Both);
    c.dependants = chakra::reverse(c.deps);
  }
  return &c;
}

void AppContext::ranks_changed() {
  caches_.clear();
  selected.reset();
  for (const auto& v : views) v->ranks_changed();
}

std::optional<std::pair<double, double>> AppContext::simulated_span(uint32_t n) {
  // Through the run's timeline model: O(log spans), where a walk over the spans would cost
  // every frame the details pane is drawn.
  const chakra::TimelineModel* m = shown_run > 0 ? runs.timeline(shown_run) : nullptr;
  auto at = m ? m->find(rank, n) : std::nullopt;
  if (!at) return std::nullopt;
  const chakra::TimelineTrack& tr = m->tracks[at->track];
  return std::make_pair(static_cast<double>(tr.start[at->index]), static_cast<double>(tr.end[at->index]));
}

bool AppContext::generate_synthetic() {
  try {
    chakra::synth::SynthOptions o;
    chakra::synth::apply_preset(synth.preset, o);
    o.shape.layers = static_cast<uint64_t>(synth.layers);
    o.shape.micro_batches = static_cast<uint64_t>(synth.micro_batches);
    o.par.dp = static_cast<uint64_t>(synth.dp);
    o.par.tp = static_cast<uint64_t>(synth.tp);
    o.par.pp = static_cast<uint64_t>(synth.pp);
    o.par.fsdp = synth.fsdp;
    note(workspace.add_synthetic(o));
    synth.active = true;
    files.clear();
    files_fingerprint = 0;
    ranks_changed();
    rank = 0;
    chakra::astra::SystemConfig& system = runs.settings.system;
    system.roofline = true;  // synthetic traces carry FLOPs and bytes, not durations
    if (system.peak_perf <= 0) system.peak_perf = 989;
    if (system.local_mem_bw <= 0) system.local_mem_bw = 3350;
    error.clear();
    return true;
  } catch (const std::exception& e) {
    fail(e.what());
    return false;
  }
}

bool AppContext::show_view(std::string_view name) {
  for (size_t i = 0; i < views.size(); ++i)
    if (views[i]->name() == name) {
      view = i;
      view_changed = true;
      return true;
    }
  return false;
}

// ---- the shell ---------------------------------------------------------------------------------

namespace {
constexpr float kSplitterWidth = 6;

// A vertical bar between two panes; dragging it changes `width` of the pane on its left
// (direction +1) or on its right (-1).
void pane_splitter(const char* id, float& width, float direction) {
  ImGui::InvisibleButton(id, ImVec2(kSplitterWidth, std::max(1.0f, ImGui::GetContentRegionAvail().y)));
  if (ImGui::IsItemHovered() || ImGui::IsItemActive()) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  if (ImGui::IsItemActive()) width += direction * ImGui::GetIO().MouseDelta.x;
  if (ImGui::IsItemHovered() || ImGui::IsItemActive()) {
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(a.x + 2, a.y), ImVec2(b.x - 2, b.y),
                                              ImGui::GetColorU32(ImGuiCol_SeparatorHovered));
  }
}
}  // namespace

// Every key and mouse action, one place (the views' hints point here).
void App::Impl::draw_keys() {
  static constexpr const char* kKeys[][3] = {
      {"Timeline", "wheel", "scroll the tracks"},
      {"", "Ctrl+wheel (pinch)", "zoom at the cursor"},
      {"", "Shift+wheel, sideways wheel", "pan"},
      {"", "W / S", "zoom in / out"},
      {"", "A / D", "pan left / right"},
      {"", "right-drag", "pan"},
      {"", "click", "select a slice: arrows in from what it waited for, out to what waited for it"},
      {"", "drag", "select an area: its events and busy time per name below"},
      {"", "F", "focus the selected slice (or the selected area)"},
      {"", ". / ,", "next / previous slice on the selected slice's track"},
      {"", "Esc", "clear the selection"},
      {"", "Ctrl+F, then Enter / Shift+Enter", "find slices by name: next / previous match"},
      {"", "click or drag the strip above", "move the window over the whole run"},
      {"", "click a rank's name", "fold its tracks into one row, or unfold them"},
      {"", "right-click a track's name", "pin it under the axis; fold or unfold every rank"},
      {"Graph", "wheel", "zoom at the cursor"},
      {"", "drag, right-drag", "pan"},
      {"", "click", "select a node"},
      {"Nodes", "click a row", "select the node"},
      {"", "Ctrl+C", "copy the selected row (tab-separated)"},
      {"Fields", "Ctrl+V", "paste from the system clipboard"},
      {"Anywhere", "drop files or a folder", "open traces, Kineto traces, configs"},
      {"", "?", "show or hide this list"},
  };
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x / 2, vp->WorkPos.y + vp->WorkSize.y / 2),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(1.0f);
  if (ImGui::Begin(
          "Keys and mouse", &show_keys,
          ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
    if (ImGui::BeginTable("keys", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& row : kKeys) {
        ImGui::TableNextRow();
        for (const char* cell : row) {
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(cell);
        }
      }
      ImGui::EndTable();
    }
    if (ImGui::IsWindowFocused() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) show_keys = false;
  }
  ImGui::End();
}

void App::copy_link() {
  impl_->platform.copy_text(share_hash());
  impl_->note("share link copied (traces are not in it: whoever opens it drops the same files)");
}

void App::draw() {
  Impl& s = *impl_;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("chakrakit", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  if (!s.platform.has_toolbar()) {
    if (ImGui::Button("Open files...")) s.platform.open_file_picker();
    ImGui::SameLine();
    if (ImGui::Button("Copy link")) copy_link();
    ImGui::SameLine();
    if (ImGui::Button("Clear")) clear();
    ImGui::SameLine();
    ImGui::TextDisabled("chakrakit %s - traces are decoded in this page and never uploaded", CHAKRA_VERSION);
  }
  if (!s.error.empty()) ImGui::TextColored(kErrorColour, "Error: %s", s.error.c_str());

  // Three panes side by side; the bars between them are dragged to resize.
  float total = ImGui::GetContentRegionAvail().x;
  s.sidebar_width = std::clamp(s.sidebar_width, 160.0f, std::max(160.0f, total * 0.5f));
  ImGui::BeginChild("sidebar", ImVec2(s.sidebar_width, 0), true);
  s.draw_sidebar();
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  pane_splitter("##sidebar_splitter", s.sidebar_width, +1);
  ImGui::SameLine(0, 0);
  bool details = s.selected && s.current_rank() && *s.selected < s.current_rank()->trace.size();
  s.details_width = std::clamp(s.details_width, 200.0f, std::max(200.0f, total * 0.6f));
  float main_width = details ? ImGui::GetContentRegionAvail().x - s.details_width - kSplitterWidth : 0;
  ImGui::BeginChild("main", ImVec2(main_width, 0), false);
  s.draw_views();
  ImGui::EndChild();
  if (details) {
    ImGui::SameLine(0, 0);
    pane_splitter("##details_splitter", s.details_width, -1);
    ImGui::SameLine(0, 0);
    ImGui::BeginChild("details", ImVec2(0, 0), true);
    s.draw_details();
    ImGui::EndChild();
  }
  ImGui::End();
  // "?" (not while typing) shows every key and mouse action; again, Esc or the close box hides it.
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.WantTextInput)
    for (ImWchar c : io.InputQueueCharacters)
      if (c == '?') s.show_keys = !s.show_keys;
  if (s.show_keys) s.draw_keys();

  std::string hash = share_hash();
  if (hash != s.last_hash) {
    s.last_hash = hash;
    s.platform.set_location_hash(hash);
  }
}

// The views' tabs; one asked for (AppContext::show_view) is selected, even from a view's draw.
void App::Impl::draw_views() {
  if (!ImGui::BeginTabBar("views")) return;
  const bool changing = view_changed;
  view_changed = false;
  for (size_t i = 0; i < views.size(); ++i) {
    const ImGuiTabItemFlags flags = (changing && view == i) ? ImGuiTabItemFlags_SetSelected : 0;
    if (!ImGui::BeginTabItem(views[i]->title(), nullptr, flags)) continue;
    if (!changing) view = i;
    views[i]->draw();
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

void draw_run_progress(const Runs& runs, float width) {
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, "run %d: %.0f%% of nodes, %.1f s", runs.running()->id,
                runs.running_fraction() * 100, runs.running_seconds());
  ImGui::ProgressBar(static_cast<float>(runs.running_fraction()), ImVec2(width, 0), overlay);
}

void App::Impl::draw_sidebar() {
  if (loading || !queue.empty()) {
    double f = loading ? loading->fraction() : 0;
    std::string label = loading ? loading->name() + " - " + std::to_string(loading->nodes()) + " nodes" : "queued";
    ImGui::TextUnformatted("Opening");
    ImGui::ProgressBar(f < 0 ? static_cast<float>(std::fmod(ImGui::GetTime(), 1.0)) : static_cast<float>(f),
                       ImVec2(-1, 0), label.c_str());
    if (!queue.empty()) ImGui::TextDisabled("%zu more file(s) queued", queue.size());
  }
  if (runs.running()) {
    ImGui::TextUnformatted("Simulating");
    draw_run_progress(runs, -1);
    if (ImGui::SmallButton("Cancel run")) runs.cancel();
  }
  ImGui::TextUnformatted("Ranks");
  if (workspace.ranks().empty()) {
    ImGui::TextWrapped(
        "Drop files anywhere on the page: Chakra .et or JSON, PyTorch host ET + Kineto, StableHLO "
        ".mlir, ASTRA-sim workloads and configs, sweep tables, suite results.");
    ImGui::Spacing();
    draw_synthetic();
  }
  ImGui::BeginChild("ranks", ImVec2(0, 220), false);
  for (const auto& r : workspace.ranks()) {
    char label[96];
    std::snprintf(label, sizeof label, "rank %u  (%llu nodes)##r%u", r->rank,
                  static_cast<unsigned long long>(r->summary.nodes), r->rank);
    if (ImGui::Selectable(label, r->rank == rank)) {
      if (rank != r->rank) selected.reset();
      rank = r->rank;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r->source.c_str());
  }
  ImGui::EndChild();
  if (workspace.network) ImGui::TextDisabled("network: %s", workspace.network_source.c_str());
  if (workspace.system) ImGui::TextDisabled("system: %s", workspace.system_source.c_str());
  if (!workspace.groups.empty())
    ImGui::TextDisabled("%zu communicator group%s", workspace.groups.size(), workspace.groups.size() == 1 ? "" : "s");
  ImGui::Separator();
  ImGui::TextUnformatted("Messages");
  // Every line wraps to the pane (a horizontal scrollbar hid the ends of long results and errors).
  ImGui::BeginChild("log", ImVec2(0, 0), false);
  for (const std::string& line : log) {
    const bool error = line.rfind("error: ", 0) == 0;
    if (error) ImGui::PushStyleColor(ImGuiCol_Text, kErrorColour);
    ImGui::TextWrapped("%s", line.c_str());
    if (error) ImGui::PopStyleColor();
  }
  if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY()) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

void App::Impl::draw_synthetic() {
  ImGui::TextUnformatted("Or generate a training step");
  const std::vector<std::string> presets = chakra::synth::preset_names();
  if (ImGui::BeginCombo("model", synth.preset.c_str())) {
    for (const std::string& p : presets)
      if (ImGui::Selectable(p.c_str(), p == synth.preset)) synth.preset = p;
    ImGui::EndCombo();
  }
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("layers", &synth.layers);
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("dp", &synth.dp);
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("tp", &synth.tp);
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("pp", &synth.pp);
  ImGui::Checkbox("fsdp", &synth.fsdp);
  if (ImGui::Button("Generate")) generate_synthetic();
}

}  // namespace chakra_web
