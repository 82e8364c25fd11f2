// The App's state, shared by the shell (app.cpp), the views (view_*.cpp) and the share-link
// mapping (share_state.cpp). Private to web/.
#pragma once

#include <chrono>
#include <deque>
#include <set>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

#include "app.h"
#include "chakra/analysis/critical_path.h"
#include "chakra/analysis/gpu_analysis.h"
#include "chakra/analysis/host_stalls.h"
#include "chakra/analysis/trace_diff.h"
#include "chakra/app/sweep.h"

namespace chakra_web {

inline const ImVec4 kErrorColour(1.0f, 0.45f, 0.45f, 1.0f);
inline const ImVec4 kWarningColour(1.0f, 0.8f, 0.3f, 1.0f);

// Derived data of one rank, built when first needed.
struct RankCache {
  const chakra::RankTrace* rank = nullptr;
  std::unique_ptr<chakra::IdIndex> index;
  chakra::DepGraph deps, dependants;
  // graph view
  bool layout_ready = false;
  uint32_t layout_collapse = 0;
  bool layout_ctrl = false;
  chakra::GraphLayout layout;
  chakra::GraphLayoutIndex layout_index;
  std::vector<uint32_t> box_of_node;
  std::optional<chakra::CriticalPath> critical;
  // node table
  std::string rows_query;
  int rows_sort_column = -1;
  bool rows_sort_ascending = true;
  std::vector<uint32_t> rows;
  bool rows_ready = false;
};

// The critical path across ranks of one source (the measured times or a run), made on first use.
struct CriticalPathData {
  std::vector<chakra::RankTimes> times;  // per rank in workspace order (NPU i = rank i)
  chakra::CrossRankPath path;
};

// A source's collectives by type and size (the Analysis view's Collectives tab), made on first use.
using CollectiveBuckets = std::optional<std::vector<chakra::CollectiveBucket>>;

struct SimSettings {
  std::string preset = "h100-hgx-8";
  chakra::sim::NetworkConfig network;
  chakra::sim::SystemConfig system;
  bool congestion_aware = false;
  // What-if: nodes whose name contains `faster_name` run `faster_by` times faster (none when
  // the name is empty).
  std::string faster_name;
  double faster_by = 1;
  // Stragglers and slower links: a chakra simulate --slowdown spec ("" for none).
  std::string slowdown;
  // Host stalls of replayed PyTorch traces as waits for the GPU (chakra simulate --stalls wait).
  bool stalls_wait = false;
};

struct SimRun {
  int id = 0;
  std::string label;
  SimSettings settings;
  chakra::sim::SimResult result;
  double wall_ms = 0;
  std::unique_ptr<chakra::TimelineModel> timeline;
  std::vector<chakra::GpuAnalysis> analysis;  // per NPU, from the spans, made on first use
  std::unique_ptr<CriticalPathData> critical_path;
  CollectiveBuckets collectives;
};

// The Sweep view: a spec run here (points in the host's workers) or a table opened from a file.
struct SweepState {
  std::string spec_text;  // the editor's
  // What is shown: the spec and points of the last run (none for an opened table), its rows.
  std::unique_ptr<chakra::sweep::Spec> spec;
  std::unique_ptr<chakra::sweep::Runner> runner;
  std::vector<chakra::sweep::Point> points;
  std::vector<chakra::sweep::Row> rows;  // in the order they finished
  uint64_t version = 0;                  // changes whenever `rows` do (the caches below follow it)
  std::vector<std::string> axes;         // the rows' axis columns
  std::string source;                    // "run" or the table's file name
  uint64_t product = 0, dropped = 0, failed = 0;
  size_t next = 0, in_flight = 0;        // points handed out, and not reported yet
  uint64_t generation = 0;
  bool running = false;
  std::chrono::steady_clock::time_point started;
  double seconds = 0;
  std::string error;
  // The plot: x and split axes (indices into `axes`; split -1: none), the metric column.
  int x = 0, split = -1, metric = 0;
  bool heat_map = false;
  // What the view draws every frame, made again only when the rows or the choices change.
  struct Drawn {
    uint64_t version = UINT64_MAX;
    int x = -1, split = -2, metric = -1;
    chakra::sweep::Grid grid;
    std::vector<size_t> order;  // the rows in point order
  } drawn;
};

const char* sweep_example_spec();  // what the Sweep view's editor starts with

struct SynthSettings {
  std::string preset = "llama2-7b";
  int layers = 4, dp = 2, tp = 2, pp = 1, micro_batches = 1, batch = 8, seq = 2048;
  bool fsdp = false;
  bool active = false;  // the loaded ranks came from these settings
};

struct TimelineViewState {
  int source = 0;  // 0: recorded times, n > 0: simulation run n
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
  int scroll_to_track = -1;  // a track to bring into view in the next frame
  ImVec2 row0;                // where row 0's label begins on screen (the last frame's)
  int menu_track = -1;        // the track whose label was right-clicked
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
  std::unique_ptr<chakra::TimelineModel> recorded;
  bool recorded_ready = false;
};

struct App::Impl {
  explicit Impl(Platform& p) : platform(p) {}
  Platform& platform;
  chakra::Workspace workspace;

