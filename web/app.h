// The chakrakit UI: the shell around the views of the web app (views.cpp lists them),
// independent of the platform loop that hosts it (main_wasm.cpp in the browser; the native test
// harness drives it headless). It only arranges what the core computes: files are
// opened by chakra::Workspace, layouts by chakra::layout_graph, timelines by
// chakra::TimelineModel, runs by chakra::sim.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <span>
#include <vector>

#include "chakra/app/share_link.h"
#include "chakra/app/sim_job.h"
#include "chakra/app/workspace.h"
#include "chakra/sim/simulate.h"
#include "chakra/synth/synth.h"
#include "chakra/trace/graph.h"
#include "chakra/viz/timeline_model.h"
#include "chakra/viz/visualize.h"

struct ImFont;

namespace chakra_web {

// One filled rectangle in framebuffer-independent pixels, colour as ImGui's packed ABGR.
struct RectInstance {
  float x0, y0, x1, y1;
  uint32_t colour;
};

// What the app needs from the page or window hosting it.
class Platform {
 public:
  virtual ~Platform() = default;
  virtual void set_location_hash(const std::string& hash) {}
  virtual void copy_text(const std::string& text) {}
  virtual void open_file_picker() {}
  virtual void download(const std::string& name, const std::string& content) {}
  // Queues rectangles for the GPU path (instanced, shaders/), drawn clipped to the current ImGui
  // window at this point of its draw list. Returns false when there is none (then the app draws
  // them through ImGui).
  virtual bool draw_rects(const std::vector<RectInstance>& rects) { return false; }
  // Whether the host runs simulations away from the UI thread (start_simulation); otherwise the
  // app runs them in place, blocking.
  virtual bool runs_simulations() const { return false; }
  // Starts `job` away from the UI thread (the browser encodes it for a Web Worker, a native host
  // runs it on a thread). The host then reports to App::simulation_progress and, once, to
  // simulation_finished or simulation_failed, from the UI thread. At most one runs at a time.
  virtual void start_simulation(chakra::SimJob job) {}
  // Stops the running simulation; nothing more is reported for it.
  virtual void cancel_simulation() {}
  // Whether the host simulates a sweep's points away from the UI thread (start_sweep_point:
  // several at once, each reported once to App::sweep_point_finished or sweep_point_failed, from
  // the UI thread); otherwise the app runs them in place, a few per frame.
  virtual bool runs_sweep_points() const { return false; }
  virtual void start_sweep_point(uint64_t point, uint64_t generation, chakra::SimJob job) {}
  // Drops the points started and not reported; nothing more is reported for them.
  virtual void cancel_sweep() {}
  // Whether the host runs the benchmark suite's entries away from the UI thread
  // (start_suite_entry: several at once, each reported once to App::suite_entry_finished or
  // suite_entry_failed, from the UI thread); otherwise the app runs them in place, a few a frame.
  virtual bool runs_suite_entries() const { return false; }
  // `job`: chakra::suite::entry_job's text; `runs`: the folders of the measured runs it reads,
  // which the host provides where the job's paths point.
  virtual void start_suite_entry(uint64_t entry, uint64_t generation, const std::string& job,
                                 const std::vector<std::string>& runs) {}
  virtual void cancel_suite() {}  // drops the entries started and not reported
  // Where the built-in suite's paths start (its measured runs are ../examples/NAME from there).
  virtual std::string suite_dir() const { return ""; }
  // Whether the host links and converts PyTorch ranks away from the UI thread
  // (start_conversion); otherwise the app has convert_here() do it, blocking.
  virtual bool runs_conversions() const { return false; }
  // Starts one (several may run at once); the host then reports, once, to
  // App::conversion_finished or conversion_failed, from the UI thread.
  virtual void start_conversion(chakra::RankConversion job) {}
  // chakra::convert_rank(job) in native hosts. A host that runs conversions elsewhere need not
  // link the converter (the page's module leaves it to its workers).
  virtual chakra::ConvertedRank convert_here(const chakra::RankConversion& job) = 0;
  // Whether to show wall-clock figures (decode and simulation times); golden screenshots leave
  // them out because they differ from run to run.
  virtual bool show_timings() const { return true; }
  // Whether the page around the canvas has the toolbar (open files and folders, copy link,
  // clear: the web page's header, calling App::command); then the app draws none of its own.
  virtual bool has_toolbar() const { return false; }
  // A monospace face for numbers in tables and on axes (digits line up), or null for the
  // default font.
  virtual ImFont* number_font() const { return nullptr; }

