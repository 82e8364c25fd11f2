#include "replay_request.h"

#include <filesystem>

#include "chakra/astra/generate.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace cli {

void add_replay_options(Args& args) {
  args.positional("WORKLOAD", "a folder of per-rank traces (STEM.<rank>.et, as convert writes), or their PREFIX");
  args.option("--comm-group", "FILE", "the communicator groups (ASTRA-sim's JSON); a folder's own is found");
  args.option("--ranks", "LIST",
              "the trace ranks the processes replay, in process order, e.g. 4,5,6,7 or 0-3 (default: process i "
              "replays rank i)");
  args.option("--compute", "MODE",
              "compute, CPU and memory nodes: scale=K spins K times their recorded duration, skip replays "
              "communication only",
              "scale=1");
  args.option("--timeout", "SECONDS", "no rank finishing a node for this long is a deadlock, reported per rank", "60");
  args.option("--warmup", "K",
              "untimed passes over the trace before the timed one (as a training loop's earlier steps, and "
              "nccl-tests' warm-up); 0: time the first",
              "1");
  args.option("--max-buffer", "SIZE", "refuse a collective or message larger than this (units KiB, MiB, GiB)", "4GiB");
  args.option("--out", "PREFIX",
              "write each rank's trace with its replayed times as PREFIX.<rank>.et (and the groups), for analyze, "
              "diff, simulate and the page");
  args.option("--summary-json", "FILE",
              "the summary as JSON (per rank its step; per collective count, median, "
              "nccl-tests' algbw and busbw)");
  args.epilog(
      "Runs under MPI, one process per rank: mpirun -n 4 chakra replay FOLDER, or srun inside a Slurm\n"
      "allocation; --slurm submits such a job. Collectives become MPI's non-blocking collectives on\n"
      "one communicator per group, messages MPI_Isend/MPI_Irecv with their tags; compute spins. Each\n"
      "rank reads and checks its trace before any communication: a bad trace on one rank stops every\n"
      "rank with one message. core/docs/replay.md says what is replayed and how.");
}

namespace {

std::vector<uint32_t> parse_rank_list(const Args& a, const std::string& text) {
  std::vector<uint32_t> out;
  for (std::string_view item : chakra::Split(text, ',')) {
    const size_t dash = item.find('-');
    uint64_t lo = 0, hi = 0;
    auto number = [&](std::string_view s, uint64_t& v) {
      if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos)
        a.fail("--ranks: '" + std::string(item) + "' is not a rank or a range a-b");
      v = std::stoull(std::string(s));
    };
    number(item.substr(0, dash), lo);
    hi = lo;
    if (dash != std::string_view::npos) number(item.substr(dash + 1), hi);
    if (hi < lo) a.fail("--ranks: the range '" + std::string(item) + "' runs backwards");
    for (uint64_t r = lo; r <= hi; ++r) out.push_back(static_cast<uint32_t>(r));
  }
  return out;
}

}  // namespace

WorkloadFiles find_workload(const std::string& workload) {
  WorkloadFiles w;
  if (std::filesystem::is_directory(workload)) {
    const chakra::sim::WorkloadFolder f = chakra::sim::workload_folder(workload);
    return {f.prefix, f.comm_group, f.npus};
  }
  w.prefix = workload;
  while (w.ranks < (1u << 20)) {
    const std::string et = workload + "." + std::to_string(w.ranks) + ".et";
    if (!std::filesystem::exists(et) && !std::filesystem::exists(et + ".gz")) break;
    ++w.ranks;
  }
  if (w.ranks == 0) throw chakra::Error(workload + ": no such folder, and no " + workload + ".0.et");
  return w;
}

ReplayRequest replay_request(const Args& a) {
  ReplayRequest q;
  chakra::replay::ReplayOptions& o = q.options;
  const std::string workload = a.values("WORKLOAD").front();
  const WorkloadFiles w = find_workload(workload);
  o.prefix = w.prefix;
  o.trace_ranks = w.ranks;
  o.comm_group_file = w.comm_group;
  if (a.has("--comm-group")) o.comm_group_file = a.get("--comm-group");
  if (a.has("--ranks")) o.trace_rank_of = parse_rank_list(a, a.get("--ranks"));
  const std::string compute = a.get("--compute");
  if (compute == "skip") {
    o.compute_scale = 0;
  } else if (compute.rfind("scale=", 0) == 0) {
    double k = 0;
    if (!chakra::parse_plain_decimal(compute.substr(6), k) || !(k >= 0) || k > 1e6)
      a.fail("--compute: '" + compute + "' needs a number 0..1e6 after scale=");
    o.compute_scale = k;
  } else {
    a.fail("--compute: '" + compute + "' is neither scale=K nor skip");
  }
  double timeout = 0;
  if (!chakra::parse_plain_decimal(a.get("--timeout"), timeout) || !(timeout > 0) || timeout > 1e6)
    a.fail("--timeout: '" + a.get("--timeout") + "' is not a number of seconds > 0");
  o.timeout_seconds = timeout;
  const std::optional<uint64_t> max_buffer = chakra::parse_size(a.get("--max-buffer"));
  if (!max_buffer || *max_buffer == 0) a.fail("--max-buffer: '" + a.get("--max-buffer") + "' is not a size");
  o.max_buffer_bytes = *max_buffer;
  o.warmup_passes = static_cast<uint32_t>(a.get_uint("--warmup", 1000));
  o.out_prefix = a.get("--out");
  q.summary_json = a.get("--summary-json");
  o.description = "chakra replay " + workload + " (MPI; compute " + compute + "; " + std::to_string(o.warmup_passes) +
                  " untimed warm-up pass" + (o.warmup_passes == 1 ? "" : "es") + ")";
  return q;
}

}  // namespace cli
