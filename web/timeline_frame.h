// One frame of the Timeline view (TimelineFrame: the view's controller, which lays the rows out,
// pans, zooms and selects; the rows draw themselves, timeline_items.h) and what the view keeps
// between frames (TimelineState). Private to web/: view_timeline.cpp alone includes it.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <imgui.h>
#include <imgui_internal.h>  // RenderArrow
#include <imgui_stdlib.h>

#include "app_context.h"
#include "chakra/trace/schema.h"
#include "timeline_items.h"

namespace chakra_web {

inline constexpr float kLabelWidth = 150;
inline constexpr float kRowHeight = 18;
inline constexpr float kAxisHeight = 22;

// ImGui 1.86 indexes keys by the platform's key codes; GLFW's (native and Emscripten's) are the
// ASCII capitals for letters.
inline bool key_down(char upper) { return ImGui::IsKeyDown(upper); }

// What the Timeline view keeps between frames.
struct TimelineState {
  double t0 = 0, t1 = 0;  // visible window; t1 <= t0 means "fit"
  float scroll = 0;       // of the tracks, in pixels (the last frame's)
  // Ctrl+F: the slices whose name has `query`, found for `found_in` (model, events, query),
  // and the one last shown.
  std::string query;
  std::vector<chakra::TimelineModel::Ref> found;
  struct FoundIn {
    const chakra::TimelineModel* model = nullptr;
    uint64_t events = 0;
    std::string query;
    bool operator==(const FoundIn&) const = default;
  } found_in;
  int found_at = -1;
  int scroll_to_track = -1;     // a track to bring into view in the next frame
  ImVec2 row0;                  // where row 0's label begins on screen (the last frame's)
  int menu_track = -1;          // the track whose label was right-clicked
  bool menu_group_row = false;  // ... on a folded rank's row
  bool focus_search = false;
  // The overview strip's density, for `density_of` (model, events).
  std::vector<double> density;
  std::pair<const void*, uint64_t> density_of{nullptr, 0};
  bool selecting = false;
  double sel_t0 = 0, sel_t1 = 0;
  int sel_row0 = -1, sel_row1 = -1;  // rows of the scrolling part (TimelineRows::rows)
  // Tracks pinned under the axis, and the groups (ranks) folded into one row each.
  std::vector<chakra::TimelineTrackKey> pinned;
  std::set<uint32_t> collapsed;
};

// One frame of the Timeline view: the window's geometry once laid out and the steps that draw it
// and take the input, each a method, run in draw_timeline's order. Frame-local; what outlives the
// frame is in TimelineState.
class TimelineFrame {
 public:
  TimelineFrame(AppContext& app, TimelineState& tl, const chakra::TimelineModel& m)
      : app_(app), tl_(tl), m_(m), io_(ImGui::GetIO()) {}

  // Fit, fold, the hint and the colours' legend.
  void toolbar() {
    ImGui::SameLine();
    if (ImGui::Button("Fit") || tl_.t1 <= tl_.t0) {
      const double pad = std::max(1.0, static_cast<double>(m_.end - m_.begin) * 0.01);
      tl_.t0 = static_cast<double>(m_.begin) - pad;
      tl_.t1 = static_cast<double>(m_.end) + pad;
    }
    ImGui::SameLine();
    if (ImGui::Button(tl_.collapsed.empty() ? "Fold ranks" : "Unfold ranks")) fold_every_rank(tl_.collapsed.empty());
    ImGui::SameLine();
    ImGui::TextDisabled(
        "%llu events on %zu tracks; Ctrl+wheel zoom, right-click a track's name to pin it, ? for all keys",
        static_cast<unsigned long long>(m_.events), m_.tracks.size());
    // The legend, on a line of its own (the hint above fills the first).
    static constexpr const char* kSpanKinds[] = {"compute", "CPU", "collective", "send", "receive", "memory", "other"};
    const bool activities = m_.categories == chakra::TimelineCategories::ActivityKind;
    const int kinds = activities ? static_cast<int>(chakra::TimelineActivity::Other) + 1 : 7;
    for (int k = 0; k < kinds; ++k) {
      if (k) ImGui::SameLine();
      const char* name =
          activities ? chakra::timeline_activity_name(static_cast<chakra::TimelineActivity>(k)) : kSpanKinds[k];
      legend_item(activities ? activity_colour(k) : span_kind_colour(k), name);
    }
  }