  // Files queued in the order the page handed them over; a file read in slices is queued when
  // its first slice is (App::begin_file) and takes its pieces wherever it is.
  struct Pending {
    uint32_t id = 0;
    std::unique_ptr<chakra::Workspace::Loading> file;
  };
  std::deque<Pending> queue;
  std::unique_ptr<chakra::Workspace::Loading> loading;
  // Ids from 1; 0 is a rank conversion's result, opened like a file (App::conversion_finished).
  uint32_t loading_id = 0, next_file_id = 1;
  int files_expected = 0;  // announced by the page, not handed over yet (App::expect_files)
  // Rank conversions running on the platform.
  struct Converting {
    uint32_t rank = 0;
    uint64_t generation = 0;
    std::string files;  // what is converted
    const char* phase = "";  // for the status: "linking and converting" ...
  };
  std::vector<Converting> converting;
  void start_conversions();  // the workspace's jobs, once no PyTorch file of theirs is still coming
  void open_converted(chakra::ConvertedRank result);  // queued first, opened like a file
  chakra::Workspace::Loading* file_by_id(uint32_t id) const;  // queued or being opened; null if gone
  void drop_file(uint32_t id);
  std::vector<std::string> log;  // newest last
  std::string error;             // last error, shown until the next success
  std::vector<std::string> files;  // names opened
  // Sum of the opened files' chakra::file_fingerprint: a share link names its files by this and
  // their count, never by their names. The one of the file being opened, added once it opened.
  uint64_t files_fingerprint = 0;
  // A link's simulation runs, made again in order once its traces are open (as many files as it
  // names: the page hands them over one by one).
  std::deque<SimSettings> link_runs;
  size_t link_files = 0;

  View view = View::Overview;
  float sidebar_width = 260, details_width = 340;  // pane widths, changed by dragging the bars
  bool view_changed = true;  // select the tab on the next frame
  uint32_t rank = 0;
  std::optional<uint32_t> selected;  // node position in `rank`
  std::string query;
  std::map<uint32_t, RankCache> caches;

  // graph view
  int collapse_chains = 8;
  bool ctrl_edges = false;
  bool show_critical = false;
  bool show_keys = false;  // the key and mouse list ("?")
  std::string chart_to_save;  // "save chart TITLE": the chart with that title saves its picture
  bool take_save_request(const std::string& title) {
    if (chart_to_save != title) return false;
    chart_to_save.clear();
    return true;
  }
  float graph_zoom = 1, graph_x = 0, graph_y = 0;
  bool graph_fit = true;
  std::optional<uint32_t> graph_shown;  // the selection last brought into view
  std::vector<uint8_t> highlight;  // per node of `rank`: 1 ancestor, 2 descendant
  std::optional<uint32_t> highlight_for;

  TimelineViewState timeline;

  SimSettings sim;
  std::vector<std::unique_ptr<SimRun>> runs;
  int next_run_id = 1;
  int compare_a = 0, compare_b = 0;
  std::string sim_error;
  std::string slowdown_error;  // of the last slowdown spec typed or commanded
  std::string anonymize_key;   // the Overview's export key (empty: a random one per export)
  std::unique_ptr<SimRun> running;  // started on the platform's runner, not finished yet
  double running_fraction = 0;
  std::chrono::steady_clock::time_point running_since;

