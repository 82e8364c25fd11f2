// chakra calibrate: ASTRA-sim's analytical network fitted to replays of collective
// microbenchmarks on this cluster (core/docs/replay.md): it runs them through chakra replay under
// mpirun, or reads the summaries of replays run elsewhere, and writes the network YAML and system
// JSON that `chakra simulate` then runs other workloads with.
#include <filesystem>
#include <iostream>

#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/replay/calibrate.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"
#include "replay_request.h"

namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  chakra::CommType type;
  uint64_t size;
};

// At most this many sizes per collective type from --sizes-of, spread over its range: enough
// to fit a line, few enough to run in minutes.
constexpr size_t kSizesPerType = 8;

// The collective types and sizes a workload runs (every rank's trace read; its times are not).
std::vector<Case> workload_cases(const cli::Args& a) {
  const cli::WorkloadFiles w = cli::find_workload(a.get("--sizes-of"));
  std::vector<std::pair<chakra::replay::OpKind, uint64_t>> shapes;
  for (uint32_t r = 0; r < w.ranks; ++r) {
    const auto mine = chakra::replay::collective_shapes(chakra::read_et(chakra::sim::npu_trace_file(w.prefix, r)));
    shapes.insert(shapes.end(), mine.begin(), mine.end());
  }
  std::sort(shapes.begin(), shapes.end());
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  std::vector<Case> cases;
  std::string listed;
  for (size_t i = 0; i < shapes.size();) {
    const chakra::replay::OpKind kind = shapes[i].first;
    size_t end = i;
    while (end < shapes.size() && shapes[end].first == kind) ++end;
    const std::string name = chakra::replay::op_kind_name(kind);
    const size_t n = end - i, kept = std::min(n, kSizesPerType);
    if (kind == chakra::replay::OpKind::Broadcast || kind == chakra::replay::OpKind::Barrier) {
      listed += "\n  " + name + ": not fitted (calibrate fits all-reduce, all-gather, reduce-scatter, all-to-all)";
      i = end;
      continue;
    }
    std::vector<uint64_t> sizes;
    for (size_t k = 0; k < kept; ++k)  // evenly spread, smallest and largest kept
      sizes.push_back(shapes[i + (kept == 1 ? 0 : k * (n - 1) / (kept - 1))].second);
    listed += "\n  " + name + ":";
    for (size_t k = 0; k < sizes.size(); ++k) {
      cases.push_back({name, cli::collective_option(a, "--sizes-of", name), sizes[k]});
      listed += (k ? ", " : " ") + chakra::format_bytes(sizes[k]);
    }
    if (kept < n) listed += " (" + std::to_string(kept) + " of its " + std::to_string(n) + " sizes)";
    i = end;
  }
  if (cases.empty())
    throw chakra::Error(a.get("--sizes-of") +
                        ": no all-reduce, all-gather, reduce-scatter or all-to-all to calibrate for");
  std::cout << "microbenchmarks at the collectives of " << a.get("--sizes-of") << ":" << listed << "\n";
  return cases;
}

// Every name and size, checked before the first replay: --types × --sizes, or --sizes-of's.
std::vector<Case> microbenchmark_cases(const cli::Args& a) {
  if (a.has("--sizes-of")) {
    if (a.has("--types") || a.has("--sizes"))
      a.fail("--sizes-of takes the types and sizes from the workload: give it without --types and --sizes");
    return workload_cases(a);
  }
  std::vector<Case> cases;
  for (std::string_view type : chakra::Split(a.get("--types"), ','))
    for (std::string_view size_text : chakra::Split(a.get("--sizes"), ',')) {
      const std::optional<uint64_t> size = chakra::parse_size(size_text);
      if (!size || *size == 0) a.fail("--sizes: '" + std::string(size_text) + "' is not a size");
      cases.push_back({std::string(type), cli::collective_option(a, "--types", type), *size});
    }
  return cases;
}