  // Ctrl+F: find slices by name; Enter / Shift+Enter (or the arrows) select the next / previous
  // match and bring it into view; matches are outlined.
  void search() {
    auto event_name_view = [&](uint32_t group, uint32_t item) -> std::string_view {
      const chakra::RankTrace* r = app_.workspace.rank(group);
      return r && item < r->trace.size() ? r->trace.name(item) : std::string_view();
    };
    if (io_.KeyCtrl && ImGui::IsKeyPressed('F', false)) tl_.focus_search = true;
    if (tl_.focus_search) {
      ImGui::SetKeyboardFocusHere();
      tl_.focus_search = false;
    }
    ImGui::SetNextItemWidth(220);
    // Enter ends the edit (ImGui), so the box takes the focus back for the next Enter.
    const bool entered =
        ImGui::InputTextWithHint("##find", "find slices (Ctrl+F)", &tl_.query, ImGuiInputTextFlags_EnterReturnsTrue);
    if (TimelineState::FoundIn now{&m_, m_.events, tl_.query}; !(tl_.found_in == now)) {
      tl_.found = chakra::find_events(m_, tl_.query, event_name_view);
      tl_.found_in = std::move(now);
      tl_.found_at = -1;
    }
    int found_step = 0;
    if (!tl_.found.empty()) {
      ImGui::SameLine();
      if (ImGui::ArrowButton("##previous", ImGuiDir_Left)) found_step = -1;
      ImGui::SameLine();
      if (ImGui::ArrowButton("##next", ImGuiDir_Right)) found_step = 1;
      if (entered) {
        found_step = io_.KeyShift ? -1 : 1;
        tl_.focus_search = true;
      }
      ImGui::SameLine();
      ImGui::Text("%d of %zu", tl_.found_at + 1, tl_.found.size());
    } else if (!tl_.query.empty()) {
      ImGui::SameLine();
      ImGui::TextDisabled("no slice named like that");
    }
    if (found_step) {
      const int n = static_cast<int>(tl_.found.size());
      tl_.found_at = ((tl_.found_at < 0 && found_step < 0 ? 0 : tl_.found_at) + found_step + n) % n;
      const chakra::TimelineModel::Ref ref = tl_.found[tl_.found_at];
      const chakra::TimelineTrack& tr = m_.tracks[ref.track];
      app_.rank = tr.group;
      app_.selected = tr.item[ref.index];
      std::tie(tl_.t0, tl_.t1) =
          chakra::focus_window(static_cast<double>(tr.start[ref.index]), static_cast<double>(tr.end[ref.index]),
                               static_cast<double>(m_.end - m_.begin));
      tl_.scroll_to_track = static_cast<int>(ref.track);
      tl_.collapsed.erase(tr.group);  // the found slice's rank unfolds
    }
  }

  // The overview strip: the whole run's busy time (summed over tracks) and the visible window;
  // a click or drag there moves the window.
  void overview() {
    constexpr size_t kBins = 400;
    if (tl_.density_of != std::make_pair(static_cast<const void*>(&m_), m_.events)) {
      tl_.density = chakra::busy_per_bin(m_, kBins);
      tl_.density_of = {&m_, m_.events};
    }
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float left = at.x + kLabelWidth, strip_w = ImGui::GetContentRegionAvail().x - kLabelWidth, strip_h = 18;
    ImGui::Dummy(ImVec2(kLabelWidth, strip_h));
    ImGui::SameLine(0, 0);
    ImGui::InvisibleButton("overview", ImVec2(std::max(strip_w, 1.0f), strip_h));
    const bool strip_held = ImGui::IsItemActive();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(left, at.y), ImVec2(left + strip_w, at.y + strip_h), IM_COL32(30, 33, 40, 255));
    const double peak = *std::max_element(tl_.density.begin(), tl_.density.end());
    const float bin_w = strip_w / kBins;
    for (size_t b = 0; b < kBins && peak > 0; ++b) {
      const float h = static_cast<float>(tl_.density[b] / peak) * (strip_h - 2);
      if (h > 0.3f)
        dl->AddRectFilled(ImVec2(left + bin_w * b, at.y + strip_h - 1 - h),
                          ImVec2(left + bin_w * (b + 1), at.y + strip_h - 1), IM_COL32(120, 150, 200, 200));
    }
    const double whole = std::max(1.0, static_cast<double>(m_.end - m_.begin));
    auto strip_x = [&](double t) {
      return left + static_cast<float>((t - static_cast<double>(m_.begin)) / whole) * strip_w;
    };
    const float w0 = std::clamp(strip_x(tl_.t0), left, left + strip_w),
                w1 = std::clamp(strip_x(tl_.t1), left, left + strip_w);
    dl->AddRectFilled(ImVec2(w0, at.y), ImVec2(std::max(w1, w0 + 2), at.y + strip_h), IM_COL32(255, 255, 255, 40));
    dl->AddRect(ImVec2(w0, at.y), ImVec2(std::max(w1, w0 + 2), at.y + strip_h), IM_COL32(255, 255, 255, 180));
    if (strip_held && strip_w > 0) {  // centre the window where the strip is held
      const double t = static_cast<double>(m_.begin) + (io_.MousePos.x - left) / strip_w * whole,
                   half = (tl_.t1 - tl_.t0) / 2;
      tl_.t0 = t - half;
      tl_.t1 = t + half;
    }
  }

