// The simulation runs of the page: the settings being edited, the runs made with them (one at a
// time on the platform's runner), and their share-link keys. A controller, no drawing: the
// Simulation, Timeline and Analysis views show what it holds. Private to web/.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app.h"
#include "chakra/analysis/critical_path.h"
#include "chakra/analysis/gpu_analysis.h"

namespace chakra_web {

struct SimSettings {
  std::string preset = "h100-hgx-8";
  chakra::astra::NetworkConfig network;
  chakra::astra::SystemConfig system;
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

// The critical path across ranks of one source (the measured times or a run), made on first use.
struct CriticalPathData {
  std::vector<chakra::RankTimes> times;  // per rank in workspace order (NPU i = rank i)
  chakra::CrossRankPath path;
};

// A source's collectives by type and size (the Analysis view's Collectives tab), made on first use.
using CollectiveBuckets = std::optional<std::vector<chakra::CollectiveBucket>>;

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

class Runs {
 public:
  // `note` takes the lines the page's messages show ("run 2 started", "error: ...").
  Runs(Platform& platform, chakra::Workspace& workspace, std::function<void(const std::string&)> note);

  SimSettings settings;        // what the next run uses (the Simulation view edits it)
  std::string error;           // of the last run started, or of the settings
  std::string slowdown_error;  // of the last slowdown spec typed or commanded

  void use_preset(const std::string& name);
  void fit_to_ranks();  // the network's NPUs to the open ranks; throws when they cannot be
  // The slowdowns (`slowdown SPEC` command, the Simulation view); a spec that does not parse is
  // refused with its error shown.
  bool set_slowdown(const std::string& spec);

  // Starts a run of the open ranks (on the platform's runner when it has one, else here).
  bool start() { return start(settings); }
  bool start(const SimSettings& settings);
  void cancel();
  // Reports of the platform's runner.
  void progress(uint64_t nodes_done, uint64_t nodes_total);
  void finished(chakra::sim::SimResult result);
  void failed(const std::string& message);

  const std::vector<std::unique_ptr<SimRun>>& all() const { return runs_; }
  SimRun* by_id(int id) const;  // a finished run, or null
  const SimRun* running() const { return running_.get(); }
  double running_fraction() const { return running_fraction_; }
  double running_seconds() const;
  // The run's spans as a timeline (made on first use), or null when there is no such run.
  const chakra::TimelineModel* timeline(int id);
  // The two runs the Simulation view shows side by side (ids; 0: none): the newest and the one before.
  int shown = 0, compared = 0;
  void clear();  // every run; the next is run 1 again

  // Share links: the settings under "sim.", and each run's under "run1." ... (a reopened link
  // makes the same runs again; results are not in links).
  void write_state(chakra::ShareState& s) const;
  static void settings_state(const SimSettings& settings, const std::string& prefix, chakra::ShareState& s);
  // Settings read back through the same readers as dropped config files; throws on bad values.
  static SimSettings settings_from_state(const chakra::ShareState& s, const std::string& prefix);
  // The link's runs, made again in order once its traces are open (work()); `shown_run`: the
  // run the link showed (links written before runs were listed name only its settings).
  std::deque<SimSettings> link_runs;
  std::function<void()> read_state(const chakra::ShareState& s, int shown_run);
  // chakra simulate --json per run, the settings, what is running.
  void write_status(chakra::JsonWriter& w) const;

 private:
  void finish(std::unique_ptr<SimRun> run);
  Platform& platform_;
  chakra::Workspace& workspace_;
  std::function<void(const std::string&)> note_;
  std::vector<std::unique_ptr<SimRun>> runs_;
  int next_id_ = 1;
  std::unique_ptr<SimRun> running_;  // started on the platform's runner, not finished yet
  double running_fraction_ = 0;
  std::chrono::steady_clock::time_point running_since_;
};

}  // namespace chakra_web
