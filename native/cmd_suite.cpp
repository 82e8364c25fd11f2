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
namespace fs = std::filesystem;

// The suite's entries (those of `shard`) on each system, `--jobs` points at a time; per system,
// rows in entry order.
std::vector<std::vector<sweep::Row>> run_on(const cli::Args& a, const suite::Suite& s,
                                            const std::vector<suite::System>& systems, sweep::Shard shard = {}) {
  const sweep::Spec spec = suite::spec_for(s, systems);
  const sweep::Runner runner(spec, false);
  const sweep::Expansion e = sweep::expand(spec);
  const size_t n = e.points.size() / systems.size();
  std::vector<size_t> mine;
  for (size_t i = shard.index; i < n; i += shard.count) mine.push_back(i);
  std::vector<std::vector<sweep::Row>> rows(systems.size(), std::vector<sweep::Row>(mine.size()));
  // An entry on every system, then the next: a workload is built once for all of them.
  cli::run_jobs(
      mine.size() * systems.size(),
      [&](size_t k) {
        const size_t system = k % systems.size(), i = k / systems.size();
        rows[system][i] = runner.run(e.points[system * n + mine[i]]);
      },
      "suite", a.has("--jobs") ? a.get_uint("--jobs", 4096) : 0);
  return rows;
}

void write_json(const std::string& path, const suite::Json& json) {
  OutputFile f(path);
  f.write(json.dump(1) + "\n");
  f.commit();
}

// The options that name the suite and the system, for the commands a Slurm job runs.
std::string system_words(const cli::Args& a) {
  std::string words;
  for (const char* option : {"--suite", "--network", "--system"})
    if (a.has(option))
      words += std::string(" ") + option + " " + cli::shell_quote(fs::absolute(a.get(option)).string());
  for (const char* option : {"--preset", "--name"})
    if (a.has(option)) words += std::string(" ") + option + " " + cli::shell_quote(a.get(option));
  return words;
}

// The Slurm array (a shard of the entries per task) and the gather job that merges the parts.
int slurm(const cli::Args& a, const suite::Suite& s, const std::string& out) {
  const std::string chakra = cli::shell_quote(cli::self_path()), result = fs::absolute(out).string();
  const size_t n = suite::entries(s).size();
  cli::SlurmJobs jobs;
  jobs.name = "chakra-suite";
  jobs.dir = result + ".slurm";
  jobs.tasks = cli::slurm_tasks(a, n);
  jobs.array_command = chakra + " suite run" + system_words(a) + " -o " + cli::shell_quote(jobs.dir) +
                       "/part-$SLURM_ARRAY_TASK_ID.json --shard $SLURM_ARRAY_TASK_ID/" + std::to_string(jobs.tasks) +
                       " --jobs ${SLURM_CPUS_PER_TASK:-1}";
  std::string parts;
  for (uint32_t t = 0; t < jobs.tasks; ++t)
    parts += " " + cli::shell_quote(jobs.dir + "/part-" + std::to_string(t) + ".json");
  jobs.gather_command =
      chakra + " suite merge" +
      (a.has("--suite") ? " --suite " + cli::shell_quote(fs::absolute(a.get("--suite")).string()) : "") + " -o " +
      cli::shell_quote(result) + parts;
  jobs.result = "the result will be " + result + " (" + std::to_string(n) + " entries on the system and the reference)";
  return cli::submit_slurm(a, jobs);
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
  if (a.has("--slurm")) {
    if (a.has("--shard")) a.fail("--slurm makes the shards itself; drop --shard");
    return slurm(a, s, out);
  }
  if (a.has("--shard")) {
    const auto shard = sweep::parse_shard(a.get("--shard"));
    if (!shard) a.fail("--shard must be i/K with 0 <= i < K, not '" + a.get("--shard") + "'");
    const auto rows = run_on(a, s, {system, suite::reference_system(s)}, *shard);
    write_json(out, suite::shard_part(s, system, *shard, rows[0], rows[1]));
    std::cout << "part " << a.get("--shard") << " of the run: " << rows[0].size() << " of " << suite::entries(s).size()
              << " entries -> " << out << " (chakra suite merge -o RESULT.json joins every shard's part)\n";
    return cli::kOk;
  }
  const suite::Json result = run_suite(a, s, system);
  write_json(out, result);
  std::cout << suite::result_text(result) << "\nresult: " << out << " (chakra suite verify checks it)\n";
  return cli::kOk;
}

int merge(const cli::Args& a) {
  const suite::Suite s = the_suite(a);
  std::vector<std::string> texts;
  const std::vector<std::string> paths = a.values("PART");
  for (const std::string& path : paths) texts.push_back(read_file(path));
  const std::string out = a.get("--output");
  cli::check_output_path(out, "--output");
  const suite::Json result = suite::merge_parts(s, texts, paths);
  write_json(out, result);
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
                                  std::pair{".html", suite::board_html(b)}, std::pair{".json", suite::board_json(b)}}) {
    OutputFile f(out + ext);
    f.write(text);
    f.commit();
  }
  std::cout << suite::board_markdown(b) << "\nboard: " << out << ".csv, " << out << ".md, " << out << ".html, " << out
            << ".json (the page opens it)\n";
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
    args.option("--shard", "i/K",
                "run only the entries whose number is i mod K (0 <= i < K), writing a part; chakra suite merge "
                "joins the parts");
    cli::add_slurm_options(args, "entries");
    args.option("--output", "RESULT.json", "where the result (or with --shard, the part) goes", "", true);
    args.alias("-o", "--output");
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra suite run", run, args);
  }
  if (sub == "merge") {
    cli::Args args("chakra suite merge",
                   "Joins the parts every shard of a run wrote (chakra suite run --shard i/K, or --slurm) into\n"
                   "the run's result: the same bytes as one run writes.");
    args.option("--suite", "FILE", "a suite definition (default: chakra-suite-v1, built in)");
    args.option("--output", "RESULT.json", "where the result goes", "", true);
    args.alias("-o", "--output");
    args.positional("PART", "a part of chakra suite run --shard", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra suite merge", merge, args);
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
                   "Ranks results of one suite by overall score (each verified first) into BOARD.csv, BOARD.md,\n"
                   "BOARD.html (a self-contained page) and BOARD.json (the results, which the page opens).");
    common_options(args);
    args.option("--output", "BOARD", "the board's files, BOARD.csv, BOARD.md, BOARD.html, BOARD.json", "", true);
    args.alias("-o", "--output");
    args.positional("RESULT", "results of chakra suite run", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra suite board", board, args);
  }
  const char* usage =
      "usage: chakra suite run|merge|verify|board|list ...\n\n"
      "The benchmark suite (core/docs/suite.md):\n"
      "  run     run it on a system (--network NET.yml --system SYS.json, or --preset) -> a scored result\n"
      "          (--shard i/K: a part; --slurm: shards as a Slurm array, merged by a gather job)\n"
      "  merge   join the parts of every shard of a run into its result\n"
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
