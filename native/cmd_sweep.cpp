// chakra sweep: a design-space sweep simulated point by point on this machine (threads), as
// one shard of K anywhere, or as a Slurm array with a gather job; chakra sweep merge joins the
// shards' tables (core/docs/sweeps.md).

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "chakra/app/sweep.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;
using namespace chakra::sweep;

namespace {

std::string shard_text(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

// The table, sorted by point, as RESULTS.jsonl and RESULTS.csv (each replaced whole).
void write_tables(const std::string& out, const std::vector<std::string>& columns, const std::vector<Row>& rows) {
  chakra::OutputFile jsonl(out + ".jsonl"), csv(out + ".csv");
  jsonl.write(table_jsonl(rows));
  csv.write(table_csv(columns, rows));
  jsonl.commit();
  csv.commit();
}

// The Slurm array (one shard per task) and the gather job that merges their tables.
int slurm(const cli::Args& a, const std::string& spec_path, const std::string& out, uint64_t points) {
  const std::string chakra = cli::shell_quote(cli::self_path());
  const std::string spec = cli::shell_quote(fs::absolute(spec_path).string()), results = fs::absolute(out).string();
  cli::SlurmJobs jobs;
  jobs.name = "chakra-sweep";
  jobs.dir = results + ".slurm";
  jobs.tasks = cli::slurm_tasks(a, points);
  jobs.array_command = chakra + " sweep " + spec + " -o " + cli::shell_quote(jobs.dir) +
                       "/shard-$SLURM_ARRAY_TASK_ID --shard $SLURM_ARRAY_TASK_ID/" + std::to_string(jobs.tasks) +
                       " --jobs ${SLURM_CPUS_PER_TASK:-1}" + (a.has("--no-timing") ? " --no-timing" : "") + " --quiet";
  std::string parts;
  for (uint32_t t = 0; t < jobs.tasks; ++t)
    parts += " " + cli::shell_quote(jobs.dir + "/shard-" + std::to_string(t) + ".jsonl");
  jobs.gather_command = chakra + " sweep merge " + spec + " -o " + cli::shell_quote(results) + parts;
  jobs.result =
      "the table will be " + results + ".csv and " + results + ".jsonl (" + std::to_string(points) + " points)";
  return cli::submit_slurm(a, jobs);
}

int run_sweep(const cli::Args& a) {
  if (!a.has("--output") && !a.has("--list"))
    a.fail("give --output RESULTS (the table's files), or --list to print the points");
  const std::string spec_path = a.values("SPEC")[0];
  const Spec spec = load_spec(spec_path);
  const Expansion e = expand(spec);
  const std::string out = a.get("--output");
  if (a.has("--slurm")) return slurm(a, spec_path, out, e.points.size());
  Shard shard;
  if (a.has("--shard")) {
    auto s = parse_shard(a.get("--shard"));
    if (!s) a.fail("--shard must be i/K with 0 <= i < K, not '" + a.get("--shard") + "'");
    shard = *s;
  }
  const bool timing = !a.has("--no-timing"), quiet = a.has("--quiet");
  const std::vector<std::string> columns = table_columns(spec, timing);
  std::vector<const Point*> mine;
  for (const Point& p : e.points)
    if (shard.has(p.index)) mine.push_back(&p);
  if (a.has("--list")) {
    for (const Point* p : mine) {
      Json line;
      line["point"] = p->index;
      for (const auto& [field, value] : p->values) line[field] = value;
      std::cout << line.dump() << "\n";
    }
    return cli::kOk;
  }
  cli::create_output_folder(out);
  // Rows already done (--resume): those of this spec and shard in RESULTS.jsonl.
  std::vector<Row> rows;
  std::vector<bool> done(e.points.size(), false);
  const std::string jsonl_path = out + ".jsonl";
  if (a.has("--resume") && fs::exists(jsonl_path)) {
    const ReadRows previous = read_rows(chakra::read_file(jsonl_path, {}), jsonl_path);
    for (const Row& r : previous.rows) {
      if (r["sweep"] != spec.fingerprint)
        throw chakra::Error(jsonl_path + ": rows of another spec (sweep " + r["sweep"].get<std::string>() +
                            ", this one " + spec.fingerprint + "); give another -o");
      const uint64_t p = r["point"].get<uint64_t>();
      if (p < done.size() && shard.has(p) && !done[p]) done[p] = true, rows.push_back(r);
    }
    if (!quiet)
      std::cerr << "resuming: " << rows.size() << " of " << mine.size() << " points done"
                << (previous.truncated ? " (a last line cut short is run again)" : "") << "\n";
  }
  write_tables(out, columns, rows);  // a valid table from the start: the rows done so far
  std::vector<const Point*> todo;
  for (const Point* p : mine)
    if (!done[p->index]) todo.push_back(p);

  // Each finished row is appended to RESULTS.jsonl at once (one write per line), so a run that is
  // killed leaves the rows it finished for --resume; the table is rewritten sorted at the end.
  std::FILE* append = std::fopen(jsonl_path.c_str(), "ab");
  if (!append) throw chakra::Error(jsonl_path + ": cannot open for appending: " + std::strerror(errno));
  const Runner runner(spec, timing);
  std::mutex mutex;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  size_t finished = 0, failed = 0;
  cli::TerminalProgress progress;
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i; !stop && (i = next++) < todo.size();) {
      Row row = runner.run(*todo[i]);
      std::lock_guard<std::mutex> lock(mutex);
      const std::string line = row_jsonl(row);
      std::fwrite(line.data(), 1, line.size(), append);
      std::fflush(append);
      failed += !row["error"].get<std::string>().empty();
      rows.push_back(std::move(row));
      ++finished;
      if (!quiet && !progress.report("sweep", finished, todo.size())) stop = true;
      if (cli::interrupted()) stop = true;
    }
  };
  const size_t jobs = std::max<size_t>(
      1,
      std::min<size_t>(a.has("--jobs") ? a.get_uint("--jobs", 4096) : std::max(1u, std::thread::hardware_concurrency()),
                       std::max<size_t>(1, todo.size())));
  std::vector<std::thread> pool;
  for (size_t k = 1; k < jobs; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  progress.clear();
  std::fclose(append);
  write_tables(out, columns, rows);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet) {
    std::cerr << e.points.size() << " points (" << e.product << " in the product";
    if (e.dropped) std::cerr << ", " << e.dropped << " dropped by the constraints";
    if (spec.sample) std::cerr << ", a sample of " << *spec.sample << " with seed " << spec.seed;
    std::cerr << ")";
    if (shard.count > 1) std::cerr << "; shard " << shard_text(shard) << ": " << mine.size() << " of them";
    char took[64];
    std::snprintf(took, sizeof took, "%.2f s", seconds);
    std::cerr << "; " << finished << " run in " << took << ", " << failed << " failed (the error column says why)\n"
              << "table: " << out << ".csv, " << out << ".jsonl\n";
  }
  if (stop || cli::interrupted()) {
    std::cerr << "interrupted: " << rows.size() << " of " << mine.size()
              << " points in the table; run again with --resume to finish\n";
    return cli::kInterrupted;
  }
  return cli::kOk;
}

