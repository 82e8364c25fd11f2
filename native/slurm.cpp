// --slurm of the commands that shard their work (cli.h): the options, and the array and gather
// jobs written and submitted with sbatch.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>

#include "chakra/format/io.h"
#include "cli.h"

namespace cli {

void add_slurm_options(Args& args, const std::string& units) {
  args.flag("--slurm",
            "submit to Slurm instead: an array job (one shard per task), then a gather job (--dependency=afterok)");
  args.option("--array-size", "K",
              "with --slurm: array tasks, one shard each (default: the " + units + ", at most 16)");
  args.option("--partition", "P", "with --slurm: the partition");
  args.option("--time", "T", "with --slurm: the time limit of each task");
  args.flag("--dry-run", "with --slurm: print the scripts and the sbatch commands, submit nothing");
}

uint32_t slurm_tasks(const Args& args, uint64_t units) {
  const uint64_t tasks =
      args.has("--array-size") ? args.get_uint("--array-size", 100000) : std::clamp<uint64_t>(units, 1, 16);
  if (tasks == 0) args.fail("--array-size must be at least 1");
  return static_cast<uint32_t>(tasks);
}

int submit_slurm(const Args& args, const SlurmJobs& jobs) {
  std::string header = "#!/bin/bash\n";
  if (args.has("--partition")) header += "#SBATCH --partition=" + args.get("--partition") + "\n";
  if (args.has("--time")) header += "#SBATCH --time=" + args.get("--time") + "\n";
  const std::string array = header + "#SBATCH --job-name=" + jobs.name + "\n#SBATCH --array=0-" +
                            std::to_string(jobs.tasks - 1) + "\n#SBATCH --output=" + jobs.dir +
                            "/shard-%a.log\n"
                            "# One shard per array task (--shard TASK/" +
                            std::to_string(jobs.tasks) +
                            ").\n"
                            "exec " +
                            jobs.array_command + "\n";
  const std::string gather = header + "#SBATCH --job-name=" + jobs.name + "-gather\n#SBATCH --output=" + jobs.dir +
                             "/gather.log\n"
                             "# Joins the shards' outputs (runs after every array task succeeded).\n"
                             "exec " +
                             jobs.gather_command + "\n";
  if (args.has("--dry-run")) {
    std::cout << "# " << jobs.dir << "/array.sh\n"
              << array << "\n# " << jobs.dir << "/gather.sh\n"
              << gather << "\n# submitted as: sbatch --parsable " << jobs.dir
              << "/array.sh; sbatch --parsable --dependency=afterok:ARRAY_ID " << jobs.dir << "/gather.sh\n";
    return kOk;
  }
  std::filesystem::create_directories(jobs.dir);
  for (const auto& [name, text] : {std::pair{"/array.sh", &array}, std::pair{"/gather.sh", &gather}}) {
    chakra::OutputFile f(jobs.dir + name);
    f.write(*text);
    f.commit();
  }
  const std::string array_id = run_command({"sbatch", "--parsable", jobs.dir + "/array.sh"});
  const std::string array_job = array_id.substr(0, array_id.find(';'));
  const std::string gather_id =
      run_command({"sbatch", "--parsable", "--dependency=afterok:" + array_job, jobs.dir + "/gather.sh"});
  std::cout << "submitted: array job " << array_job << " (" << jobs.tasks << " shards), gather job "
            << gather_id.substr(0, gather_id.find(';')) << "\n"
            << jobs.result << "; scripts and logs in " << jobs.dir << "/\n";
  return kOk;
}

}  // namespace cli
