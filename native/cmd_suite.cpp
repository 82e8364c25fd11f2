// chakra suite: the benchmark suite (core/docs/suite.md). `run` simulates every workload × scale
// on a submitted system and on the suite's reference system and writes the scored result;
// `verify` runs a result again and names the first figure that differs; `board` ranks verified
// results of one suite.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "chakra/app/suite.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "cli.h"
#include "commands.h"

namespace {

using namespace chakra;

// The suite's entries on each system, `--jobs` points at a time; per system, rows in entry order.
std::vector<std::vector<sweep::Row>> run_on(const cli::Args& a, const suite::Suite& s,
                                            const std::vector<suite::System>& systems) {
  const sweep::Spec spec = suite::spec_for(s, systems);
  const sweep::Runner runner(spec, false);
  const sweep::Expansion e = sweep::expand(spec);
  const size_t n = e.points.size() / systems.size();
  std::vector<std::vector<sweep::Row>> rows(systems.size(), std::vector<sweep::Row>(n));
  // An entry on every system, then the next: a workload is built once for all of them.
  cli::run_jobs(
      e.points.size(),
      [&](size_t k) {
        const size_t system = k % systems.size(), i = k / systems.size();
        rows[system][i] = runner.run(e.points[system * n + i]);
      },
      "suite", a.has("--jobs") ? a.get_uint("--jobs", 4096) : 0);
  return rows;
}

// The suite on `system` and on the reference: the scored result.
suite::Json run_suite(const cli::Args& a, const suite::Suite& s, const suite::System& system) {
  const auto rows = run_on(a, s, {system, suite::reference_system(s)});
  return suite::result(s, system, rows[0], rows[1]);
}

suite::Suite the_suite(const cli::Args& a) {
  return a.has("--suite")
             ? suite::load_suite(a.get("--suite"))
             : suite::builtin_suite(suite::builtin_suite_dir(
                   std::filesystem::canonical("/proc/self/exe").parent_path().string(), CHAKRA_SOURCE_ASSETS));
}

suite::Json read_result(const std::string& path) { return suite::read_result(read_file(path), path); }

// Results run again, the reference system once for all of them.
class Checker {
 public:
  Checker(const cli::Args& a, const suite::Suite& s) : a_(a), s_(s) {}
  // "" when every figure of the result is the same run again, else what differs.
  std::string check(const suite::Json& claimed, const std::string& path) {
    if (!claimed.is_object() || claimed.value("suite_hash", "") != s_.hash)
      return "made with another suite definition (" + claimed.value("suite", std::string("?")) + ", " +
             claimed.value("suite_hash", std::string("?")).substr(0, 12) + ") than " + s_.source + " (" + s_.version +
             ", " + s_.hash.substr(0, 12) + ")";
    const suite::System system = suite::recorded_system(claimed, path);
    if (reference_.empty()) reference_ = run_on(a_, s_, {suite::reference_system(s_)})[0];
    return suite::first_difference(claimed, suite::result(s_, system, run_on(a_, s_, {system})[0], reference_));
  }

 private:
  const cli::Args& a_;
  const suite::Suite& s_;
  std::vector<sweep::Row> reference_;
};

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
  Checker checker(a, s);
  int failed = 0;
  for (const std::string& path : a.values("RESULT")) {
    const std::string why = checker.check(read_result(path), path);
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
  Checker checker(a, s);
  for (const std::string& path : paths) {
    results.push_back(read_result(path));
    if (const std::string why = checker.check(results.back(), path); !why.empty())
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

// The suite's entries and their hashes; each measured run's files checked against the hash the
// definition names (exit 1 when one is missing or differs: run would fail on it).
int list(const cli::Args& a) {
  const suite::Suite s = the_suite(a);
  std::cout << s.version << " (" << s.source << ", SHA-256 " << s.hash << ")\nreference system: " << s.reference.dump()
            << "\n\n";
  std::printf("%-20s %-16s %6s  %s\n", "workload", "class", "NPUs", "SHA-256 of its configuration at that scale");
  std::set<std::string> checked;
  std::string runs;
  int problems = 0;
  for (const suite::Entry& e : suite::entries(s)) {
    std::printf("%-20s %-16s %6u  %s\n", e.workload.c_str(), e.klass.c_str(), e.npus, e.hash.c_str());
    if (const auto run = suite::measured_run(s, e); run && checked.insert(e.workload).second) {
      runs += "  " + e.workload + ": " + run->folder + ": " +
              (run->problem.empty() ? "its content has the SHA-256 the suite names" : "PROBLEM: " + run->problem) +
              "\n";
      problems += !run->problem.empty();
    }
  }
  if (!runs.empty()) std::cout << "\nmeasured runs, grown to each scale:\n" << runs;
  return problems ? cli::kFailed : cli::kOk;
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
  if (sub == "list") {
    cli::Args args("chakra suite list",
                   "Lists the suite's workloads at each scale with the SHA-256 of each configuration, and checks\n"
                   "that each measured run's files are there with the content the suite names.");
    args.option("--suite", "FILE", "a suite definition (default: chakra-suite-v1, built in)");
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra suite list", list, args);
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
      "usage: chakra suite run|verify|board|list ...\n\n"
      "The benchmark suite (core/docs/suite.md):\n"
      "  run     run it on a system (--network NET.yml --system SYS.json, or --preset) -> a scored result\n"
      "  verify  run results again and check every figure\n"
      "  board   rank verified results of one suite into CSV, Markdown and HTML\n"
      "  list    its workloads, scales and hashes; measured runs' files checked\n\n"
      "'chakra suite run --help' describes its options.\n";
  const bool help = sub == "--help" || sub == "-h";
  (help ? std::cout : std::cerr) << usage;
  return help ? 0 : 2;
}

}  // namespace

CHAKRA_COMMAND(145, "suite", cmd_suite,
               "the benchmark suite: run it on a system, verify a result, rank results on a board");
