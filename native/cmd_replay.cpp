// chakra replay: a workload's traces run on real machines through MPI (core/docs/replay.md).
// The MPI processes are chakra-replay, installed beside chakra (it links MPI, which the static
// chakra cannot): this command checks the command line, then hands over to it, or with --slurm
// submits one job of N tasks that runs it under mpirun.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "cli.h"
#include "commands.h"
#include "replay_request.h"

namespace fs = std::filesystem;

namespace {

std::string replay_binary() {
  const fs::path path = fs::path(cli::self_path()).parent_path() / "chakra-replay";
  if (!fs::exists(path))
    throw chakra::Error("this chakra has no MPI replay: " + path.string() +
                        " is missing (it is built where MPI is: install libopenmpi-dev and rebuild)");
  return path.string();
}

// One job of --ntasks tasks running mpirun over chakra-replay with the same arguments.
int submit(const cli::Args& a, int argc, char** argv) {
  const uint64_t tasks = a.get_uint("--ntasks", 1u << 20);
  if (tasks == 0) a.fail("--slurm needs --ntasks N (the ranks to replay)");
  const std::string dir = fs::absolute(a.has("--slurm-dir") ? a.get("--slurm-dir") : "replay.slurm").string();
  std::string words = "mpirun -n " + std::to_string(tasks) + " " + cli::shell_quote(replay_binary());
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--slurm" || arg == "--dry-run") continue;
    if (arg == "--ntasks" || arg == "--partition" || arg == "--time" || arg == "--slurm-dir") {
      ++i;
      continue;
    }
    if (arg.rfind("--ntasks=", 0) == 0 || arg.rfind("--partition=", 0) == 0 || arg.rfind("--time=", 0) == 0 ||
        arg.rfind("--slurm-dir=", 0) == 0)
      continue;
    words += " " + cli::shell_quote(arg);
  }
  std::string script = "#!/bin/bash\n#SBATCH --job-name=chakra-replay\n#SBATCH --ntasks=" + std::to_string(tasks) +
                       "\n#SBATCH --output=" + dir + "/replay.log\n";
  if (a.has("--partition")) script += "#SBATCH --partition=" + a.get("--partition") + "\n";
  if (a.has("--time")) script += "#SBATCH --time=" + a.get("--time") + "\n";
  script += "# One MPI process per replayed rank, in this allocation.\ncd " + cli::shell_quote(fs::current_path()) +
            "\nexec " + words + "\n";
  if (a.has("--dry-run")) {
    std::cout << "# " << dir << "/replay.sh\n"
              << script << "\n# submitted as: sbatch --parsable " << dir << "/replay.sh\n";
    return cli::kOk;
  }
  fs::create_directories(dir);
  chakra::OutputFile f(dir + "/replay.sh");
  f.write(script);
  f.commit();
  const std::string id = cli::run_command({"sbatch", "--parsable", dir + "/replay.sh"});
  std::cout << "submitted: replay job " << id.substr(0, id.find(';')) << " (" << tasks << " tasks); its output in "
            << dir << "/replay.log\n";
  return cli::kOk;
}

// The command line as given (run_guarded's bodies take only the parsed arguments).
int g_argc = 0;
char** g_argv = nullptr;

int run(const cli::Args& a) {
  const cli::ReplayRequest q = cli::replay_request(a);  // a missing workload is said here, before any job
  if (!q.options.out_prefix.empty()) cli::check_output_path(q.options.out_prefix, "--out", true);
  if (!q.summary_json.empty()) cli::check_output_path(q.summary_json, "--summary-json");
  if (a.has("--slurm")) return submit(a, g_argc, g_argv);
  for (const char* option : {"--ntasks", "--partition", "--time", "--dry-run"})
    if (a.has(option)) a.fail(std::string(option) + " goes with --slurm");
  const std::string binary = replay_binary();
  std::vector<char*> args{const_cast<char*>(binary.c_str())};
  for (int i = 0; i < g_argc; ++i) args.push_back(g_argv[i]);
  args.push_back(nullptr);
  execv(binary.c_str(), args.data());
  throw chakra::Error(binary + ": cannot run it: " + std::strerror(errno));
}

int replay_command(int argc, char** argv) {
  cli::Args args("chakra replay",
                 "Runs a workload's traces on this cluster through MPI, one process per rank: collectives,\n"
                 "messages and compute as the traces say, timed, so the network's real behaviour on the\n"
                 "pattern can be seen, analysed and fitted (chakra calibrate).");
  cli::add_replay_options(args);
  args.flag("--slurm", "submit to Slurm instead: one job of --ntasks tasks running mpirun over chakra-replay");
  args.option("--ntasks", "N", "with --slurm: the processes (ranks replayed)");
  args.option("--partition", "P", "with --slurm: the partition");
  args.option("--time", "T", "with --slurm: the job's time limit");
  args.option("--slurm-dir", "DIR", "with --slurm: where the script and the log go", "replay.slurm");
  args.flag("--dry-run", "with --slurm: print the script and the sbatch command, submit nothing");
  args.parse(argc, argv);
  g_argc = argc, g_argv = argv;
  return cli::run_guarded("chakra replay", run, args);
}

}  // namespace

CHAKRA_COMMAND(95, "replay", replay_command, "run a workload's traces on real machines through MPI, timed");
