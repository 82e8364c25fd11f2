// The replay's overhead (core/docs/replay.md, issue target: ≤ 1.2× the bare MPI calls): a
// comm-only trace of N dependent all-reduces of S bytes on P ranks, replayed, against the same MPI
// calls issued in a bare loop (MPI_Iallreduce + MPI_Wait). Both run inside the same MPI processes,
// alternating (which goes first alternates too), each timed from a barrier to the last rank's end,
// so the pairs share process placement and the machine's state; each pair's ratio is printed with
// the medians.
//
// --calibration: the calibration target instead. A synthetic step (`chakra synth --synth ARGS`)
// is calibrated for from microbenchmarks alone (`chakra calibrate --sizes-of`: its collectives'
// types and sizes, not its times; --repeat runs of each), then replayed communication-only
// --pairs times, each replay simulated on the calibrated files: per replay the step and each
// collective type's median time, replayed and simulated; then their medians over the replays.
//
//   chakra_replay_bench [--collectives 10000] [--size 1024] [--ranks 4] [--pairs 15]
//   chakra_replay_bench --calibration [--synth "..."] [--ranks 4] [--pairs 5]
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/replay/mpi_comm.h"
#include "chakra/replay/replay.h"
#include "chakra/support/text.h"
#include "cli.h"