  // The tracks: axis, rows, the pinned band, and what is drawn over them, in a scrolling child.
  void canvas() {
    if (!begin_canvas()) return;
    navigate();
    keys();
    // The window stays on the data (a small margin each side), finite and at least 1e-3 wide.
    std::tie(tl_.t0, tl_.t1) =
        chakra::clamp_window(tl_.t0, tl_.t1, static_cast<double>(m_.begin), static_cast<double>(m_.end));
    span_ = tl_.t1 - tl_.t0;
    px_per_unit_ = width_ / span_;
    dl_ = ImGui::GetWindowDrawList();
    draw_axis();
    draw_rows();
    dl_->PushClipRect(ImVec2(x_left_, band_bottom_), ImVec2(x_left_ + width_, axis_y_ + view_h_), true);
    draw_found();
    draw_labels();
    draw_flow_arrows();
    take_clicks();
    track_menu();
    draw_area();
    dl_->PopClipRect();
    tooltip();
    ImGui::EndChild();
  }

  // Below the tracks, while an area is selected: what ran in it, by name.
  void area_stats() {
    if (stats_height_ <= 0) return;
    const std::vector<uint32_t> tracks = layout_.tracks_of_rows(static_cast<size_t>(std::max(0, tl_.sel_row0)),
                                                                static_cast<size_t>(std::max(0, tl_.sel_row1)));
    chakra::AreaStats st = chakra::area_stats(m_, tracks, tl_.sel_t0, tl_.sel_t1);
    ImGui::Text("Selection: %s on %zu tracks, %llu events, busy %s",
                format_duration(tl_.sel_t1 - tl_.sel_t0, m_.unit).c_str(), tracks.size(),
                static_cast<unsigned long long>(st.events), format_duration(st.busy, m_.unit).c_str());
    std::map<std::string, std::pair<uint64_t, double>> by_name;
    for (const auto& ref : st.refs) {
      const auto& tr = m_.tracks[ref.track];
      const double overlap = std::min<double>(tl_.sel_t1, static_cast<double>(tr.end[ref.index])) -
                             std::max<double>(tl_.sel_t0, static_cast<double>(tr.start[ref.index]));
      auto& e = by_name[event_name(ref.track, ref.index)];
      ++e.first;
      e.second += overlap;
    }
    std::vector<std::pair<std::string, std::pair<uint64_t, double>>> sorted(by_name.begin(), by_name.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
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
        ImGui::TextUnformatted(format_duration(v.second, m_.unit).c_str());
      }
      ImGui::EndTable();
    }
  }

 private:
  using Box = std::pair<ImVec2, ImVec2>;
  void fold_every_rank(bool fold) {
    tl_.collapsed.clear();
    if (fold)
      for (const chakra::TimelineTrack& t : m_.tracks) tl_.collapsed.insert(t.group);
  }
  std::string event_name(uint32_t track, uint32_t index) const {
    const chakra::TimelineTrack& tr = m_.tracks[track];
    const chakra::RankTrace* r = app_.workspace.rank(tr.group);
    const uint32_t item = tr.item[index];
    if (!r || item >= r->trace.size()) return "?";
    return std::string(r->trace.name(item));
  }
  double time_at(float sx) const { return tl_.t0 + (sx - x_left_) / px_per_unit_; }
  float row_y(uint32_t row) const { return rows_top_ + kRowHeight * static_cast<float>(row); }
  // Where a track is drawn: its row below (a folded rank's one row). Pinned tracks are found there
  // too, so arrows and outlines have one place to point at.
  float track_y(uint32_t track) const { return row_y(layout_.row_of_track[track]); }

  // Lays the rows out and opens the child they scroll in; false (the child closed) when too narrow.
  bool begin_canvas() {
    stats_height_ = tl_.sel_t1 > tl_.sel_t0 ? 170.0f : 0.0f;
    // Rows: pinned tracks in a band under the axis, then each rank's tracks, or one row for a
    // folded rank.
    layout_ = chakra::timeline_rows(m_, tl_.pinned, [&](uint32_t group) { return tl_.collapsed.count(group) > 0; });
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    ImGui::BeginChild("timeline_canvas", ImVec2(0, avail.y - stats_height_), false, ImGuiWindowFlags_NoScrollWithMouse);
    pinned_h_ = layout_.pinned.empty() ? 0.0f : kRowHeight * static_cast<float>(layout_.pinned.size()) + 3;
    header_h_ = kAxisHeight + pinned_h_;  // stays at the top while the rows scroll
    view_h_ = ImGui::GetWindowHeight();
    if (tl_.scroll_to_track >= 0 && tl_.scroll_to_track < static_cast<int>(layout_.row_of_track.size())) {
      const float y = kRowHeight * static_cast<float>(layout_.row_of_track[tl_.scroll_to_track]);
      ImGui::SetScrollY(std::max(0.0f, y - (view_h_ - header_h_) / 2));
    }
    tl_.scroll_to_track = -1;
    origin_ = ImGui::GetCursorScreenPos();
    width_ = ImGui::GetContentRegionAvail().x - kLabelWidth;
    const float content_h = header_h_ + kRowHeight * static_cast<float>(layout_.rows.size());
    ImGui::InvisibleButton("tl", ImVec2(kLabelWidth + width_, std::max(content_h, view_h_ - 4)),
                           ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
    hovered_ = ImGui::IsItemHovered();
    scroll_ = ImGui::GetScrollY();
    if (width_ < 50) {
      ImGui::EndChild();
      return false;
    }
    span_ = tl_.t1 - tl_.t0;
    px_per_unit_ = width_ / span_;
    x_left_ = origin_.x + kLabelWidth;
    axis_y_ = origin_.y + scroll_;
    band_top_ = axis_y_ + kAxisHeight;
    band_bottom_ = band_top_ + pinned_h_;
    rows_top_ = origin_.y + header_h_;
    tl_.row0 = ImVec2(origin_.x, rows_top_);
    return true;
  }

  // Navigation as in Perfetto's UI: the wheel scrolls the tracks, Ctrl+wheel (a trackpad pinch)
  // zooms at the cursor, Shift+wheel or a sideways wheel pans; W/S zoom, A/D pan, right-drag pans.
  // Browsers report wheel steps from fractions to hundreds: a few steps per event at most.
  void navigate() {
    const double wheel = std::clamp(static_cast<double>(io_.MouseWheel), -5.0, 5.0);
    const double wheel_sideways = std::clamp(static_cast<double>(io_.MouseWheelH), -5.0, 5.0);
    if (hovered_ && io_.KeyCtrl && wheel != 0) {
      const double at = time_at(io_.MousePos.x), f = std::pow(0.8, wheel);
      tl_.t0 = at - (at - tl_.t0) * f;
      tl_.t1 = at + (tl_.t1 - at) * f;
    } else if (hovered_ && (wheel_sideways != 0 || (io_.KeyShift && wheel != 0))) {
      const double shift = -(wheel_sideways != 0 ? wheel_sideways : wheel) * 0.1 * span_;
      tl_.t0 += shift;
      tl_.t1 += shift;
    } else if (hovered_ && wheel != 0) {
      ImGui::SetScrollY(std::max(0.0f, scroll_ - static_cast<float>(wheel) * 3 * kRowHeight));
    }
    tl_.scroll = scroll_;
    if (hovered_ || ImGui::IsWindowFocused()) {
      const double dt = io_.DeltaTime > 0 ? io_.DeltaTime : 1.0 / 60;
      double zoom = 1.0, pan = 0;
      if (key_down('W')) zoom *= std::pow(0.2, dt);
      if (key_down('S')) zoom *= std::pow(5.0, dt);
      if (key_down('A')) pan -= span_ * dt;
      if (key_down('D')) pan += span_ * dt;
      const double mid = (tl_.t0 + tl_.t1) / 2 + pan, half = span_ / 2 * zoom;
      if (zoom != 1.0 || pan != 0) tl_.t0 = mid - half, tl_.t1 = mid + half;
    }
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Right)) {
      const double shift = io_.MouseDelta.x / px_per_unit_;
      tl_.t0 -= shift;
      tl_.t1 -= shift;
    }
  }

  // Keys (not while typing): F focuses the selected slice (or the selected area), `.`/`,` select
  // the next/previous slice on its track, Esc clears the selection.
  void keys() {
    if (!(hovered_ || ImGui::IsWindowFocused()) || io_.WantTextInput) return;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
      app_.selected.reset();
      tl_.sel_t1 = tl_.sel_t0;
    }
    std::optional<chakra::TimelineModel::Ref> at =
        app_.selected && app_.current_rank() ? m_.find(app_.rank, *app_.selected) : std::nullopt;
    if (at && (ImGui::IsKeyPressed('.') || ImGui::IsKeyPressed(','))) {
      const chakra::TimelineTrack& tr = m_.tracks[at->track];
      const int step = ImGui::IsKeyPressed('.') ? 1 : -1;
      for (int64_t i = static_cast<int64_t>(at->index) + step; i >= 0 && i < static_cast<int64_t>(tr.size()); i += step)
        if (tr.item[i] != UINT32_MAX) {
          app_.selected = tr.item[i];
          at->index = static_cast<uint32_t>(i);
          // Keep it in view: centred when it left the window.
          const double a = static_cast<double>(tr.start[i]), b = static_cast<double>(tr.end[i]);
          if (b < tl_.t0 || a > tl_.t1) {
            const double middle = (a + b) / 2;
            tl_.t0 = middle - span_ / 2;
            tl_.t1 = middle + span_ / 2;
          }
          break;
        }
    }
    if (!io_.KeyCtrl && ImGui::IsKeyPressed('F', false)) {
      if (at) {
        const chakra::TimelineTrack& tr = m_.tracks[at->track];
        std::tie(tl_.t0, tl_.t1) =
            chakra::focus_window(static_cast<double>(tr.start[at->index]), static_cast<double>(tr.end[at->index]),
                                 static_cast<double>(m_.end - m_.begin));
        const float y = track_y(at->track) - origin_.y;  // in the scrolled content
        if (y < scroll_ + header_h_ || y + kRowHeight > scroll_ + view_h_)
          ImGui::SetScrollY(std::max(0.0f, y - header_h_ - (view_h_ - header_h_) / 2));
      } else if (tl_.sel_t1 > tl_.sel_t0) {
        tl_.t0 = tl_.sel_t0;
        tl_.t1 = tl_.sel_t1;
      }
    }
  }

  void draw_axis() {
    dl_->AddRectFilled(ImVec2(origin_.x, axis_y_), ImVec2(x_left_ + width_, axis_y_ + kAxisHeight),
                       IM_COL32(34, 37, 45, 255));
    const double step = chakra::round_step(span_ / std::max(1.0, width_ / 110.0));  // a tick per ~110 px
    for (double tick : chakra::axis_ticks(static_cast<double>(m_.begin), tl_.t0, tl_.t1, step)) {
      const float x = x_left_ + static_cast<float>((tick - tl_.t0) * px_per_unit_);
      dl_->AddLine(ImVec2(x, axis_y_ + kAxisHeight - 6), ImVec2(x, axis_y_ + kAxisHeight),
                   IM_COL32(180, 180, 190, 255));
      const std::string label = format_duration(tick - static_cast<double>(m_.begin) + 0.0, m_.unit);
      dl_->AddText(ImVec2(x + 3, axis_y_ + 3), IM_COL32(200, 200, 210, 255), label.c_str());
    }
  }

  // One row: its label (a fold arrow on a rank's first row) and the rects of its tracks (all of a
  // folded rank's, drawn over each other) into instances_, the slices wide enough for a name
  // into labels_.
  void draw_row(const chakra::TimelineRow& row, float y, bool show_label) {
    constexpr ImU32 kLabelColour = IM_COL32(200, 200, 210, 255);
    with_timeline_item(m_, row, [&](const TimelineItem& item) {
      if (row.group_start) dl_->AddLine(ImVec2(origin_.x, y), ImVec2(x_left_ + width_, y), IM_COL32(60, 64, 75, 255));
      if (show_label) {
        float text_x = origin_.x + 4;
        if (row.group_start) {
          ImGui::RenderArrow(dl_, ImVec2(origin_.x + 3, y + 3), kLabelColour,
                             row.collapsed ? ImGuiDir_Right : ImGuiDir_Down, 0.7f);
          text_x += 12;
        }
        dl_->PushClipRect(ImVec2(origin_.x, y), ImVec2(x_left_ - 2, y + kRowHeight), true);
        dl_->AddText(ImVec2(text_x, y + 2), kLabelColour, item.label().c_str());
        dl_->PopClipRect();
      }
      item.draw({x_left_, width_, y, kRowHeight, tl_.t0, px_per_unit_}, tl_.t1, instances_, labels_);
    });
  }
  void flush_rects(ImVec2 clip0, ImVec2 clip1) {
    dl_->PushClipRect(clip0, clip1, true);
    if (!app_.platform.draw_rects(instances_))
      for (const RectInstance& r : instances_) dl_->AddRectFilled(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1), r.colour);
    dl_->PopClipRect();
    instances_.clear();
  }
  // The scrolling rows on screen, then the pinned band over them (they pass under it).
  void draw_rows() {
    first_row_ = std::max(0, static_cast<int>(scroll_ / kRowHeight));
    last_row_ = std::min(static_cast<int>(layout_.rows.size()),
                         static_cast<int>((scroll_ + view_h_ - header_h_) / kRowHeight) + 1);
    const std::vector<chakra::TimelineRow>& rows = layout_.rows;
    for (int row = first_row_; row < last_row_; ++row)
      draw_row(rows[row], row_y(row),
               rows[row].group_start || row == first_row_ || m_.tracks[rows[row].first_track].lane == 0);
    row_labels_ = labels_.size();  // the pinned band's come after
    flush_rects(ImVec2(x_left_, band_bottom_), ImVec2(x_left_ + width_, axis_y_ + view_h_));
    if (layout_.pinned.empty()) return;
    dl_->AddRectFilled(ImVec2(origin_.x, band_top_), ImVec2(x_left_ + width_, band_bottom_), IM_COL32(26, 28, 34, 255));
    for (size_t k = 0; k < layout_.pinned.size(); ++k)
      draw_row(layout_.pinned[k], band_top_ + kRowHeight * static_cast<float>(k), true);
    dl_->AddLine(ImVec2(origin_.x, band_bottom_ - 1), ImVec2(x_left_ + width_, band_bottom_ - 1),
                 IM_COL32(120, 170, 255, 160), 2);
    flush_rects(ImVec2(x_left_, band_top_), ImVec2(x_left_ + width_, band_bottom_));
  }

  // Slices the search found, outlined where they are on screen.
  void draw_found() {
    for (const chakra::TimelineModel::Ref& ref : tl_.found) {
      const int row = static_cast<int>(layout_.row_of_track[ref.track]);
      if (row < first_row_ || row >= last_row_) continue;
      const chakra::TimelineTrack& tr = m_.tracks[ref.track];
      const double a = static_cast<double>(tr.start[ref.index]), b = static_cast<double>(tr.end[ref.index]);
      if (b < tl_.t0 || a > tl_.t1) continue;
      const float y = row_y(row);
      const float x0 = x_left_ + static_cast<float>((a - tl_.t0) * px_per_unit_);
      const float x1 = std::max(x0 + 2, x_left_ + static_cast<float>((b - tl_.t0) * px_per_unit_));
      dl_->AddRect(ImVec2(x0, y + 1), ImVec2(x1, y + kRowHeight - 1), IM_COL32(255, 230, 90, 255), 0, 0, 1.5f);
    }
  }

  void draw_labels() {
    auto draw = [&](size_t from, size_t to) {
      for (size_t k = from; k < to; ++k) {
        const SliceLabel& l = labels_[k];
        dl_->PushClipRect(l.p0, l.p1, true);
        dl_->AddText(ImVec2(l.p0.x + 3, l.p0.y), IM_COL32(15, 15, 20, 255), event_name(l.track, l.index).c_str());
        dl_->PopClipRect();
      }
    };
    draw(0, row_labels_);
    dl_->PushClipRect(ImVec2(x_left_, band_top_), ImVec2(x_left_ + width_, band_bottom_), false);
    draw(row_labels_, labels_.size());
    dl_->PopClipRect();
  }

  // Where an event is drawn, if it is on a track.
  std::optional<Box> place(uint32_t group, uint32_t item) const {
    auto ref = m_.find(group, item);
    if (!ref) return std::nullopt;
    const auto& tr = m_.tracks[ref->track];
    const float y = track_y(ref->track);
    const float x0 = x_left_ + static_cast<float>((static_cast<double>(tr.start[ref->index]) - tl_.t0) * px_per_unit_);
    const float x1 = x_left_ + static_cast<float>((static_cast<double>(tr.end[ref->index]) - tl_.t0) * px_per_unit_);
    return std::make_pair(ImVec2(x0, y + 1), ImVec2(std::max(x1, x0 + 2), y + kRowHeight - 1));
  }
  // The selection outlined, and its dependencies as flow arrows (same rank): in from what it
  // waited for (a kernel's launch), out to what waited for it (the kernels a CPU op launched).
  void draw_flow_arrows() {
    if (!app_.selected || !app_.current_rank()) return;
    const auto me = place(app_.rank, *app_.selected);
    if (!me) return;
    dl_->AddRect(me->first, me->second, IM_COL32(255, 255, 255, 255), 0, 0, 2);
    RankCache* c = app_.cache();
    if (!c) return;
    auto arrow = [&](const Box& from, const Box& to, ImU32 colour) {
      const ImVec2 a(from.second.x, (from.first.y + from.second.y) / 2), b(to.first.x, (to.first.y + to.second.y) / 2);
      dl_->AddBezierCubic(a, ImVec2(a.x + 30, a.y), ImVec2(b.x - 30, b.y), b, colour, 1.5f);
      dl_->AddTriangleFilled(b, ImVec2(b.x - 6, b.y - 3), ImVec2(b.x - 6, b.y + 3), colour);
    };
    for (uint32_t d : c->deps.deps(*app_.selected))
      if (auto from = place(app_.rank, d)) arrow(*from, *me, IM_COL32(250, 220, 120, 230));
    for (uint32_t d : c->dependants.deps(*app_.selected))
      if (auto to = place(app_.rank, d)) arrow(*me, *to, IM_COL32(130, 220, 160, 230));
  }

  // What is under the mouse: a pinned row, a scrolling row, or nothing.
  const chakra::TimelineRow* row_under(float sy) const {
    if (sy >= band_top_ && sy < band_top_ + kRowHeight * static_cast<float>(layout_.pinned.size()))
      return &layout_.pinned[static_cast<size_t>((sy - band_top_) / kRowHeight)];
    if (sy < band_bottom_) return nullptr;
    const int row = static_cast<int>(std::floor((sy - rows_top_) / kRowHeight));
    return row >= 0 && row < static_cast<int>(layout_.rows.size()) ? &layout_.rows[row] : nullptr;
  }
  // The event under the mouse in a row.
  std::optional<chakra::TimelineModel::Ref> event_under(const chakra::TimelineRow& row, float sx) const {
    std::optional<chakra::TimelineModel::Ref> found;
    with_timeline_item(m_, row,
                       [&](const TimelineItem& item) { found = item.event_at(time_at(sx), 3 / px_per_unit_); });
    return found;
  }

  // Area selection (left drag) over the scrolling rows, a click to select an event or fold a rank,
  // a right click on a label for the track's menu.
  void take_clicks() {
    auto row_at = [&](float sy) {
      return std::clamp(static_cast<int>(std::floor((sy - rows_top_) / kRowHeight)), 0,
                        static_cast<int>(layout_.rows.size()) - 1);
    };
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 4) &&
        io_.MouseClickedPos[0].x >= x_left_) {
      const ImVec2 start = io_.MouseClickedPos[0];
      tl_.sel_t0 = time_at(std::min(start.x, io_.MousePos.x));
      tl_.sel_t1 = time_at(std::max(start.x, io_.MousePos.x));
      tl_.sel_row0 = row_at(std::min(start.y, io_.MousePos.y));
      tl_.sel_row1 = row_at(std::max(start.y, io_.MousePos.y));
    } else if (hovered_ && ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io_.MouseDragMaxDistanceSqr[0] < 16) {
      const chakra::TimelineRow* row = row_under(io_.MousePos.y);
      if (io_.MousePos.x < x_left_) {
        // The label column: a click on a rank's first row folds or unfolds the rank.
        if (row && row->group_start && !tl_.collapsed.erase(row->group)) tl_.collapsed.insert(row->group);
      } else {
        tl_.sel_t1 = tl_.sel_t0;  // a click clears the area
        if (row)
          if (auto e = event_under(*row, io_.MousePos.x); e && m_.tracks[e->track].item[e->index] != UINT32_MAX) {
            app_.rank = m_.tracks[e->track].group;
            app_.selected = m_.tracks[e->track].item[e->index];
          }
      }
    }
    if (hovered_ && ImGui::IsMouseReleased(ImGuiMouseButton_Right) && io_.MouseDragMaxDistanceSqr[1] < 16 &&
        io_.MousePos.x < x_left_)
      if (const chakra::TimelineRow* row = row_under(io_.MousePos.y)) {
        tl_.menu_track = static_cast<int>(row->first_track);
        tl_.menu_group_row = row->collapsed;
        ImGui::OpenPopup("track_menu");
      }
  }

  // A label's menu: pin or unpin the track, fold ranks.
  void track_menu() {
    if (!ImGui::BeginPopup("track_menu")) return;
    if (tl_.menu_track >= 0 && tl_.menu_track < static_cast<int>(m_.tracks.size())) {
      const chakra::TimelineTrack& tr = m_.tracks[tl_.menu_track];
      const chakra::TimelineTrackKey key{tr.group, tr.lane_class, tr.lane};
      auto pin = std::find(tl_.pinned.begin(), tl_.pinned.end(), key);
      if (!tl_.menu_group_row && ImGui::MenuItem(pin == tl_.pinned.end() ? "Pin to top" : "Unpin")) {
        if (pin == tl_.pinned.end())
          tl_.pinned.push_back(key);
        else
          tl_.pinned.erase(pin);
      }
      const std::string group = chakra::timeline_group_label(m_, tr.group);
      const bool folded = tl_.collapsed.count(tr.group) > 0;
      if (ImGui::MenuItem(((folded ? "Unfold " : "Fold ") + group).c_str())) {
        if (folded)
          tl_.collapsed.erase(tr.group);
        else
          tl_.collapsed.insert(tr.group);
      }
      if (ImGui::MenuItem("Fold every rank")) fold_every_rank(true);
      if (ImGui::MenuItem("Unfold every rank")) fold_every_rank(false);
      if (!tl_.pinned.empty() && ImGui::MenuItem("Unpin all")) tl_.pinned.clear();
    }
    ImGui::EndPopup();
  }

  void draw_area() {
    if (!(tl_.sel_t1 > tl_.sel_t0) || layout_.rows.empty()) return;
    const float x0 = x_left_ + static_cast<float>((tl_.sel_t0 - tl_.t0) * px_per_unit_);
    const float x1 = x_left_ + static_cast<float>((tl_.sel_t1 - tl_.t0) * px_per_unit_);
    const float y0 = row_y(static_cast<uint32_t>(std::max(0, tl_.sel_row0)));
    const float y1 = row_y(static_cast<uint32_t>(std::max(0, tl_.sel_row1)) + 1);
    dl_->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(120, 170, 255, 50));
    dl_->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(120, 170, 255, 200));
  }

  void tooltip() {
    if (!hovered_ || io_.MousePos.x < x_left_) return;
    if (const chakra::TimelineRow* row = row_under(io_.MousePos.y))
      if (auto e = event_under(*row, io_.MousePos.x)) {
        const auto& tr = m_.tracks[e->track];
        ImGui::SetTooltip("%s\n%s", event_name(e->track, e->index).c_str(),
                          format_duration(static_cast<double>(tr.end[e->index] - tr.start[e->index]), m_.unit).c_str());
      }
  }

  AppContext& app_;
  TimelineState& tl_;
  const chakra::TimelineModel& m_;
  ImGuiIO& io_;
  // The frame's layout (begin_canvas): rows, where the canvas is, its window in time.
  chakra::TimelineRows layout_;
  float stats_height_ = 0, pinned_h_ = 0, header_h_ = 0, view_h_ = 0, width_ = 0, scroll_ = 0;
  float x_left_ = 0, axis_y_ = 0, band_top_ = 0, band_bottom_ = 0, rows_top_ = 0;
  ImVec2 origin_;
  bool hovered_ = false;
  double span_ = 1, px_per_unit_ = 1;
  ImDrawList* dl_ = nullptr;
  // What draw_rows found on screen.
  int first_row_ = 0, last_row_ = 0;
  std::vector<RectInstance> instances_;
  std::vector<SliceLabel> labels_;
  size_t row_labels_ = 0;  // labels_ before it are the scrolling rows', after it the pinned band's
};

}  // namespace chakra_web