  SynthSettings synth;
  std::string last_hash;
  std::string pending_hash;  // applied once the files it names are open
  std::optional<std::pair<uint32_t, uint64_t>> deferred_selection;  // (rank, node id) from a link, before its files

  // app.cpp (the shell: panes, sidebar, dispatch)
  void note(const std::string& line);
  void fail(const std::string& what);
  const chakra::RankTrace* current_rank() const;
  RankCache* cache();
  void invalidate_rank_data();
  void draw_sidebar();
  void draw_synthetic();
  bool generate_synthetic();
  bool synthesize_command(std::string_view args);
  void draw_keys();
  void draw_run_charts(const SimRun& a, const SimRun* b);
  SimRun* run_by_id(int id) const;  // a finished run, or null
  // When node `n` of the current rank ran in the run the timeline shows (ns), if it does.
  std::optional<std::pair<double, double>> simulated_span(uint32_t n);
  void draw_critical_path_list(const chakra::Trace& t, const chakra::CriticalPath& path);
  // view_overview.cpp, view_nodes.cpp, view_details.cpp
  void draw_overview();
  void draw_nodes();
  void draw_details();
  // share_state.cpp
  chakra::ShareState state() const;
  void apply(const chakra::ShareState& s);
  // view_graph.cpp
  void draw_graph();
  void prepare_graph(RankCache& c);
  void draw_graph_legend(RankCache& c);
  void draw_graph_canvas(RankCache& c);
  // view_timeline.cpp
  void draw_timeline();
  const chakra::TimelineModel* timeline_model();
  // view_simulation.cpp
  void draw_simulation();
  void draw_network_settings();
  void draw_system_settings();
  void draw_run_results();
  void draw_npu_table(const SimRun& a, const SimRun* b);
  // The Analysis view's figures, per rank in workspace order, made on first use after the ranks
  // change (invalidate_rank_data).
  struct AnalysisCache {
    std::vector<chakra::GpuAnalysis> ranks;
    std::vector<std::vector<chakra::HostStallEntry>> stalls;  // per rank
    chakra::Stragglers stragglers;
    std::unique_ptr<CriticalPathData> critical_path;
    CollectiveBuckets collectives;
  };
  std::optional<AnalysisCache> analysis_cache;
  int analysis_source = 0;    // 0: the traces' measured times, n > 0: simulation run n
  int analysis_compare = -1;  // the source compared with it: -1 none, else as analysis_source
  enum class AnalysisTab { Breakdown, CriticalPath, Collectives, Compare };
  AnalysisTab analysis_tab = AnalysisTab::Breakdown;
  bool analysis_tab_requested = false;  // select analysis_tab in the next frame (a command did)
  // The critical path table's row order (longest first, or time order) for the path shown.
  std::vector<uint32_t> critical_path_order;
  const chakra::CrossRankPath* critical_path_order_for = nullptr;
  bool critical_path_time_order = false;
  struct ComparisonCache {
    int a = -1, b = -1;                    // the sources compared
    std::vector<chakra::TraceDiff> diffs;  // per rank
  } comparison_cache;
  AnalysisCache& analysis();
  // Per rank (workspace order), the GPU analyses of a source, and its unit ("us", "ns"); empty
  // for a source that does not exist.
  std::vector<const chakra::GpuAnalysis*> analyses_of(int source, const char** unit);
  const CriticalPathData& critical_path_of(int source);  // the source must exist
  void draw_analysis();
  void draw_analysis_downloads();
  void draw_analysis_breakdown(const std::vector<const chakra::GpuAnalysis*>& per, const std::vector<std::string>& labels,
                               const chakra::Stragglers* stragglers, const char* unit, SimRun* run);
  void draw_critical_path(int source, const std::vector<std::string>& labels, const char* unit);
  void draw_host_stalls(const std::vector<std::string>& labels);
  void draw_comparison(int source, const std::vector<std::string>& labels);
  void draw_collectives(SimRun* run);
  void draw_network_load(const SimRun& run);
  // view_sweep.cpp
  SweepState sweep;
  void draw_sweep();
  bool start_sweep();
  void cancel_sweep();
  void sweep_work(double budget_ms);  // hands out points (or runs them here); called by work()
  void sweep_point_done(chakra::sweep::Row row);
  void open_sweep_table(chakra::Workspace::SweepTableFile file);  // a table the workspace opened
  void use_preset(const std::string& name);
  void fit_settings_to_ranks();
  // The simulation's slowdowns (`slowdown SPEC` command, the Simulation view); a spec that does
  // not parse is refused with its error shown.
  bool set_slowdown(const std::string& spec);
  // Downloads anonymized.zip (chakra::anonymized_archive); an empty key is a random one.
  bool export_anonymized(const std::string& key);
  bool export_analysis(std::string_view format);  // "json" or "csv", as chakra analyze writes them
  void draw_slowdowns();
  bool run_simulation() { return run_simulation(sim); }
  bool run_simulation(const SimSettings& settings);
  void finish_run(std::unique_ptr<SimRun> run);
  void draw_run_progress(float width);
  void cancel_simulation();
  bool open_in_timeline(int run_id);  // 0: recorded times
  // Share-link keys of simulation settings: `prefix` + "topo", "npus", ... ("sim." for the
  // current settings, "run1." ... for each run's).
  static void settings_state(const SimSettings& settings, const std::string& prefix, chakra::ShareState& s);
  // Settings read back through the same readers as dropped config files; throws on bad values.
  static SimSettings settings_from_state(const chakra::ShareState& s, const std::string& prefix);
};

// The views, in tab order and in View order: the one list of them. A view is a View
// enumerator, a row here, and its draw function in its own view_<name>.cpp.
struct ViewEntry {
  View view;
  std::string_view name;  // in share links, commands ("view timeline") and the status
  const char* title;      // its tab
  void (App::Impl::*draw)();
};
inline constexpr ViewEntry kViews[] = {
    {View::Overview, "overview", "Overview", &App::Impl::draw_overview},
    {View::Nodes, "nodes", "Nodes", &App::Impl::draw_nodes},
    {View::Graph, "graph", "Graph", &App::Impl::draw_graph},
    {View::Timeline, "timeline", "Timeline", &App::Impl::draw_timeline},
    {View::Simulation, "simulation", "Simulation", &App::Impl::draw_simulation},
    {View::Analysis, "analysis", "Analysis", &App::Impl::draw_analysis},
    {View::Sweep, "sweep", "Sweep", &App::Impl::draw_sweep},
};
constexpr bool views_in_enum_order() {
  for (size_t i = 0; i < std::size(kViews); ++i)
    if (static_cast<size_t>(kViews[i].view) != i) return false;
  return true;
}
static_assert(views_in_enum_order(), "kViews must list the views in View order");
inline const ViewEntry& view_entry(View v) { return kViews[static_cast<size_t>(v)]; }

// Colours per node type and span kind, shared by all views.
ImU32 node_type_colour(int32_t type, float alpha = 1.0f);

// A colour swatch and its label on the current line: the key of legends and tooltips.
void legend_item(ImU32 colour, const std::string& label, float swatch = 10);

// Numbers drawn in the platform's number font while it lives (digits line up in columns).
class NumberFont {
 public:
  explicit NumberFont(const Platform& p) : font_(p.number_font()) {
    if (font_) ImGui::PushFont(font_);
  }
  ~NumberFont() {
    if (font_) ImGui::PopFont();
  }
  NumberFont(const NumberFont&) = delete;
  NumberFont& operator=(const NumberFont&) = delete;

 private:
  ImFont* font_;
};
ImU32 span_kind_colour(int kind, float alpha = 1.0f);
ImU32 activity_colour(int kind, float alpha = 1.0f);  // chakra::TimelineActivity
// A selectable spanning a table row that shows `text` exactly as it is (in an ImGui label, "##"
// would hide the rest, and names such as "## backward ##" have it); `id` tells rows apart.
bool selectable_row(const std::string& text, int id, bool selected = false);
std::string format_duration(double value, const std::string& unit);

}  // namespace chakra_web
