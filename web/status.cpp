// The app's status as JSON, for the page's tests and its scripts (app_status_json): what each view
// shows, written by the core's writers where the CLI has one (simulate --json, info --json, analyze).
#include <chrono>

#include <imgui.h>

#include "app_state.h"
#include "chakra/analysis/sim_report.h"
#include "chakra/app/sweep.h"
#include "chakra/format/json_writer.h"
#include "chakra/synth/synth.h"

namespace chakra_web {

namespace {
// The fields both statuses have: the error shown and how far opening files has got.
void write_progress(const App::Impl& s, bool busy, chakra::JsonWriter& w) {
  w.key("error").value(s.error);
  w.key("busy").value(busy);
  // The file being opened, else the next one queued: its name, size, phase and how far it got.
  const chakra::Workspace::Loading* file = s.loading ? s.loading.get() : s.queue.empty() ? nullptr : s.queue.front().file.get();
  const chakra::RankTrace* unchecked = nullptr;  // opened, its validation next
  for (const auto& r : s.workspace.ranks())
    if (!r->checked && !unchecked) unchecked = r.get();
  // Linking and converting in the background has no byte count: -1, as for gzip.
  const App::Impl::Converting* converting = file || unchecked || s.converting.empty() ? nullptr : &s.converting.front();
  w.key("loading").value_double(file ? file->fraction() : converting ? -1.0 : 1.0);
  w.key("loading_file").value(file ? file->name() : unchecked ? unchecked->source : converting ? converting->files : std::string());
  w.key("loading_bytes").value_uint(file ? file->size() : unchecked ? unchecked->bytes : 0);
  w.key("loading_phase").value(file ? file->phase() : unchecked ? "validating" : converting ? converting->phase : "");
  w.key("queued_files").value_uint(s.queue.size() - (file && !s.loading ? 1 : 0));  // waiting behind it
}
// The Timeline view: its tracks and rows as laid out, its window and search.
void write_timeline_status(App::Impl& s, chakra::JsonWriter& w) {
  // The timeline's tracks ("rank 0 thread 1", "rank 0 stream 7" ...: the first lane of each)
  // while the Timeline view shows.
  w.key("timeline_tracks").begin_array();
  if (s.view == View::Timeline)
    if (const chakra::TimelineModel* m = s.timeline_model())  // a cache, built on first use
      for (const chakra::TimelineTrack& t : m->tracks)
        if (t.lane == 0) w.value(chakra::timeline_track_label(*m, t));
  w.end_array();
  // Rows as laid out: the pinned tracks' names, how many rows scroll below them, the folded
  // ranks, and where row 0's label starts on the page (CSS pixels).
  w.key("timeline_pinned").begin_array();
  size_t rows = 0;
  if (s.view == View::Timeline)
    if (const chakra::TimelineModel* m = s.timeline_model()) {
      const chakra::TimelineRows layout = chakra::timeline_rows(
          *m, s.timeline.pinned, [&](uint32_t g) { return s.timeline.collapsed.count(g) > 0; });
      for (const chakra::TimelineRow& r : layout.pinned) w.value(chakra::timeline_track_label(*m, m->tracks[r.first_track]));
      rows = layout.rows.size();
    }
  w.end_array();
  w.key("timeline_rows").value_uint(rows);
  w.key("timeline_folded").begin_array();
  for (uint32_t g : s.timeline.collapsed) w.value_uint(g);
  w.end_array();
  w.key("timeline_row0").begin_array();
  w.value_double(s.timeline.row0.x);
  w.value_double(s.timeline.row0.y);
  w.end_array();
  w.key("timeline_window").begin_array();  // the visible time window, and the tracks' scroll
  w.value_double(s.timeline.t0);
  w.value_double(s.timeline.t1);
  w.end_array();
  w.key("timeline_scroll").value_double(s.timeline.scroll);
  w.key("timeline_found").value_uint(s.timeline.found.size());  // slices matching the search
  w.key("timeline_extent").begin_array();  // the data's first start and last end (the model's)
  if (s.view == View::Timeline)
    if (const chakra::TimelineModel* m = s.timeline_model()) {
      w.value_uint(m->begin);
      w.value_uint(m->end);
    }
  w.end_array();
}

// The Analysis view: per-rank figures, the critical path, the comparison, while they show.
void write_analysis_status(App::Impl& s, chakra::JsonWriter& w) {
  // The Analysis view's per-rank figures of the measured times while it shows (as `chakra
  // analyze --json`), and the source it shows.
  w.key("keys_shown").value(s.show_keys);
  w.key("analysis_source").value_int(s.analysis_source);
  w.key("analysis").begin_array();
  if (s.view == View::Analysis && !s.workspace.ranks().empty()) {
    const auto& a = s.analysis();
    for (size_t i = 0; i < a.ranks.size(); ++i) {
      const chakra::GpuAnalysis& g = a.ranks[i];
      w.begin_object();
      w.key("rank").value_uint(s.workspace.ranks()[i]->rank);
      chakra::write_breakdown_json(g, w);
      w.end_object();
    }
  }
  w.end_array();
  // The critical path and the comparison of the Analysis view's sources, while their tab shows.
  w.key("critical_path").begin_object();
  if (s.view == View::Analysis && s.analysis_tab == App::Impl::AnalysisTab::CriticalPath && !s.workspace.ranks().empty()) {
    const CriticalPathData& d = s.critical_path_of(s.analysis_source);
    std::vector<uint32_t> ids;
    for (const auto& r : s.workspace.ranks()) ids.push_back(r->rank);
    chakra::write_critical_path_json(d.path, d.times, ids, w);
  }
  w.end_object();
  w.key("comparison").begin_array();
  if (s.view == View::Analysis && s.analysis_tab == App::Impl::AnalysisTab::Compare && s.comparison_cache.a == s.analysis_source &&
      s.comparison_cache.b == s.analysis_compare)
    for (size_t i = 0; i < s.comparison_cache.diffs.size(); ++i) {
      const chakra::TraceDiff& d = s.comparison_cache.diffs[i];
      w.begin_object();
      w.key("rank").value_uint(s.workspace.ranks()[i]->rank);
      w.key("step_a").value_uint(d.step_a);
      w.key("step_b").value_uint(d.step_b);
      w.key("changed").value_uint(d.changed());
      w.key("names").value_uint(d.names.size());
      w.end_object();
    }
  w.end_array();
  w.key("analysis_compare").value_int(s.analysis_compare);
}

// The Sweep view.
void write_sweep_status(App::Impl& s, chakra::JsonWriter& w) {
  // The Sweep view: its points, rows done and failed, and each row's step by point (null: failed).
  w.key("sweep").begin_object();
  w.key("source").value(s.sweep.source);
  w.key("points").value_uint(s.sweep.source == "run" ? s.sweep.points.size() : s.sweep.rows.size());
  w.key("done").value_uint(s.sweep.rows.size());
  w.key("failed").value_uint(s.sweep.failed);
  w.key("running").value(s.sweep.running);
  w.key("error").value(s.sweep.error);
  std::string first_failure;  // the first failed point's error (by point)
  uint64_t first_point = UINT64_MAX;
  for (const auto& r : s.sweep.rows)  // rows of a dropped table may lack any column but point and sweep
    if (r.contains("error") && r["error"].is_string() && r["error"] != "" && r["point"].get<uint64_t>() < first_point)
      first_point = r["point"].get<uint64_t>(), first_failure = r["error"].get<std::string>();
  w.key("first_failure").value(first_failure);
  w.key("steps").begin_array();
  for (const size_t i : chakra::sweep::point_order(s.sweep.rows)) {
    const chakra::sweep::Row& r = s.sweep.rows[i];
    if (r.contains("step_ns") && r["step_ns"].is_number_unsigned()) w.value_uint(r["step_ns"].get<uint64_t>());
    else w.value_null();
  }
  w.end_array();
  w.end_object();
}

// The selected node, and the share link.
void write_selection_status(App::Impl& s, chakra::JsonWriter& w) {
  w.key("rank").value_uint(s.rank);
  w.key("selected").value_int(s.selected && s.current_rank() ? static_cast<int64_t>(s.current_rank()->trace.id(*s.selected)) : -1);
  w.key("selected_simulated").begin_array();  // [start, end] ns in the timeline's run, as the details show
  if (s.selected && s.view == View::Timeline)
    if (auto span = s.simulated_span(*s.selected)) {
      w.value_double(span->first);
      w.value_double(span->second);
    }
  w.end_array();
  w.key("hash").value(chakra::encode_share_link(s.state()));  // what the address bar shows
  w.key("state").value(chakra::encode_share_state(s.state()));  // the same, readable
}

// The open ranks: where each came from, its checks and its summary (chakra info --json's).
void write_ranks_status(App::Impl& s, chakra::JsonWriter& w) {
  w.key("ranks").begin_array();
  for (const auto& r : s.workspace.ranks()) {
    w.begin_object();
    w.key("rank").value_uint(r->rank);
    w.key("source").value(r->source);
    w.key("bytes").value_uint(r->bytes);
    w.key("checked").value(r->checked);
    w.key("errors").value_uint(r->report.errors);
    w.key("warnings").value_uint(r->report.warnings + r->warnings.size());  // validation's and loading's
    w.key("load_warnings").begin_array();
    for (const std::string& x : r->warnings) w.value(x);
    w.end_array();
    w.key("summary");
    chakra::write_summary_json(r->summary, w);
    w.end_object();
  }
  w.end_array();
}

// The Simulation view: the settings and each run's result (chakra simulate --json's).
void write_simulation_status(App::Impl& s, chakra::JsonWriter& w) {
  w.key("network").value(chakra::sim::format_network(s.sim.network));
  w.key("system").value(chakra::sim::format_system(s.sim.system));
  w.key("backend").value(s.sim.congestion_aware ? "aware" : "unaware");
  w.key("simulating");
  if (s.running) w.value_double(s.running_fraction);
  else w.value_null();
  w.key("sim_error").value(s.sim_error);
  w.key("runs").begin_array();
  for (const auto& run : s.runs) {
    w.begin_object();
    w.key("id").value_int(run->id);
    w.key("label").value(run->label);
    w.key("result");  // as chakra simulate --json writes it
    chakra::write_sim_json(run->result, w);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string App::brief_status_json() const {
  chakra::StringSink sink;
  chakra::JsonWriter w(sink);
  w.begin_object();
  write_progress(*impl_, busy(), w);
  w.key("ranks").value_uint(impl_->workspace.ranks().size());
  w.key("simulating").value(impl_->running != nullptr);
  w.key("last_run").value_int(impl_->runs.empty() ? 0 : impl_->runs.back()->id);
  w.key("view").value(view_entry(impl_->view).name);  // the Sweep view needs no traces: no start card over it
  w.end_object();
  w.flush();
  return sink.out;
}

std::string App::status_json() const {
  Impl& s = *impl_;
  chakra::StringSink sink;
  chakra::JsonWriter w(sink);
  w.begin_object();
  w.key("version").value(CHAKRA_VERSION);
  write_progress(s, busy(), w);
  w.key("view").value(view_entry(s.view).name);
  write_timeline_status(s, w);
  write_analysis_status(s, w);
  write_sweep_status(s, w);
  write_selection_status(s, w);
  write_ranks_status(s, w);
  write_simulation_status(s, w);
  w.key("log").begin_array();
  for (const std::string& l : s.log) w.value(l);
  w.end_array();
  w.end_object();
  w.flush();
  return sink.out;
}

}  // namespace chakra_web
