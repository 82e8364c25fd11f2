// Timeline view: one track per rank/NPU and lane (recorded times or a simulation run). Each frame
// asks chakra::visible_rects for what covers the pixels, so the cost follows the screen size, not
// the number of events; rectangles go to the GPU in one instanced draw (shaders/) when the
// platform has it.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_context.h"
#include "timeline_frame.h"

namespace chakra_web {

namespace {

class TimelineView final : public View {
 public:
  using View::View;
  std::string_view name() const override { return "timeline"; }
  const char* title() const override { return "Timeline"; }
  void draw() override;
  void write_state(chakra::ShareState& s) const override;
  std::function<void()> read_state(const chakra::ShareState& s) override;
  void write_status(chakra::JsonWriter& w, bool shown) override;
  void add_commands(std::vector<Command>& out) override;
  void ranks_changed() override { recorded_.reset(); }

 private:
  // The shown source's model: the recorded times' (made on first use) or the shown run's.
  const chakra::TimelineModel* model();
  // Shows run `run_id`'s times (0: the recorded ones), the window fitted to them.
  bool open_run(int run_id);
  TimelineState tl_;
  std::unique_ptr<chakra::TimelineModel> recorded_;
};

const chakra::TimelineModel* TimelineView::model() {
  if (app.shown_run > 0) return app.runs.timeline(app.shown_run);
  if (!recorded_) {
    recorded_ = std::make_unique<chakra::TimelineModel>(chakra::timeline_of_traces(app.workspace.traces()));
  }
  return recorded_.get();
}

bool TimelineView::open_run(int run_id) {
  if (run_id != 0 && !app.runs.by_id(run_id)) return false;
  app.shown_run = run_id;
  tl_.t1 = tl_.t0;  // fit
  app.show_view(name());
  return true;
}

void TimelineView::add_commands(std::vector<Command>& out) {
  out.push_back({"timeline RUN", [this](std::string_view w) {  // a run's timeline; 0: the recorded times
                   const std::optional<int> n = command_run_id(w);
                   return n && open_run(*n);
                 }});
  // RUN's timeline with the slices named like NAME found (the Analysis view's tables link here).
  out.push_back({"find RUN NAME", [this](std::string_view w) {
                   const size_t space = w.find(' ');
                   const std::optional<int> n = command_run_id(w.substr(0, space));
                   if (!n || space == std::string_view::npos || (*n != 0 && !app.runs.by_id(*n))) return false;
                   app.shown_run = *n;
                   tl_.query = std::string(w.substr(space + 1));
                   app.show_view(name());
                   return true;
                 }});
}

void TimelineView::write_state(chakra::ShareState& s) const {
  if (tl_.t1 > tl_.t0) {
    s["t.0"] = chakra::format_number(tl_.t0);
    s["t.1"] = chakra::format_number(tl_.t1);
  }
  if (!tl_.collapsed.empty()) {
    const std::vector<uint32_t> folded(tl_.collapsed.begin(), tl_.collapsed.end());
    s["t.fold"] = chakra::format_index_ranges(folded);
  }
  if (!tl_.pinned.empty()) {
    std::string pins;
    for (const chakra::TimelineTrackKey& k : tl_.pinned)
      pins += (pins.empty() ? "" : ",") + std::to_string(k.group) + "." + std::to_string(k.lane_class) + "." +
              std::to_string(k.lane);
    s["t.pin"] = pins;
  }
}

std::function<void()> TimelineView::read_state(const chakra::ShareState& s) {
  const double t0 = chakra::share_number(s, "t.0", -1e300, 1e300, 0),
               t1 = chakra::share_number(s, "t.1", -1e300, 1e300, 0);
  const std::vector<uint32_t> folded = chakra::share_index_ranges(s, "t.fold", UINT32_MAX - 1, 1 << 16);
  std::vector<chakra::TimelineTrackKey> pinned;
  for (const std::vector<uint32_t>& k : chakra::share_tuples(s, "t.pin", 3, UINT32_MAX - 1, 256))
    pinned.push_back({k[0], k[1], k[2]});
  return [this, t0, t1, folded, pinned = std::move(pinned)]() mutable {
    tl_.t0 = t0;
    tl_.t1 = t1;
    tl_.collapsed = std::set<uint32_t>(folded.begin(), folded.end());
    tl_.pinned = std::move(pinned);
  };
}

// Its tracks and rows as laid out, its window and search.
void TimelineView::write_status(chakra::JsonWriter& w, bool shown) {
  // The timeline's tracks ("rank 0 thread 1", "rank 0 stream 7" ...: the first lane of each)
  // while it shows.
  const chakra::TimelineModel* m = shown ? model() : nullptr;  // a cache, built on first use
  w.key("timeline_tracks").begin_array();
  if (m)
    for (const chakra::TimelineTrack& t : m->tracks)
      if (t.lane == 0) w.value(chakra::timeline_track_label(*m, t));
  w.end_array();
  // Rows as laid out: the pinned tracks' names, how many rows scroll below them, the folded
  // ranks, and where row 0's label starts on the page (CSS pixels).
  w.key("timeline_pinned").begin_array();
  size_t rows = 0;
  if (m) {
    const chakra::TimelineRows layout =
        chakra::timeline_rows(*m, tl_.pinned, [&](uint32_t g) { return tl_.collapsed.count(g) > 0; });
    for (const chakra::TimelineRow& r : layout.pinned)
      w.value(chakra::timeline_track_label(*m, m->tracks[r.first_track]));
    rows = layout.rows.size();
  }
  w.end_array();
  w.key("timeline_rows").value_uint(rows);
  w.key("timeline_folded").begin_array();
  for (uint32_t g : tl_.collapsed) w.value_uint(g);
  w.end_array();
  w.key("timeline_row0").begin_array();
  w.value_double(tl_.row0.x);
  w.value_double(tl_.row0.y);
  w.end_array();
  w.key("timeline_window").begin_array();  // the visible time window, and the tracks' scroll
  w.value_double(tl_.t0);
  w.value_double(tl_.t1);
  w.end_array();
  w.key("timeline_scroll").value_double(tl_.scroll);
  w.key("timeline_found").value_uint(tl_.found.size());  // slices matching the search
  w.key("selected_simulated").begin_array();  // [start, end] ns of the selection in the shown run, as the details show
  if (shown && app.selected)
    if (auto span = app.simulated_span(*app.selected)) {
      w.value_double(span->first);
      w.value_double(span->second);
    }
  w.end_array();
  w.key("timeline_extent").begin_array();  // the data's first start and last end (the model's)
  if (m) {
    w.value_uint(m->begin);
    w.value_uint(m->end);
  }
  w.end_array();
}

void TimelineView::draw() {
  // Source: recorded times or one of the runs.
  const std::string current =
      app.shown_run == 0 ? "recorded times (trace timestamps)" : "simulation run " + std::to_string(app.shown_run);
  ImGui::SetNextItemWidth(280);
  if (ImGui::BeginCombo("source", current.c_str())) {
    if (ImGui::Selectable("recorded times (trace timestamps)", app.shown_run == 0)) app.shown_run = 0, tl_.t1 = tl_.t0;
    for (const auto& run : app.runs.all()) {
      const std::string label = "simulation run " + std::to_string(run->id) + ": " + run->label;
      if (ImGui::Selectable(label.c_str(), app.shown_run == run->id)) app.shown_run = run->id, tl_.t1 = tl_.t0;
    }
    ImGui::EndCombo();
  }
  const chakra::TimelineModel* m = model();
  if (!m || m->events == 0) {
    ImGui::TextDisabled(app.workspace.ranks().empty() ? "No trace loaded."
                        : app.shown_run == 0 ? "These traces carry no start times; run a simulation to get a timeline."
                                             : "This run recorded no spans.");
    return;
  }
  TimelineFrame frame(app, tl_, *m);
  frame.toolbar();
  frame.search();
  frame.overview();
  frame.canvas();
  frame.area_stats();
}

}  // namespace

std::unique_ptr<View> make_timeline_view(AppContext& app) { return std::make_unique<TimelineView>(app); }

}  // namespace chakra_web