int run_merge(const cli::Args& a) {
  const Spec spec = load_spec(a.values("SPEC")[0]);
  const Expansion e = expand(spec);
  std::vector<std::pair<std::string, ReadRows>> parts;
  for (const std::string& path : a.values("PART")) {
    ReadRows r = read_rows(chakra::read_file(path, {}), path);
    if (r.truncated)
      throw chakra::Error(path +
                          ": its last line is cut short (a shard killed while writing); run it again with --resume");
    parts.emplace_back(path, std::move(r));
  }
  const std::vector<Row> rows = merge_rows(parts);
  for (const Row& r : rows)
    if (r["sweep"] != spec.fingerprint)
      throw chakra::Error("the parts are rows of sweep " + r["sweep"].get<std::string>() + ", the spec is sweep " +
                          spec.fingerprint);
  const std::vector<uint64_t> missing = missing_points(rows, e.points.size());
  if (!missing.empty() && !a.has("--partial")) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 10; ++i) list += (i ? ", " : "") + std::to_string(missing[i]);
    throw chakra::Error(std::to_string(missing.size()) + " of " + std::to_string(e.points.size()) +
                        " points are in no part (" + list + (missing.size() > 10 ? ", ..." : "") +
                        "); --partial writes the table without them");
  }
  // The columns: sim_ms only when the parts were timed.
  const bool timing = !rows.empty() && rows.front().contains("sim_ms");
  cli::create_output_folder(a.get("--output"));
  write_tables(a.get("--output"), table_columns(spec, timing), rows);
  std::cerr << rows.size() << " rows from " << parts.size() << " parts -> " << a.get("--output") << ".csv, "
            << a.get("--output") << ".jsonl\n";
  return cli::kOk;
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  if (argc > 0 && std::string(argv[0]) == "merge") {
    cli::Args args(
        "chakra sweep merge",
        "Join the tables of a sweep's shards (RESULTS.jsonl of each) into the sweep's table, the same bytes\n"
        "as one unsharded run writes (without --no-timing, the sim_ms column differs from run to run).");
    args.option("--output", "RESULTS", "write RESULTS.csv and RESULTS.jsonl", "", true);
    args.alias("-o", "--output");
    args.flag("--partial", "write the table even when some points are in no part");
    args.positional("SPEC", "the sweep's spec (YAML)");
    args.positional("PART", "a shard's RESULTS.jsonl", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra sweep merge", run_merge, args);
  }
  cli::Args args("chakra sweep",
                 "Simulate every point of a design-space sweep (a YAML spec: a workload, a network, a system,\n"
                 "and axes over their fields; assets/sweeps/ has examples, core/docs/sweeps.md the format) and\n"
                 "write one table, RESULTS.csv and RESULTS.jsonl: a row per point with its axis values, step\n"
                 "time, compute, exposed communication, collectives, the simulator's time and an error column\n"
                 "(a failing point is recorded, never stops the sweep). Ctrl-C leaves a valid partial table;\n"
                 "--resume finishes it. `chakra sweep merge SPEC -o RESULTS PART.jsonl...` joins shards.");
  args.option("--output", "RESULTS", "write RESULTS.csv and RESULTS.jsonl (required but with --list)");
  args.alias("-o", "--output");
  args.option("--jobs", "N", "points simulated at once (default: every core)");
  args.option("--shard", "i/K",
              "run only the points whose number is i mod K (0 <= i < K); merge the shards' tables after");
  args.flag("--resume", "keep the rows of this spec already in RESULTS.jsonl and run the rest");
  args.flag("--no-timing", "leave out the sim_ms column (the table is then the same bytes on every run)");
  args.flag("--list", "print the points (this shard's) as JSON lines and run nothing");
  args.flag("--quiet", "no progress and no summary");
  cli::add_slurm_options(args, "points");
  args.positional("SPEC", "the sweep's spec (YAML)");
  args.parse(argc, argv);
  return cli::run_guarded("chakra sweep", run_sweep, args);
}

CHAKRA_COMMAND(140, "sweep", cmd_sweep,
               "simulate every point of a design-space sweep (here, as shards, or on Slurm) into one table");
