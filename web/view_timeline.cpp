// Timeline view: one track per rank/NPU and lane (recorded times or a simulation run). Each frame
// asks chakra::visible_rects for what covers the pixels, so the cost follows the screen size, not
// the number of events; rectangles go to the GPU in one instanced draw (shaders/) when the
// platform has it.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <map>

#include <imgui.h>
#include <imgui_internal.h>  // RenderArrow
#include <imgui_stdlib.h>

#include "app_state.h"
#include "chakra/trace/schema.h"

namespace chakra_web {

namespace {
constexpr float kLabelWidth = 150;
constexpr float kRowHeight = 18;
constexpr float kAxisHeight = 22;

// ImGui 1.86 indexes keys by the platform's key codes; GLFW's (native and Emscripten's) are the
// ASCII capitals for letters.
bool key_down(char upper) { return ImGui::IsKeyDown(upper); }

}  // namespace

const chakra::TimelineModel* App::Impl::timeline_model() {
  auto rank_traces = [&] {
    std::vector<const chakra::Trace*> traces;
    for (const auto& r : workspace.ranks()) traces.push_back(&r->trace);
    return traces;
  };
  if (timeline.source > 0) {
    SimRun* run = run_by_id(timeline.source);
    if (!run) return nullptr;
    if (!run->timeline)
      run->timeline = std::make_unique<chakra::TimelineModel>(chakra::timeline_of_spans(run->result.spans, rank_traces()));
    return run->timeline.get();
  }
  if (!timeline.recorded_ready) {
    timeline.recorded = std::make_unique<chakra::TimelineModel>(chakra::timeline_of_traces(rank_traces()));
    timeline.recorded_ready = true;
  }
  return timeline.recorded.get();
}

void App::Impl::draw_timeline() {
  // Source: recorded times or one of the runs.
  std::string current = timeline.source == 0 ? "recorded times (trace timestamps)" : "simulation run " + std::to_string(timeline.source);
  ImGui::SetNextItemWidth(280);
  if (ImGui::BeginCombo("source", current.c_str())) {
    if (ImGui::Selectable("recorded times (trace timestamps)", timeline.source == 0)) timeline.source = 0, timeline.t1 = timeline.t0;
    for (const auto& run : runs) {
      std::string label = "simulation run " + std::to_string(run->id) + ": " + run->label;
      if (ImGui::Selectable(label.c_str(), timeline.source == run->id)) timeline.source = run->id, timeline.t1 = timeline.t0;
    }
    ImGui::EndCombo();
  }
  const chakra::TimelineModel* m = timeline_model();
  if (!m || m->events == 0) {
    ImGui::TextDisabled(workspace.ranks().empty() ? "No trace loaded."
                        : timeline.source == 0 ? "These traces carry no start times; run a simulation to get a timeline."
                                               : "This run recorded no spans.");
    return;
  }
  ImGui::SameLine();
  if (ImGui::Button("Fit") || timeline.t1 <= timeline.t0) {
    double pad = std::max(1.0, static_cast<double>(m->end - m->begin) * 0.01);
    timeline.t0 = static_cast<double>(m->begin) - pad;
    timeline.t1 = static_cast<double>(m->end) + pad;
  }
  ImGui::SameLine();
  auto fold_every_rank = [&](bool fold) {
    timeline.collapsed.clear();
    if (fold)
      for (const chakra::TimelineTrack& t : m->tracks) timeline.collapsed.insert(t.group);
  };
  if (ImGui::Button(timeline.collapsed.empty() ? "Fold ranks" : "Unfold ranks")) fold_every_rank(timeline.collapsed.empty());
  ImGui::SameLine();
  ImGui::TextDisabled("%llu events on %zu tracks; Ctrl+wheel zoom, right-click a track's name to pin it, ? for all keys",
                      static_cast<unsigned long long>(m->events), m->tracks.size());
  // The colours' legend, on a line of its own (the hint above fills the first).
  static constexpr const char* kSpanKinds[] = {"compute", "CPU", "collective", "send", "receive", "memory", "other"};
  const bool activities = m->categories == chakra::TimelineCategories::ActivityKind;
  const int kinds = activities ? static_cast<int>(chakra::TimelineActivity::Other) + 1 : 7;
  for (int k = 0; k < kinds; ++k) {
    if (k) ImGui::SameLine();
    const char* name = activities ? chakra::timeline_activity_name(static_cast<chakra::TimelineActivity>(k)) : kSpanKinds[k];
    legend_item(activities ? activity_colour(k) : span_kind_colour(k), name);
  }

  // Ctrl+F: find slices by name; Enter / Shift+Enter (or the arrows) select the next / previous
  // match and bring it into view; matches are outlined.
  auto event_name_view = [&](uint32_t group, uint32_t item) -> std::string_view {
    const chakra::RankTrace* r = workspace.rank(group);
    return r && item < r->trace.size() ? r->trace.name(item) : std::string_view();
  };
  ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed('F', false)) timeline.focus_search = true;
  if (timeline.focus_search) {
    ImGui::SetKeyboardFocusHere();
    timeline.focus_search = false;
  }
  ImGui::SetNextItemWidth(220);
  // Enter ends the edit (ImGui), so the box takes the focus back for the next Enter.
  const bool entered = ImGui::InputTextWithHint("##find", "find slices (Ctrl+F)", &timeline.query,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
  if (TimelineViewState::FoundIn now{m, m->events, timeline.query}; !(timeline.found_in == now)) {
    timeline.found = chakra::find_events(*m, timeline.query, event_name_view);
    timeline.found_in = std::move(now);
    timeline.found_at = -1;
  }
  int found_step = 0;
  if (!timeline.found.empty()) {
    ImGui::SameLine();
    if (ImGui::ArrowButton("##previous", ImGuiDir_Left)) found_step = -1;
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right)) found_step = 1;
    if (entered) {
      found_step = io.KeyShift ? -1 : 1;
      timeline.focus_search = true;
    }
    ImGui::SameLine();
    ImGui::Text("%d of %zu", timeline.found_at + 1, timeline.found.size());
  } else if (!timeline.query.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("no slice named like that");
  }
  if (found_step) {
    const int n = static_cast<int>(timeline.found.size());
    timeline.found_at = ((timeline.found_at < 0 && found_step < 0 ? 0 : timeline.found_at) + found_step + n) % n;
    const chakra::TimelineModel::Ref ref = timeline.found[timeline.found_at];
    const chakra::TimelineTrack& tr = m->tracks[ref.track];
    rank = tr.group;
    selected = tr.item[ref.index];
    std::tie(timeline.t0, timeline.t1) = chakra::focus_window(static_cast<double>(tr.start[ref.index]),
                                                              static_cast<double>(tr.end[ref.index]),
                                                              static_cast<double>(m->end - m->begin));
    timeline.scroll_to_track = static_cast<int>(ref.track);
    timeline.collapsed.erase(tr.group);  // the found slice's rank unfolds
  }

  const float stats_height = timeline.sel_t1 > timeline.sel_t0 ? 170.0f : 0.0f;
  // The overview strip: the whole run's busy time (summed over tracks) and the visible window;
  // a click or drag there moves the window.
  {
    constexpr size_t kBins = 400;
    if (timeline.density_of != std::make_pair(static_cast<const void*>(m), m->events)) {
      timeline.density = chakra::busy_per_bin(*m, kBins);
      timeline.density_of = {m, m->events};
    }
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float left = at.x + kLabelWidth, strip_w = ImGui::GetContentRegionAvail().x - kLabelWidth, strip_h = 18;
    ImGui::Dummy(ImVec2(kLabelWidth, strip_h));
    ImGui::SameLine(0, 0);
    ImGui::InvisibleButton("overview", ImVec2(std::max(strip_w, 1.0f), strip_h));
    const bool strip_held = ImGui::IsItemActive();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(left, at.y), ImVec2(left + strip_w, at.y + strip_h), IM_COL32(30, 33, 40, 255));
    const double peak = *std::max_element(timeline.density.begin(), timeline.density.end());
    const float bin_w = strip_w / kBins;
    for (size_t b = 0; b < kBins && peak > 0; ++b) {
      const float h = static_cast<float>(timeline.density[b] / peak) * (strip_h - 2);
      if (h > 0.3f) dl->AddRectFilled(ImVec2(left + bin_w * b, at.y + strip_h - 1 - h), ImVec2(left + bin_w * (b + 1), at.y + strip_h - 1),
                                      IM_COL32(120, 150, 200, 200));
    }
    const double whole = std::max(1.0, static_cast<double>(m->end - m->begin));
    auto strip_x = [&](double t) { return left + static_cast<float>((t - static_cast<double>(m->begin)) / whole) * strip_w; };
    const float w0 = std::clamp(strip_x(timeline.t0), left, left + strip_w), w1 = std::clamp(strip_x(timeline.t1), left, left + strip_w);
    dl->AddRectFilled(ImVec2(w0, at.y), ImVec2(std::max(w1, w0 + 2), at.y + strip_h), IM_COL32(255, 255, 255, 40));
    dl->AddRect(ImVec2(w0, at.y), ImVec2(std::max(w1, w0 + 2), at.y + strip_h), IM_COL32(255, 255, 255, 180));
    if (strip_held && strip_w > 0) {  // centre the window where the strip is held
      const double t = static_cast<double>(m->begin) + (io.MousePos.x - left) / strip_w * whole, half = (timeline.t1 - timeline.t0) / 2;
      timeline.t0 = t - half;
      timeline.t1 = t + half;
    }
  }
  // Rows: pinned tracks in a band under the axis, then each rank's tracks, or one row for a
  // folded rank.
  const chakra::TimelineRows layout = chakra::timeline_rows(
      *m, timeline.pinned, [&](uint32_t group) { return timeline.collapsed.count(group) > 0; });
  const std::vector<chakra::TimelineRow>& rows = layout.rows;
  ImVec2 avail = ImGui::GetContentRegionAvail();
  ImGui::BeginChild("timeline_canvas", ImVec2(0, avail.y - stats_height), false, ImGuiWindowFlags_NoScrollWithMouse);
  const float pinned_h = layout.pinned.empty() ? 0.0f : kRowHeight * static_cast<float>(layout.pinned.size()) + 3;
  const float header_h = kAxisHeight + pinned_h;  // stays at the top while the rows scroll
  float view_h = ImGui::GetWindowHeight();
  if (timeline.scroll_to_track >= 0 && timeline.scroll_to_track < static_cast<int>(layout.row_of_track.size())) {
    const float y = kRowHeight * static_cast<float>(layout.row_of_track[timeline.scroll_to_track]);
    ImGui::SetScrollY(std::max(0.0f, y - (view_h - header_h) / 2));
  }
  timeline.scroll_to_track = -1;
  ImVec2 origin = ImGui::GetCursorScreenPos();
  float width = ImGui::GetContentRegionAvail().x - kLabelWidth;
  float content_h = header_h + kRowHeight * static_cast<float>(rows.size());
  ImGui::InvisibleButton("tl", ImVec2(kLabelWidth + width, std::max(content_h, view_h - 4)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  bool hovered = ImGui::IsItemHovered();
  float scroll = ImGui::GetScrollY();
  if (width < 50) {
    ImGui::EndChild();
    return;
  }
  double span = timeline.t1 - timeline.t0;
  double px_per_unit = width / span;
  float x_left = origin.x + kLabelWidth;
  auto time_at = [&](float sx) { return timeline.t0 + (sx - x_left) / px_per_unit; };
  const float axis_y = origin.y + scroll, band_top = axis_y + kAxisHeight, rows_top = origin.y + header_h;
  auto row_y = [&](uint32_t row) { return rows_top + kRowHeight * static_cast<float>(row); };
  timeline.row0 = ImVec2(origin.x, rows_top);
  // Where a track is drawn: its row below (a folded rank's one row). Pinned tracks are found there
  // too, so arrows and outlines have one place to point at.
  auto track_y = [&](uint32_t track) { return row_y(layout.row_of_track[track]); };
  // Navigation as in Perfetto's UI: the wheel scrolls the tracks, Ctrl+wheel (a trackpad pinch)
  // zooms at the cursor, Shift+wheel or a sideways wheel pans; W/S zoom, A/D pan, right-drag pans.
  // Browsers report wheel steps from fractions to hundreds: a few steps per event at most.
  const double wheel = std::clamp(static_cast<double>(io.MouseWheel), -5.0, 5.0);
  const double wheel_sideways = std::clamp(static_cast<double>(io.MouseWheelH), -5.0, 5.0);
  if (hovered && io.KeyCtrl && wheel != 0) {
    double at = time_at(io.MousePos.x), f = std::pow(0.8, wheel);
    timeline.t0 = at - (at - timeline.t0) * f;
    timeline.t1 = at + (timeline.t1 - at) * f;
  } else if (hovered && (wheel_sideways != 0 || (io.KeyShift && wheel != 0))) {
    const double shift = -(wheel_sideways != 0 ? wheel_sideways : wheel) * 0.1 * span;
    timeline.t0 += shift;
    timeline.t1 += shift;
  } else if (hovered && wheel != 0) {
    ImGui::SetScrollY(std::max(0.0f, scroll - static_cast<float>(wheel) * 3 * kRowHeight));
  }
  timeline.scroll = scroll;
  if (hovered || ImGui::IsWindowFocused()) {
    double dt = io.DeltaTime > 0 ? io.DeltaTime : 1.0 / 60;
    double zoom = 1.0, pan = 0;
    if (key_down('W')) zoom *= std::pow(0.2, dt);
    if (key_down('S')) zoom *= std::pow(5.0, dt);
    if (key_down('A')) pan -= span * dt;
    if (key_down('D')) pan += span * dt;
    double mid = (timeline.t0 + timeline.t1) / 2 + pan, half = span / 2 * zoom;
    if (zoom != 1.0 || pan != 0) timeline.t0 = mid - half, timeline.t1 = mid + half;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Right)) {
    double shift = io.MouseDelta.x / px_per_unit;
    timeline.t0 -= shift;
    timeline.t1 -= shift;
  }
  // Keys (not while typing): F focuses the selected slice (or the selected area), `.`/`,` select
  // the next/previous slice on its track, Esc clears the selection.
  const double whole = static_cast<double>(m->end - m->begin);
  if ((hovered || ImGui::IsWindowFocused()) && !io.WantTextInput) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
      selected.reset();
      timeline.sel_t1 = timeline.sel_t0;
    }
    std::optional<chakra::TimelineModel::Ref> at = selected && current_rank() ? m->find(rank, *selected) : std::nullopt;
    auto show_track = [&](uint32_t track) {
      const float y = track_y(track) - origin.y;  // in the scrolled content
      if (y < scroll + header_h || y + kRowHeight > scroll + view_h) ImGui::SetScrollY(std::max(0.0f, y - header_h - (view_h - header_h) / 2));
    };
    if (at && (ImGui::IsKeyPressed('.') || ImGui::IsKeyPressed(','))) {
      const chakra::TimelineTrack& tr = m->tracks[at->track];
      const int step = ImGui::IsKeyPressed('.') ? 1 : -1;
      for (int64_t i = static_cast<int64_t>(at->index) + step; i >= 0 && i < static_cast<int64_t>(tr.size()); i += step)
        if (tr.item[i] != UINT32_MAX) {
          selected = tr.item[i];
          at->index = static_cast<uint32_t>(i);
          // Keep it in view: centred when it left the window.
          const double a = static_cast<double>(tr.start[i]), b = static_cast<double>(tr.end[i]);
          if (b < timeline.t0 || a > timeline.t1) {
            const double middle = (a + b) / 2;
            timeline.t0 = middle - span / 2;
            timeline.t1 = middle + span / 2;
          }
          break;
        }
    }
    if (!io.KeyCtrl && ImGui::IsKeyPressed('F', false)) {
      if (at) {
        const chakra::TimelineTrack& tr = m->tracks[at->track];
        std::tie(timeline.t0, timeline.t1) = chakra::focus_window(static_cast<double>(tr.start[at->index]),
                                                                  static_cast<double>(tr.end[at->index]), whole);
        show_track(at->track);
      } else if (timeline.sel_t1 > timeline.sel_t0) {
        timeline.t0 = timeline.sel_t0;
        timeline.t1 = timeline.sel_t1;
      }
    }
  }
  // The window stays on the data (a small margin each side), finite and at least 1e-3 wide.
  std::tie(timeline.t0, timeline.t1) =
      chakra::clamp_window(timeline.t0, timeline.t1, static_cast<double>(m->begin), static_cast<double>(m->end));
  span = timeline.t1 - timeline.t0;
  px_per_unit = width / span;

  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Axis.
  dl->AddRectFilled(ImVec2(origin.x, axis_y), ImVec2(x_left + width, axis_y + kAxisHeight), IM_COL32(34, 37, 45, 255));
  const double step = chakra::round_step(span / std::max(1.0, width / 110.0));  // a tick per ~110 px
  for (double tick : chakra::axis_ticks(static_cast<double>(m->begin), timeline.t0, timeline.t1, step)) {
    float x = x_left + static_cast<float>((tick - timeline.t0) * px_per_unit);
    dl->AddLine(ImVec2(x, axis_y + kAxisHeight - 6), ImVec2(x, axis_y + kAxisHeight), IM_COL32(180, 180, 190, 255));
    std::string label = format_duration(tick - static_cast<double>(m->begin) + 0.0, m->unit);
    dl->AddText(ImVec2(x + 3, axis_y + 3), IM_COL32(200, 200, 210, 255), label.c_str());
  }
  // Scrolling rows on screen.
  const int first_row = std::max(0, static_cast<int>(scroll / kRowHeight));
  const int last_row = std::min(static_cast<int>(rows.size()), static_cast<int>((scroll + view_h - header_h) / kRowHeight) + 1);
  std::vector<chakra::TimelineRect> rects;
  std::vector<RectInstance> instances;
  struct Label {
    ImVec2 p0, p1;
    uint32_t track, index;
  };
  std::vector<Label> labels;
  const bool by_span = m->categories == chakra::TimelineCategories::SpanKind;
  auto colour = [&](uint8_t category, float alpha) {
    return by_span ? span_kind_colour(category, alpha) : activity_colour(category, alpha);
  };
  constexpr ImU32 kLabelColour = IM_COL32(200, 200, 210, 255);
  // One row: its label (a fold arrow on a rank's first row) and the rects of its tracks (all of a
  // folded rank's, drawn over each other).
  auto draw_row = [&](const chakra::TimelineRow& row, float y, bool show_label) {
    const chakra::TimelineTrack& first = m->tracks[row.first_track];
    if (row.group_start) dl->AddLine(ImVec2(origin.x, y), ImVec2(x_left + width, y), IM_COL32(60, 64, 75, 255));
    if (show_label) {
      float text_x = origin.x + 4;
      if (row.group_start) {
        ImGui::RenderArrow(dl, ImVec2(origin.x + 3, y + 3), kLabelColour, row.collapsed ? ImGuiDir_Right : ImGuiDir_Down, 0.7f);
        text_x += 12;
      }
      const std::string text = row.collapsed ? chakra::timeline_group_label(*m, row.group) + " (" + std::to_string(row.tracks) + " tracks)"
                                             : chakra::timeline_track_label(*m, first);
      dl->PushClipRect(ImVec2(origin.x, y), ImVec2(x_left - 2, y + kRowHeight), true);
      dl->AddText(ImVec2(text_x, y + 2), kLabelColour, text.c_str());
      dl->PopClipRect();
    }
    for (uint32_t k = 0; k < row.tracks; ++k) {
      const uint32_t t = row.first_track + k;
      rects.clear();
      chakra::visible_rects(m->tracks[t], timeline.t0, timeline.t1, px_per_unit, rects);
      for (const chakra::TimelineRect& r : rects) {
        float x0 = x_left + static_cast<float>(std::max(r.x0, -1.0));
        float x1 = x_left + static_cast<float>(std::min(r.x1, static_cast<double>(width) + 1));
        x1 = std::max(x1, x0 + 1);
        instances.push_back({x0, y + 1, x1, y + kRowHeight - 1, colour(r.category, r.count > 1 || row.collapsed ? 0.75f : 1.0f)});
        if (r.count == 1 && x1 - x0 > 50 && !row.collapsed) labels.push_back({ImVec2(x0, y + 1), ImVec2(x1, y + kRowHeight - 1), t, r.first});
      }
    }
  };
  for (int row = first_row; row < last_row; ++row)
    draw_row(rows[row], row_y(row), rows[row].group_start || row == first_row || m->tracks[rows[row].first_track].lane == 0);
  const size_t row_labels = labels.size();  // the pinned band's come after
  // The scrolling rows pass under the pinned band: draw them, then the band over them.
  const float band_bottom = band_top + pinned_h;
  dl->PushClipRect(ImVec2(x_left, band_bottom), ImVec2(x_left + width, axis_y + view_h), true);
  if (!platform.draw_rects(instances))
    for (const RectInstance& r : instances) dl->AddRectFilled(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1), r.colour);
  dl->PopClipRect();
  if (!layout.pinned.empty()) {
    instances.clear();
    dl->AddRectFilled(ImVec2(origin.x, band_top), ImVec2(x_left + width, band_bottom), IM_COL32(26, 28, 34, 255));
    for (size_t k = 0; k < layout.pinned.size(); ++k) draw_row(layout.pinned[k], band_top + kRowHeight * static_cast<float>(k), true);
    dl->AddLine(ImVec2(origin.x, band_bottom - 1), ImVec2(x_left + width, band_bottom - 1), IM_COL32(120, 170, 255, 160), 2);
    dl->PushClipRect(ImVec2(x_left, band_top), ImVec2(x_left + width, band_bottom), true);
    if (!platform.draw_rects(instances))
      for (const RectInstance& r : instances) dl->AddRectFilled(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1), r.colour);
    dl->PopClipRect();
  }
  dl->PushClipRect(ImVec2(x_left, band_bottom), ImVec2(x_left + width, axis_y + view_h), true);
  // Slices the search found, outlined where they are on screen.
  for (const chakra::TimelineModel::Ref& ref : timeline.found) {
    const int row = static_cast<int>(layout.row_of_track[ref.track]);
    if (row < first_row || row >= last_row) continue;
    const chakra::TimelineTrack& tr = m->tracks[ref.track];
    const double a = static_cast<double>(tr.start[ref.index]), b = static_cast<double>(tr.end[ref.index]);
    if (b < timeline.t0 || a > timeline.t1) continue;
    const float y = row_y(row);
    const float x0 = x_left + static_cast<float>((a - timeline.t0) * px_per_unit);
    const float x1 = std::max(x0 + 2, x_left + static_cast<float>((b - timeline.t0) * px_per_unit));
    dl->AddRect(ImVec2(x0, y + 1), ImVec2(x1, y + kRowHeight - 1), IM_COL32(255, 230, 90, 255), 0, 0, 1.5f);
  }
  auto event_name = [&](uint32_t track, uint32_t index) -> std::string {
    const chakra::TimelineTrack& tr = m->tracks[track];
    const chakra::RankTrace* r = workspace.rank(tr.group);
    uint32_t item = tr.item[index];
    if (!r || item >= r->trace.size()) return "?";
    return std::string(r->trace.name(item));
  };
  auto draw_labels = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      const Label& l = labels[k];
      dl->PushClipRect(l.p0, l.p1, true);
      dl->AddText(ImVec2(l.p0.x + 3, l.p0.y), IM_COL32(15, 15, 20, 255), event_name(l.track, l.index).c_str());
      dl->PopClipRect();
    }
  };
  draw_labels(0, row_labels);
  dl->PushClipRect(ImVec2(x_left, band_top), ImVec2(x_left + width, band_bottom), false);
  draw_labels(row_labels, labels.size());
  dl->PopClipRect();
  // Selection and its dependencies as flow arrows (same rank).
  auto place = [&](uint32_t group, uint32_t item) -> std::optional<std::pair<ImVec2, ImVec2>> {
    auto ref = m->find(group, item);
    if (!ref) return std::nullopt;
    const auto& tr = m->tracks[ref->track];
    float y = track_y(ref->track);
    float x0 = x_left + static_cast<float>((static_cast<double>(tr.start[ref->index]) - timeline.t0) * px_per_unit);
    float x1 = x_left + static_cast<float>((static_cast<double>(tr.end[ref->index]) - timeline.t0) * px_per_unit);
    return std::make_pair(ImVec2(x0, y + 1), ImVec2(std::max(x1, x0 + 2), y + kRowHeight - 1));
  };
  if (selected && current_rank()) {
    if (auto me = place(rank, *selected)) {
      dl->AddRect(me->first, me->second, IM_COL32(255, 255, 255, 255), 0, 0, 2);
      if (RankCache* c = cache()) {
        // Flow arrows: in from what it waited for (a kernel's launch), out to what waited for it
        // (the kernels a CPU op launched), as far as either is on screen.
        auto arrow = [&](const std::pair<ImVec2, ImVec2>& from, const std::pair<ImVec2, ImVec2>& to, ImU32 colour) {
          ImVec2 a(from.second.x, (from.first.y + from.second.y) / 2), b(to.first.x, (to.first.y + to.second.y) / 2);
          dl->AddBezierCubic(a, ImVec2(a.x + 30, a.y), ImVec2(b.x - 30, b.y), b, colour, 1.5f);
          dl->AddTriangleFilled(b, ImVec2(b.x - 6, b.y - 3), ImVec2(b.x - 6, b.y + 3), colour);
        };
        for (uint32_t d : c->deps.deps(*selected))
          if (auto from = place(rank, d)) arrow(*from, *me, IM_COL32(250, 220, 120, 230));
        for (uint32_t d : c->dependants.deps(*selected))
          if (auto to = place(rank, d)) arrow(*me, *to, IM_COL32(130, 220, 160, 230));
      }
    }
  }
  // What is under the mouse: a pinned row, a scrolling row, or nothing.
  auto row_under = [&](float sy) -> const chakra::TimelineRow* {
    if (sy >= band_top && sy < band_top + kRowHeight * static_cast<float>(layout.pinned.size()))
      return &layout.pinned[static_cast<size_t>((sy - band_top) / kRowHeight)];
    if (sy < band_bottom) return nullptr;
    const int row = static_cast<int>(std::floor((sy - rows_top) / kRowHeight));
    return row >= 0 && row < static_cast<int>(rows.size()) ? &rows[row] : nullptr;
  };
  // The event under the mouse in a row (a folded rank: the first of its tracks with one there).
  auto event_under = [&](const chakra::TimelineRow& row, float sx) -> std::optional<chakra::TimelineModel::Ref> {
    for (uint32_t k = 0; k < row.tracks; ++k)
      if (auto e = chakra::pick_event(m->tracks[row.first_track + k], time_at(sx), 3 / px_per_unit))
        return chakra::TimelineModel::Ref{row.first_track + k, *e};
    return std::nullopt;
  };
  // Area selection (left drag) over the scrolling rows, or a click to select an event.
  auto row_at = [&](float sy) { return std::clamp(static_cast<int>(std::floor((sy - rows_top) / kRowHeight)), 0, static_cast<int>(rows.size()) - 1); };
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 4) && io.MouseClickedPos[0].x >= x_left) {
    ImVec2 start = io.MouseClickedPos[0];
    timeline.sel_t0 = time_at(std::min(start.x, io.MousePos.x));
    timeline.sel_t1 = time_at(std::max(start.x, io.MousePos.x));
    timeline.sel_row0 = row_at(std::min(start.y, io.MousePos.y));
    timeline.sel_row1 = row_at(std::max(start.y, io.MousePos.y));
  } else if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 16) {
    const chakra::TimelineRow* row = row_under(io.MousePos.y);
    if (io.MousePos.x < x_left) {
      // The label column: a click on a rank's first row folds or unfolds the rank.
      if (row && row->group_start && !timeline.collapsed.erase(row->group)) timeline.collapsed.insert(row->group);
    } else {
      timeline.sel_t1 = timeline.sel_t0;  // a click clears the area
      if (row)
        if (auto e = event_under(*row, io.MousePos.x); e && m->tracks[e->track].item[e->index] != UINT32_MAX) {
          rank = m->tracks[e->track].group;
          selected = m->tracks[e->track].item[e->index];
        }
    }
  }
  // Right click on a label: pin or unpin the track, fold ranks.
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Right) && io.MouseDragMaxDistanceSqr[1] < 16 && io.MousePos.x < x_left)
    if (const chakra::TimelineRow* row = row_under(io.MousePos.y)) {
      timeline.menu_track = static_cast<int>(row->first_track);
      timeline.menu_group_row = row->collapsed;
      ImGui::OpenPopup("track_menu");
    }
  if (ImGui::BeginPopup("track_menu")) {
    if (timeline.menu_track >= 0 && timeline.menu_track < static_cast<int>(m->tracks.size())) {
      const chakra::TimelineTrack& tr = m->tracks[timeline.menu_track];
      const chakra::TimelineTrackKey key{tr.group, tr.lane_class, tr.lane};
      auto pin = std::find(timeline.pinned.begin(), timeline.pinned.end(), key);
      if (!timeline.menu_group_row) {
        if (ImGui::MenuItem(pin == timeline.pinned.end() ? "Pin to top" : "Unpin")) {
          if (pin == timeline.pinned.end()) timeline.pinned.push_back(key);
          else timeline.pinned.erase(pin);
        }
      }
      const std::string group = chakra::timeline_group_label(*m, tr.group);
      const bool folded = timeline.collapsed.count(tr.group) > 0;
      if (ImGui::MenuItem(((folded ? "Unfold " : "Fold ") + group).c_str())) {
        if (folded) timeline.collapsed.erase(tr.group);
        else timeline.collapsed.insert(tr.group);
      }
      if (ImGui::MenuItem("Fold every rank")) fold_every_rank(true);
      if (ImGui::MenuItem("Unfold every rank")) fold_every_rank(false);
      if (!timeline.pinned.empty() && ImGui::MenuItem("Unpin all")) timeline.pinned.clear();
    }
    ImGui::EndPopup();
  }
  if (timeline.sel_t1 > timeline.sel_t0 && !rows.empty()) {
    float x0 = x_left + static_cast<float>((timeline.sel_t0 - timeline.t0) * px_per_unit);
    float x1 = x_left + static_cast<float>((timeline.sel_t1 - timeline.t0) * px_per_unit);
    float y0 = row_y(static_cast<uint32_t>(std::max(0, timeline.sel_row0)));
    float y1 = row_y(static_cast<uint32_t>(std::max(0, timeline.sel_row1)) + 1);
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(120, 170, 255, 50));
    dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(120, 170, 255, 200));
  }
  dl->PopClipRect();
  if (hovered && io.MousePos.x >= x_left)
    if (const chakra::TimelineRow* row = row_under(io.MousePos.y))
      if (auto e = event_under(*row, io.MousePos.x)) {
        const auto& tr = m->tracks[e->track];
        ImGui::SetTooltip("%s\n%s", event_name(e->track, e->index).c_str(),
                          format_duration(static_cast<double>(tr.end[e->index] - tr.start[e->index]), m->unit).c_str());
      }
  ImGui::EndChild();

  if (stats_height > 0) {
    const std::vector<uint32_t> tracks = layout.tracks_of_rows(static_cast<size_t>(std::max(0, timeline.sel_row0)),
                                                               static_cast<size_t>(std::max(0, timeline.sel_row1)));
    chakra::AreaStats st = chakra::area_stats(*m, tracks, timeline.sel_t0, timeline.sel_t1);
    ImGui::Text("Selection: %s on %zu tracks, %llu events, busy %s", format_duration(timeline.sel_t1 - timeline.sel_t0, m->unit).c_str(),
                tracks.size(), static_cast<unsigned long long>(st.events), format_duration(st.busy, m->unit).c_str());
    std::map<std::string, std::pair<uint64_t, double>> by_name;
    for (const auto& ref : st.refs) {
      const auto& tr = m->tracks[ref.track];
      double overlap = std::min<double>(timeline.sel_t1, static_cast<double>(tr.end[ref.index])) -
                       std::max<double>(timeline.sel_t0, static_cast<double>(tr.start[ref.index]));
      auto& e = by_name[event_name(ref.track, ref.index)];
      ++e.first;
      e.second += overlap;
    }
    std::vector<std::pair<std::string, std::pair<uint64_t, double>>> sorted(by_name.begin(), by_name.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
    if (ImGui::BeginTable("area", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg)) {
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableSetupColumn("name");
      ImGui::TableSetupColumn("events");
      ImGui::TableSetupColumn("time in selection");
      ImGui::TableHeadersRow();
      for (const auto& [name, v] : sorted) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(name.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%llu", static_cast<unsigned long long>(v.first));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_duration(v.second, m->unit).c_str());
      }
      ImGui::EndTable();
    }
  }
}

}  // namespace chakra_web
