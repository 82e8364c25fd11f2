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
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

// Replays each type and size as a chain of --count collectives; returns the summaries' paths.
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
  struct Case {
    std::string name;
    chakra::CommType type;
    uint64_t size;
  };
  std::vector<Case> cases;  // every name and size checked before the first replay
  for (std::string_view type : chakra::Split(a.get("--types"), ','))
    for (std::string_view size_text : chakra::Split(a.get("--sizes"), ',')) {
      const std::optional<uint64_t> size = chakra::parse_size(size_text);
      if (!size || *size == 0) a.fail("--sizes: '" + std::string(size_text) + "' is not a size");
      cases.push_back({std::string(type), cli::collective_option(a, "--types", type), *size});
    }
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!progress.report("replaying microbenchmarks", i, cases.size())) throw chakra::Cancelled();
    const auto& [type, comm_type, size] = cases[i];
    chakra::CollectiveOptions o;
    o.type = comm_type;
    o.size = size;
    o.npus = npus;
    o.count = count;
    const std::string prefix = bench + "/" + type + "_" + chakra::size_label(size);
    cli::EtFileSet files;
    for (uint32_t n = 0; n < npus; ++n)
      files.add(prefix + "." + std::to_string(n) + ".et", chakra::collective_trace(o, n));
    files.commit();
    std::vector<std::string> argv = launcher;
    for (const std::string& w :
         {std::string("-n"), std::to_string(npus), replay.string(), prefix, std::string("--compute"),
          std::string("skip"), std::string("--summary-json"), prefix + ".summary.json"})
      argv.push_back(w);
    cli::run_command(argv);
    summaries.push_back(prefix + ".summary.json");
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
  args.option("--count", "K", "collectives per microbenchmark (the median is fitted)", "20");
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
