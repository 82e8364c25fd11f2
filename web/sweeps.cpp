#include "sweeps.h"

#include <algorithm>
#include <optional>

#include "chakra/format/json_writer.h"
#include "chakra/support/error.h"

namespace chakra_web {

namespace sweep = chakra::sweep;

namespace {
// In workers: a few points queued ahead of each, so none waits for the page's next frame.
constexpr size_t kAhead = 16;

bool failed_row(const sweep::Row& r) { return r.contains("error") && r["error"].is_string() && r["error"] != ""; }
}  // namespace

Sweeps::Sweeps(Platform& platform, std::function<void(const std::string&)> note)
    : platform_(platform), note_(std::move(note)) {}

bool Sweeps::start(const std::string& spec_text) {
  cancel();
  error.clear();
  try {
    auto spec = std::make_unique<sweep::Spec>(sweep::parse_spec(spec_text, "sweep spec", ""));
    sweep::Expansion e = sweep::expand(*spec, 100000);
    if (e.points.size() > 20000)
      throw chakra::Error("sweep spec: " + std::to_string(e.points.size()) +
                          " points; the page runs at most 20000 (chakra sweep runs any number)");
    runner_ = std::make_unique<sweep::Runner>(*spec, false);
    spec_ = std::move(spec);
    points = std::move(e.points);
    product = e.product;
    dropped = e.dropped;
  } catch (const std::exception& e) {
    error = e.what();
    note_("error: " + error);
    return false;
  }
  rows.clear();
  ++version;
  ++serial;
  axes = points.empty() ? std::vector<std::string>{} : sweep::axis_columns(runner_->row_of(points.front()));
  source = "run";
  failed = 0;
  next_ = in_flight_ = 0;
  running = !points.empty();
  started_ = std::chrono::steady_clock::now();
  note_("sweep: " + std::to_string(points.size()) + " points");
  return true;
}

void Sweeps::cancel() {
  if (!running) return;
  platform_.cancel_sweep();
  ++generation_;
  running = false;
  in_flight_ = 0;
  note_("sweep cancelled: " + std::to_string(rows.size()) + " of " + std::to_string(points.size()) + " points done");
}

void Sweeps::clear() {
  cancel();
  ++generation_;  // reports of the old sweep stay ignored
  spec_.reset();
  runner_.reset();
  points.clear();
  rows.clear();
  axes.clear();
  source.clear();
  product = dropped = failed = 0;
  seconds = 0;
  error.clear();
  next_ = in_flight_ = 0;
  ++version;
  ++serial;
}

bool Sweeps::work_waiting() const {
  return running && next_ < points.size() && (!platform_.runs_sweep_points() || in_flight_ < kAhead);
}

void Sweeps::work(double budget_ms) {
  if (!running) return;
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return budget_ms - std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  while (next_ < points.size() && left() > 0) {
    const sweep::Point& p = points[next_];
    if (platform_.runs_sweep_points()) {
      if (in_flight_ >= kAhead) break;
      sweep::Row row;
      std::optional<chakra::SimJob> job = runner_->job(p, row);
      ++next_;
      if (!job) {
        point_done(std::move(row));
        continue;
      }
      ++in_flight_;
      platform_.start_sweep_point(p.index, generation_, std::move(*job));
    } else {
      ++next_;
      point_done(runner_->run(p));
    }
  }
}

void Sweeps::point_done(sweep::Row row) {
  if (failed_row(row)) ++failed;
  rows.push_back(std::move(row));
  ++version;
  if (rows.size() == points.size()) {
    running = false;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    note_("sweep: " + std::to_string(rows.size()) + " points done" +
          (failed ? ", " + std::to_string(failed) + " failed" : ""));
  }
}

void Sweeps::point_finished(uint64_t point, uint64_t generation, const chakra::sim::SimResult& result, double ms) {
  if (generation != generation_ || !running || point >= points.size()) return;
  --in_flight_;
  sweep::Row row = runner_->row_of(points[point]);
  runner_->finish(row, result, ms);
  point_done(std::move(row));
}

void Sweeps::point_failed(uint64_t point, uint64_t generation, const std::string& message) {
  if (generation != generation_ || !running || point >= points.size()) return;
  --in_flight_;
  sweep::Row row = runner_->row_of(points[point]);
  runner_->fail(row, message);
  point_done(std::move(row));
}

void Sweeps::open_table(chakra::Workspace::SweepTableFile file) {
  cancel();
  spec_.reset();
  runner_.reset();
  points.clear();
  rows = std::move(file.table.rows);
  ++version;
  ++serial;
  axes = sweep::axis_columns(rows.front());
  source = file.name;
  failed = static_cast<uint64_t>(std::count_if(rows.begin(), rows.end(), failed_row));
  product = dropped = 0;
}

void Sweeps::write_status(chakra::JsonWriter& w) const {
  // Its points, rows done and failed, and each row's step by point (null: failed).
  w.key("sweep").begin_object();
  w.key("source").value(source);
  w.key("points").value_uint(source == "run" ? points.size() : rows.size());
  w.key("done").value_uint(rows.size());
  w.key("failed").value_uint(failed);
  w.key("running").value(running);
  w.key("error").value(error);
  std::string first_failure;  // the first failed point's error (by point)
  uint64_t first_point = UINT64_MAX;
  for (const auto& r : rows)  // rows of a dropped table may lack any column but point and sweep
    if (failed_row(r) && r["point"].get<uint64_t>() < first_point)
      first_point = r["point"].get<uint64_t>(), first_failure = r["error"].get<std::string>();
  w.key("first_failure").value(first_failure);
  w.key("steps").begin_array();
  for (const size_t i : sweep::point_order(rows)) {
    const sweep::Row& r = rows[i];
    if (r.contains("step_ns") && r["step_ns"].is_number_unsigned())
      w.value_uint(r["step_ns"].get<uint64_t>());
    else
      w.value_null();
  }
  w.end_array();
  w.end_object();
}

}  // namespace chakra_web
