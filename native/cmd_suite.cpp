// chakra suite: the benchmark suite (core/docs/suite.md). `run` simulates every workload × scale
// on a submitted system and on the suite's reference system and writes the scored result;
// `verify` runs a result again and names the first figure that differs; `board` ranks verified
// results of one suite.
#include <atomic>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "chakra/app/suite.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "cli.h"
#include "commands.h"

namespace {

using namespace chakra;

// Every point of `spec`, `jobs` at a time; rows in point order.
std::vector<sweep::Row> run_points(const sweep::Spec& spec, size_t jobs, cli::TerminalProgress& progress,
                                   std::atomic<size_t>& done, size_t total) {
  const sweep::Expansion e = sweep::expand(spec);
  const sweep::Runner runner(spec, false);
  std::vector<sweep::Row> rows(e.points.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  auto worker = [&] {
    for (size_t i; !stop && (i = next++) < e.points.size();) {
      rows[i] = runner.run(e.points[i]);
      std::lock_guard<std::mutex> lock(mutex);
      if (!progress.report("suite", ++done, total) || cli::interrupted()) stop = true;
    }
  };
  std::vector<std::thread> pool;
  for (size_t k = 1; k < std::min(jobs, e.points.size()); ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (stop) throw Cancelled();
  return rows;
}

// The suite on `system` and on the reference: the scored result.
suite::Json run_suite(const cli::Args& a, const suite::Suite& s, const suite::System& system) {
  const size_t jobs = a.has("--jobs") ? std::max<uint64_t>(1, a.get_uint("--jobs", 4096))
                                      : std::max(1u, std::thread::hardware_concurrency());
  const size_t total = 2 * suite::entries(s).size();
  cli::TerminalProgress progress;
  std::atomic<size_t> done{0};
  const auto rows = run_points(suite::spec_for(s, system), jobs, progress, done, total);
  const auto reference = run_points(suite::spec_for(s, suite::reference_system(s)), jobs, progress, done, total);
  progress.clear();
  return suite::result(s, system, rows, reference);
}

suite::Suite the_suite(const cli::Args& a) {
  return a.has("--suite") ? suite::load_suite(a.get("--suite")) : suite::builtin_suite();
}

suite::Json read_result(const std::string& path) {
  try {
    return suite::Json::parse(read_file(path));
  } catch (const suite::Json::exception& e) {
    throw Error(path + ": not a suite result (" + e.what() + ")");
  }
}

// A result run again: "" when every figure is the same, else what differs.
std::string check(const cli::Args& a, const suite::Suite& s, const suite::Json& claimed, const std::string& path) {
  if (!claimed.is_object() || claimed.value("suite_hash", "") != s.hash)
    return "made with another suite definition (" + claimed.value("suite", std::string("?")) + ", " +
           claimed.value("suite_hash", std::string("?")).substr(0, 12) + ") than " + s.source + " (" + s.version +
           ", " + s.hash.substr(0, 12) + ")";
  return suite::first_difference(claimed, run_suite(a, s, suite::recorded_system(claimed, path)));
}

int run(const cli::Args& a) {
  const suite::Suite s = the_suite(a);
  suite::System system;
  if (a.has("--preset")) {
    if (a.has("--network") || a.has("--system")) a.fail("--preset replaces --network and --system");
    system = suite::system_from_preset(a.get("--preset"));
  } else {
    if (!a.has("--network") || !a.has("--system")) a.fail("give --network NET.yml and --system SYS.json, or --preset");
    system = suite::system_from_files(a.get("--network"), a.get("--network"), a.get("--system"));
  }
  if (a.has("--name")) system.name = a.get("--name");
  const std::string out = a.get("--output");
  cli::check_output_path(out, "--output");
  const suite::Json result = run_suite(a, s, system);
  OutputFile f(out);
  f.write(result.dump(1) + "\n");
  f.commit();
  std::cout << suite::result_text(result) << "\nresult: " << out << " (chakra suite verify checks it)\n";
  return cli::kOk;
}

int verify(const cli::Args& a) {
  const suite::Suite s = the_suite(a);
  int failed = 0;
  for (const std::string& path : a.values("RESULT")) {
    const std::string why = check(a, s, read_result(path), path);
    std::cout << path << ": "
              << (why.empty() ? "verified (every figure the same when run again)" : "NOT verified: " + why) << "\n";
    failed += !why.empty();
  }
  return failed ? cli::kFailed : cli::kOk;
}

int board(const cli::Args& a) {
  const suite::Suite s = the_suite(a);
  std::vector<suite::Json> results;
  const std::vector<std::string> paths = a.values("RESULT");
  for (const std::string& path : paths) {
    results.push_back(read_result(path));
    if (const std::string why = check(a, s, results.back(), path); !why.empty())
      throw Error(path + ": not verified, so not on the board: " + why);
  }
  const suite::Board b = suite::make_board(results, paths);
  const std::string out = a.get("--output");
  for (const auto& [ext, text] : {std::pair{".csv", suite::board_csv(b)}, std::pair{".md", suite::board_markdown(b)},
                                  std::pair{".html", suite::board_html(b)}}) {
    OutputFile f(out + ext);
    f.write(text);
    f.commit();
  }
  std::cout << suite::board_markdown(b) << "\nboard: " << out << ".csv, " << out << ".md, " << out << ".html\n";
  return cli::kOk;
}

void common_options(cli::Args& args) {
  args.option("--suite", "FILE", "a suite definition (default: chakra-suite-v1, built in)");
  args.option("--jobs", "N", "points at once (default: every core)");
}

int cmd_suite(int argc, char** argv) {
  const std::string sub = argc > 0 ? argv[0] : "";
  if (sub == "run") {
    cli::Args args("chakra suite run",
                   "Runs the benchmark suite (every workload at every scale, core/docs/suite.md) on a system and\n"
                   "on the suite's reference system, and writes the scored result.");
    common_options(args);
    args.option("--network", "NET.yml", "the system's network (ASTRA-sim's analytical YAML), fitted to each scale");
    args.option("--system", "SYS.json", "the system's configuration (ASTRA-sim's system JSON, with its compute peak)");
    args.option("--preset", "NAME", "a cluster preset instead of --network and --system");
    args.option("--name", "TEXT", "the system's name in the result");
    args.option("--output", "RESULT.json", "where the result goes", "", true);
    args.alias("-o", "--output");
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra suite run", run, args);
  }
  if (sub == "verify") {
    cli::Args args("chakra suite verify",
                   "Runs each result's system through the suite again and checks every figure, the suite's\n"
                   "definition and the tool's version: the first that differs is named.");
    common_options(args);
    args.positional("RESULT", "a result of chakra suite run", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra suite verify", verify, args);
  }
  if (sub == "board") {
    cli::Args args("chakra suite board",
                   "Ranks results of one suite by overall score (each verified first) into BOARD.csv, BOARD.md\n"
                   "and BOARD.html (a self-contained page).");
    common_options(args);
    args.option("--output", "BOARD", "the board's files, BOARD.csv, BOARD.md, BOARD.html", "", true);
    args.alias("-o", "--output");
    args.positional("RESULT", "results of chakra suite run", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra suite board", board, args);
  }
  const char* usage =
      "usage: chakra suite run|verify|board ...\n\n"
      "The benchmark suite (core/docs/suite.md):\n"
      "  run     run it on a system (--network NET.yml --system SYS.json, or --preset) -> a scored result\n"
      "  verify  run results again and check every figure\n"
      "  board   rank verified results of one suite into CSV, Markdown and HTML\n\n"
      "'chakra suite run --help' describes its options.\n";
  const bool help = sub == "--help" || sub == "-h";
  (help ? std::cout : std::cerr) << usage;
  return help ? 0 : 2;
}

}  // namespace

CHAKRA_COMMAND(145, "suite", cmd_suite,
               "the benchmark suite: run it on a system, verify a result, rank results on a board");
