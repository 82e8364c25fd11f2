// The page's design-space sweep (chakra/app/sweep.h, as `chakra sweep`): a spec run here, its
// points simulated in the host's workers (or a few per frame in place), or a table `chakra
// sweep` wrote, opened from a file. A controller, no drawing: the Sweep view shows it. Private
// to web/.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "chakra/app/sweep.h"

namespace chakra_web {

class Sweeps {
 public:
  Sweeps(Platform& platform, std::function<void(const std::string&)> note);

  bool start(const std::string& spec_text);  // false with `error` set when the spec is refused
  void cancel();
  void clear();  // as a fresh page (reports of what ran before stay ignored)
  // Hands out points to the platform's workers (or runs them here) for up to `budget_ms`.
  void work(double budget_ms);
  bool work_waiting() const;  // points to hand out now
  // Reports of the platform's workers, for sweep `generation` (others are ignored).
  void point_finished(uint64_t point, uint64_t generation, const chakra::sim::SimResult& result, double ms);
  void point_failed(uint64_t point, uint64_t generation, const std::string& message);
  void open_table(chakra::Workspace::SweepTableFile file);  // throws on a table without rows
  void write_status(chakra::JsonWriter& w) const;

  // What is shown: the spec and points of the last run (none for an opened table), its rows.
  std::vector<chakra::sweep::Row> rows;  // in the order they finished
  std::vector<chakra::sweep::Point> points;
  std::vector<std::string> axes;  // the rows' axis columns
  std::string source;             // "run" or the table's file name
  uint64_t product = 0, dropped = 0, failed = 0;
  bool running = false;
  double seconds = 0;  // a finished run's
  std::string error;
  uint64_t version = 0;  // changes whenever `rows` do
  uint64_t serial = 0;   // changes with each sweep started or table opened

 private:
  void point_done(chakra::sweep::Row row);
  Platform& platform_;
  std::function<void(const std::string&)> note_;
  std::unique_ptr<chakra::sweep::Spec> spec_;
  std::unique_ptr<chakra::sweep::Runner> runner_;
  size_t next_ = 0, in_flight_ = 0;  // points handed out, and not reported yet
  uint64_t generation_ = 0;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace chakra_web
