#include "app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_state.h"
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
  ImGui::ColorButton("##swatch", ImGui::ColorConvertU32ToFloat4(colour), ImGuiColorEditFlags_NoTooltip, ImVec2(swatch, swatch));
  ImGui::PopID();
  ImGui::SameLine(0, 4);
  ImGui::TextUnformatted(label.c_str());
}

std::string format_duration(double v, const std::string& unit) {
  double ns = (unit == "us" ? v * 1e3 : v) + 0.0;  // no "-0 ns"
  if (std::fabs(ns) < 0.5) ns = 0;
  char buf[48];
  const double size = std::fabs(ns);  // the unit by magnitude: times left of the start are negative
  if (size < 1e3) std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (size < 1e6) std::snprintf(buf, sizeof buf, "%.3g \u00b5s", ns / 1e3);
  else if (size < 1e9) std::snprintf(buf, sizeof buf, "%.4g ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.4g s", ns / 1e9);
  return buf;
}

// ---- App ------------------------------------------------------------------------------------

App::App(Platform& platform) : impl_(std::make_unique<Impl>(platform)) {
  impl_->use_preset(impl_->sim.preset);
  impl_->workspace.defer_checks = true;  // see work()
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
      std::any_of(queue.begin(), queue.end(), [&](const Pending& p) { return p.id != 0 && pytorch_coming(p.file.get()); }))
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
                          host && kineto ? job.host_name + " + " + job.kineto_name : host ? job.host_name : job.kineto_name,
                          host && kineto ? "linking and converting" : host ? "converting" : "reading its activity"});
    platform.start_conversion(std::move(job));
  }
}

void App::conversion_finished(chakra::ConvertedRank result) {
  Impl& s = *impl_;
  std::erase_if(s.converting, [&](const Impl::Converting& c) { return c.rank == result.rank && c.generation == result.generation; });
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
  // A sweep with points still to hand out (or to run here).
  if (const SweepState& w = impl_->sweep; w.running && w.next < w.points.size() &&
                                           (!impl_->platform.runs_sweep_points() || w.in_flight < 16))
    return true;
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
  while (left() > 0 && s.workspace.check_one(32768)) {
  }
  s.sweep_work(left());
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
      if (s.workspace.sweep_table) s.open_sweep_table(*std::exchange(s.workspace.sweep_table, std::nullopt));
      // The new file may replace any rank: keep the selection by node id, not position.
      if (s.selected && s.current_rank() && !s.deferred_selection)
        s.deferred_selection = std::make_pair(s.rank, s.current_rank()->trace.id(*s.selected));
      s.invalidate_rank_data();
      if (!s.workspace.ranks().empty() && !s.workspace.rank(s.rank)) s.rank = s.workspace.ranks().front()->rank;
      if (s.deferred_selection && s.workspace.rank(s.deferred_selection->first)) {
        s.rank = s.deferred_selection->first;
        if (RankCache* c = s.cache())
          if (auto pos = c->index->find(s.deferred_selection->second)) {
            s.selected = *pos;
            s.deferred_selection.reset();
          }
      }
      // A dropped network or system file replaces the settings, once both are known; other
      // files leave the (perhaps edited) settings alone.
      bool config = kind == chakra::InputKind::NetworkYaml || kind == chakra::InputKind::SystemJson;
      if (config && s.workspace.network && s.workspace.system) {
        s.sim.preset = "(dropped files)";
        s.sim.network = *s.workspace.network;
        s.sim.system = *s.workspace.system;
      }
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
  // A link to a run's timeline: its traces are here now, so run the link's settings once.
  if (!s.link_runs.empty() && !busy() && !s.workspace.ranks().empty() && s.files.size() >= s.link_files && !s.running) {
    const SimSettings settings = std::move(s.link_runs.front());
    s.link_runs.pop_front();
    if (!s.run_simulation(settings)) s.link_runs.clear();  // the error says why; the rest would fail alike
  }
}

void App::set_view(View v) {
  impl_->view = v;
  impl_->view_changed = true;
}

bool App::run_simulation() { return impl_->run_simulation(); }
void App::cancel_simulation() { impl_->cancel_simulation(); }
bool App::generate_synthetic() { return impl_->generate_synthetic(); }

void App::fit_network_to_ranks() {
  try {
    impl_->fit_settings_to_ranks();
  } catch (const std::exception& e) {
    impl_->fail(e.what());
  }
}

