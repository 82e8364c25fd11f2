// chakra-replay: one MPI process of `chakra replay` (started by mpirun or srun, or by chakra
// replay itself). It replays its rank, prints the job's summary on rank 0, and ends the job
// with one message on bad input, a deadlock or an interruption (core/docs/replay.md).
#include <csignal>
#include <cstdio>
#include <iostream>

#include "chakra/format/io.h"
#include "chakra/replay/mpi_comm.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "replay_request.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

int run(const cli::Args& a) {
  cli::ReplayRequest q = cli::replay_request(a);
  q.options.stop = &g_stop;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::unique_ptr<chakra::replay::CommLayer> comm = chakra::replay::make_mpi_layer();
  q.options.description += ", " + std::to_string(comm->size()) + " processes";
  const chakra::replay::ReplayOutcome r = chakra::replay::replay(q.options, *comm);
  using Kind = chakra::replay::ReplayOutcome::Kind;
  const bool first = comm->rank() == 0;
  if (r.kind != Kind::Finished) {
    if (first) std::cerr << "chakra replay: error: " << chakra::printable(r.message) << "\n" << std::flush;
    const int code = r.kind == Kind::Interrupted ? cli::kInterrupted : r.kind == Kind::Deadlock ? 3 : cli::kFailed;
    if (r.kind == Kind::BadInput) return code;  // nothing is pending: MPI ends normally
    comm->abort(code);                          // requests that will never finish: end every rank now
  }
  if (first) {
    std::fwrite(r.summary_text.data(), 1, r.summary_text.size(), stdout);
    if (!q.options.out_prefix.empty())
      std::cout << "\nreplayed traces: " << q.options.out_prefix << ".<rank>.et (measured times; chakra analyze, "
                << "diff and simulate read them)\n";
    if (!q.summary_json.empty()) {
      chakra::OutputFile f(q.summary_json);
      f.write(r.summary_json);
      f.commit();
    }
  }
  return cli::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  cli::Args args("chakra-replay", "One MPI process of chakra replay (see chakra replay --help).");
  cli::add_replay_options(args);
  args.parse(argc - 1, argv + 1);
  return cli::run_guarded("chakra replay", run, args);
}
