// chakra analyze and chakra diff on runs larger than memory: ranks read one at a time within
// --memory-limit, --jobs, --shard i/K with chakra analyze merge, -o written whole or not at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "test_support.h"

using namespace testing_support;
using namespace cli_testing;
namespace fs = std::filesystem;

namespace {

// The bundled 8-rank DLRM run: Kineto traces and host ETs (which analyze skips with a note).
const std::string kRun = std::string(CHAKRA_SOURCE_DIR) + "/assets/examples/dlrm_8rank";

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST(CliAnalyzeScale, ShardsMergeIntoTheUnshardedOutputByteForByte) {
  const std::string dir = temp_dir();
  for (const std::vector<std::string>& format :
       {std::vector<std::string>{"--json", "--launches"}, {"--csv"}, {"--top", "3"}}) {
    const Result whole = run(with({"analyze", kRun}, format));
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    ASSERT_TRUE(contains(whole.err + whole.out, "skipped")) << "the host ETs are noted";
    std::vector<std::string> merge = {"analyze", "merge"};
    for (int i = 0; i < 3; ++i) {
      const std::string part = dir + "/part" + std::to_string(i) + ".txt";
      const Result r =
          run(with({"analyze", kRun, "--shard", std::to_string(i) + "/3", "-o", part, "--jobs", "2"},
                   format.front() == "--json" ? std::vector<std::string>{"--launches"} : std::vector<std::string>{}));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      merge.push_back(part);
    }
    std::reverse(merge.begin() + 2, merge.end());  // parts in any order
    const Result merged = run(with(merge, format));
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_TRUE(merged.out == whole.out) << format.front();
    EXPECT_EQ(merged.err, whole.err) << format.front();
  }
  // The stragglers and collectives cross shards: the merged JSON has all 8 ranks in them.
  const nlohmann::json j = nlohmann::json::parse(
      run({"analyze", "merge", "--json", dir + "/part0.txt", dir + "/part1.txt", dir + "/part2.txt"}).out);
  EXPECT_EQ(j["ranks"].size(), 8u);
  EXPECT_EQ(j["stragglers"]["ranks"].size(), 8u);
  EXPECT_FALSE(j["stragglers"]["instances"].empty());
}

TEST(CliAnalyzeScale, MergeRefusesPartsThatDoNotMakeOneRun) {
  const std::string dir = temp_dir();
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(
        run({"analyze", kRun, "--shard", std::to_string(i) + "/2", "-o", dir + "/p" + std::to_string(i)}).exit_code, 0);
  ASSERT_EQ(run({"analyze", kRun, "--shard", "0/3", "-o", dir + "/other"}).exit_code, 0);
  auto refused = [&](const std::vector<std::string>& parts, const std::string& why) {
    const Result r = run(with({"analyze", "merge", "--json"}, parts));
    EXPECT_EQ(r.exit_code, 1) << why;
    EXPECT_TRUE(contains(r.err, why)) << r.err;
    EXPECT_TRUE(r.out.empty());
  };
  refused({dir + "/p0"}, "shard 1/2 is missing");
  refused({dir + "/p0", dir + "/p0", dir + "/p1"}, "shard 0/2 again");
  refused({dir + "/p0", dir + "/other"}, dir + "/other: a shard of 3, the others of 2");
  refused({dir + "/p0", kRun + "/dlrm_eg_0.json.gz"}, "dlrm_eg_0.json.gz: not a part of chakra analyze --shard");
  // A part cut short, and a rank line damaged.
  const std::string text = read_raw(dir + "/p1");
  write_raw(dir + "/cut", text.substr(0, text.size() / 2));
  refused({dir + "/p0", dir + "/cut"}, dir + "/cut: not a part of chakra analyze --shard (or cut short");
  std::string damaged = text;
  damaged.replace(damaged.find("\"breakdown\":["), 13, "\"breakdown\":[\"x\",");
  write_raw(dir + "/damaged", damaged);
  refused({dir + "/p0", dir + "/damaged"}, dir + "/damaged: not a rank's analysis digest");
  // --launches needs shards that kept them; the critical path is not sharded.
  const Result launches = run({"analyze", "merge", "--json", "--launches", dir + "/p0", dir + "/p1"});
  EXPECT_EQ(launches.exit_code, 1);
  EXPECT_TRUE(contains(launches.err, "the shards were run without it")) << launches.err;
  EXPECT_EQ(run({"analyze", kRun, "--critical-path", "--shard", "0/2"}).exit_code, 2);
}

// --slurm --dry-run: an array task per shard of the ranks, then a gather job that merges the parts
// with the report's options into -o (tests/slurm/run submits it to a real cluster).
TEST(CliAnalyzeScale, SlurmSubmitsShardsAndAMerge) {
  const std::string dir = temp_dir();
  const Result r = run({"analyze", kRun, "--json", "--launches", "--memory-limit", "2G", "-o", dir + "/a.json",
                        "--slurm", "--array-size", "3", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "#SBATCH --array=0-2")) << r.out;
  EXPECT_TRUE(contains(r.out, " analyze '" + kRun +
                                  "' --launches --memory-limit '2G' --jobs ${SLURM_CPUS_PER_TASK:-1} -o '" + dir +
                                  "/a.json.slurm'/part-$SLURM_ARRAY_TASK_ID.txt --shard $SLURM_ARRAY_TASK_ID/3"))
      << r.out;
  EXPECT_TRUE(contains(r.out, " analyze merge --json --launches -o '" + dir + "/a.json' '" + dir +
                                  "/a.json.slurm/part-0.txt' '" + dir + "/a.json.slurm/part-1.txt' '" + dir +
                                  "/a.json.slurm/part-2.txt'"))
      << r.out;
  EXPECT_FALSE(fs::exists(dir + "/a.json.slurm"));
  EXPECT_EQ(run({"analyze", kRun, "--slurm", "--dry-run"}).exit_code, 2);  // no -o
  EXPECT_EQ(run({"analyze", kRun, "-o", dir + "/x", "--slurm", "--critical-path", "--dry-run"}).exit_code, 2);
}

TEST(CliAnalyzeScale, JobsAndMemoryLimitChangeNothingButWhatFitsAtOnce) {
  const Result one = run({"analyze", kRun, "--json", "--jobs", "1"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  // Every core, and a limit that admits one small rank at a time: the same bytes.
  for (const std::vector<std::string>& opts :
       {std::vector<std::string>{"--jobs", "8"}, {"--jobs", "4", "--memory-limit", "20M"}}) {
    const Result r = run(with({"analyze", kRun, "--json"}, opts));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == one.out) << opts.back();
  }
  // A rank that cannot fit is refused before anything is read, naming it and the limit.
  const std::string dir = temp_dir();
  const Result small = run({"analyze", kRun, "--json", "--memory-limit", "1K", "-o", dir + "/out.json"});
  EXPECT_EQ(small.exit_code, 1);
  EXPECT_TRUE(contains(small.err, "rank 0 (" + kRun)) << small.err;
  EXPECT_TRUE(contains(small.err, "over --memory-limit 1.0 KiB")) << small.err;
  EXPECT_FALSE(fs::exists(dir + "/out.json"));
  // The critical path needs every rank at once, and says so. What the traces keep once read (about
  // half their JSON) counts for every rank, a read's own peak for one at a time: 8 DLRM ranks fit
  // in 40M, where their whole estimates (0.75x their JSON + 16 MiB each) would not.
  const Result path = run({"analyze", kRun, "--critical-path", "--memory-limit", "20M"});
  EXPECT_EQ(path.exit_code, 1);
  EXPECT_TRUE(contains(path.err, "the critical path needs every rank's trace in memory at once")) << path.err;
  const Result fits = run({"analyze", kRun, "--critical-path", "--memory-limit", "40M", "--jobs", "4"});
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(fits.out, run({"analyze", kRun, "--critical-path", "--memory-limit", "1G"}).out);
  EXPECT_EQ(run({"analyze", kRun, "--memory-limit", "lots"}).exit_code, 2);
  // diff takes the same options, rank pair by rank pair.
  const Result diff_one = run({"diff", "--json", kRun, kRun, "--jobs", "1"});
  ASSERT_EQ(diff_one.exit_code, 0) << diff_one.err;
  EXPECT_TRUE(run({"diff", "--json", kRun, kRun, "--jobs", "3", "--memory-limit", "40M"}).out == diff_one.out);
  EXPECT_EQ(nlohmann::json::parse(diff_one.out)["ranks"].size(), 8u);
  // A and B are one folder: each file both scans skip is noted once, not once per side.
  const nlohmann::json notes = nlohmann::json::parse(diff_one.out)["notes"];
  EXPECT_EQ(std::count(notes.begin(), notes.end(), kRun + "/PROVENANCE.md: skipped (a file of unknown kind)"), 1)
      << notes.dump();
  EXPECT_EQ(notes.size(), 9u) << notes.dump();  // PROVENANCE.md and the 8 host ETs
  EXPECT_EQ(run({"diff", kRun, kRun, "--memory-limit", "1K"}).exit_code, 1);
}

TEST(CliAnalyzeScale, OutputFileIsTheOutputWholeOrNothing) {
  const std::string dir = temp_dir();
  const Result out = run({"analyze", kRun, "--json"});
  ASSERT_EQ(run({"analyze", kRun, "--json", "-o", dir + "/a.json"}).exit_code, 0);
  EXPECT_TRUE(read_raw(dir + "/a.json") == out.out);
  ASSERT_EQ(run({"diff", kRun, kRun, "--csv", "-o", dir + "/d.csv"}).exit_code, 0);
  EXPECT_TRUE(read_raw(dir + "/d.csv") == run({"diff", kRun, kRun, "--csv"}).out);
  // A failed run leaves the file as it was.
  write_raw(dir + "/keep.json", "before");
  EXPECT_EQ(run({"analyze", kRun + "/dlrm_eg_0.json.gz", "-o", dir + "/keep.json"}).exit_code, 1);
  EXPECT_EQ(read_raw(dir + "/keep.json"), "before");
}