void App::clear() {
  Impl& s = *impl_;
  s.cancel_simulation();
  s.workspace.clear();  // conversions still out come back stale and are ignored
  s.converting.clear();
  if (s.loading && s.loading_id == 0) s.loading.reset();
  std::erase_if(s.queue, [](const Impl::Pending& p) { return p.id == 0; });
  s.files.clear();
  s.files_fingerprint = 0;
  s.link_runs.clear();
  s.runs.clear();
  s.next_run_id = 1;  // a clean slate: the next run is run 1 again
  s.timeline.source = 0;
  s.analysis_source = 0;
  s.analysis_compare = -1;
  s.cancel_sweep();
  std::string spec_text = std::move(s.sweep.spec_text);  // the editor keeps what was typed
  const uint64_t generation = s.sweep.generation + 1;    // reports of the old sweep stay ignored
  s.sweep = SweepState();
  s.sweep.spec_text = std::move(spec_text);
  s.sweep.generation = generation;
  s.synth.active = false;
  s.error.clear();
  s.log.clear();  // a clean slate: the messages were about what is gone
  s.invalidate_rank_data();
}

void App::select_node(uint32_t rank, uint32_t node) {
  impl_->rank = rank;
  impl_->selected = node;
}

void App::Impl::note(const std::string& line) {
  log.push_back(line);
  if (log.size() > 200) log.erase(log.begin());
}

void App::Impl::fail(const std::string& what) {
  error = what;
  note("error: " + what);
}

const chakra::RankTrace* App::Impl::current_rank() const { return workspace.rank(rank); }

RankCache* App::Impl::cache() {
  const chakra::RankTrace* r = current_rank();
  if (!r) return nullptr;
  RankCache& c = caches[rank];
  if (c.rank != r) {
    c = RankCache();
    c.rank = r;
    c.index = std::make_unique<chakra::IdIndex>(r->trace);
    c.deps = chakra::DepGraph::build(r->trace, *c.index, chakra::DepKind::Both);
    c.dependants = chakra::reverse(c.deps);
  }
  return &c;
}

void App::Impl::invalidate_rank_data() {
  caches.clear();
  analysis_cache.reset();
  comparison_cache = {};
  critical_path_order_for = nullptr;
  highlight.clear();
  highlight_for.reset();
  timeline.recorded.reset();
  timeline.recorded_ready = false;
  selected.reset();
}

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
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x / 2, vp->WorkPos.y + vp->WorkSize.y / 2), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(1.0f);
  if (ImGui::Begin("Keys and mouse", &show_keys,
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
  if (ImGui::BeginTabBar("views")) {
    for (const ViewEntry& v : kViews) {
      ImGuiTabItemFlags flags = (s.view_changed && s.view == v.view) ? ImGuiTabItemFlags_SetSelected : 0;
      if (!ImGui::BeginTabItem(v.title, nullptr, flags)) continue;
      if (!s.view_changed) s.view = v.view;
      (s.*v.draw)();
      ImGui::EndTabItem();
    }
    s.view_changed = false;
    ImGui::EndTabBar();
  }
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

void App::Impl::draw_sidebar() {
  if (loading || !queue.empty()) {
    double f = loading ? loading->fraction() : 0;
    std::string label = loading ? loading->name() + " - " + std::to_string(loading->nodes()) + " nodes" : "queued";
    ImGui::TextUnformatted("Opening");
    ImGui::ProgressBar(f < 0 ? static_cast<float>(std::fmod(ImGui::GetTime(), 1.0)) : static_cast<float>(f), ImVec2(-1, 0),
                       label.c_str());
    if (!queue.empty()) ImGui::TextDisabled("%zu more file(s) queued", queue.size());
  }
  if (running) {
    ImGui::TextUnformatted("Simulating");
    draw_run_progress(-1);
    if (ImGui::SmallButton("Cancel run")) cancel_simulation();
  }
  ImGui::TextUnformatted("Ranks");
  if (workspace.ranks().empty()) {
    ImGui::TextWrapped("Drop files anywhere on the page: Chakra .et or JSON, PyTorch host ET + Kineto, StableHLO "
                       ".mlir, ASTRA-sim workloads and configs, sweep tables.");
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
      highlight.clear();
      highlight_for.reset();
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

}  // namespace chakra_web
