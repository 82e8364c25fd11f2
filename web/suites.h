// The page's benchmark suite (chakra/app/suite.h, as `chakra suite run`): the built-in suite run
// on the Simulation view's cluster and on the suite's reference, each entry in one of the host's
// workers (or here, an entry a frame), scored as the CLI scores it; and results `chakra suite run`
// wrote, opened from files, to compare. A controller, no drawing: the Suite view shows it. Private
// to web/.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "chakra/app/suite.h"

namespace chakra_web {

class Suites {
 public:
  Suites(Platform& platform, std::function<void(const std::string&)> note);

  // Runs the built-in suite on `system` (and on the reference); false with `error` set when it
  // cannot start.
  bool start(const chakra::suite::System& system);
  void cancel();
  void clear();               // as a fresh page
  bool work_waiting() const;  // entries to hand out (or to run here) now
  void work(double budget_ms);
  // Reports of the platform's workers for run `generation` (others are ignored): the entry's rows
  // on each system as JSON (an array), or why it failed.
  void entry_finished(uint64_t entry, uint64_t generation, const std::string& rows_json);
  void entry_failed(uint64_t entry, uint64_t generation, const std::string& message);
  void open_result(chakra::Workspace::SuiteResultFile file);
  void write_status(chakra::JsonWriter& w) const;

  // The results shown, oldest first: the last run's and those opened (one per system: a newer
  // result of a system replaces its older one). `source` is "run" or the file's name.
  struct Shown {
    std::string source;
    chakra::suite::Json result;
  };
  std::vector<Shown> results;
  size_t entries = 0, done = 0;  // of the run going on (or the last)
  bool running = false;
  std::string system_name;  // what the run going on runs on
  std::string error;
  double seconds = 0;    // the last run's
  uint64_t version = 0;  // changes whenever `results` do

 private:
  void add(Shown shown);
  void entry_done(uint64_t entry, std::vector<chakra::sweep::Row> rows);
  Platform& platform_;
  std::function<void(const std::string&)> note_;
  std::unique_ptr<chakra::suite::Suite> suite_;
  std::vector<chakra::suite::Entry> entries_;
  std::vector<chakra::suite::System> systems_;         // the system, then the reference
  std::vector<std::vector<chakra::sweep::Row>> rows_;  // per system, per entry
  size_t next_ = 0;                                    // entries handed out
  uint64_t generation_ = 0;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace chakra_web
