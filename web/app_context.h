// What the views share (AppContext) and what a view is (View). Private to web/.
//
// A view is one tab: a class in its own web/view_<name>.cpp holding its state, drawing it, and
// writing its share-link keys, status and commands; views.cpp lists them in tab order. Views
// share only what AppContext holds (the open ranks, the runs, the sweep and the suite, the selection, the
// messages) and reach each other only through commands (app.command("timeline 2")), never
// another view's state (tests/check_shape.py holds this).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app.h"
#include "runs.h"
#include "suites.h"
#include "sweeps.h"
#include "widgets.h"

namespace chakra_web {

// Derived data of one rank that several views use, built when first needed.
struct RankCache {
  const chakra::RankTrace* rank = nullptr;
  std::unique_ptr<chakra::IdIndex> index;
  chakra::DepGraph deps, dependants;
};

struct SynthSettings {
  std::string preset = "llama2-7b";
  int layers = 4, dp = 2, tp = 2, pp = 1, micro_batches = 1, batch = 8, seq = 2048;
  bool fsdp = false;
  bool active = false;  // the loaded ranks came from these settings
};

// A command by name ("view timeline", "sweep run"): its usage (the words before the first capital
// are its name; capitals, or a word list a|b, stand for its argument) and what it does with the
// argument ("" when it takes none). False when it failed or does not apply.
struct Command {
  std::string usage;
  std::function<bool(std::string_view argument)> run;
};

// A whole number from lo to hi written out as a command's word (nothing else in it), or none;
// a run's id as a command writes it (up to 8 digits; 0: the recorded times).
std::optional<uint32_t> command_number(std::string_view word, uint32_t lo, uint32_t hi);
std::optional<int> command_run_id(std::string_view word);

struct AppContext;

class View {
 public:
  explicit View(AppContext& app) : app(app) {}
  virtual ~View() = default;
  View(const View&) = delete;
  View& operator=(const View&) = delete;

  virtual std::string_view name() const = 0;  // in share links, commands ("view timeline") and the status
  virtual const char* title() const = 0;      // its tab
  virtual void draw() = 0;
  // Share links: its keys written from its state; read_state checks the link's keys and returns
  // what applies them (it throws on a bad value, before anything has changed).
  virtual void write_state(chakra::ShareState&) const {}
  virtual std::function<void()> read_state(const chakra::ShareState&) { return {}; }
  // Its part of App::status_json; `shown`: its tab is the one open.
  virtual void write_status(chakra::JsonWriter&, bool shown) {}
  virtual void add_commands(std::vector<Command>&) {}
  virtual void ranks_changed() {}  // the open ranks changed: what was derived from them is stale
  virtual void cleared() {}        // App::clear: back to a fresh page's state

 protected:
  AppContext& app;
};

// The running simulation's progress bar (the sidebar's and the Simulation view's).
void draw_run_progress(const Runs& runs, float width);

// The views in tab order (views.cpp: one line each).
std::vector<std::unique_ptr<View>> make_views(AppContext& app);

struct AppContext {
  explicit AppContext(Platform& p);
  ~AppContext();

  Platform& platform;
  chakra::Workspace workspace;
  Runs runs;
  Sweeps sweeps;
  Suites suites;

  // The selection every view follows: a rank, a node of it (position), and the run whose times
  // the Timeline view and the details show (0: the recorded times).
  uint32_t rank = 0;
  std::optional<uint32_t> selected;
  int shown_run = 0;

  SynthSettings synth;
  std::vector<std::string> files;  // names opened
  // Sum of the opened files' chakra::file_fingerprint: a share link names its files by this and
  // their count, never by their names.
  uint64_t files_fingerprint = 0;

  std::vector<std::string> log;  // newest last
  std::string error;             // last error, shown until the next success
  void note(const std::string& line);
  void fail(const std::string& what);

  bool show_keys = false;     // the key and mouse list ("?")
  std::string chart_to_save;  // "save chart TITLE": the chart with that title saves its picture
  bool take_save_request(const std::string& title) {
    if (chart_to_save != title) return false;
    chart_to_save.clear();
    return true;
  }

  const chakra::RankTrace* current_rank() const { return workspace.rank(rank); }
  RankCache* cache();    // the current rank's, or null
  void ranks_changed();  // the caches, the selection and every view's derived data
  // When node `n` of the current rank ran in the shown run (ns), if it does.
  std::optional<std::pair<double, double>> simulated_span(uint32_t n);
  bool generate_synthetic();  // the ranks of `synth`

  std::vector<std::unique_ptr<View>> views;  // in tab order
  std::vector<Command> commands;             // the app's, then each view's
  bool command(std::string_view text);
  size_t view = 0;                        // the view shown (index into `views`)
  bool view_changed = true;               // select its tab in the next frame
  bool show_view(std::string_view name);  // false when there is no such view

 private:
  std::map<uint32_t, RankCache> caches_;
};

}  // namespace chakra_web
