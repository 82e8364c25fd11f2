// Design-space sweeps (`chakra sweep`): a spec names a base configuration (a workload, a
// network, a system, a backend) and axes over its fields; every point of the product (or of zipped
// axes, or a seeded random sample of it) that passes the constraints is simulated, and each gives
// one row of a table. Points are numbered, and shard i of K takes the points whose number is i
// mod K, so that shards run anywhere (GNU parallel, mpirun, a Slurm array) and their tables merge
// into the one an unsharded run writes. The spec format: core/docs/sweeps.md, examples in
// assets/sweeps/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chakra/app/sim_job.h"
#include "chakra/support/progress.h"
#include "chakra/synth/synth.h"

namespace chakra::sweep {

using Json = nlohmann::ordered_json;

// One axis: a field of the configuration (a dotted path: "network.bandwidth",
// "system.active-chunks-per-dimension", "workload.synth.dp", "backend") and its values.
struct Axis {
  std::string field;
  std::vector<Json> values;
};

struct Spec {
  std::string source;    // the spec's file, named in messages
  std::string base_dir;  // relative paths in the spec are relative to it
  Json base;             // workload, network, system, backend, queues_per_dim
  // The points: the product of `axes` and of each `zip` group (axes moving together, one value of
  // each at a time), the first axis varying slowest; then the constraints; then, with
  // `sample`, that many of the survivors chosen at random with `seed` (kept in order).
  std::vector<Axis> axes;
  std::vector<std::vector<Axis>> zips;
  std::vector<std::string> constraints;
  std::optional<uint64_t> sample;
  uint64_t seed = 0;
  std::string fingerprint;  // 16 hex digits of the spec's content: the rows of one sweep carry it
};

// Reads a spec (YAML, chakra/format/yaml.h). Throws chakra::Error naming `source` and what is
// wrong (an unknown key, an axis without values, zipped axes of unequal length, a constraint
// that does not parse).
Spec parse_spec(std::string_view yaml, const std::string& source, const std::string& base_dir);
Spec load_spec(const std::string& path);

// A point: its number and the value of each axis (axes in spec order, zip groups' axes after).
struct Point {
  uint64_t index = 0;
  std::vector<std::pair<std::string, Json>> values;
};
struct Expansion {
  std::vector<Point> points;
  uint64_t product = 0;  // points before constraints and sampling
  uint64_t dropped = 0;  // by the constraints
};
// Throws chakra::Error when the product exceeds `max_product` points (a typo in an axis can ask
// for billions) or a constraint cannot be evaluated on a point.
Expansion expand(const Spec& spec, uint64_t max_product = 10'000'000);

// The configuration of one point: the base with each axis's value at its field.
Json point_config(const Spec& spec, const Point& point);

struct Shard {
  uint32_t index = 0, count = 1;
  bool has(uint64_t point) const { return point % count == index; }
};
// "i/K" with 0 <= i < K; nullopt when it is not.
std::optional<Shard> parse_shard(std::string_view text);

// A row of the results table: the columns in table order (point, sweep, the axes, then the
// figures; table_columns lists them).
using Row = Json;

// Simulates one point. A point that cannot be run (a bad value, a deadlock) gives a row with
// its `error` and no figures: a sweep records failures and goes on. `timing` adds the
// simulator's wall time (sim_ms), the one column two runs of the same point do not share.
// Thread-safe: points run in parallel.
class Runner {
 public:
  explicit Runner(const Spec& spec, bool timing = true);
  ~Runner();
  Row run(const Point& point) const;

  // The same in two steps, for hosts that simulate elsewhere (the web page's workers): the
  // point's simulation job, or nullopt with the error in `row` (which then is final); then its
  // result (or `error`, a failed run) into the row, `ms` the simulator's wall time.
  std::optional<chakra::SimJob> job(const Point& point, Row& row) const;
  // The point's row before it ran: its axis values, the figures empty.
  Row row_of(const Point& point) const;
  void finish(Row& row, const sim::SimResult& result, double ms) const;
  void fail(Row& row, const std::string& error) const;

  struct Built;  // a workload, built once and shared by the points that use it

 private:
  struct Cache;
  // The point's simulation, and the figures known before it runs (peak memory) into `row`;
  // throws chakra::Error for a point that cannot run.
  void build(const Point& point, Row& row, sim::SimInputs& in, sim::SimOptions& options,
             std::shared_ptr<const Built>& workload) const;
  const Spec& spec_;
  bool timing_;
  std::unique_ptr<Cache> cache_;  // workloads built once and shared by the points that use them
};

// The synthesis options of a `workload.synth` object (names as `chakra synth`'s flags, with _);
// chakra::Error naming the field for an unknown one or a bad value.
synth::SynthOptions synth_options(const Json& synth);

// The table's columns: point, sweep, the spec's axes, then npus, step_ns (the longest NPU's
// finish less its start), compute_ns, exposed_communication_ns (communication while no compute
// runs) and non_compute_ns (step less compute: ASTRA-sim's "exposed communication"), means over
// NPUs, peak_mem_bytes (synth workloads: synth::peak_memory_bytes),
// messages, events, network_bytes and network_utilisation (arrays, one value per network
// dimension: bytes carried, and busy time over step × NPUs as chakra simulate's summary), per
// collective type count, bytes and time_ns, sim_ms (with timing), error.
std::vector<std::string> table_columns(const Spec& spec, bool timing);

// The table as CSV (a header row, then one row per point in point order; RFC 4180 quoting) and
// as JSON lines (one object per row, keys in column order). Rows are sorted by point first.
std::string table_csv(const std::vector<std::string>& columns, std::vector<Row> rows);
std::string table_jsonl(std::vector<Row> rows);
std::string row_jsonl(const Row& row);  // one line, with its newline

// Rows of a JSON-lines table as written by table_jsonl/row_jsonl (a last line cut short by a
// kill is left out and counted in `truncated`). Throws chakra::Error naming `source` for
// anything else.
struct ReadRows {
  std::vector<Row> rows;
  uint64_t truncated = 0;
};
ReadRows read_rows(std::string_view jsonl, const std::string& source);

// The shards' rows joined: one sweep (a single fingerprint), no point twice; the columns of the
// first. Throws chakra::Error naming the file for a mismatch or a duplicate.
std::vector<Row> merge_rows(const std::vector<std::pair<std::string, ReadRows>>& parts);
// For plots: the mean of column `metric` over the rows without an error, per value of column `x`
// and, unless `split` is empty, per value of column `split` (one series each). Values are shown
// as written (text unquoted) and ordered as they first appear in point order, which is the
// spec's order for axes. `mean` is split values × x values, NaN where no row has the pair.
struct Grid {
  std::vector<std::string> x_values, split_values;  // split_values: one empty entry without a split
  std::vector<double> mean;
  double at(size_t split, size_t x) const { return mean[split * x_values.size() + x]; }
};
Grid grid_of(const std::vector<Row>& rows, const std::string& x, const std::string& split, const std::string& metric);
// The axis columns of a table's rows: those between `sweep` and `npus`.
std::vector<std::string> axis_columns(const Row& row);

// The rows' positions in point order.
std::vector<size_t> point_order(const std::vector<Row>& rows);

// The point numbers missing from 0..expected-1.
std::vector<uint64_t> missing_points(const std::vector<Row>& rows, uint64_t expected);

}  // namespace chakra::sweep
