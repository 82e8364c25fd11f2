// The replay's overhead (core/docs/replay.md, issue target: ≤ 1.2× the bare MPI calls): a
// comm-only trace of N dependent all-reduces of S bytes on P ranks, replayed by chakra-replay,
// against the same MPI calls issued in a bare loop (MPI_Iallreduce + MPI_Wait) by this program
// under mpirun; the two alternate, each timing its own loop from a barrier (no process start-up),
// and the ratio of each pair is printed with their medians.
//
//   chakra_replay_bench [--collectives 10000] [--size 1024] [--ranks 4] [--pairs 5]
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "cli.h"

namespace {

// Under mpirun: the bare loop; rank 0 prints its time in ns.
int bare_loop(uint64_t collectives, uint64_t bytes) {
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<float> in(bytes / 4), out(bytes / 4);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < collectives; ++i) {
    MPI_Request r;
    MPI_Iallreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  long long ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  long long longest = 0;
  MPI_Reduce(&ns, &longest, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%lld\n", longest);
  MPI_Finalize();
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int run(const cli::Args& a) {
  const uint64_t collectives = a.get_uint("--collectives", 10'000'000), bytes = a.get_uint("--size", 1u << 30);
  const uint32_t ranks = static_cast<uint32_t>(a.get_uint("--ranks", 4096));
  const uint32_t pairs = static_cast<uint32_t>(std::max<uint64_t>(1, a.get_uint("--pairs", 1000)));
  if (a.has("--loop")) return bare_loop(collectives, bytes);
  if (bytes % 4) a.fail("--size must be a whole number of floats (a multiple of 4)");
  const std::string work = a.get("--work");
  std::filesystem::create_directories(work);
  chakra::CollectiveOptions o;
  o.type = chakra::CommType::AllReduce;
  o.size = bytes;
  o.npus = ranks;
  o.count = static_cast<uint32_t>(collectives);
  for (uint32_t r = 0; r < ranks; ++r)
    chakra::write_et(chakra::collective_trace(o, r), work + "/ar." + std::to_string(r) + ".et");
  const std::string self = cli::self_path(), n = std::to_string(ranks);
  std::vector<double> replay_ms, bare_ms, ratios;
  for (uint32_t p = 0; p < pairs; ++p) {
    cli::run_command({MPIEXEC, "--oversubscribe", "-n", n, CHAKRA_REPLAY_BIN, work + "/ar", "--compute", "skip",
                      "--summary-json", work + "/replay.json"});
    uint64_t step = 0;
    const nlohmann::json summary = nlohmann::json::parse(chakra::read_file(work + "/replay.json"));
    for (const auto& rank : summary["ranks"]) step = std::max(step, rank["step_ns"].get<uint64_t>());
    const std::string bare = cli::run_command({MPIEXEC, "--oversubscribe", "-n", n, self, "--loop", "--collectives",
                                               std::to_string(collectives), "--size", std::to_string(bytes)});
    replay_ms.push_back(double(step) / 1e6);
    bare_ms.push_back(std::stod(bare) / 1e6);
    ratios.push_back(replay_ms.back() / bare_ms.back());
    std::printf("pair %u: replay %.1f ms, bare loop %.1f ms, ratio %.3f\n", p + 1, replay_ms.back(), bare_ms.back(),
                ratios.back());
  }
  std::printf(
      "%llu all-reduces of %llu B on %u ranks: replay median %.1f ms, bare MPI loop median %.1f ms; "
      "ratio median %.3f (min %.3f, max %.3f over %u pairs)\n",
      static_cast<unsigned long long>(collectives), static_cast<unsigned long long>(bytes), ranks, median(replay_ms),
      median(bare_ms), median(ratios), *std::min_element(ratios.begin(), ratios.end()),
      *std::max_element(ratios.begin(), ratios.end()), pairs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cli::Args args("chakra_replay_bench",
                 "chakra replay's overhead: a comm-only chain of all-reduces replayed, against the same MPI calls\n"
                 "in a bare loop, alternating (each timed from a barrier inside its processes).");
  args.option("--collectives", "N", "all-reduces in the chain", "10000")
      .option("--size", "BYTES", "bytes of each", "1024")
      .option("--ranks", "P", "MPI processes", "4")
      .option("--pairs", "K", "replay / bare-loop pairs", "5")
      .option("--work", "DIR", "where the trace goes", "build/replay-bench")
      .flag("--loop", "(internal) be the bare loop, under mpirun");
  args.parse(argc - 1, argv + 1);
  return cli::run_guarded("chakra_replay_bench", run, args);
}