// Replays each type and size as a chain of --count collectives, --repeat times; returns the
// summaries' paths.
std::vector<std::string> run_microbenchmarks(const cli::Args& a, const std::string& dir) {
  const uint32_t npus = static_cast<uint32_t>(a.get_uint("--npus", 1u << 16));
  const uint32_t count = static_cast<uint32_t>(a.get_uint("--count", 100000));
  if (npus < 2) a.fail("--npus must be at least 2 (a collective of one rank moves nothing)");
  if (count == 0) a.fail("--count must be at least 1");
  const fs::path replay = fs::path(cli::self_path()).parent_path() / "chakra-replay";
  if (!fs::exists(replay))
    throw chakra::Error("this chakra has no MPI replay: " + replay.string() +
                        " is missing (built where MPI is: install libopenmpi-dev); or pass replay summaries");
  std::vector<std::string> launcher;
  for (std::string_view w : chakra::Split(a.get("--mpirun"), ' '))
    if (!w.empty()) launcher.emplace_back(w);
  std::vector<std::string> summaries;
  const std::string bench = dir + "/microbenchmarks";
  fs::create_directories(bench);
  cli::TerminalProgress progress;
  const std::vector<Case> cases = microbenchmark_cases(a);
  const uint32_t repeats = static_cast<uint32_t>(a.get_uint("--repeat", 1000));
  if (repeats == 0) a.fail("--repeat must be at least 1");
  std::vector<std::string> prefixes;
  for (const auto& [type, comm_type, size] : cases) {
    chakra::CollectiveOptions o;
    o.type = comm_type;
    o.size = size;
    o.npus = npus;
    o.count = count;
    prefixes.push_back(bench + "/" + type + "_" + chakra::size_label(size));
    cli::EtFileSet files;
    for (uint32_t n = 0; n < npus; ++n)
      files.add(prefixes.back() + "." + std::to_string(n) + ".et", chakra::collective_trace(o, n));
    files.commit();
  }
  // Every case once per round, so a slow spell of the machine falls on all of them alike.
  for (uint32_t round = 0; round < repeats; ++round)
    for (size_t i = 0; i < cases.size(); ++i) {
      if (!progress.report("replaying microbenchmarks", round * cases.size() + i, repeats * cases.size()))
        throw chakra::Cancelled();
      const std::string summary = prefixes[i] + ".run" + std::to_string(round + 1) + ".summary.json";
      std::vector<std::string> argv = launcher;
      for (const std::string& w :
           {std::string("-n"), std::to_string(npus), replay.string(), prefixes[i], std::string("--compute"),
            std::string("skip"), std::string("--summary-json"), summary})
        argv.push_back(w);
      cli::run_command(argv);
      summaries.push_back(summary);
    }
  progress.clear();
  return summaries;
}

int run(const cli::Args& a) {
  const std::string out = a.get("--out");
  cli::check_output_path(out + "/network.yml", "--out", true);
  std::vector<std::string> summaries = a.values("SUMMARY");
  if (summaries.empty()) summaries = run_microbenchmarks(a, out);
  std::vector<chakra::replay::Measurement> measurements;
  for (const std::string& s : summaries) {
    auto m = chakra::replay::summary_measurements(chakra::read_file(s), s);
    measurements.insert(measurements.end(), m.begin(), m.end());
  }
  const chakra::replay::Calibration c = chakra::replay::calibrate(measurements);
  fs::create_directories(out);
  for (const auto& [name, text] : {std::pair{"/network.yml", chakra::astra::format_network(c.network)},
                                   std::pair{"/system.json", chakra::astra::format_system(c.system)},
                                   std::pair{"/calibration.json", chakra::replay::calibration_json(c)}}) {
    chakra::OutputFile f(out + name);
    f.write(text);
    f.commit();
  }
  std::cout << chakra::replay::calibration_text(c) << "\nwrote " << out << "/network.yml, " << out << "/system.json ("
            << "chakra simulate --network ... --system ... runs other workloads on them) and " << out
            << "/calibration.json\n";
  return cli::kOk;
}

int calibrate_command(int argc, char** argv) {
  cli::Args args("chakra calibrate",
                 "Fits ASTRA-sim's analytical network (topology, latency, bandwidth, local memory bandwidth)\n"
                 "and per collective type its algorithm to collectives replayed on this cluster: runs\n"
                 "chakra generate collective microbenchmarks through chakra replay under mpirun, or reads\n"
                 "the summaries (--summary-json) of replays run elsewhere.");
  args.option("--out", "DIR", "where network.yml, system.json and calibration.json go", "", true);
  args.option("--npus", "N", "ranks to replay the microbenchmarks on", "4");
  args.option("--types", "LIST", "collectives to replay", "all_reduce,all_gather,reduce_scatter,all_to_all");
  args.option("--sizes", "LIST", "sizes (comm_size) to replay", "64KiB,256KiB,1MiB,4MiB,16MiB");
  args.option("--sizes-of", "WORKLOAD",
              "replay the collective types and sizes this workload's traces run (a folder or PREFIX; its times are "
              "not used) instead of --types x --sizes");
  args.option("--count", "K", "collectives per microbenchmark (the median is fitted)", "20");
  args.option("--repeat", "R", "replays of each microbenchmark, interleaved (the median of their medians is fitted)",
              "3");
  args.option("--mpirun", "WORDS", "the launcher that starts chakra-replay (-n N is added)", "mpirun --oversubscribe");
  args.positional("SUMMARY",
                  "summaries of replays (chakra replay --summary-json) to fit instead of running microbenchmarks",
                  false, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra calibrate", run, args);
}

}  // namespace

CHAKRA_COMMAND(97, "calibrate", calibrate_command,
               "fit the simulator's network to collectives replayed on this cluster");