  // A picture of what this frame draws at [x0, x1) × [y0, y1) (ImGui's coordinates), asked for by
  // a chart's PNG button; each host takes it once the frame is rendered (requested_png in
  // render_frame.h) and saves it as NAME.png (the browser downloads it).
  struct ImageRequest {
    std::string name;  // empty: none
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  };
  void request_image(ImageRequest request) { image_request_ = std::move(request); }
  ImageRequest take_image_request() { return std::exchange(image_request_, ImageRequest{}); }

 private:
  ImageRequest image_request_;
};

class App {
 public:
  explicit App(Platform& platform);
  ~App();

  // The page is about to hand over `delta` more files (negative: fewer than it said). Until they
  // are in, PyTorch ranks wait to be converted, so a host ET and its Kineto trace dropped
  // together are linked once, not converted alone first.
  void expect_files(int delta);
  // Files handed over by the page; they are opened a slice at a time in work().
  void queue_file(std::span<const uint8_t> bytes, const std::string& name);
  // A file the page hands over in pieces (large files are read in slices, so they are never
  // held whole): queued now; returns its id for the calls below.
  uint32_t begin_file(const std::string& name, uint64_t size);
  // Its next piece; false when it was refused (the error is shown) or is gone.
  bool file_piece(uint32_t id, std::span<const uint8_t> piece);
  // How many more bytes it takes now (0: later), or -1 when it was refused or is gone.
  int64_t file_bytes_wanted(uint32_t id) const;
  // The page could not read the rest (the file went away): dropped, with the reason shown.
  void abandon_file(uint32_t id, const std::string& reason);
  // Does up to `budget_ms` of pending work (opening files). Call once per frame.
  void work(double budget_ms);
  bool busy() const;
  // Busy with work the UI thread does (work() has something to do); false while the only work
  // left runs elsewhere (conversions in workers), whose reports come with the host's wake-up.
  bool working_here() const;
  void draw();

  // Share links: the state of every view and setting; apply() restores it (errors are shown).
  std::string share_hash() const;
  void apply_hash(const std::string& hash);

  // The actions behind the UI's buttons, also used by tests.
  bool set_view(std::string_view name);  // a view of views.cpp by its name ("timeline")
  // Starts a run (in the background when the platform can; see Platform::start_simulation).
  bool run_simulation();
  bool generate_synthetic();
  void fit_network_to_ranks();
  void clear();
  void copy_link();  // the share link to the clipboard, with a note
  void select_node(uint32_t rank, uint32_t node);
  void cancel_simulation();
  // The same actions by name, for scripts, tests and the page's header ("simulate", "view
  // timeline", "export analysis json", ...): the table in commands.cpp, listed by
  // command_usages(). False when it failed or is unknown.
  bool command(const std::string& name);
  std::vector<std::string> command_usages() const;

  // Reports from the Platform's simulation runner.
  void simulation_progress(uint64_t nodes_done, uint64_t nodes_total);
  void simulation_finished(chakra::sim::SimResult result);
  void simulation_failed(const std::string& message);

  // Reports of the Platform's sweep points (of sweep `generation`; those of a cancelled or
  // replaced sweep are ignored). `ms`: the simulator's wall time.
  void sweep_point_finished(uint64_t point, uint64_t generation, const chakra::sim::SimResult& result, double ms);
  void sweep_point_failed(uint64_t point, uint64_t generation, const std::string& message);
  // Reports of the Platform's suite entries (of run `generation`): the entry's rows on each system
  // (a JSON array), or why it failed.
  void suite_entry_finished(uint64_t entry, uint64_t generation, const std::string& rows_json);
  void suite_entry_failed(uint64_t entry, uint64_t generation, const std::string& message);

  // Reports of the Platform's rank conversions (a result for files since replaced is ignored).
  void conversion_finished(chakra::ConvertedRank result);
  void conversion_failed(uint32_t rank, uint64_t generation, const std::string& message);

  // Machine-readable state for tests and scripts.
  std::string status_json() const;
  // {"busy", "loading", "error", "ranks": count, "simulating": bool, "last_run": id or 0, "view"}: what a
  // status line and the start page need, without the summaries.
  std::string brief_status_json() const;

  // The shell's state around the views (app.cpp; the views see its AppContext, app_context.h).
  struct Impl;

 private:
  void add_commands();  // the app's own (commands.cpp); each view adds its own
  std::unique_ptr<Impl> impl_;
};

}  // namespace chakra_web