namespace {

// The longest rank's time, on every rank.
double slowest_ms(uint64_t ns) {
  unsigned long long mine = ns, longest = 0;
  MPI_Allreduce(&mine, &longest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return double(longest) / 1e6;
}

double bare_loop_ms(uint64_t collectives, uint64_t bytes) {
  std::vector<float> in(bytes / 4), out(bytes / 4);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < collectives; ++i) {
    MPI_Request r;
    MPI_Iallreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  return slowest_ms(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
}

double replay_ms(chakra::replay::CommLayer& comm, const chakra::replay::ReplayOptions& o) {
  const chakra::replay::ReplayOutcome r = chakra::replay::replay(o, comm);
  if (r.kind != chakra::replay::ReplayOutcome::Kind::Finished) {
    if (comm.rank() == 0) std::fprintf(stderr, "chakra_replay_bench: the replay failed: %s\n", r.message.c_str());
    comm.abort(1);
  }
  return slowest_ms(r.mine.step_ns);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Under mpirun: the pairs; rank 0 prints them.
int job(const cli::Args& a) {
  const uint64_t collectives = a.get_uint("--collectives", 10'000'000), bytes = a.get_uint("--size", 1u << 30);
  const uint32_t pairs = static_cast<uint32_t>(std::max<uint64_t>(1, a.get_uint("--pairs", 1000)));
  std::unique_ptr<chakra::replay::CommLayer> comm = chakra::replay::make_mpi_layer();
  chakra::replay::ReplayOptions o;
  o.prefix = a.get("--work") + "/ar";
  o.trace_ranks = comm->size();
  o.compute_scale = 0;
  const bool first = comm->rank() == 0;
  std::vector<double> replayed, bare, ratios;
  for (uint32_t p = 0; p < pairs; ++p) {
    if (p % 2 == 0) {
      replayed.push_back(replay_ms(*comm, o));
      bare.push_back(bare_loop_ms(collectives, bytes));
    } else {
      bare.push_back(bare_loop_ms(collectives, bytes));
      replayed.push_back(replay_ms(*comm, o));
    }
    ratios.push_back(replayed.back() / bare.back());
    if (first)
      std::printf("pair %u: replay %.1f ms, bare loop %.1f ms, ratio %.3f\n", p + 1, replayed.back(), bare.back(),
                  ratios.back());
  }
  if (first)
    std::printf(
        "%llu all-reduces of %llu B on %u ranks: replay median %.1f ms, bare MPI loop median %.1f ms; "
        "ratio median %.3f (min %.3f, max %.3f over %u pairs)\n",
        static_cast<unsigned long long>(collectives), static_cast<unsigned long long>(bytes), comm->size(),
        median(replayed), median(bare), median(ratios), *std::min_element(ratios.begin(), ratios.end()),
        *std::max_element(ratios.begin(), ratios.end()), pairs);
  std::fflush(stdout);
  return 0;
}

// A command's output, ending its last line (run_command keeps what the command printed).
void print_output(const std::string& out) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!out.empty() && out.back() != '\n') std::fputc('\n', stdout);
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view w : chakra::Split(text, ' '))
    if (!w.empty()) out.emplace_back(w);
  return out;
}

// The calibration target (see the top of this file).
int calibration(const cli::Args& a) {
  const std::string work = a.get("--work") + "/calibration", n = a.get("--ranks");
  const uint32_t rounds = static_cast<uint32_t>(std::max<uint64_t>(1, a.get_uint("--pairs", 1000)));
  std::filesystem::remove_all(work + "/step");  // its own subfolder: a workload of fewer ranks leaves none behind
  std::vector<std::string> synth = {CHAKRA_BIN, "synth", "--dp", n, "-o", work + "/step/w"};
  for (const std::string& w : words(a.get("--synth"))) synth.push_back(w);
  cli::run_command(synth);
  print_output(cli::run_command({CHAKRA_BIN, "calibrate", "--out", work + "/cal", "--npus", n, "--sizes-of",
                                 work + "/step", "--count", "10", "--repeat", a.get("--repeat"), "--mpirun",
                                 std::string(MPIEXEC) + " --oversubscribe"}));
  std::vector<double> step_errors, measured_steps, simulated_steps;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> types;  // measured, simulated medians
  for (uint32_t r = 0; r < rounds; ++r) {
    const std::string out = work + "/replay" + std::to_string(r);
    std::filesystem::remove_all(out);
    cli::run_command({MPIEXEC, "--oversubscribe", "-n", n, CHAKRA_REPLAY_BIN, work + "/step", "--compute", "skip",
                      "--out", out + "/w"});
    cli::run_command({CHAKRA_BIN, "simulate", "--workload", out, "--network", work + "/cal/network.yml", "--system",
                      work + "/cal/system.json", "--json", out + "/sim.json"});
    const nlohmann::json sim = nlohmann::json::parse(chakra::read_file(out + "/sim.json"));
    double sum = 0, measured = 0, simulated = 0;
    for (const auto& npu : sim["npus"]) {
      const double m = double(npu["measured_step_ns"].get<uint64_t>()), s = double(npu["step_ns"].get<uint64_t>());
      sum += std::fabs(s / m - 1);
      measured = std::max(measured, m), simulated = std::max(simulated, s);
    }
    step_errors.push_back(sum / double(sim["npus"].size()));
    measured_steps.push_back(measured), simulated_steps.push_back(simulated);
    std::printf("replay %u: step %.1f ms replayed, %.1f ms simulated (%+.1f%%; mean |error| per rank %.1f%%);", r + 1,
                measured / 1e6, simulated / 1e6, 100 * (simulated / measured - 1), 100 * step_errors.back());
    for (const auto& row : sim["measured_collectives"]) {
      const double m = double(row["measured_median_ns"].get<uint64_t>()),
                   s = double(row["simulated_median_ns"].get<uint64_t>());
      auto& [ms, ss] = types[row["comm_type"].get<std::string>()];
      ms.push_back(m), ss.push_back(s);
      std::printf(" %s %+.1f%%", row["comm_type"].get<std::string>().c_str(), 100 * (s / m - 1));
    }
    std::printf("\n");
  }
  std::printf(
      "over %u replays (medians): step %.1f ms replayed, %.1f ms simulated (%+.1f%%); per-replay step error "
      "(mean |error| per rank) median %.1f%%;",
      rounds, median(measured_steps) / 1e6, median(simulated_steps) / 1e6,
      100 * (median(simulated_steps) / median(measured_steps) - 1), 100 * median(step_errors));
  for (const auto& [type, ms_ss] : types)
    std::printf(" %s %.2f ms replayed, %.2f ms simulated (%+.1f%%)", type.c_str(), median(ms_ss.first) / 1e6,
                median(ms_ss.second) / 1e6, 100 * (median(ms_ss.second) / median(ms_ss.first) - 1));
  std::printf("\n");
  return 0;
}

// Writes the traces, then starts the job.
int run(const cli::Args& a) {
  if (a.has("--job")) return job(a);
  if (a.has("--calibration")) return calibration(a);
  const uint64_t collectives = a.get_uint("--collectives", 10'000'000), bytes = a.get_uint("--size", 1u << 30);
  const uint32_t ranks = static_cast<uint32_t>(a.get_uint("--ranks", 4096));
  if (bytes % 4) a.fail("--size must be a whole number of floats (a multiple of 4)");
  const std::string work = a.get("--work");
  std::filesystem::create_directories(work);
  for (const auto& f : std::filesystem::directory_iterator(work))  // no traces of another rank count left behind
    if (f.path().filename().string().starts_with("ar.") && f.path().extension() == ".et")
      std::filesystem::remove(f.path());
  chakra::CollectiveOptions o;
  o.type = chakra::CommType::AllReduce;
  o.size = bytes;
  o.npus = ranks;
  o.count = static_cast<uint32_t>(collectives);
  for (uint32_t r = 0; r < ranks; ++r)
    chakra::write_et(chakra::collective_trace(o, r), work + "/ar." + std::to_string(r) + ".et");
  const std::string out = cli::run_command({MPIEXEC, "--oversubscribe", "-n", std::to_string(ranks), cli::self_path(),
                                            "--job", "--collectives", std::to_string(collectives), "--size",
                                            std::to_string(bytes), "--pairs", a.get("--pairs"), "--work", work});
  print_output(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cli::Args args("chakra_replay_bench",
                 "chakra replay's overhead: a comm-only chain of all-reduces replayed, against the same MPI calls\n"
                 "in a bare loop, alternating inside the same MPI processes (each timed from a barrier).");
  args.option("--collectives", "N", "all-reduces in the chain", "10000")
      .option("--size", "BYTES", "bytes of each", "1024")
      .option("--ranks", "P", "MPI processes", "4")
      .option("--pairs", "K", "replay / bare-loop pairs", "15")
      .option("--work", "DIR", "where the trace goes", "build/replay-bench")
      .flag("--calibration", "measure the calibration target instead (--pairs replays)")
      .option("--repeat", "R", "--calibration: chakra calibrate's --repeat", "5")
      .option("--synth", "ARGS", "--calibration: the step's chakra synth options (--dp is --ranks)",
              "--model llama --layers 4 --hidden 1024 --ffn 2816 --heads 8 --seq 512 --batch 8")
      .flag("--job", "(internal) be one process of the job, under mpirun");
  args.parse(argc - 1, argv + 1);
  return cli::run_guarded("chakra_replay_bench", run, args);
}
