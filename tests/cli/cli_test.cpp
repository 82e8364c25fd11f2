// The `chakra` command line, run as a user would: exit codes, messages, outputs on disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

#include "chakra/app/suite.h"
#include "chakra/sim/simulate.h"
#include "chakra/stablehlo/stablehlo.h"
#include "cli_support.h"
#include "test_support.h"

using namespace testing_support;
using namespace cli_testing;
namespace fs = std::filesystem;

namespace {

std::string alias(const std::string& name) { return fs::path(CHAKRA_BIN).parent_path().string() + "/" + name; }
std::string example(int rank) {
  return std::string(CHAKRA_SOURCE_DIR) + "/assets/examples/pytorch_2rank/chakra_trace." + std::to_string(rank) +
         ".et.gz";
}

// The fields of a CSV line (RFC 4180 quoting).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        out.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The numbers in column `column` of a CSV text with a header.
std::vector<double> csv_numbers_of(const std::string& text, const std::string& column) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = csv_fields(line);
  const size_t found = static_cast<size_t>(std::find(header.begin(), header.end(), column) - header.begin());
  EXPECT_LT(found, header.size()) << column;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = csv_fields(line);
    if (found < fields.size()) out.push_back(std::stod(fields[found]));
  }
  return out;
}

// stdout and stderr going to a reader that has gone (`… | head`): the command still finishes,
// and leaves no temporary files beside its output (a SIGPIPE used to kill it mid-write).
TEST(Cli, ReaderGoneLeavesNoTemporaryFiles) {
  const std::string dir = temp_dir();
  int gone[2];
  ASSERT_EQ(pipe(gone), 0);
  ::close(gone[0]);
  const std::string in = shared("reference/chakra/outputs/trace_link/resnet_2gpu_rank1.linked.json.gz");
  const std::string out = dir + "/out.et";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(gone[1], 1);
    dup2(gone[1], 2);
    execl(CHAKRA_BIN, CHAKRA_BIN, "convert", "pytorch", in.c_str(), "-o", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(gone[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"out.et"});
}

TEST(Cli, HelpAndUsageErrors) {
  Result r = run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"info", "validate", "jsonize", "dejsonize", "chakra_jsonizer"})
    EXPECT_TRUE(contains(r.out, cmd)) << cmd;
  EXPECT_EQ(run({}).exit_code, 2);
  r = run({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown command 'frobnicate'"));
  for (const char* cmd : {"info", "validate", "jsonize", "dejsonize"}) {
    r = run({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_TRUE(contains(r.out, std::string("usage: chakra ") + cmd)) << r.out;
    r = run({cmd});
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_TRUE(contains(r.err, "missing required argument")) << r.err;
  }
  r = run({"info", "--colour", example(0)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unrecognized argument: --colour"));
  r = run({"jsonize", "--format", "yaml", example(0)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--format must be json, jsonl or reference"));
}

TEST(Cli, InfoOnTheBundledExample) {
  Result r = run({"info", example(0)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "1634  (ids 0..1633, ascending)")) << r.out;
  EXPECT_TRUE(contains(r.out, "ALL_REDUCE")) << r.out;
  EXPECT_TRUE(contains(r.out, "1.1.1-chakra.0.0.4")) << r.out;

  r = run({"info", "--json", example(0), example(1)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  for (const auto& f : j) {
    EXPECT_EQ(f["summary"]["nodes"], 1634);
    EXPECT_EQ(f["summary"]["collectives"]["ALL_REDUCE"]["count"], 2);
    EXPECT_EQ(f["summary"]["node_types"]["COMP_NODE"]["nodes"], 1632);
    EXPECT_TRUE(f["gzip"].get<bool>());
  }
}

TEST(Cli, ValidateExitCodes) {
  Result r = run({"validate", example(0), example(1)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "0 errors, 0 warnings - OK"));

  const std::string bad = shared("reference/chakra/inputs/chakra.0.et.gz");
  r = run({"validate", "--max-per-code", "2", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "[dangling-ctrl-dep] node id 216")) << r.out;
  EXPECT_TRUE(contains(r.out, "[dangling-ctrl-dep] ... and")) << r.out;

  r = run({"validate", "--json", bad, example(0)});
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j[0]["ok"].get<bool>());
  EXPECT_GT(j[0]["report"]["counts"]["dangling-ctrl-dep"].get<int>(), 0);
  EXPECT_TRUE(j[1]["ok"].get<bool>());
}

TEST(Cli, JsonizeReferenceAndTheDropInAlias) {
  const std::string in = shared("reference/chakra/inputs/chakra.0.et.gz");
  const std::string want = read_decompressed(shared("reference/chakra/outputs/jsonizer/chakra.0.et.json.gz"));
  const std::string dir = temp_dir();

  Result r = run({"jsonize", "--format", "reference", in, dir + "/a.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_raw(dir + "/a.json") == want);

  r = run({"--input_filename", in, "--output_filename", dir + "/b.json"}, alias("chakra_jsonizer"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_raw(dir + "/b.json") == want);

  r = run({"--input=" + in, "--output", dir + "/c.json"}, alias("chakra_jsonizer"));  // argparse-style prefixes
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_raw(dir + "/c.json") == want);

  r = run({"--input_filename", in}, alias("chakra_jsonizer"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "missing required argument: --output_filename")) << r.err;
}

TEST(Cli, JsonizeThenDejsonizeGivesTheSameBytes) {
  const std::string dir = temp_dir();
  const std::string original = read_decompressed(example(1));
  for (const char* format : {"json", "jsonl", "reference"}) {
    SCOPED_TRACE(format);
    const std::string json = dir + "/t." + format + ".gz";
    ASSERT_EQ(run({"jsonize", "--format", format, example(1), json}).exit_code, 0);
    Result r = run({"dejsonize", json, dir + "/back.et"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(read_raw(dir + "/back.et") == original);
  }
  // Standard output when no OUT is given.
  Result r = run({"jsonize", "--compact", example(1)});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["nodes"].size(), 1634u);
}

std::string gzip_bomb(size_t zeros) {
  std::string out;
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  std::vector<unsigned char> zero(1 << 20, 0), buf(1 << 16);
  for (size_t done = 0; done < zeros; done += zero.size()) {
    z.next_in = zero.data();
    z.avail_in = static_cast<uInt>(zero.size());
    int flush = done + zero.size() >= zeros ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = buf.data();
      z.avail_out = static_cast<uInt>(buf.size());
      deflate(&z, flush);
      out.append(reinterpret_cast<char*>(buf.data()), buf.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

TEST(Cli, BadInputsGiveClearErrorsAndNoOutput) {
  const std::string dir = temp_dir();
  const std::string good = read_decompressed(example(0));
  std::mt19937 rng(3);
  std::string random(10000, '\0');
  for (char& c : random) c = static_cast<char>(rng());
  struct Case {
    const char* file;
    std::string bytes;
    const char* expected;
  } cases[] = {
      {"truncated.et", good.substr(0, good.size() / 2), "bytes left in the file (truncated"},
      {"random.et", random, "random.et: record 1 at byte 0:"},
      {"huge_length.et", std::string("\xff\xff\xff\x7f", 4) + "abc", "exceeds the 3 bytes left in the file"},
      {"bomb.et.gz", gzip_bomb(200u << 20), "refusing a likely gzip bomb"},
      {"empty.et", "", "empty file (0 bytes): not a Chakra trace"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = dir + "/" + c.file;
    write_raw(path, c.bytes);
    for (const char* cmd : {"info", "validate"}) {
      Result r = run({cmd, path});
      EXPECT_EQ(r.exit_code, 1) << cmd;
      EXPECT_TRUE(contains(r.err + r.out, c.expected)) << r.err << r.out;
      EXPECT_TRUE(contains(r.err + r.out, path)) << r.err << r.out;
    }
    const std::string out = dir + "/out.json";
    Result r = run({"jsonize", path, out});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "chakra jsonize: error: " + path)) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "no output may be left behind";
  }
  Result r = run({"info", dir});  // a folder of traces: the first bad one is named
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "chakra info: error: " + dir + "/")) << r.err;
  r = run({"jsonize", dir, dir + "/x.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, dir + ": is a directory, not a file")) << r.err;
  // Only the inputs remain: no temporary outputs left anywhere in the directory.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, std::size(cases));

  write_raw(dir + "/bad.json", "{\"nodes\": [{\"id\": 1, \"typo\": 2}]}");
  r = run({"dejsonize", dir + "/bad.json", dir + "/bad.et"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "bad.json:1:12: node 0 (id 1): unknown key \"typo\"")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/bad.et"));
}

TEST(Cli, ConfigurableLimitsRefuseTracesBeyondThem) {
  const std::string dir = temp_dir();
  const std::string trace = dir + "/t.0.et";
  write_raw(trace, read_decompressed(example(0)));
  write_raw(dir + "/t.1.et", read_decompressed(example(1)));  // simulate reads both ranks
  const std::string hostile = std::string(CHAKRA_SOURCE_DIR) + "/tests/data/hostile";
  const std::string groups = assets("examples/pytorch_2rank/comm_group.json");
  struct Case {
    std::vector<std::string> options;
    const char* expected;
  } cases[] = {
      {{"--max-nodes", "10"}, "more than 10 nodes (limit)"},
      {{"--max-record-bytes", "16"}, "exceeds the limit of 16 bytes per record"},
      {{"--max-input-bytes", "1000"}, "input exceeds the limit of 1000 bytes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.options[0]);
    for (const char* cmd : {"info", "validate"}) {
      std::vector<std::string> args = {cmd};
      args.insert(args.end(), c.options.begin(), c.options.end());
      args.push_back(trace);
      Result r = run(args);
      EXPECT_EQ(r.exit_code, 1) << cmd;
      EXPECT_TRUE(contains(r.err + r.out, trace + ": ") && contains(r.err + r.out, c.expected)) << r.err << r.out;
    }
    std::vector<std::string> args = {"jsonize"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    args.insert(args.end(), {trace, dir + "/out.json"});
    EXPECT_EQ(run(args).exit_code, 1);
    EXPECT_FALSE(fs::exists(dir + "/out.json"));
    args = {"visualize", trace, "-o", dir + "/graph.svg"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    Result r = run(args);
    EXPECT_EQ(r.exit_code, 1) << "visualize";
    EXPECT_TRUE(contains(r.err, trace + ": ") && contains(r.err, c.expected)) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/graph.svg"));
    args = {"simulate",
            "--workload",
            dir + "/t",
            "--system",
            hostile + "/ok/system.json",
            "--network",
            hostile + "/ok/ring2.yml",
            "--comm-group",
            groups};
    args.insert(args.end(), c.options.begin(), c.options.end());
    r = run(args);
    EXPECT_EQ(r.exit_code, 1) << "simulate";
    EXPECT_TRUE(contains(r.err, trace + ": ") && contains(r.err, c.expected)) << r.err;
  }
  // Within the limits the same trace reads and draws, and a trace of one node simulates.
  EXPECT_EQ(run({"info", "--max-nodes", "100000", "--max-input-bytes", "100000000", trace}).exit_code, 0);
  EXPECT_EQ(run({"visualize", "--max-nodes", "100000", trace, "-o", dir + "/graph.svg"}).exit_code, 0);
  EXPECT_EQ(run({"simulate", "--workload", hostile + "/ok/allreduce", "--system", hostile + "/ok/system.json",
                 "--network", hostile + "/ok/ring2.yml", "--max-nodes", "1", "--max-input-bytes", "1000"})
                .exit_code,
            0);
  Result bad = run({"info", "--max-gzip-ratio", "0", trace});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(contains(bad.err, "--max-gzip-ratio expects a positive number")) << bad.err;
}

TEST(Cli, CtrlCStopsWithoutLeavingOutput) {
  // The input is a FIFO so the interrupt arrives, deterministically, while the command is
  // already running and waiting for data.
  const std::string dir = temp_dir();
  const std::string fifo = dir + "/in.et", out = dir + "/out.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(CHAKRA_BIN, CHAKRA_BIN, "jsonize", fifo.c_str(), out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int w = ::open(fifo.c_str(), O_WRONLY);  // returns once chakra has opened the FIFO
  ASSERT_GE(w, 0);
  usleep(100 * 1000);
  kill(pid, SIGINT);
  // chakra stops reading once it notices the interrupt, so the rest of the write may fail.
  signal(SIGPIPE, SIG_IGN);
  const std::string bytes = read_decompressed(example(0));
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(w, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(w);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_FALSE(fs::exists(out));
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += !e.is_fifo();
  EXPECT_EQ(files, 0u) << "temporary output left behind";
}

}  // namespace

// ---- chakra convert / chakra_converter ----

TEST(CliConvert, TextWritesOneTracePerNpuLikeTheReference) {
  std::string dir = temp_dir();
  std::string in = shared("reference/chakra/inputs/text/MLP_ModelParallel.txt");
  Result r = run({"convert", "text", in, "--num-npus", "2", "--num-passes", "2", "-o", dir + "/mlp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int npu = 0; npu < 2; ++npu)
    EXPECT_EQ(
        read_raw(dir + "/mlp." + std::to_string(npu) + ".et"),
        read_raw(shared("reference/chakra/outputs/converter_text/MLP_ModelParallel." + std::to_string(npu) + ".et")));
  // The drop-in name with the reference's flags (abbreviated, as argparse allows) and its log file.
  r = run({"--log-filename", dir + "/c.log", "Text", "--input", in, "--output", dir + "/ref", "--num-npus", "2",
           "--num-pass", "2"},
          alias("chakra_converter"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/ref.1.et"), read_raw(dir + "/mlp.1.et"));
  EXPECT_TRUE(contains(read_raw(dir + "/c.log"), "Conversion successful"));
}

TEST(CliConvert, TextErrorsLeaveNoFiles) {
  std::string dir = temp_dir();
  write_raw(dir + "/bad.txt", "DATA\n1\nconv1 -1 5 NONE\n");
  Result r = run({"convert", "text", dir + "/bad.txt", "--num-npus", "4", "-o", dir + "/out"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "bad.txt:3: a layer needs 12 columns")) << r.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // only bad.txt
  r = run({"convert", "text", dir + "/bad.txt", "-o", dir + "/out"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--num-npus")) << r.err;
}

TEST(CliConvert, PytorchSingleFileAndReferenceBytes) {
  std::string dir = temp_dir();
  std::string in = shared("reference/chakra/outputs/trace_link/p2p_collectives.linked.json");
  Result r = run({"convert", "pytorch", in, "-o", dir + "/ref.et", "--reference-bytes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/ref.et"), read_raw(shared("reference/chakra/outputs/trace_link/p2p_collectives.et")));
  EXPECT_TRUE(contains(r.err, "42 nodes from 43 (11 GPU ops, 1 pruned)")) << r.err;
  r = run({"PyTorch", "--input", in, "--output", dir + "/fixed.et", "--comm-groups", dir + "/groups.json"},
          alias("chakra_converter"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run({"validate", dir + "/fixed.et"}).exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(read_raw(dir + "/groups.json")), nlohmann::json::parse("{\"1\": [0, 1]}"));
  EXPECT_TRUE(fs::exists("debug.log"));  // the reference's default log file
  fs::remove("debug.log");
}

TEST(CliConvert, PytorchFolderOfRanks) {
  std::string dir = temp_dir();
  fs::create_directory(dir + "/in");
  for (int rank : {0, 1})
    fs::copy_file(shared("data/pairs/dlrm_8rank_v100/reference_linked_by_old_chakra/dlrm_eg_" + std::to_string(rank) +
                         "_plus.json"),
                  dir + "/in/linked." + std::to_string(rank) + ".json");
  Result r = run({"convert", "pytorch", dir + "/in", "-o", dir + "/dlrm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "converted 2 ranks")) << r.err;
  for (int rank : {0, 1}) {
    std::string et = dir + "/dlrm." + std::to_string(rank) + ".et";
    Result info = run({"info", "--json", et});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(nlohmann::json::parse(info.out)[0]["summary"]["node_types"]["COMM_COLL_NODE"]["nodes"], 8) << info.out;
  }
  for (int rank : {0, 1})  // a summary line per rank
    EXPECT_TRUE(contains(r.err, dir + "/dlrm." + std::to_string(rank) + ".et: ")) << r.err;
  // These traces name no process group: no empty groups file, and the output says why.
  EXPECT_FALSE(fs::exists(dir + "/dlrm.comm_group.json"));
  EXPECT_TRUE(contains(r.err, "no process groups in these traces, so no " + dir + "/dlrm.comm_group.json")) << r.err;
  // One bad rank: nothing is published.
  write_raw(dir + "/in/linked.2.json", "{\"nodes\": [");
  r = run({"convert", "pytorch", dir + "/in", "-o", dir + "/again"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "linked.2.json: byte")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/again.0.et"));
}

TEST(CliConvert, PytorchBadInputs) {
  std::string dir = temp_dir();
  Result r =
      run({"convert", "pytorch", shared("data/pairs/hta_simple_add_a100_1rank/benchmark_simple_add_trace.json.gz"),
           "-o", dir + "/x.et"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "Kineto")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.et"));
  r = run({"convert", "pytorch", dir + "/missing.json", "-o", dir + "/x.et"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "missing.json")) << r.err;
  EXPECT_EQ(run({"convert", "nonsense"}).exit_code, 2);
  EXPECT_EQ(run({"convert"}).exit_code, 2);
}

TEST(CliConvert, ArgumentAndFolderErrors) {
  std::string dir = temp_dir();
  Result r = run({"convert", "text", shared("reference/chakra/inputs/text/microAllReduce.txt"), "--num-npus", "0", "-o",
                  dir + "/m"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--num-npus must be at least 1")) << r.err;
  fs::create_directory(dir + "/empty");
  r = run({"convert", "pytorch", dir + "/empty", "-o", dir + "/p"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "no .json or .json.gz traces in this folder")) << r.err;
  fs::create_directory(dir + "/dup");
  write_raw(dir + "/dup/a.1.json", "{}");
  write_raw(dir + "/dup/b.1.json", "{}");
  r = run({"convert", "pytorch", dir + "/dup", "-o", dir + "/p"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "two files for rank 1")) << r.err;
  r = run({}, alias("chakra_converter"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "{Text,PyTorch}"));
  r = run({"Onnx"}, alias("chakra_converter"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown subcommand 'Onnx'")) << r.err;
}

TEST(CliLink, DropInAliasReproducesTheReference) {
  std::string dir = temp_dir();
  const std::string in = shared("reference/chakra/inputs/link/");
  Result r = run({"--rank", "0", "--chakra-host-trace", in + "p2p_collectives_host_et.json", "--chakra-device-trace",
                  in + "p2p_collectives_kineto.synthetic.json", "--output-file", dir + "/linked.json"},
                 alias("chakra_trace_link"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/linked.json"),
            read_raw(shared("reference/chakra/outputs/trace_link/p2p_collectives.linked.json")));
  EXPECT_TRUE(contains(r.err, "Linking process successful")) << r.err;
  // The reference crashes without a ProfilerStep; quiet log levels print nothing but errors.
  r = run({"--rank", "0", "--chakra-host-trace", in + "p2p_collectives_host_et.json", "--chakra-device-trace",
           in + "p2p_collectives_kineto.no_profilerstep.synthetic.json", "--output-file", dir + "/np.json",
           "--log-level", "error"},
          alias("chakra_trace_link"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(run({"--rank", "0", "--chakra-host-trace", "a", "--chakra-device-trace", "b", "--output-file", "c",
                 "--log-level", "loud"},
                alias("chakra_trace_link"))
                .exit_code,
            2);
  EXPECT_EQ(run({"--rank", "0"}, alias("chakra_trace_link")).exit_code, 2);
}

// The real 8-rank DLRM pairs (no Record function ids): link the folder, convert the linked
// folder, and every rank has its 8 NCCL collectives (3 all-reduce, 5 all-to-all). The sync
// dependencies become data dependencies without making cycles (validate passes).
TEST(CliLink, FolderOfRankPairsThenConvert) {
  std::string dir = temp_dir();
  Result r = run({"link", shared("data/pairs/dlrm_8rank_v100"), "-o", dir + "/linked/dlrm.json.gz", "--sync-deps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "linked 8 ranks")) << r.err;
  EXPECT_TRUE(contains(r.err, "dlrm.0.json.gz: linked 1672 of 1675 host nodes by in-order")) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "58 sync dependencies from 49 of 55 synchronisation calls, 2 from waits for "
                       "another thread's work"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "39 stream waits (cudaStreamWaitEvent) name no event")) << r.err;
  r = run({"convert", "pytorch", dir + "/linked", "-o", dir + "/et/dlrm"});  // makes et/
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int rank = 0; rank < 8; ++rank) {
    std::string et = dir + "/et/dlrm." + std::to_string(rank) + ".et";
    EXPECT_EQ(run({"validate", et}).exit_code, 0) << et;
    Result info = run({"info", "--json", et});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    nlohmann::json s = nlohmann::json::parse(info.out)[0]["summary"];
    EXPECT_EQ(s["node_types"]["COMM_COLL_NODE"]["nodes"], 8) << et;
    EXPECT_GT(s["node_types"]["COMP_NODE"]["nodes"].get<int>(), 1900) << et;  // host ops + kernels
  }

  // The replay on the measured hardware's published figures (preset v100-dgx1-8, not fitted):
  // each rank's simulated step against its measured one, the ranks started as far apart as
  // they were measured (the first rank to start waits longest in the collectives).
  auto simulate = [&](const std::vector<std::string>& config, const std::string& json_out) {
    std::vector<std::string> args = {"simulate", "--workload", dir + "/et/dlrm", "--json", json_out};
    args.insert(args.end(), config.begin(), config.end());
    Result sim = run(args);
    EXPECT_EQ(sim.exit_code, 0) << sim.err;
    return std::make_pair(sim.out, nlohmann::json::parse(read_raw(json_out)));
  };
  auto [text, result] = simulate({"--preset", "v100-dgx1-8"}, dir + "/sim.json");
  EXPECT_TRUE(contains(text, "measured vs simulated over the whole trace")) << text;
  EXPECT_FALSE(contains(text, "bound by CPU ops")) << text;  // blocked time is no longer CPU time
  ASSERT_EQ(result["npus"].size(), 8u);
  uint64_t earliest_rank_step = 0;
  double total_error = 0;
  for (const nlohmann::json& npu : result["npus"]) {
    const double measured = npu["measured_step_ns"].get<double>();
    const double simulated = npu["finish_ns"].get<double>() - npu["start_ns"].get<double>();
    EXPECT_NEAR(simulated / measured, 1.0, 0.05) << npu;  // the issue's target; today -0.3% .. -0.8%
    total_error += std::abs(simulated / measured - 1);
    if (npu["start_ns"] == 0) earliest_rank_step = npu["finish_ns"].get<uint64_t>();
    // Exposed transfer (on every participant's critical path): some, a small part of the step;
    // simulated by the same definition, within 25% of it.
    EXPECT_GT(npu["measured_exposed_transfer_ns"].get<double>(), 0) << npu;
    EXPECT_LT(npu["measured_exposed_transfer_ns"].get<double>(), measured / 10) << npu;
    EXPECT_NEAR(npu["exposed_transfer_ns"].get<double>() / npu["measured_exposed_transfer_ns"].get<double>(), 1.0, 0.25)
        << npu;
    // Exposed communication (communication kernels while no compute runs), measured and
    // simulated by one definition: within 5% of each other on every rank.
    EXPECT_NEAR(npu["exposed_communication_ns"].get<double>() / npu["measured_exposed_communication_ns"].get<double>(),
                1.0, 0.05)
        << npu;
  }
  EXPECT_LT(total_error / 8, 0.015);  // today 0.6%
  // When each measured node started, reproduced: the median |error| was 196 µs (p90 542) while
  // a parent's own time was all charged before its children; charged where it was spent, 42 µs.
  EXPECT_GT(result["start_error"]["nodes"].get<uint64_t>(), 15000u);
  EXPECT_LT(result["start_error"]["median_ns"].get<double>(), 100e3);
  EXPECT_LT(result["start_error"]["p90_ns"].get<double>(), 250e3);
  EXPECT_TRUE(contains(text, "node starts vs measured")) << text;
  EXPECT_GT(earliest_rank_step, 0u);
  // Per collective type, the median simulated duration against the measured NCCL kernels.
  ASSERT_EQ(result["measured_collectives"].size(), 2u);
  for (const nlohmann::json& c : result["measured_collectives"]) {
    const double ratio = c["simulated_median_ns"].get<double>() / c["measured_median_ns"].get<double>();
    EXPECT_NEAR(ratio, 1.0, 0.15) << c;  // the issue's target; today +1.4% (all-to-all), +9.1% (all-reduce)
  }
  // More bandwidth never makes the step longer.
  write_raw(dir + "/sys.json", R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["direct"],
    "collective-optimization": "localBWAware", "local-mem-bw": 900})");
  uint64_t previous = UINT64_MAX;
  for (const char* gbps : {"25", "150", "1000000"}) {
    write_raw(dir + "/net.yml",
              std::string("topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ ") + gbps + " ]\nlatency: [ 500 ]\n");
    const uint64_t end = simulate({"--system", dir + "/sys.json", "--network", dir + "/net.yml"}, dir + "/sim.json")
                             .second["end_ns"]
                             .get<uint64_t>();
    EXPECT_LE(end, previous) << gbps << " GB/s";
    previous = end;
  }
  // Free communication: each rank's step falls to within 5% of its measured step less its
  // measured exposed transfer (the issue's target; today +0.4% .. +1.1%).
  write_raw(dir + "/net.yml", "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 1000000 ]\nlatency: [ 0 ]\n");
  const nlohmann::json free =
      simulate({"--system", dir + "/sys.json", "--network", dir + "/net.yml"}, dir + "/sim.json").second;
  for (const nlohmann::json& npu : free["npus"]) {
    const double bound = npu["measured_step_ns"].get<double>() - npu["measured_exposed_transfer_ns"].get<double>();
    const double simulated = npu["finish_ns"].get<double>() - npu["start_ns"].get<double>();
    EXPECT_NEAR(simulated / bound, 1.0, 0.05) << npu;
  }

  // The simulated times written back into the traces: against the measured ones, chakra diff
  // finds every node and only the collectives' kernels changed (the replay keeps each measured
  // kernel and host op duration), and chakra analyze reads them as it reads measured traces.
  r = run({"simulate", "--workload", dir + "/et/dlrm", "--preset", "v100-dgx1-8", "--times-out", dir + "/sim/dlrm",
           "--critical-path", "--what-if", "ncclKernel=2", "--json", dir + "/sim.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json run_json = nlohmann::json::parse(read_raw(dir + "/sim.json"));
  EXPECT_TRUE(contains(
      r.out, "critical path across 8 ranks: step " + std::to_string(run_json["end_ns"].get<uint64_t>()) + " ns"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "what if nodes named *ncclKernel* ran 2x faster (simulated again): step " +
                                  std::to_string(run_json["end_ns"].get<uint64_t>()) + " -> "))
      << r.out;
  EXPECT_GT(run_json["network"]["dimensions"][0]["bytes"].get<uint64_t>(), 0u);
  Result d = run({"diff", "--json", dir + "/et", dir + "/sim"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const nlohmann::json diff = nlohmann::json::parse(d.out);
  ASSERT_EQ(diff["ranks"].size(), 8u);
  for (const nlohmann::json& rank : diff["ranks"]) {
    size_t changed = 0;
    for (const nlohmann::json& n : rank["names"]) {
      EXPECT_EQ(n["count_a"], n["count_b"]) << n;
      if (n["status"] == "same") continue;
      ++changed;
      EXPECT_EQ(n["name"].get<std::string>().rfind("ncclKernel", 0), 0u) << n;
    }
    EXPECT_GT(changed, 0u);
  }
  // The same as CSV: a row per rank and name, the changed ones the NCCL kernels.
  Result dc = run({"diff", "--csv", dir + "/et", dir + "/sim"});
  ASSERT_EQ(dc.exit_code, 0) << dc.err;
  size_t names = 0;
  for (const nlohmann::json& rank : diff["ranks"]) names += rank["names"].size();
  EXPECT_EQ(static_cast<size_t>(std::count(dc.out.begin(), dc.out.end(), '\n')), names + 1);
  EXPECT_TRUE(
      contains(dc.out, ",\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)\",3,3,"))
      << dc.out.substr(0, 500);
  Result a = run({"analyze", "--json", dir + "/sim"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(nlohmann::json::parse(a.out)["ranks"].size(), 8u);
}

// chakra view: without a built page, or with a path that is not there, a clear error and exit 1
// before anything listens (the serving itself is tested in the browser test).
TEST(CliView, NamesWhatIsMissing) {
  const std::string dir = temp_dir();
  Result r = run({"view", "--no-browser", "--web", dir + "/nowhere"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "no web page at " + dir + "/nowhere (index.html missing)")) << r.err;
  write_raw(dir + "/index.html", "<!doctype html>");
  r = run({"view", "--no-browser", "--web", dir, dir + "/missing.et"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, dir + "/missing.et: no such file or folder")) << r.err;
  EXPECT_EQ(run({"view", "--port", "70000", "--web", dir}).exit_code, 2);  // not a port
}

// --preset: a cluster of assets/simulation/presets.json instead of config files, fitted to
// --npus; mixing it with files, --npus without it and unknown names are usage errors or named.
TEST(CliSimulate, PresetsFitTheirNetworkAndRefuseMixing) {
  std::string dir = temp_dir();
  ASSERT_EQ(run({"generate", "collective", "--npus", "4", "-o", dir + "/ar"}).exit_code, 0);
  Result r = run({"simulate", "--workload", dir + "/ar", "--preset", "astra-sim-ring-8", "--npus", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int npu = 0; npu < 4; ++npu) EXPECT_TRUE(contains(r.out, "sys[" + std::to_string(npu) + "] finished")) << r.out;
  r = run({"simulate", "--workload", dir + "/ar", "--preset", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "unknown cluster preset 'nope' (known: h100-hgx-8")) << r.err;
  r = run({"simulate", "--workload", dir + "/ar", "--preset", "astra-sim-ring-8", "--network", dir + "/n.yml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "give --preset or --system and --network, not both")) << r.err;
  r = run({"simulate", "--workload", dir + "/ar", "--npus", "4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "give --system and --network (or --preset)")) << r.err;
}

// --reference-graph: the reference's graph and durations, so no replay mark for the simulator.
TEST(CliConvert, ReferenceGraphLeavesTheReplayModelOut) {
  std::string dir = temp_dir();
  const std::string linked = shared("reference/chakra/outputs/trace_link/resnet_2gpu_rank1.linked.json.gz");
  ASSERT_EQ(run({"convert", "pytorch", linked, "-o", dir + "/replay.et"}).exit_code, 0);
  ASSERT_EQ(run({"convert", "pytorch", linked, "--reference-graph", "-o", dir + "/plain.et"}).exit_code, 0);
  Result replay = run({"jsonize", dir + "/replay.et"}), plain = run({"jsonize", dir + "/plain.et"});
  ASSERT_EQ(replay.exit_code, 0);
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_TRUE(contains(replay.out, "replay_lanes"));
  EXPECT_FALSE(contains(plain.out, "replay_lanes"));
}

// The other real pairs of ../shared (HTA's and PARAM's single-GPU runs) replay without errors
// and print their measured-vs-simulated line.
TEST(CliLink, OtherRealPairsReplayWithTheirMeasuredStep) {
  std::string dir = temp_dir();
  write_raw(dir + "/net.yml", "topology: [ Switch ]\nnpus_count: [ 1 ]\nbandwidth: [ 150 ]\nlatency: [ 500 ]\n");
  write_raw(dir + "/sys.json", R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["direct"],
    "collective-optimization": "localBWAware", "local-mem-bw": 1555})");
  const std::pair<const char*, const char*> pairs[] = {
      {"hta_simple_add_a100_1rank/benchmark_simple_add_et.json.gz",
       "hta_simple_add_a100_1rank/benchmark_simple_add_trace.json.gz"},
      {"param_linear_rtx2080ti_1rank/linear_et.json.gz", "param_linear_rtx2080ti_1rank/linear_kineto.json.gz"}};
  for (const auto& [host, device] : pairs) {
    Result r = run({"link", "--host", shared(std::string("data/pairs/") + host), "--device",
                    shared(std::string("data/pairs/") + device), "-o", dir + "/l.json", "--sync-deps"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run({"convert", "pytorch", dir + "/l.json", "-o", dir + "/et/p.0.et"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run({"simulate", "--workload", dir + "/et/p", "--system", dir + "/sys.json", "--network", dir + "/net.yml",
             "--json", dir + "/sim.json"});
    ASSERT_EQ(r.exit_code, 0) << host << r.err;
    EXPECT_TRUE(contains(r.out, "measured vs simulated over the whole trace")) << host << r.out;
    const nlohmann::json npu = nlohmann::json::parse(read_raw(dir + "/sim.json"))["npus"][0];
    EXPECT_GT(npu["measured_step_ns"].get<uint64_t>(), 0u) << host;
    EXPECT_GT(npu["finish_ns"].get<uint64_t>(), 0u) << host;
  }
}

// A run with a host stall, as a user meets it: link says it found one, simulate lists it per
// rank with the other replay's figures, the CPU-bound verdict is qualified, and analyze and its
// critical path list it, on the Kineto trace and the converted one alike.
TEST(CliLink, HostStallsAreFoundListedAndReplayedEitherWay) {
  const std::string dir = temp_dir();
  for (int r = 0; r < 2; ++r) {
    const StalledRank run = stalled_rank(false, r);
    fs::create_directories(dir + "/run/rank" + std::to_string(r));
    write_raw(dir + "/run/rank" + std::to_string(r) + "/host_et." + std::to_string(r) + ".json", run.host);
    write_raw(dir + "/run/rank" + std::to_string(r) + "/kineto." + std::to_string(r) + ".json", run.kineto);
  }
  Result r = run({"link", dir + "/run", "-o", dir + "/linked/run.json", "--sync-deps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "1 host stalls, 19.95 ms of own time (gpu_wait 1; 1 can replay as waits for the GPU"))
      << r.err;
  r = run({"convert", "pytorch", dir + "/linked", "-o", dir + "/et/run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* mode : {"keep", "wait"}) {
    r = run({"simulate", "--workload", dir + "/et/run", "--preset", "v100-dgx1-8", "--npus", "2", "--stalls", mode,
             "--json", dir + "/sim.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, std::string("(--stalls ") + mode + ")\n")) << r.out;
    EXPECT_TRUE(
        contains(r.out, std::string("with --stalls ") + (mode == std::string("keep") ? "wait" : "keep") + " instead:"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "  0        19.950 ms          19.950 ms   98.7%"))
        << r.out;  // per NPU: all of it gpu_wait
    EXPECT_TRUE(contains(r.out, "measured vs simulated in ProfilerStep#1")) << r.out;
    const nlohmann::json j = nlohmann::json::parse(read_raw(dir + "/sim.json"));
    EXPECT_EQ(j["stall_mode"], mode);
    EXPECT_EQ(j["npus"][1]["stalls_ns"]["gpu_wait"], 19950000);
    if (mode == std::string("keep")) {  // 99% of the step is that stall: the verdict says what it may be
      EXPECT_TRUE(contains(r.out, "19.950 ms of it are host stalls replayed as CPU time")) << r.out;
    }
  }
  r = run(
      {"simulate", "--workload", dir + "/et/run", "--preset", "v100-dgx1-8", "--npus", "2", "--stalls", "sometimes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--stalls must be keep or wait")) << r.err;
  // analyze lists it on the Kineto trace and on the converted trace alike, in text and JSON.
  for (const std::string& input : {dir + "/run/rank0/kineto.0.json", dir + "/et/run.0.et"}) {
    r = run({"analyze", input});
    ASSERT_EQ(r.exit_code, 0) << input << r.err;
    EXPECT_TRUE(contains(r.out, "rank 0: 1 stalls, 19950 µs (gpu_wait 19950 µs)")) << input << r.out;
    EXPECT_TRUE(contains(r.out, "the GPU's work drained 120 us before it ended")) << input << r.out;
    r = run({"analyze", input, "--json"});
    const nlohmann::json stalls = nlohmann::json::parse(r.out)["ranks"][0]["host_stalls"];
    EXPECT_EQ(stalls["total_us"], 19950) << input;
    EXPECT_EQ(stalls["stalls"][0]["name"], "aten::empty") << input;
    EXPECT_EQ(stalls["stalls"][0]["class"], "gpu_wait") << input;
    r = run({"analyze", input, "--critical-path"});
    EXPECT_TRUE(contains(r.out, "host stalls on the path: ")) << input << r.out;
    EXPECT_TRUE(contains(r.out, "aten::empty  [host stall: gpu_wait]")) << input << r.out;
  }
}

TEST(CliLink, ErrorsLeaveNoOutput) {
  std::string dir = temp_dir();
  const std::string in = shared("reference/chakra/inputs/link/");
  // A host ET with another run's Kineto trace: another process, and with --force still too few
  // ops of the same name.
  Result r = run({"link", "--host", shared("data/pytorch_et/chakra_tests__1.0.2-chakra.0.0.4.json"), "--device",
                  in + "p2p_collectives_kineto.synthetic.json", "-o", dir + "/x.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "process 788625 by the host ET's \"pid\", 4242 by the Kineto trace's CPU ops")) << r.err;
  r = run({"link", "--host", shared("data/pytorch_et/chakra_tests__1.0.2-chakra.0.0.4.json"), "--device",
           in + "p2p_collectives_kineto.synthetic.json", "-o", dir + "/x.json", "--force"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "same run and rank")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.json"));
  write_raw(dir + "/cut.json", read_raw(in + "p2p_collectives_kineto.synthetic.json").substr(0, 5000));
  r = run(
      {"link", "--host", in + "p2p_collectives_host_et.json", "--device", dir + "/cut.json", "-o", dir + "/x.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "cut.json: byte")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.json"));
  EXPECT_EQ(run({"link", "-o", dir + "/x.json"}).exit_code, 2);
  EXPECT_EQ(run({"link", "--host", "a", "--device", "b", "-o", "c", "--method", "magic"}).exit_code, 2);
  r = run({"link", dir, "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "no host ET + Kineto trace pairs")) << r.err;
  // Pairs side by side in one folder, matched by the rank in their names (the Kineto trace
  // states rank 0 in its distributedInfo, and its name agrees).
  const std::string add = shared("data/pairs/hta_simple_add_a100_1rank/");
  fs::create_directory(dir + "/flat");
  fs::copy_file(add + "benchmark_simple_add_et.json.gz", dir + "/flat/host_0.json.gz");
  fs::copy_file(add + "benchmark_simple_add_trace.json.gz", dir + "/flat/kineto_0.json.gz");
  r = run({"link", dir + "/flat", "-o", dir + "/out/add"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/out/add.0.json")) << r.err;
  // Outputs written into the input folder are not taken for inputs when the link runs again.
  for (int i = 0; i < 2; ++i) {
    r = run({"link", dir + "/flat", "-o", dir + "/flat/linked.json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir + "/flat/linked.0.json")) << r.err;
  }
  fs::remove(dir + "/flat/linked.0.json");
  fs::copy_file(add + "benchmark_simple_add_et.json.gz", dir + "/flat/host_4.json.gz");
  r = run({"link", dir + "/flat", "-o", dir + "/out/again"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "host_4.json.gz: no Kineto trace with the same rank number")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/again.0.json"));
  // A name that contradicts the trace's own rank is an error naming the file; in a rank's own
  // folder without a number in the names, the trace's rank is taken.
  fs::create_directory(dir + "/clash");
  fs::copy_file(add + "benchmark_simple_add_et.json.gz", dir + "/clash/host_3.json.gz");
  fs::copy_file(add + "benchmark_simple_add_trace.json.gz", dir + "/clash/kineto_3.json.gz");
  r = run({"link", dir + "/clash", "-o", dir + "/out/clash"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(
      contains(r.err, "kineto_3.json.gz: the trace says it is rank 0 (distributedInfo) but its name says rank 3"))
      << r.err;
  fs::create_directories(dir + "/named/run.2023-07");
  fs::copy_file(add + "benchmark_simple_add_et.json.gz", dir + "/named/run.2023-07/host_et.json.gz");
  fs::copy_file(add + "benchmark_simple_add_trace.json.gz", dir + "/named/run.2023-07/trace.json.gz");
  r = run({"link", dir + "/named", "-o", dir + "/out/named"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/out/named.0.json")) << r.err;
}

// A host ET and a Kineto trace from different ranks or processes are refused, naming both files
// and what each says, unless --force; a folder's pairs are printed with what made them; a pair
// where nothing is stated on both sides links with the pairing said to be unverified. The shared
// DLRM ranks, copied and edited.
TEST(CliLink, PairsOfDifferentRanksOrProcessesAreRefused) {
  const std::string dir = temp_dir(), dlrm = shared("data/pairs/dlrm_8rank_v100/");
  const std::string host0 = dlrm + "rank0/dlrm_eg_0.json";
  const std::string kineto1 = dlrm + "rank1/worker1_step_12.1694128201556.pt.trace.json";
  Result r = run({"link", "--host", host0, "--device", kineto1, "-o", dir + "/x.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(
      contains(r.err, host0 + " and " + kineto1 +
                          " are not one rank's recording: rank 0 by the host ET's file "
                          "name; rank 1 by the Kineto trace's distributedInfo and the Kineto trace's file name; "
                          "process 59811 by the host ET's \"pid\", 59812 by the Kineto trace's CPU ops"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "--force links them anyway")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.json"));
  r = run({"link", "--host", host0, "--device", kineto1, "-o", dir + "/x.json", "--force"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "warning: " + host0 + " and " + kineto1 + " are not one rank's recording")) << r.err;
  EXPECT_TRUE(contains(r.err, "linked anyway (--force)")) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/x.json"));
  // --rank is checked too.
  const std::string kineto0 = dlrm + "rank0/worker0_step_12.1694128201545.pt.trace.json";
  r = run({"link", "--host", host0, "--device", kineto0, "-o", dir + "/y.json", "--rank", "3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "; rank 3 by --rank")) << r.err;
  r = run({"link", "--host", host0, "--device", kineto0, "-o", dir + "/y.json", "--rank", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "pairing: rank 0 by the host ET's file name, the Kineto trace's distributedInfo, the "
                       "Kineto trace's file name and --rank; process 59811 in both"))
      << r.err;

  // Rank 3's Kineto trace under a plain name, its distributedInfo edited to say rank 4.
  nlohmann::json k3 = nlohmann::json::parse(read_raw(dlrm + "rank3/worker3_step_12.1694128201557.pt.trace.json"));
  k3["distributedInfo"]["rank"] = 4;
  write_raw(dir + "/kineto.json", k3.dump());
  r = run({"link", "--host", dlrm + "rank3/dlrm_eg_3.json", "--device", dir + "/kineto.json", "-o", dir + "/z.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err,
                       "kineto.json are not one rank's recording: rank 3 by the host ET's file name; rank 4 by "
                       "the Kineto trace's distributedInfo"))
      << r.err;

  // A folder: ranks 0 and 1 as they are, then with their Kineto traces swapped.
  for (const std::string rank : {"rank0", "rank1"}) {
    fs::create_directories(dir + "/pairs/" + rank);
    for (const auto& f : fs::directory_iterator(dlrm + rank))
      fs::copy_file(f.path(), dir + "/pairs/" + rank + "/" + f.path().filename().string());
  }
  r = run({"link", dir + "/pairs", "-o", dir + "/linked/d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(
      r.err, "  rank 1 (from the Kineto trace's distributedInfo): " + dir + "/pairs/rank1/dlrm_eg_1.json + " + dir +
                 "/pairs/rank1/worker1_step_12.1694128201556.pt.trace.json\n  pairing: rank 1 by the "
                 "host ET's file name, the Kineto trace's distributedInfo, the Kineto trace's file name "
                 "and the folder's name; process 59812 in both"))
      << r.err;
  fs::rename(dir + "/pairs/rank0/worker0_step_12.1694128201545.pt.trace.json", dir + "/pairs/rank1/k0.json");
  fs::rename(dir + "/pairs/rank1/worker1_step_12.1694128201556.pt.trace.json", dir + "/pairs/rank0/k1.json");
  r = run({"link", dir + "/pairs", "-o", dir + "/swapped/d"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "are not one rank's recording")) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "rank 0 by the host ET's file name and the folder's name; rank 1 by the Kineto trace's "
                       "distributedInfo") ||
              contains(r.err,
                       "rank 0 by the Kineto trace's distributedInfo; rank 1 by the host ET's file name and the "
                       "folder's name"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/swapped/d.0.json") || fs::exists(dir + "/swapped/d.1.json"));

  // Nothing stated on both sides: HTA's simple-add pair without the host ET's pid and the Kineto
  // trace's distributedInfo, under plain names.
  const std::string add = shared("data/pairs/hta_simple_add_a100_1rank/");
  nlohmann::json host = nlohmann::json::parse(read_decompressed(add + "benchmark_simple_add_et.json.gz"));
  nlohmann::json kineto = nlohmann::json::parse(read_decompressed(add + "benchmark_simple_add_trace.json.gz"));
  host.erase("pid");
  kineto.erase("distributedInfo");
  write_raw(dir + "/host.json", host.dump());
  write_raw(dir + "/device.json", kineto.dump());
  r = run({"link", "--host", dir + "/host.json", "--device", dir + "/device.json", "-o", dir + "/u.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "pairing: unverified: process 563677 by the Kineto trace only, which the other trace "
                       "does not confirm"))
      << r.err;
}

TEST(CliGenerate, ReferenceAliasAndCollectives) {
  std::string dir = temp_dir();
  Result r = run({"--num_npus", "2"}, alias("chakra_generator"), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(read_raw(e.path().string()),
              read_raw(shared("reference/chakra/outputs/generator/npus2/" + e.path().filename().string())))
        << e.path();
  }
  EXPECT_EQ(files, 28u);
  r = run({"generate", "--num-npus", "2", "-o", dir + "/gen"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/gen/BARRIER.1.et"),
            read_raw(shared("reference/chakra/outputs/generator/npus2/BARRIER.1.et")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir + "/gen"), fs::directory_iterator()), 28);
  r = run({"generate", "collective", "--type", "all_to_all", "--size", "1MB", "--npus", "4", "-o", dir + "/mb/a2a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/mb/a2a.3.et"),
            read_raw(shared(
                "reference/astra-sim/inputs/examples/workload/microbenchmarks/all_to_all/4npus_1MB/all_to_all.3.et")));
  r = run({"generate", "collective", "--type", "all_shuffle", "--npus", "4", "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown collective 'all_shuffle'")) << r.err;
  r = run({"generate", "collective", "--npus", "4294967297", "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 2);  // not 1 NPU after wrapping
  EXPECT_TRUE(contains(r.err, "--npus is too large")) << r.err;
  r = run({"generate", "collective", "--npus", "99999999999999999999", "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 2);
  r = run({"generate", "collective", "--size", "1.5MB", "--npus", "4", "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "'1.5MB' is not a size")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.0.et"));
}

TEST(CliTimeline, AliasAndErrors) {
  std::string dir = temp_dir();
  const std::string in = shared("reference/chakra/inputs/timeline/");
  Result r =
      run({"--input_filename", in + "astra_sim_trace_MLP_ModelParallel_2npus.log", "--output_filename", dir + "/t.json",
           "--num_npus", "2", "--npu_frequency", "1000", "--reference-units", "--log_filename", dir + "/debug.log"},
          alias("chakra_timeline_visualizer"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/t.json"),
            read_raw(shared("reference/chakra/outputs/timeline_visualizer/MLP_ModelParallel_2npus.chrome_trace.json")));
  r = run({"--input_filename", in + "bad_node_name.log", "--output_filename", dir + "/bad.json", "--num_npus", "1",
           "--npu_frequency", "1000", "--reference-units", "--log_filename", dir + "/debug.log"},
          alias("chakra_timeline_visualizer"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "Node type cannot be identified from aten::mm")) << r.err;
  EXPECT_TRUE(contains(read_raw(dir + "/debug.log"), "ERROR ")) << read_raw(dir + "/debug.log");
  EXPECT_FALSE(fs::exists(dir + "/bad.json"));
  r = run({"timeline", in + "bad_node_name.log", "-o", dir + "/ok.json", "--num-npus", "1", "--npu-frequency", "1000"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({"timeline", in + "bad_node_name.log", "-o", dir + "/ok.json", "--num-npus", "1", "--npu-frequency", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "frequency")) << r.err;
}

TEST(CliVisualize, FormatsAliasAndErrors) {
  std::string dir = temp_dir();
  const std::string et = shared("reference/chakra/outputs/converter_text/MLP_ModelParallel.0.et");
  Result r = run({"--input_filename", et, "--output_filename", dir + "/g.graphml"}, alias("chakra_visualizer"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/g.graphml"),
            read_raw(shared("reference/chakra/outputs/visualizer/MLP_ModelParallel.0.graphml")));
  r = run({"visualize", et, "-o", dir + "/g.svg", "--types", "COMM_COLL", "--name", "mlp[0-3]"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string svg = read_raw(dir + "/g.svg");
  EXPECT_TRUE(contains(svg, "<svg ")) << svg.substr(0, 200);
  EXPECT_TRUE(contains(svg, "COMM_COLL_NODE_layer_64_1_mlp1")) << svg.substr(0, 2000);
  EXPECT_FALSE(contains(svg, "COMP_NODE_layer"));
  r = run({"--input_filename", et, "--output_filename", dir + "/g.pdf"}, alias("chakra_visualizer"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "write .svg")) << r.err;
  r = run({"visualize", et, "-o", dir + "/g.png"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, ".dot, .graphml or .svg")) << r.err;
  EXPECT_EQ(run({"visualize", et, "-o", dir + "/x.svg", "--types", "GPU"}).exit_code, 2);
  for (const char* range : {"7", "-1:5", "3x:5", "5:2", ":4"})
    EXPECT_EQ(run({"visualize", et, "-o", dir + "/x.svg", "--range", range}).exit_code, 2) << range;
  r = run({"visualize", et, "-o", dir + "/x.svg", "--collapse", "4294967296"});
  EXPECT_EQ(r.exit_code, 2);  // would wrap to 0 in 32 bits
  EXPECT_TRUE(contains(r.err, "--collapse is too large: at most 4294967295")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.svg"));
}

TEST(CliSimulate, AstraSimLinesSummaryJsonTimelineAndTheDropInAliases) {
  std::string dir = temp_dir();
  const std::string in = shared("reference/astra-sim/inputs");
  const std::string wl = "examples/workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce";
  Result r = run({"simulate", "--workload", wl, "--system", "sys/ring_s4_c1.json", "--network", "net/ring_8.yml",
                  "--json", dir + "/r.json", "--timeline", dir + "/t.json"},
                 CHAKRA_BIN, in);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sys[0] finished, 64440 cycles, exposed communication 64440 cycles.\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "sys[7] finished, 64440 cycles")) << r.out;
  EXPECT_TRUE(contains(r.out, "makespan")) << r.out;
  auto j = nlohmann::json::parse(read_raw(dir + "/r.json"));
  EXPECT_EQ(j["end_ns"], 64440);
  EXPECT_EQ(j["npus"].size(), 8u);
  EXPECT_EQ(j["collectives"]["all_reduce"]["count"], 8);
  auto t = nlohmann::json::parse(read_raw(dir + "/t.json"));
  int slices = 0;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_EQ(e["dur"], 64.44);
    }
  EXPECT_EQ(slices, 8);

  // ASTRA-sim's own flags under its binary names; the aware one handles this config too
  for (const char* name : {"AstraSim_Analytical_Congestion_Unaware", "AstraSim_Analytical_Congestion_Aware"}) {
    r = run({"--workload-configuration=" + wl, "--system-configuration=sys/ring_s4_c1.json",
             "--network-configuration=net/switch_8.yml",
             "--remote-memory-configuration=remote_memory/no_memory_expansion.json"},
            alias(name), in);
    ASSERT_EQ(r.exit_code, 0) << name << r.err;
    EXPECT_TRUE(contains(r.out, std::string("sys[0] finished, ") + (contains(name, "Unaware") ? "92440" : "126600")))
        << name << r.out;
    EXPECT_FALSE(contains(r.out, "makespan"));  // the reference prints only its lines
  }
  // A misspelt flag is an error (the reference silently ignores it)
  r = run({"--workload-configuration=" + wl, "--system-configuration=sys/ring_s4_c1.json",
           "--network-configurationn=net/ring_8.yml"},
          alias("AstraSim_Analytical_Congestion_Unaware"), in);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "network-configurationn")) << r.err;
  // A bad config value names the file
  r = run({"simulate", "--workload", wl, "--system", "sys/ring_nosplits.json", "--network", "net/ring_8.yml"},
          CHAKRA_BIN, in);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "preferred-dataset-splits")) << r.err;
  r = run({"simulate", "--workload", wl, "--system", "sys/ring_s4_c1.json", "--network", "net/ring_64.yml"}, CHAKRA_BIN,
          in);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "all_reduce.8.et")) << r.err;
  for (const char* scale : {"0", "-1", "2x", "nan"}) {
    r = run({"simulate", "--workload", wl, "--system", "sys/ring_s4_c1.json", "--network", "net/ring_8.yml",
             "--injection-scale", scale},
            CHAKRA_BIN, in);
    EXPECT_EQ(r.exit_code, 2) << scale;
    EXPECT_TRUE(contains(r.err, "--injection-scale expects a positive number")) << r.err;
  }
  // --injection-scale 2 doubles endpoint-delay: 64440 -> 65040 (reference case flag_injection_scale2)
  r = run({"simulate", "--workload", wl, "--system", "sys/ring_s4_c1.json", "--network", "net/ring_8.yml",
           "--injection-scale", "2"},
          CHAKRA_BIN, in);
  EXPECT_TRUE(contains(r.out, "sys[0] finished, 65040 cycles")) << r.out;
}

// Alike NPUs: NPU 0 runs for all and the summary and --json say so; --every-npu runs each, with
// the same lines and figures.
TEST(CliSimulate, AlikeNpusRunAsOneUnlessEveryNpuIsAsked) {
  const std::string dir = temp_dir();
  const std::string in = shared("reference/astra-sim/inputs");
  const std::string wl = "examples/workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce";
  auto sim = [&](const std::string& json, bool each) {
    std::vector<std::string> args = {"simulate",  "--workload",     wl,       "--system", "sys/ring_s4_c1.json",
                                     "--network", "net/ring_8.yml", "--json", json};
    if (each) args.push_back("--every-npu");
    return run(args, CHAKRA_BIN, in);
  };
  const Result one = sim(dir + "/one.json", false), each = sim(dir + "/each.json", true);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(each.exit_code, 0) << each.err;
  EXPECT_TRUE(contains(one.out, "NPU 0 ran for all 8; --every-npu runs each")) << one.out;
  EXPECT_FALSE(contains(each.out, "ran for all")) << each.out;
  EXPECT_EQ(one.out.substr(0, one.out.find("summary")), each.out.substr(0, each.out.find("summary")));
  EXPECT_TRUE(contains(one.out, "sys[7] finished, 64440 cycles")) << one.out;
  auto a = nlohmann::json::parse(read_raw(dir + "/one.json")), b = nlohmann::json::parse(read_raw(dir + "/each.json"));
  EXPECT_EQ(a["simulated_npus"], 1);
  EXPECT_EQ(b["simulated_npus"], 8);
  EXPECT_LT(a["events"].get<uint64_t>(), b["events"].get<uint64_t>());
  for (auto* j : {&a, &b}) j->erase("simulated_npus"), j->erase("events");
  EXPECT_EQ(a, b);
}

// --workload takes a folder of per-NPU traces as chakra convert writes them (its comm groups taken
// and said) and .et.gz files under a prefix; both spellings run the same. Output paths and mixed-up
// configuration files are refused before the run, naming what is wrong.
TEST(CliSimulate, FoldersGzipAndChecksBeforeTheRun) {
  const std::string dir = temp_dir();
  ASSERT_EQ(run({"generate", "collective", "--npus", "4", "-o", dir + "/plain/ar"}).exit_code, 0);
  const std::vector<std::string> preset = {"--preset", "astra-sim-ring-8", "--npus", "4"};
  auto simulate = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "simulate");
    args.insert(args.end(), preset.begin(), preset.end());
    return run(args);
  };
  const Result plain = simulate({"--workload", dir + "/plain/ar"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // A folder: NPU 1 gzip-compressed, a comm-group file of every NPU (as chakra convert's).
  fs::create_directories(dir + "/run");
  for (const char* npu : {"0", "2", "3"})
    fs::copy_file(dir + "/plain/ar." + npu + ".et", dir + "/run/ar." + npu + ".et");
  {
    const std::string bytes = read_raw(dir + "/plain/ar.1.et");
    gzFile gz = gzopen((dir + "/run/ar.1.et.gz").c_str(), "wb");
    ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(gz);
  }
  write_raw(dir + "/run/ar.comm_group.json", R"({"1": [0, 1, 2, 3]})");
  Result r = simulate({"--workload", dir + "/run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto astra_lines = [](const std::string& out) { return out.substr(0, out.find("summary")); };
  EXPECT_EQ(astra_lines(r.out), astra_lines(plain.out));
  EXPECT_TRUE(contains(r.err, "note: workload " + dir + "/run: NPUs 0..3 read " + dir + "/run/ar.0.et to " + dir +
                                  "/run/ar.3.et; communicator groups from " + dir + "/run/ar.comm_group.json"))
      << r.err;
  // The prefix reads PREFIX.1.et.gz too; with both .et and .et.gz of an NPU, which one is meant is unknown.
  r = simulate({"--workload", dir + "/run/ar", "--times-out", dir + "/out/sim/ar"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(astra_lines(r.out), astra_lines(plain.out));
  EXPECT_TRUE(fs::exists(dir + "/out/sim/ar.1.et"));
  fs::copy_file(dir + "/plain/ar.1.et", dir + "/run/ar.1.et");
  r = simulate({"--workload", dir + "/run/ar"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, dir + "/run/ar.1.et and " + dir + "/run/ar.1.et.gz both exist")) << r.err;
  r = simulate({"--workload", dir + "/run"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, dir + "/run: two traces of NPU 1, ar.1.et and ar.1.et.gz")) << r.err;
  fs::remove(dir + "/run/ar.1.et");
  // A folder of 4 traces on a network of 8; a folder without traces.
  r = run({"simulate", "--workload", dir + "/run", "--preset", "astra-sim-ring-8"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err,
                       "traces for 4 NPUs, the network has 8 "
                       "(with --preset, --npus 4 fits its network to them)"))
      << r.err;
  r = simulate({"--workload", dir + "/out"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, dir + "/out: no per-NPU traces (STEM.<npu>.et or .et.gz) in this folder")) << r.err;

  // Outputs that cannot be written are named before anything runs (no ASTRA-sim lines yet).
  for (const auto& [option, path, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--json", dir + "/missing/r.json", ": no folder " + dir + "/missing"},
           {"--timeline", dir + "/run", ": is a folder"},
           {"--json", dir + "/run/ar.0.et/r.json", " is not a folder"}}) {
    r = simulate({"--workload", dir + "/run", option, path});
    EXPECT_EQ(r.exit_code, 1) << option << " " << path;
    EXPECT_TRUE(contains(r.err, option + " " + path)) << r.err;
    EXPECT_TRUE(contains(r.err, why)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // A system JSON given as --network, a network YAML as --system: said so, with what they have.
  const std::string sys = shared("reference/astra-sim/inputs/sys/ring_s4_c1.json");
  const std::string net = shared("reference/astra-sim/inputs/net/ring_8.yml");
  r = run({"simulate", "--workload", dir + "/run", "--system", sys, "--network", sys});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, sys + " is an ASTRA-sim system config (it has scheduling-policy, ")) << r.err;
  EXPECT_TRUE(contains(r.err, "given as --network, which takes an ASTRA-sim network config; give it as --system"))
      << r.err;
  r = run({"simulate", "--workload", dir + "/run", "--system", net, "--network", net});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, net + " is an ASTRA-sim network config (it has topology, npus_count), given as --system, "
                                    "which takes an ASTRA-sim system config; give it as --network"))
      << r.err;
}

TEST(CliConvert, SimulatePrintsTheToySchedulerAndNeedsOneTrace) {
  std::string dir = temp_dir();
  const std::string in = shared("reference/chakra/inputs/1.0.2-chakra.0.0.4.json");
  Result r = run({"convert", "pytorch", in, "-o", dir + "/a.et", "--simulate"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(
      r.out, "Issuing CPU Node ID 2 ([pytorch|profiler|execution_trace|thread]) at 0us with duration 0us, tid: 1\n"))
      << r.out.substr(0, 300);
  EXPECT_TRUE(contains(r.out, "CPU Node ID 296 completed at 262us, tid: 1\n"));
  r = run({"convert", "pytorch", shared("data/pairs"), "-o", dir + "/b", "--simulate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--simulate takes a single trace")) << r.err;
}

TEST(CliSynth, WritesEveryRankAndTheCommGroupsThenSimulates) {
  std::string dir = temp_dir();
  Result r =
      run({"synth",    "--model", "gpt",      "--dp",    "2",     "--tp",           "2",       "--pp",        "2",
           "--layers", "4",       "--hidden", "1024",    "--ffn", "4096",           "--heads", "16",          "--seq",
           "512",      "--batch", "8",        "--vocab", "32000", "--stage-compat", "-o",      dir + "/out/w"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "8 ranks (2 pipeline stages, 93/95 nodes per rank)")) << r.err;
  for (int rank = 0; rank < 8; ++rank)
    EXPECT_EQ(chakra::read_et(dir + "/out/w." + std::to_string(rank) + ".et").size(), rank < 4 ? 93u : 95u);
  EXPECT_EQ(nlohmann::json::parse(read_raw(dir + "/out/w.comm_group.json")),
            nlohmann::json::parse(read_raw(shared("reference/stage/small_gpt_dp2_tp2_pp2/workload.json"))));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir + "/out"), fs::directory_iterator()),
            9);  // no temporary files left

  // A preset with overrides, simulated with roofline compute.
  r = run({"synth", "--preset", "llama2-7b", "--layers", "2", "--seq", "512", "--batch", "4", "--micro-batches", "2",
           "--dp", "2", "--tp", "2", "-o", dir + "/l/w", "--comm-groups", dir + "/l/groups.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  {
    chakra::OutputFile net(dir + "/l/net.yml");
    net.write("topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
    net.commit();
  }
  r = run({"simulate", "--workload", dir + "/l/w", "--system",
           shared("reference/astra-sim/inputs/sys/h100_roofline.json"), "--network", dir + "/l/net.yml", "--comm-group",
           dir + "/l/groups.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sys[3] finished")) << r.out;

  r = run({"synth", "--list-presets"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "llama3-70b\n")) << r.out;
}

TEST(CliSynth, BadOptionsExitWithTheReasonAndWriteNothing) {
  std::string dir = temp_dir();
  Result r = run({"synth", "--model", "llama", "--heads", "16", "--tp", "32", "-o", dir + "/w"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--heads (16) is not divisible by --tp (32)")) << r.err;
  r = run({"synth", "--model", "bert", "-o", dir + "/w"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--model: unknown value 'bert' (gpt, llama, moe)")) << r.err;
  r = run({"synth", "--preset", "gpt5", "-o", dir + "/w"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "unknown preset 'gpt5'")) << r.err;
  write_raw(dir + "/file", "x");  // an output folder that cannot be created: an error, not an abort
  r = run({"synth", "--model", "gpt", "--layers", "2", "--hidden", "64", "--ffn", "128", "--heads", "2", "--seq", "16",
           "--batch", "4", "--vocab", "100", "-o", dir + "/file/w"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "/file: cannot create the output folder: Not a directory")) << r.err;
  r = run({"generate", "collective", "--npus", "2", "-o", dir + "/file/ar"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "Not a directory")) << r.err;
  std::filesystem::remove(dir + "/file");
  r = run({"synth", "--tp", "2", "-o", dir + "/w"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "give --model or --preset")) << r.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 0);
}

TEST(CliStableHlo, ImportWritesEveryDeviceAndTheCommGroups) {
  const std::string dir = temp_dir();
  Result r = run({"import", "stablehlo", shared("reference/stablehlo/ttmlir__e2e_fsdp_tp_shardy.mlir"), "--device",
                  "a100", "-o", dir + "/out/fsdp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "20 collectives) on 8 device(s)")) << r.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir + "/out"), fs::directory_iterator()),
            9);  // 8 traces + groups, no temporaries
  EXPECT_EQ(nlohmann::json::parse(read_raw(dir + "/out/fsdp.comm_group.json")),
            nlohmann::json::parse(
                R"({"1": [0, 4], "2": [1, 5], "3": [2, 6], "4": [3, 7], "5": [0, 1, 2, 3], "6": [4, 5, 6, 7]})"));
  std::vector<std::string> args = {"validate"};
  for (int d = 0; d < 8; ++d) args.push_back(dir + "/out/fsdp." + std::to_string(d) + ".et");
  r = run(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The traces simulate with our own simulator, as ASTRA-sim would read them.
  r = run({"simulate", "--workload", dir + "/out/fsdp", "--system",
           shared("reference/astra-sim/inputs/sys/h100_roofline.json"), "--network",
           assets("stablehlo/networks/a100_4gpu.yml"), "--comm-group", dir + "/out/fsdp.comm_group.json"});
  EXPECT_EQ(r.exit_code, 1);  // 4 NPUs in that network, 8 devices here: refused, not misread
  r = run({"import", "stablehlo", shared("reference/stablehlo/ttmlir__e2e_fsdp_tp_shardy.mlir"), "--devices", "4", "-o",
           dir + "/x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--devices 4 but the program is partitioned for 8 devices")) << r.err;
}

TEST(CliStableHlo, PredictPrintsTheBreakdownAndJsonEqualToTheLibrary) {
  const std::string program = shared("reference/stablehlo/hespas__resnet_50_train_step_4_devices_1024_batch.mlir");
  const std::string net = assets("stablehlo/networks/a100_4gpu.yml");
  Result r = run({"predict", program, "--device", "a100", "--network", net});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "predicted step time")) << r.out;
  EXPECT_TRUE(contains(r.out, "convolution")) << r.out;
  EXPECT_TRUE(contains(r.out, "all_reduce                   375")) << r.out;
  r = run({"predict", program, "--device", "a100", "--network", net, "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const chakra::stablehlo::Analysis a = chakra::stablehlo::analyze(chakra::stablehlo::load_program(program));
  const chakra::stablehlo::DeviceSpec d = chakra::stablehlo::device_preset("a100");
  const chakra::astra::NetworkConfig n = chakra::astra::load_network(net);
  const chakra::stablehlo::Prediction p = chakra::stablehlo::predict(a, d, n, chakra::stablehlo::default_system(n, d));
  EXPECT_EQ(j["step_s"].get<double>(), p.step_s);
  EXPECT_EQ(j["compute_s"].get<double>(), p.compute_s);
  EXPECT_EQ(j["collectives"]["all_reduce"]["count"], 375);
  EXPECT_EQ(j["devices"], 4);
  // Unfused, every elementwise op pays for all its operands and results: a longer step.
  r = run({"predict", program, "--device", "a100", "--network", net, "--no-fusion", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["classes"]["elementwise"]["bytes"].get<double>(),
            j["classes"]["elementwise"]["bytes"].get<double>());
  // The JSON names the constants it used; --roofline sets them to peaks and no overhead, as the
  // library's EfficiencyModel::roofline() does.
  EXPECT_EQ(j["model"]["gemm_efficiency"].get<double>(), d.model.gemm);
  EXPECT_EQ(j["classes"]["convolution"]["kernels"], 158);
  r = run({"predict", program, "--device", "a100", "--network", net, "--roofline", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json roof = nlohmann::json::parse(r.out);
  chakra::stablehlo::DeviceSpec peak = d;
  peak.model = chakra::stablehlo::EfficiencyModel::roofline();
  EXPECT_EQ(roof["compute_s"].get<double>(),
            chakra::stablehlo::predict(a, peak, n, chakra::stablehlo::default_system(n, peak)).compute_s);
  EXPECT_EQ(roof["model"]["kernel_overhead_s"].get<double>(), 0);
  EXPECT_LT(roof["compute_s"].get<double>(), j["compute_s"].get<double>());
  // --list-devices needs no program; without it and without a program, a usage error.
  r = run({"predict", "--list-devices"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "2250.0 TFLOP/s")) << r.out;  // B200's dense bf16 peak
  EXPECT_TRUE(contains(r.out, "efficiency model")) << r.out;
  r = run({"predict", "--network", net});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "PROGRAM")) << r.err;
}

TEST(CliStableHlo, BadInputsExitWithTheReason) {
  const std::string dir = temp_dir();
  const std::string program = shared("reference/stablehlo/hespas__test_split_replica_groups.mlir");
  Result r = run({"predict", program, "--device", "z80", "--network", assets("stablehlo/networks/a100_4gpu.yml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "unknown device 'z80' (known: a100")) << r.err;
  r = run({"predict", program, "--network", assets("stablehlo/networks/tpuv3_8.yml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "the network has 8 NPUs but")) << r.err;
  write_raw(dir + "/model.mlirbc", std::string("ML\xef"
                                               "R\x00\x05stablehlo",
                                               16));
  r = run({"import", "stablehlo", dir + "/model.mlirbc", "-o", dir + "/w"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "MLIR bytecode")) << r.err;
  write_raw(dir + "/bad.mlir", "module @m {\n  func.func @main() {\n    %0 = stablehlo.add %x, %x : tensor<f32>\n");
  r = run({"import", "stablehlo", dir + "/bad.mlir", "-o", dir + "/w"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "bad.mlir:4:1: region is not closed")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/w.0.et"));
  r = run({"import", "onnx", program});
  EXPECT_EQ(r.exit_code, 2);
}

// Each case of the hostile-input corpus (tests/data/hostile/cases.tsv): the command's exit
// status and message, the message naming the file, printable output, no output left behind
// by a failure; and no file of the corpus left out of the list.
TEST(Cli, HostileCorpus) {
  const std::string dir = std::string(CHAKRA_SOURCE_DIR) + "/tests/data/hostile";
  auto fill = [&](std::string text, const std::string& file, const std::string& out) {
    // A per-NPU workload case lists its NPU 0 file; {prefix} is the workload prefix.
    const std::string prefix =
        file.size() > 5 && file.compare(file.size() - 5, 5, ".0.et") == 0 ? file.substr(0, file.size() - 5) : file;
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"{ok}", dir + "/ok"}, {"{out}", out}, {"{prefix}", prefix}, {"{}", file}})
      for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
  };
  std::set<std::string> listed;
  int cases = 0;
  std::istringstream lines(read_raw(dir + "/cases.tsv"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> field;
    for (size_t start = 0;;) {
      size_t tab = line.find('\t', start);
      field.push_back(line.substr(start, tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    ASSERT_EQ(field.size(), 4u) << "cases.tsv: " << line;
    const std::string& name = field[0];
    SCOPED_TRACE(name + ": chakra " + field[2]);
    listed.insert(name);
    ++cases;
    const std::string file = dir + "/" + name, out_dir = temp_dir();
    ASSERT_TRUE(fs::is_regular_file(file)) << "cases.tsv lists a missing file";
    std::vector<std::string> args;
    std::istringstream words(fill(field[2], file, out_dir + "/out"));
    for (std::string w; words >> w;) args.push_back(w);
    Result r = run(args);
    const std::string expected = fill(field[3], file, out_dir + "/out"), all = r.out + r.err;
    EXPECT_EQ(r.exit_code, std::stoi(field[1])) << all;
    EXPECT_TRUE(contains(all, expected)) << "expected: " << expected << "\ngot: " << all;
    const bool per_npu = contains(field[2], "{prefix}");
    const std::string named = per_npu ? fill("{prefix}", file, "") : file;
    if (per_npu) listed.insert(name.substr(0, name.size() - 5) + ".1.et");
    if (!contains(field[3], "{ok}")) {
      EXPECT_TRUE(contains(all, named)) << "the message does not name the file:\n" << all;
    }
    EXPECT_EQ(std::count_if(all.begin(), all.end(),
                            [](char c) { return (c >= 0 && c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }),
              0)
        << "control characters in the output:\n"
        << all;
    if (r.exit_code != 0) {
      EXPECT_TRUE(fs::is_empty(out_dir)) << "a failed run left output behind";
    }
  }
  EXPECT_GE(cases, 70);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(entry.path(), dir).string();
    if (entry.is_regular_file() && rel.rfind("ok/", 0) != 0 && rel != "cases.tsv" && rel != "make_corpus.py") {
      EXPECT_TRUE(listed.count(rel)) << rel << " is in the corpus but not in cases.tsv";
    }
  }
}

// HTA's analyses: a Kineto trace alone and the same run linked and converted give the same
// figures, HTA's (reference/hta); files analyze cannot read are named.
TEST(CliAnalyze, KinetoAndItsConvertedTraceGiveHtasFigures) {
  const std::string pair = std::string(CHAKRA_SOURCE_DIR) + "/assets/examples/dlrm_rank0_pair";
  const std::string host = pair + "/dlrm_eg_0.json.gz",
                    kineto = pair + "/worker0_step_12.1694128201545.pt.trace.json.gz";
  const std::string dir = temp_dir();
  ASSERT_EQ(run({"link", "--host", host, "--device", kineto, "-o", dir + "/linked.json", "--sync-deps"}).exit_code, 0);
  ASSERT_EQ(run({"convert", "pytorch", dir + "/linked.json", "-o", dir + "/rank0.et"}).exit_code, 0);
  Result from_kineto = run({"analyze", "--json", kineto});
  ASSERT_EQ(from_kineto.exit_code, 0) << from_kineto.err;
  Result from_et = run({"analyze", "--json", dir + "/rank0.et"});
  ASSERT_EQ(from_et.exit_code, 0) << from_et.err;
  auto a = nlohmann::json::parse(from_kineto.out)["ranks"][0], b = nlohmann::json::parse(from_et.out)["ranks"][0];
  for (const char* key :
       {"span", "idle", "compute", "non_compute", "communication", "communication_overlapped", "by_kinds"})
    EXPECT_EQ(a[key], b[key]) << key;
  // HTA's temporal breakdown of the same Kineto trace (rank 0 of the DLRM set).
  const std::vector<double> hta =
      testing_support::csv_numbers(shared("reference/hta/dlrm_8rank_v100/temporal_breakdown.csv"), "0");
  ASSERT_GE(hta.size(), 5u);
  EXPECT_EQ(a["idle"].get<double>(), hta[1]);
  EXPECT_EQ(a["compute"].get<double>(), hta[2]);
  EXPECT_EQ(a["non_compute"].get<double>(), hta[3]);
  EXPECT_EQ(a["span"].get<double>(), hta[4]);
  // Collectives by type and size: every bucket holds sizes in [size_from, 2 × size_from), and
  // together they count the trace's collectives (info's count).
  auto et = nlohmann::json::parse(from_et.out)["collectives"];
  ASSERT_FALSE(et.empty());
  uint64_t buckets_count = 0;
  for (const auto& b : et) {
    const uint64_t from = b["size_from"], count = b["count"], bytes = b["bytes"];
    EXPECT_GE(bytes, count * from) << b;
    EXPECT_LT(bytes, count * 2 * from) << b;
    EXPECT_GT(b["time"].get<uint64_t>(), 0u);
    buckets_count += count;
  }
  Result info = run({"info", "--json", dir + "/rank0.et"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto summary = nlohmann::json::parse(info.out)[0]["summary"];
  uint64_t collectives = 0;
  for (const auto& c : summary["collectives"]) collectives += c["count"].get<uint64_t>();
  EXPECT_EQ(buckets_count, collectives);
  // The text report names each rank's file and its top kernels.
  Result text = run({"analyze", "--top", "3", kineto});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "ncclKernel_SendRecv")) << text.out;
  EXPECT_TRUE(contains(text.out, "COMPUTATION overlapping COMMUNICATION")) << text.out;
  // A folder: host ETs are skipped with a note; named directly, one is an error.
  fs::create_directories(dir + "/run");
  fs::copy_file(host, dir + "/run/dlrm_eg_0.json.gz");
  fs::copy_file(kineto, dir + "/run/worker0_step_12.1694128201545.pt.trace.json.gz");
  Result folder = run({"analyze", "--json", dir + "/run"});
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  auto f = nlohmann::json::parse(folder.out);
  EXPECT_EQ(f["ranks"].size(), 1u);
  EXPECT_TRUE(contains(f["notes"][0].get<std::string>(), "dlrm_eg_0.json.gz: skipped (a PyTorch host ET)"))
      << f["notes"];
  Result bad = run({"analyze", host});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad.err, "a host ET's GPU work is in its Kineto trace")) << bad.err;
  // The same rank twice, and a trace without measured times.
  bad = run({"analyze", kineto, dir + "/rank0.et"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad.err, "rank 0 twice")) << bad.err;
  bad = run({"analyze", example(0)});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad.err, "no GPU op with a measured start time")) << bad.err;
  EXPECT_TRUE(bad.out.empty());
}

// The critical path across the 8 measured DLRM ranks: its steps cover the step (first start to
// last end over every rank) exactly, it crosses ranks, and what-if along it shortens the step by
// the matching steps' saved time.
TEST(CliAnalyze, CriticalPathAcrossMeasuredRanks) {
  Result r = run(
      {"analyze", "--critical-path", "--json", "--what-if", "cudaMemcpyAsync=2", shared("data/pairs/dlrm_8rank_v100")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& p = j["critical_path"];
  uint64_t sum = 0, matching = 0;
  std::set<uint64_t> ranks;
  for (const nlohmann::json& s : p["steps"]) {
    sum += s["duration"].get<uint64_t>();
    ranks.insert(s["rank"].get<uint64_t>());
    if (s["name"].is_string() && contains(s["name"].get<std::string>(), "cudaMemcpyAsync"))
      matching += s["duration"].get<uint64_t>();
  }
  EXPECT_EQ(sum, p["step"].get<uint64_t>());
  EXPECT_EQ(p["end"].get<uint64_t>() - p["begin"].get<uint64_t>(), sum);
  EXPECT_GT(ranks.size(), 1u);
  EXPECT_TRUE(p["complete"].get<bool>());
  EXPECT_GT(matching, 0u);
  EXPECT_NEAR(j["what_if"]["estimated_step"].get<double>(), double(sum) - double(matching) / 2, 1.0);
  Result text = run({"analyze", "--critical-path", "--top", "5", shared("data/pairs/dlrm_8rank_v100")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "critical path across 8 ranks: step " + std::to_string(sum) + " µs")) << text.out;
  EXPECT_TRUE(contains(text.out, "the 5 longest steps")) << text.out;
  // CSV: the steps (their durations sum to the step), and the temporal breakdown per rank.
  Result csv = run({"analyze", "--critical-path", "--csv", shared("data/pairs/dlrm_8rank_v100")});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<double> durations = csv_numbers_of(csv.out, "duration_us");
  EXPECT_EQ(durations.size(), p["steps"].size());
  EXPECT_EQ(std::accumulate(durations.begin(), durations.end(), 0.0), static_cast<double>(sum));
  csv = run({"analyze", "--csv", shared("data/pairs/dlrm_8rank_v100")});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const nlohmann::json breakdown =
      nlohmann::json::parse(run({"analyze", "--json", shared("data/pairs/dlrm_8rank_v100")}).out);
  const std::vector<double> spans = csv_numbers_of(csv.out, "span_us"),
                            exposed = csv_numbers_of(csv.out, "exposed_communication_us");
  ASSERT_EQ(spans.size(), 8u);
  for (size_t r = 0; r < 8; ++r) {
    EXPECT_EQ(spans[r], breakdown["ranks"][r]["span"].get<double>());
    EXPECT_EQ(exposed[r], breakdown["ranks"][r]["exposed_communication"].get<double>());
  }
  EXPECT_EQ(run({"analyze", "--what-if", "x", shared("data/pairs/dlrm_8rank_v100")}).exit_code, 2);
  EXPECT_EQ(run({"analyze", "--what-if", "x=0", shared("data/pairs/dlrm_8rank_v100")}).exit_code, 2);
}

// Kernels: a communication library's (DeepEP's dispatch) counts as communication, and a name no
// pattern knows is listed in --json's unknown_kernels; a trace without GPU ops says what it records
// (an MTIA trace) and a file of another kind is named with its article.
TEST(CliAnalyze, KernelKindsUnknownKernelsAndTracesWithoutGpuOps) {
  const std::string dir = temp_dir();
  auto kernel = [](const std::string& name, int ts) {
    return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": 0, "tid": 7, "ts": )" +
           std::to_string(ts) + R"(, "dur": 10, "args": {"stream": 7, "correlation": )" + std::to_string(ts) + "}}";
  };
  const std::string deep_ep = "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)";
  write_raw(dir + "/rank0.json", R"({"distributedInfo": {"rank": 0}, "traceEvents": [)" + kernel(deep_ep, 100) + ", " +
                                     kernel("myfabric_ring_exchange(int*)", 120) + ", " +
                                     kernel("volta_sgemm_128x64_nn", 140) + "]}");
  Result r = run({"analyze", "--json", dir + "/rank0.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rank = nlohmann::json::parse(r.out)["ranks"][0];
  EXPECT_EQ(rank["unknown_kernels"], nlohmann::json::array({"myfabric_ring_exchange(int*)"}));
  std::map<std::string, std::string> kinds;
  for (const auto& n : rank["names"]) kinds[n["name"]] = n["kind"];
  EXPECT_EQ(kinds[deep_ep], "COMMUNICATION");
  EXPECT_EQ(kinds["volta_sgemm_128x64_nn"], "COMPUTATION");
  EXPECT_EQ(rank["communication"], 10);

  // MTIA's events (Kineto's mtia_* activity types): not "no GPU op" but what the trace is.
  write_raw(dir + "/mtia.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "mm_kernel", "pid": 2, "tid": 7, "ts": 12, "dur": 3}]})");
  r = run({"analyze", dir + "/mtia.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(
      contains(r.err, dir + "/mtia.json: no GPU op: an MTIA trace (mtia_* events), not a CUDA or ROCm one: "
                            "its events are cpu_op 1, mtia_ccp_events 1; the analyses read kernel, gpu_memcpy and "
                            "gpu_memset events"))
      << r.err;
  EXPECT_TRUE(r.out.empty());
  // Host-side events only: profile with GPU activities.
  r = run({"analyze", shared("data/kineto/hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "it records only host-side events (user_annotation 11, cpu_op 4, Trace 1)")) << r.err;
  // A system JSON named as a trace: "an ASTRA-sim system config", never "a ASTRA-sim".
  r = run({"analyze", shared("reference/astra-sim/inputs/sys/ring_s4_c1.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "ring_s4_c1.json: an ASTRA-sim system config, not a trace this command reads")) << r.err;
}

// Trace diff: a trace against itself differs nowhere; against a copy with one op's durations
// doubled, exactly that op differs, by its own total.
TEST(CliDiff, SelfIsAllZerosAndADoubledOpIsTheOnlyChange) {
  const std::string pair = std::string(CHAKRA_SOURCE_DIR) + "/assets/examples/dlrm_rank0_pair";
  const std::string kineto = pair + "/worker0_step_12.1694128201545.pt.trace.json.gz";
  const std::string dir = temp_dir();
  ASSERT_EQ(run({"link", "--host", pair + "/dlrm_eg_0.json.gz", "--device", kineto, "-o", dir + "/linked.json",
                 "--sync-deps"})
                .exit_code,
            0);
  ASSERT_EQ(run({"convert", "pytorch", dir + "/linked.json", "-o", dir + "/rank0.et"}).exit_code, 0);
  Result self = run({"diff", "--json", dir + "/rank0.et", dir + "/rank0.et"});
  ASSERT_EQ(self.exit_code, 0) << self.err;
  auto s = nlohmann::json::parse(self.out)["ranks"][0];
  EXPECT_EQ(s["changed"], 0);
  EXPECT_EQ(s["step_a"], s["step_b"]);
  EXPECT_GT(s["names"].size(), 100u);
  for (const auto& n : s["names"]) EXPECT_EQ(n["delta"], 0) << n["name"];
  // Double every "volta_sgemm_128x32_nt" kernel (as text: jsonize, edit, dejsonize).
  ASSERT_EQ(run({"jsonize", dir + "/rank0.et", dir + "/rank0.json"}).exit_code, 0);
  auto doc = nlohmann::json::parse(read_raw(dir + "/rank0.json"));
  const std::string op = "volta_sgemm_128x32_nt";
  uint64_t doubled = 0, count = 0;
  for (auto& node : doc["nodes"])
    if (node["name"] == op) {
      const uint64_t d = node["durationMicros"].get<uint64_t>();
      node["durationMicros"] = 2 * d;
      doubled += d;
      ++count;
    }
  ASSERT_GT(doubled, 0u);
  write_raw(dir + "/slower.json", doc.dump());
  ASSERT_EQ(run({"dejsonize", dir + "/slower.json", dir + "/slower.et"}).exit_code, 0);
  Result slower = run({"diff", "--json", dir + "/rank0.et", dir + "/slower.et"});
  ASSERT_EQ(slower.exit_code, 0) << slower.err;
  auto d = nlohmann::json::parse(slower.out)["ranks"][0];
  EXPECT_EQ(d["changed"], 1);
  const auto& first = d["names"][0];
  EXPECT_EQ(first["name"], op);
  EXPECT_EQ(first["count_a"], count);
  EXPECT_EQ(first["count_b"], count);
  EXPECT_EQ(first["delta"].get<int64_t>(), static_cast<int64_t>(doubled));
  EXPECT_DOUBLE_EQ(first["delta_percent"].get<double>(), 100.0);
  EXPECT_EQ(first["status"], "changed");
  for (size_t i = 1; i < d["names"].size(); ++i) EXPECT_EQ(d["names"][i]["status"], "same") << d["names"][i]["name"];
  // The text report leads with it; folders without a common rank are an error.
  Result text = run({"diff", dir + "/rank0.et", dir + "/slower.et"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "1 of ")) << text.out;
  EXPECT_TRUE(contains(text.out, "+100%  volta_sgemm_128x32_nt")) << text.out;
  fs::create_directories(dir + "/a");
  fs::create_directories(dir + "/b");
  fs::copy_file(dir + "/rank0.et", dir + "/a/trace.0.et");
  fs::copy_file(dir + "/rank0.et", dir + "/a/trace.1.et");
  fs::copy_file(dir + "/slower.et", dir + "/b/trace.2.et");
  fs::copy_file(dir + "/slower.et", dir + "/b/trace.3.et");
  Result apart = run({"diff", dir + "/a", dir + "/b"});
  EXPECT_EQ(apart.exit_code, 1);
  EXPECT_TRUE(contains(apart.err, "no rank in common")) << apart.err;
}

// ---- chakra sweep --------------------------------------------------------------------------

namespace {

// 40 points of a 64-NPU all-reduce on the congestion-aware network: each takes tens of ms, so a
// run can be stopped part way.
const char* kSlowSweep = R"(workload:
  collective: {type: all_reduce, size: 256MiB, npus: 64}
network: {topology: [Switch], npus: [64], bandwidth: [50], latency: [500]}
system: {preset: astra-sim-ring-8, preferred-dataset-splits: 16, all-reduce-implementation: [ring]}
backend: aware
axes:
  network.bandwidth: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
  network.latency: [100, 200, 300, 400]
)";

size_t lines_in(const std::string& path) {
  const std::string text = fs::exists(path) ? read_raw(path) : "";
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Starts `chakra sweep` and sends `sig` once the table has `rows` rows; its exit code.
int sweep_stopped_by(int sig, const std::string& spec, const std::string& out, size_t rows) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(CHAKRA_BIN, CHAKRA_BIN, "sweep", spec.c_str(), "-o", out.c_str(), "--jobs", "1", "--no-timing",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int waited = 0; lines_in(out + ".jsonl") < rows && waited < 6000; ++waited) usleep(10 * 1000);
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// Shards anywhere, merged: the same bytes as one run (without timing); a missing shard is named.
TEST(CliSweep, ShardsMergeIntoTheUnshardedTable) {
  const std::string dir = temp_dir(), spec = std::string(CHAKRA_SOURCE_DIR) + "/assets/sweeps/allreduce_64npus.yaml";
  Result whole = run({"sweep", spec, "-o", dir + "/whole", "--no-timing"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_TRUE(contains(whole.err, "60 points (60 in the product); 60 run")) << whole.err;
  EXPECT_EQ(lines_in(dir + "/whole.csv"), 61u);
  std::vector<std::string> parts;
  for (int i = 0; i < 7; ++i) {
    Result r = run({"sweep", spec, "-o", dir + "/part" + std::to_string(i), "--shard", std::to_string(i) + "/7",
                    "--no-timing", "--jobs", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    parts.push_back(dir + "/part" + std::to_string(i) + ".jsonl");
  }
  std::vector<std::string> merge = {"sweep", "merge", spec, "-o", dir + "/merged"};
  merge.insert(merge.end(), parts.begin(), parts.end());
  Result m = run(merge);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(read_raw(dir + "/merged.csv"), read_raw(dir + "/whole.csv"));
  EXPECT_EQ(read_raw(dir + "/merged.jsonl"), read_raw(dir + "/whole.jsonl"));
  merge.pop_back();
  m = run(merge);
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_TRUE(contains(m.err, "8 of 60 points are in no part (6, 13, 20")) << m.err;
  EXPECT_EQ(run({"sweep", spec, "-o", dir + "/x", "--shard", "7/7"}).exit_code, 2);
  // --list prints the points without running them.
  Result list = run({"sweep", spec, "-o", dir + "/x", "--list", "--shard", "0/30"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "{\"point\":0,\"workload.collective.size\":\"1MiB\",\"network.bandwidth\":[300,25],\"system.all-reduce-"
            "implementation\":[\"ring\",\"ring\"]}\n"
            "{\"point\":30,\"workload.collective.size\":\"256MiB\",\"network.bandwidth\":[300,25],\"system.all-reduce-"
            "implementation\":[\"ring\",\"ring\"]}\n");
}

// Killed part way, the rows it finished stay; --resume runs the rest, and the table is the one a
// run without interruption writes. Ctrl-C writes a valid partial table and says how to finish it.
TEST(CliSweep, ResumeAfterAKillOrCtrlC) {
  const std::string dir = temp_dir();
  const std::string spec = dir + "/slow.yaml";
  write_raw(spec, kSlowSweep);
  Result clean = run({"sweep", spec, "-o", dir + "/clean", "--no-timing"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(sweep_stopped_by(SIGKILL, spec, dir + "/killed", 3), 128 + SIGKILL);
  const size_t kept = lines_in(dir + "/killed.jsonl");
  EXPECT_GE(kept, 3u);
  EXPECT_LT(kept, 40u);
  Result resumed = run({"sweep", spec, "-o", dir + "/killed", "--no-timing", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(contains(resumed.err, "resuming: " + std::to_string(kept))) << resumed.err;
  EXPECT_EQ(read_raw(dir + "/killed.jsonl"), read_raw(dir + "/clean.jsonl"));
  EXPECT_EQ(read_raw(dir + "/killed.csv"), read_raw(dir + "/clean.csv"));

  EXPECT_EQ(sweep_stopped_by(SIGINT, spec, dir + "/stopped", 2), 130);
  const std::string partial = read_raw(dir + "/stopped.csv");
  const size_t rows = static_cast<size_t>(std::count(partial.begin(), partial.end(), '\n')) - 1;
  EXPECT_GE(rows, 2u);
  EXPECT_LT(rows, 40u);
  EXPECT_EQ(partial.substr(0, partial.find('\n')), read_raw(dir + "/clean.csv").substr(0, partial.find('\n')));
  EXPECT_EQ(lines_in(dir + "/stopped.jsonl"), rows);  // sorted and whole: the same rows as the CSV
  ASSERT_EQ(run({"sweep", spec, "-o", dir + "/stopped", "--no-timing", "--resume"}).exit_code, 0);
  EXPECT_EQ(read_raw(dir + "/stopped.csv"), read_raw(dir + "/clean.csv"));
  // Resuming with another spec's table is refused.
  write_raw(dir + "/other.yaml", std::string(kSlowSweep) + "  network.npus: [[64]]\n");
  Result other = run({"sweep", dir + "/other.yaml", "-o", dir + "/clean", "--resume"});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_TRUE(contains(other.err, "rows of another spec")) << other.err;
}

// Failing points are rows with their error; bad specs are errors naming the file and line.
// --list prints the points and writes nothing, so it needs no -o; a run without -o is a usage error.
// A folder of traces is a workload as for chakra simulate.
// chakra suite list: the built-in suite finds the measured runs it projects, with the content it
// names; a suite naming other content for a run is a problem, exit 1.
TEST(CliSuite, ListChecksEachMeasuredRunsContent) {
  Result r = run({"suite", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  for (const char* w : {"recommendation", "vision", "dense-llm", "moe", "long-context"})
    EXPECT_TRUE(contains(r.out, w)) << w;
  EXPECT_TRUE(contains(r.out, "dlrm_8rank: its content has the SHA-256 the suite names")) << r.out;
  EXPECT_TRUE(contains(r.out, "resnet50_dp_64npus: its content has the SHA-256 the suite names")) << r.out;
  const std::string dir = temp_dir();
  write_raw(dir + "/suite.yaml",
            "suite: s\nreference: {preset: h100-ib-2x8}\nworkloads:\n  - name: r\n"
            "    class: vision\n    workload: {project: {traces: " CHAKRA_SOURCE_DIR
            "/assets/examples/resnet50_dp_64npus, sha256: '" +
                std::string(64, 'a') + "', dp: [0]}}\n    scales: {64: {project: {to: 64}}}\n");
  r = run({"suite", "list", "--suite", dir + "/suite.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "PROBLEM: its files' SHA-256 is ")) << r.out;
}

// chakra suite run: a suite definition run on a system given as files and on its reference; the
// result records the scores and what was run, the same bytes whatever --jobs.
TEST(CliSuite, RunScoresASystemAgainstTheReference) {
  const std::string dir = temp_dir();
  write_raw(dir + "/suite.yaml",
            "suite: test-suite-v0\nreference: {preset: h100-ib-2x8}\n"
            "workloads:\n  - name: tiny\n    class: dense-llm\n"
            "    workload: {synth: {model: llama, layers: 1, hidden: 256, ffn: 512, heads: 4, seq: 128, vocab: 500}}\n"
            "    scales: {16: {synth: {dp: 16, batch: 16}}, 32: {synth: {dp: 32, batch: 32}}}\n");
  write_raw(dir + "/net.yml",
            "topology: [Switch, Switch]\nnpus_count: [8, 2]\nbandwidth: [900, 100]\nlatency: [500, 2000]\n");
  write_raw(dir + "/sys.json",
            R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring", "ring"],
                "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
                "all-to-all-implementation": ["direct", "direct"], "collective-optimization": "localBWAware",
                "local-mem-bw": 3350, "peak-perf": 989})");
  Result r = run({"suite", "run", "--suite", dir + "/suite.yaml", "--network", dir + "/net.yml", "--system",
                  dir + "/sys.json", "--name", "twice the links", "-o", dir + "/r1.json", "--jobs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "test-suite-v0 on twice the links")) << r.out;
  const nlohmann::json result = nlohmann::json::parse(read_raw(dir + "/r1.json"));
  ASSERT_EQ(result["entries"].size(), 2u);
  for (const auto& e : result["entries"]) EXPECT_GT(e["score"].get<double>(), 1.0) << e.dump();
  EXPECT_EQ(result["system"]["name"], "twice the links");
  EXPECT_TRUE(contains(result["system"]["network"].get<std::string>(), "bandwidth: [900, 100]"));
  r = run({"suite", "run", "--suite", dir + "/suite.yaml", "--network", dir + "/net.yml", "--system", dir + "/sys.json",
           "--name", "twice the links", "-o", dir + "/r2.json", "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/r1.json"), read_raw(dir + "/r2.json"));
  r = run({"suite", "run", "--suite", dir + "/suite.yaml", "--network", dir + "/net.yml", "-o", dir + "/r3.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "give --network NET.yml and --system SYS.json, or --preset")) << r.err;
  EXPECT_EQ(run({"suite", "bogus"}).exit_code, 2);

  // verify: the result as written passes; any figure edited, or the system's configuration, is
  // named; a result of another suite definition is refused.
  r = run({"suite", "verify", "--suite", dir + "/suite.yaml", dir + "/r1.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "r1.json: verified")) << r.out;
  nlohmann::json tampered = result;
  tampered["entries"][1]["step_ns"] = tampered["entries"][1]["step_ns"].get<uint64_t>() - 1;
  write_raw(dir + "/step.json", tampered.dump(1));
  tampered = result;
  tampered["overall"] = tampered["overall"].get<double>() * 1.01;
  write_raw(dir + "/overall.json", tampered.dump(1));
  tampered = result;
  std::string net = tampered["system"]["network"];
  net.replace(net.find("900"), 3, "950");
  tampered["system"]["network"] = net;
  write_raw(dir + "/network.json", tampered.dump(1));
  r = run({"suite", "verify", "--suite", dir + "/suite.yaml", dir + "/step.json", dir + "/overall.json",
           dir + "/network.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "step.json: NOT verified: entries[1].step_ns:")) << r.out;
  EXPECT_TRUE(contains(r.out, "overall.json: NOT verified: overall:")) << r.out;
  EXPECT_TRUE(contains(r.out, "network.json: NOT verified: system.hash:")) << r.out;
  write_raw(dir + "/suite2.yaml", read_raw(dir + "/suite.yaml") + "# edited\n");
  r = run({"suite", "verify", "--suite", dir + "/suite2.yaml", dir + "/r1.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "NOT verified: made with another suite definition")) << r.out;

  // board: verified results ranked by overall score; a tampered one or one of another suite is refused.
  r = run({"suite", "run", "--suite", dir + "/suite.yaml", "--preset", "h100-ib-2x8", "-o", dir + "/ref.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"suite", "board", "--suite", dir + "/suite.yaml", dir + "/ref.json", dir + "/r1.json", "-o", dir + "/b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_raw(dir + "/b.csv");
  EXPECT_TRUE(contains(csv, "rank,system,overall,dense-llm,system_hash,suite,tool\n1,twice the links,")) << csv;
  EXPECT_TRUE(contains(csv, "\n2,h100-ib-2x8,1.000,1.000,")) << csv;
  EXPECT_TRUE(contains(read_raw(dir + "/b.html"), "<td>twice the links</td>"));
  EXPECT_TRUE(contains(read_raw(dir + "/b.md"), "| 2 | h100-ib-2x8 | 1.000 | 1.000 |"));
  // BOARD.json: the results whole, best first, as the page opens them.
  const chakra::suite::Board b = chakra::suite::read_board(read_raw(dir + "/b.json"), "b.json");
  ASSERT_EQ(b.results.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(b.results[0].dump()), result);
  EXPECT_EQ(b.sources[1], "b.json: " + dir + "/ref.json");
  r = run({"suite", "board", "--suite", dir + "/suite.yaml", dir + "/ref.json", dir + "/step.json", "-o", dir + "/c"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "step.json: not verified, so not on the board")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/c.csv"));
}

// chakra suite run --shard i/K writes parts that chakra suite merge joins into the bytes one run
// writes; a part missing, given twice, of another suite or of another system is refused, named;
// --slurm submits the shards as an array and the merge as its gather job.
TEST(CliSuite, ShardsMergeIntoTheResultOfOneRun) {
  const std::string dir = temp_dir();
  const std::string suite =
      "suite: shard-suite-v0\nreference: {preset: h100-ib-2x8}\nworkloads:\n  - name: tiny\n    class: dense-llm\n"
      "    workload: {synth: {model: llama, layers: 1, hidden: 256, ffn: 512, heads: 4, seq: 128, vocab: 500}}\n"
      "    scales: {16: {synth: {dp: 16, batch: 16}}, 32: {synth: {dp: 32, batch: 32}}}\n"
      "  - name: decode\n    class: inference\n"
      "    workload: {synth: {model: llama, step: decode, sequence_parallel: false, layers: 1, hidden: 256, ffn: 512, "
      "heads: 4, seq: 128, vocab: 500, rank_order: tp-sp-ep-dp}}\n"
      "    scales: {16: {synth: {dp: 8, tp: 2, batch: 64}}}\n";
  write_raw(dir + "/suite.yaml", suite);
  const std::string s = dir + "/suite.yaml";
  Result r = run({"suite", "run", "--suite", s, "--preset", "h100-hgx-8", "-o", dir + "/whole.json", "--jobs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* shard : {"0/2", "1/2"}) {
    r = run({"suite", "run", "--suite", s, "--preset", "h100-hgx-8", "--shard", shard, "-o",
             dir + "/part" + std::string(1, shard[0]) + ".json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_TRUE(contains(r.out, "part 1/2 of the run: 1 of 3 entries")) << r.out;
  r = run({"suite", "merge", "--suite", s, "-o", dir + "/merged.json", dir + "/part1.json", dir + "/part0.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_raw(dir + "/merged.json"), read_raw(dir + "/whole.json"));
  const nlohmann::json whole = nlohmann::json::parse(read_raw(dir + "/whole.json"));
  EXPECT_EQ(whole["entries"].size(), 3u);
  EXPECT_TRUE(whole["classes"].contains("inference")) << whole.dump();

  auto merge_error = [&](std::vector<std::string> parts) {
    std::vector<std::string> argv = {"suite", "merge", "--suite", s, "-o", dir + "/bad.json"};
    for (const std::string& p : parts) argv.push_back(dir + "/" + p);
    const Result m = run(argv);
    EXPECT_EQ(m.exit_code, 1);
    EXPECT_FALSE(std::filesystem::exists(dir + "/bad.json"));
    return m.err;
  };
  EXPECT_TRUE(contains(merge_error({"part0.json"}), "shard 1/2 missing")) << merge_error({"part0.json"});
  EXPECT_TRUE(contains(merge_error({"part0.json", "part0.json"}), "part0.json: shard 0/2 given twice"));
  r = run({"suite", "run", "--suite", s, "--preset", "h100-ib-2x8", "--shard", "1/2", "-o", dir + "/other.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(merge_error({"part0.json", "other.json"}), "other.json: a part of a run on another system"));
  EXPECT_TRUE(contains(merge_error({"whole.json"}), "whole.json: not a part of a suite run"));
  write_raw(dir + "/suite2.yaml", suite + "# edited\n");
  r = run({"suite", "merge", "--suite", dir + "/suite2.yaml", "-o", dir + "/bad.json", dir + "/part0.json",
           dir + "/part1.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "part0.json: a part of a run of another suite definition")) << r.err;
  r = run({"suite", "run", "--suite", s, "--preset", "h100-hgx-8", "--shard", "2/2", "-o", dir + "/x.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--shard must be i/K with 0 <= i < K, not '2/2'")) << r.err;

  r = run({"suite", "run", "--suite", s, "--preset", "h100-hgx-8", "--name", "my cluster", "-o", dir + "/sl.json",
           "--slurm", "--array-size", "2", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "#SBATCH --array=0-1")) << r.out;
  EXPECT_TRUE(contains(r.out, "suite run --suite '" + s + "' --preset 'h100-hgx-8' --name 'my cluster' -o '" + dir +
                                  "/sl.json.slurm'/part-$SLURM_ARRAY_TASK_ID.json --shard $SLURM_ARRAY_TASK_ID/2"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "suite merge --suite '" + s + "' -o '" + dir + "/sl.json' '" + dir +
                                  "/sl.json.slurm/part-0.json' '" + dir + "/sl.json.slurm/part-1.json'"))
      << r.out;
}

TEST(CliSweep, ListNeedsNoOutputAndTracesMayBeAFolder) {
  const std::string dir = temp_dir();
  const std::string spec = std::string(CHAKRA_SOURCE_DIR) + "/assets/sweeps/allreduce_64npus.yaml";
  Result r = run({"sweep", "--list", spec});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "{\"point\":0,")) << r.out;
  r = run({"sweep", spec});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "give --output RESULTS (the table's files), or --list to print the points")) << r.err;
  ASSERT_EQ(run({"generate", "collective", "--npus", "4", "-o", dir + "/run/ar"}).exit_code, 0);
  write_raw(dir + "/sweep.yaml",
            "workload: {traces: run}\nnetwork: {preset: astra-sim-ring-8}\n"
            "axes: {network.bandwidth: [25, 50]}\n");
  r = run({"sweep", dir + "/sweep.yaml", "-o", dir + "/t", "--no-timing", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string jsonl = read_raw(dir + "/t.jsonl");
  EXPECT_TRUE(contains(jsonl, "\"error\":\"\"")) << jsonl;
  EXPECT_FALSE(contains(jsonl, "NPUs and the workload")) << jsonl;
}

TEST(CliSweep, FailuresAreRowsAndBadSpecsAreNamed) {
  const std::string dir = temp_dir();
  Result r =
      run({"sweep", std::string(CHAKRA_SOURCE_DIR) + "/assets/sweeps/llama_parallelism.yaml", "-o", dir + "/ll"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "15 points (120 in the product, 105 dropped by the constraints); 15 run")) << r.err;
  EXPECT_TRUE(contains(r.err, "3 failed")) << r.err;
  const std::string jsonl = read_raw(dir + "/ll.jsonl");
  EXPECT_TRUE(contains(jsonl, "is not divisible by --micro-batches")) << jsonl;
  EXPECT_TRUE(contains(jsonl, "\"sim_ms\":"));
  write_raw(dir + "/bad.yaml", "workload:\n  collective: {type: all_reduce\n");
  r = run({"sweep", dir + "/bad.yaml", "-o", dir + "/bad"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, dir + "/bad.yaml: line 2: '}' is missing")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/bad.csv"));
}

// --slurm --dry-run: the array script runs one shard per task and the gather job merges them.
TEST(CliSweep, SlurmScripts) {
  const std::string dir = temp_dir(), spec = std::string(CHAKRA_SOURCE_DIR) + "/assets/sweeps/allreduce_64npus.yaml";
  Result r = run({"sweep", spec, "-o", dir + "/res", "--slurm", "--array-size", "4", "--partition", "debug", "--time",
                  "10:00", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& s : {std::string("#SBATCH --array=0-3"), std::string("#SBATCH --partition=debug"),
                               std::string("#SBATCH --time=10:00"), std::string("--shard $SLURM_ARRAY_TASK_ID/4"),
                               std::string(" sweep merge "), std::string("'" + dir + "/res.slurm/shard-3.jsonl'"),
                               std::string("--dependency=afterok:ARRAY_ID")})
    EXPECT_TRUE(contains(r.out, s)) << s << "\n" << r.out;
  EXPECT_FALSE(fs::exists(dir + "/res.slurm"));
  // chakra convert pytorch DIR --slurm: a shard of the ranks per task, the groups joined after.
  fs::create_directories(dir + "/ranks");
  for (int r = 0; r < 5; ++r) write_raw(dir + "/ranks/host." + std::to_string(r) + ".json", "{}");
  r = run({"convert", "pytorch", dir + "/ranks", "-o", dir + "/et/x", "--slurm", "--reference-bytes", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& s :
       {std::string("#SBATCH --array=0-4"), std::string("--shard $SLURM_ARRAY_TASK_ID/5 --reference-bytes"),
        std::string(" convert merge-groups '" + dir + "/et/x'")})
    EXPECT_TRUE(contains(r.out, s)) << s << "\n" << r.out;
  EXPECT_EQ(run({"convert", "pytorch", dir + "/ranks", "-o", dir + "/et/x", "--slurm", "--shard", "0/2", "--dry-run"})
                .exit_code,
            2);
}

// info and validate over a folder of ranks: K shards' outputs, saved and merged, are the bytes
// one run prints (text and --json, K = 1..17 over 16 ranks: shards with one rank, with none);
// a trace with errors fails the merged validation as it fails the whole one.
TEST(CliShard, InfoAndValidateShardsMergeIntoTheUnshardedOutput) {
  const std::string dir = temp_dir(), ranks = shared("data/chakra_et/shuoshuc_T2D_16npus");
  for (const char* command : {"info", "validate"}) {
    for (const bool json : {false, true}) {
      std::vector<std::string> whole_args = {command, ranks};
      if (json) whole_args.push_back("--json");
      const Result whole = run(whole_args);
      ASSERT_EQ(whole.exit_code, 0) << whole.err;
      ASSERT_TRUE(contains(whole.out, "trace.15.et")) << whole.out;
      EXPECT_LT(whole.out.find("trace.9.et"), whole.out.find("trace.10.et"));  // rank order, not name order
      for (int k : {1, 2, 3, 16, 17}) {
        SCOPED_TRACE(std::string(command) + (json ? " --json" : "") + " K=" + std::to_string(k));
        std::vector<std::string> merge = {command, "merge"};
        for (int i = 0; i < k; ++i) {
          std::vector<std::string> a = whole_args;
          a.insert(a.end(), {"--shard", std::to_string(i) + "/" + std::to_string(k)});
          const Result part = run(a);
          ASSERT_EQ(part.exit_code, 0) << part.err;
          merge.push_back(dir + "/part" + std::to_string(i));
          write_raw(merge.back(), part.out);
        }
        const Result merged = run(merge);
        ASSERT_EQ(merged.exit_code, 0) << merged.err;
        EXPECT_EQ(merged.out, whole.out);
      }
    }
  }
  // A folder with an unreadable rank: both exit 1 with the same report.
  fs::create_directories(dir + "/bad");
  fs::copy_file(ranks + "/trace.0.et", dir + "/bad/t.0.et");
  write_raw(dir + "/bad/t.1.et", "\x05not a trace");
  const Result whole = run({"validate", dir + "/bad"});
  EXPECT_EQ(whole.exit_code, 1);
  std::vector<std::string> merge = {"validate", "merge"};
  for (int i = 0; i < 2; ++i) {
    merge.push_back(dir + "/vpart" + std::to_string(i));
    write_raw(merge.back(), run({"validate", dir + "/bad", "--shard", std::to_string(i) + "/2"}).out);
  }
  const Result merged = run(merge);
  EXPECT_EQ(merged.exit_code, 1);
  EXPECT_EQ(merged.out, whole.out);
  // A part twice, text with JSON, a file without a rank: named errors.
  Result twice = run({"validate", "merge", merge[2], merge[2]});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_TRUE(contains(twice.err, "rank 0 is also in")) << twice.err;
  write_raw(dir + "/json", run({"validate", dir + "/bad", "--shard", "1/2", "--json"}).out);
  EXPECT_TRUE(
      contains(run({"validate", "merge", merge[2], dir + "/json"}).err, "JSON and text parts cannot be joined"));
  fs::copy_file(ranks + "/trace.0.et", dir + "/bad/norank.et");
  Result no_rank = run({"info", dir + "/bad", "--shard", "0/2"});
  EXPECT_EQ(no_rank.exit_code, 1);
  EXPECT_TRUE(contains(no_rank.err, "norank.et: --shard splits by rank")) << no_rank.err;
  EXPECT_TRUE(contains(run({"info", dir}).err, "no .et traces in the folder"));
}

// --shard i/K on the commands that take a folder of ranks: K shards write exactly the files of
// one unsharded run (convert's process groups joined by merge-groups).
TEST(CliShard, LinkAndConvertShardsWriteTheUnshardedFiles) {
  const std::string dir = temp_dir(), pairs = shared("data/pairs/dlrm_8rank_v100");
  ASSERT_EQ(run({"link", pairs, "-o", dir + "/whole/linked/dlrm.json", "--quiet"}).exit_code, 0);
  for (int i = 0; i < 3; ++i) {
    Result r = run({"link", pairs, "-o", dir + "/sharded/linked/dlrm.json", "--shard", std::to_string(i) + "/3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "(shard " + std::to_string(i) + "/3 of 8 ranks)")) << r.err;
  }
  for (int rank = 0; rank < 8; ++rank) {
    const std::string name = "/linked/dlrm." + std::to_string(rank) + ".json";
    EXPECT_EQ(read_raw(dir + "/sharded" + name), read_raw(dir + "/whole" + name)) << name;
  }
  ASSERT_EQ(run({"convert", "pytorch", dir + "/whole/linked", "-o", dir + "/whole/et/dlrm"}).exit_code, 0);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(run({"convert", "pytorch", dir + "/whole/linked", "-o", dir + "/sharded/et/dlrm", "--shard",
                   std::to_string(i) + "/3"})
                  .exit_code,
              0);
  fs::remove(dir + "/sharded/et/dlrm.comm_group.part-1-of-3.json");
  Result m = run({"convert", "merge-groups", dir + "/sharded/et/dlrm"});
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_TRUE(contains(m.err, "part-1-of-3.json: missing (shard 1/3 has not run)")) << m.err;
  ASSERT_EQ(
      run({"convert", "pytorch", dir + "/whole/linked", "-o", dir + "/sharded/et/dlrm", "--shard", "1/3"}).exit_code,
      0);
  m = run({"convert", "merge-groups", dir + "/sharded/et/dlrm"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  for (int rank = 0; rank < 8; ++rank) {
    const std::string name = "/et/dlrm." + std::to_string(rank) + ".et";
    EXPECT_EQ(read_raw(dir + "/sharded" + name), read_raw(dir + "/whole" + name)) << name;
  }
  EXPECT_EQ(fs::exists(dir + "/sharded/et/dlrm.comm_group.json"), fs::exists(dir + "/whole/et/dlrm.comm_group.json"));
  if (fs::exists(dir + "/whole/et/dlrm.comm_group.json")) {
    EXPECT_EQ(read_raw(dir + "/sharded/et/dlrm.comm_group.json"), read_raw(dir + "/whole/et/dlrm.comm_group.json"));
  }
  // Parts with groups (these traces have none): joined, a group both list the same way once.
  fs::create_directories(dir + "/g");
  write_raw(dir + "/g/p.comm_group.part-0-of-2.json", R"({"1": [0, 1], "3": [0, 2]})");
  write_raw(dir + "/g/p.comm_group.part-1-of-2.json", R"({"2": [2, 3], "3": [0, 2]})");
  m = run({"convert", "merge-groups", dir + "/g/p"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(nlohmann::json::parse(read_raw(dir + "/g/p.comm_group.json")),
            nlohmann::json::parse(R"({"1": [0, 1], "2": [2, 3], "3": [0, 2]})"));
  EXPECT_EQ(run({"link", pairs, "-o", dir + "/x.json", "--shard", "3/3"}).exit_code, 2);
  EXPECT_EQ(run({"convert", "pytorch", example(0), "-o", dir + "/x.et", "--shard", "0/2"}).exit_code, 2);
}

// chakra anonymize on a real 8-rank PyTorch run (linked, converted): every rank's copy keeps no op
// name, simulates to the same per-NPU lines, and is the same bytes under the same key; a random
// key differs each run; the linked JSON anonymizes too; mistakes are named and leave nothing.
TEST(CliAnonymize, RealRunSharesWithoutNamesAndSimulatesTheSame) {
  const std::string dir = temp_dir(), pairs = shared("data/pairs/dlrm_8rank_v100");
  ASSERT_EQ(run({"link", pairs, "-o", dir + "/linked/dlrm.json", "--quiet"}).exit_code, 0);
  ASSERT_EQ(run({"convert", "pytorch", dir + "/linked", "-o", dir + "/et/dlrm"}).exit_code, 0);
  Result r = run({"anonymize", dir + "/et", "-o", dir + "/anon/x", "--key", "k", "--report", dir + "/report.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "8 traces -> " + dir + "/anon/x.<rank>")) << r.err;
  const auto report = nlohmann::json::parse(read_raw(dir + "/report.json"));
  EXPECT_GT(report["replaced"]["names"].get<uint64_t>(), 10000u);
  EXPECT_EQ(report["key"], "given");
  auto sys_lines = [&](const std::string& prefix) {
    Result s = run({"simulate", "--workload", prefix, "--preset", "h100-hgx-8", "--no-summary"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    return s.out;
  };
  EXPECT_EQ(sys_lines(dir + "/anon/x"), sys_lines(dir + "/et/dlrm"));
  for (int rank = 0; rank < 8; ++rank) {
    const std::string bytes = read_raw(dir + "/anon/x." + std::to_string(rank) + ".et");
    EXPECT_FALSE(contains(bytes, "aten::")) << rank;
    EXPECT_FALSE(contains(bytes, "cuda:0")) << rank;
  }
  ASSERT_EQ(run({"anonymize", dir + "/et/dlrm.3.et", "-o", dir + "/one.et", "--key", "k", "--quiet"}).exit_code, 0);
  EXPECT_EQ(read_raw(dir + "/one.et"), read_raw(dir + "/anon/x.3.et"));
  ASSERT_EQ(run({"anonymize", dir + "/et/dlrm.3.et", "-o", dir + "/r1.et", "--quiet"}).exit_code, 0);
  r = run({"anonymize", dir + "/et/dlrm.3.et", "-o", dir + "/r2.et"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "key: random and not written anywhere")) << r.err;
  EXPECT_NE(read_raw(dir + "/r1.et"), read_raw(dir + "/r2.et"));
  // Names kept by a pattern stay; the linked JSON gives tokens too.
  EXPECT_FALSE(contains(read_raw(dir + "/one.et"), "aten::mm"));
  ASSERT_EQ(run({"anonymize", dir + "/et/dlrm.3.et", "-o", dir + "/kept.et", "--keep-names", "^aten::mm$", "--quiet"})
                .exit_code,
            0);
  EXPECT_TRUE(contains(read_raw(dir + "/kept.et"), "aten::mm"));
  EXPECT_FALSE(contains(read_raw(dir + "/kept.et"), "aten::add"));
  ASSERT_EQ(run({"anonymize", dir + "/linked", "-o", dir + "/anon_json/l", "--key", "k", "--quiet"}).exit_code, 0);
  const std::string linked = read_raw(dir + "/anon_json/l.0.json");
  EXPECT_FALSE(contains(linked, "aten::"));
  EXPECT_EQ(nlohmann::json::parse(linked)["nodes"].size(),
            nlohmann::json::parse(read_raw(dir + "/linked/dlrm.0.json"))["nodes"].size());
  // Mistakes.
  EXPECT_EQ(run({"anonymize", dir + "/et", "-o", dir + "/bad/x", "--keep-names", "(unclosed"}).exit_code, 2);
  fs::create_directories(dir + "/norank");
  fs::copy_file(dir + "/et/dlrm.0.et", dir + "/norank/a.0.et");
  fs::copy_file(dir + "/et/dlrm.1.et", dir + "/norank/model.et");
  r = run({"anonymize", dir + "/norank/a.0.et", dir + "/norank/model.et", "-o", dir + "/bad/x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "model.et: several traces go to")) << r.err;
  write_raw(dir + "/norank/b.1.et", "garbage");
  r = run({"anonymize", dir + "/norank/a.0.et", dir + "/norank/b.1.et", "-o", dir + "/bad/y"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "b.1.et")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/bad/y.0.et"));  // nothing published when one rank fails
}

// A PyTorch run folder as recorded (a sub-folder per rank: host ET + Kineto trace): the copy has
// the same layout, no model names, and links, converts, analyzes and simulates as the original
// does (the 8-V100 DLRM run): the same link and conversion summaries, the same per-NPU lines, the
// same analysis figures (names aside; the list of kernels no name pattern knows grows, as every
// compute kernel's name is a token).
TEST(CliAnonymize, RawRunFolderLinksConvertsAnalyzesAndSimulatesTheSame) {
  const std::string dir = temp_dir(), pairs = shared("data/pairs/dlrm_8rank_v100"), anon = dir + "/anon";
  Result r = run({"anonymize", pairs, "-o", anon, "--key", "k"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "a PyTorch run, 8 ranks (host ET + Kineto trace each)")) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 3 (the Kineto trace's distributedInfo): " + pairs + "/rank3/dlrm_eg_3.json + "))
      << r.err;
  EXPECT_TRUE(contains(
      r.err, "not copied (no rank's host ET + Kineto pair): 8 files: " + pairs + "/reference_linked_by_old_chakra/"))
      << r.err;
  std::set<std::string> files, expected;
  for (const auto& e : fs::recursive_directory_iterator(anon))
    if (e.is_regular_file()) files.insert(fs::relative(e.path(), anon).string());
  for (int rank = 0; rank < 8; ++rank)
    expected.insert({"rank" + std::to_string(rank) + "/host_et." + std::to_string(rank) + ".json",
                     "rank" + std::to_string(rank) + "/kineto." + std::to_string(rank) + ".json"});
  EXPECT_EQ(files, expected);
  for (const std::string& f : files) {
    const std::string bytes = read_raw(anon + "/" + f);
    for (const char* word :
         {"aten::", "dlrm", "DLRM", "Adagrad", "fbgemm", "mbedding", "python3", "Tesla", "DataLoader", "## "})
      EXPECT_FALSE(contains(bytes, word)) << f << ": " << word;
  }
  // Still a Chrome trace (what Perfetto opens): every event an object with its phase and time.
  const auto kineto = nlohmann::json::parse(read_raw(anon + "/rank0/kineto.0.json"));
  ASSERT_TRUE(kineto["traceEvents"].is_array());
  for (const auto& e : kineto["traceEvents"])
    ASSERT_TRUE(e.is_object() && e["ph"].is_string() && e["ts"].is_number()) << e.dump();
  EXPECT_EQ(kineto["distributedInfo"]["rank"], 0);
  EXPECT_EQ(kineto["distributedInfo"]["world_size"], 8);

  const std::regex path("/[^ :,]+");
  auto pipeline = [&](const std::string& run_dir, const std::string& out) {
    Result l = run({"link", run_dir, "-o", out + "/linked/x.json"});
    EXPECT_EQ(l.exit_code, 0) << l.err;
    Result c = run({"convert", "pytorch", out + "/linked", "-o", out + "/et/x"});
    EXPECT_EQ(c.exit_code, 0) << c.err;
    Result s = run({"simulate", "--workload", out + "/et/x", "--preset", "v100-dgx1-8"});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    EXPECT_TRUE(contains(s.out, "sys[7] finished")) << s.out;
    return std::regex_replace(l.err + c.out + c.err, path, "P") + s.out;
  };
  const std::string original = pipeline(pairs, dir + "/a");
  EXPECT_TRUE(contains(original, "linked 1672 of 1675 host nodes by in-order (1672 with the same name)")) << original;
  EXPECT_EQ(pipeline(anon, dir + "/b"), original);

  // analyze --json on the Kineto traces: the same figures, compared as multisets (entries tied in
  // time may swap places when their names change).
  std::vector<std::string> before = {"analyze", "--json"}, after = before;
  for (int rank = 0; rank < 8; ++rank) {
    const std::string folder = pairs + "/rank" + std::to_string(rank);
    for (const auto& e : fs::directory_iterator(folder))
      if (contains(e.path().string(), ".pt.trace.json")) before.push_back(e.path().string());
    after.push_back(anon + "/rank" + std::to_string(rank) + "/kineto." + std::to_string(rank) + ".json");
  }
  ASSERT_EQ(before.size(), after.size());
  std::function<nlohmann::json(const nlohmann::json&)> figures = [&](const nlohmann::json& j) -> nlohmann::json {
    if (j.is_string()) return "";
    if (j.is_object()) {
      nlohmann::json o = nlohmann::json::object();
      for (auto it = j.begin(); it != j.end(); ++it)
        if (it.key() != "unknown_kernels") o[it.key()] = figures(it.value());
      return o;
    }
    if (!j.is_array()) return j;
    std::vector<std::string> items;
    for (const auto& e : j) items.push_back(figures(e).dump());
    std::sort(items.begin(), items.end());
    nlohmann::json a = nlohmann::json::array();
    for (const std::string& s : items) a.push_back(nlohmann::json::parse(s));
    return a;
  };
  Result a = run(before), b = run(after);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(figures(jb), figures(ja));
  EXPECT_GT(ja["stragglers"]["instances"].size(), 0u);  // kernels paired across ranks by name
  EXPECT_EQ(ja["ranks"][0]["names"].size(), jb["ranks"][0]["names"].size());
}

// A run folder with the pairs side by side (ranks in the file names) and gzip files: the copy
// keeps both, and links as the original does. OUT inside the run folder is refused.
TEST(CliAnonymize, FlatRunFolderKeepsItsLayoutAndCompression) {
  const std::string dir = temp_dir(), src = dir + "/run", pairs = shared("data/pairs");
  fs::create_directories(src);
  fs::copy_file(pairs + "/hta_simple_add_a100_1rank/benchmark_simple_add_et.json.gz", src + "/et_0.json.gz");
  fs::copy_file(pairs + "/hta_simple_add_a100_1rank/benchmark_simple_add_trace.json.gz", src + "/trace_0.json.gz");
  fs::copy_file(pairs + "/param_linear_rtx2080ti_1rank/linear_et.json.gz", src + "/et_1.json.gz");
  fs::copy_file(pairs + "/param_linear_rtx2080ti_1rank/linear_kineto.json.gz", src + "/trace_1.json.gz");
  Result r = run({"anonymize", src, "-o", dir + "/anon/", "--key", "k"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 1 (the host ET's file name, matched to the Kineto trace's rank): " + src +
                                  "/et_1.json.gz + " + src + "/trace_1.json.gz -> " + dir +
                                  "/anon/host_et.1.json.gz + " + dir + "/anon/kineto.1.json.gz"))
      << r.err;
  for (const char* f : {"host_et.0.json.gz", "kineto.0.json.gz", "host_et.1.json.gz", "kineto.1.json.gz"})
    EXPECT_EQ(read_raw(dir + "/anon/" + f).substr(0, 2), "\x1f\x8b") << f;
  Result a = run({"link", src, "-o", dir + "/a/x.json"}), b = run({"link", dir + "/anon", "-o", dir + "/b/x.json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::regex path("/[^ :,]+");
  EXPECT_EQ(std::regex_replace(b.err, path, "P"), std::regex_replace(a.err, path, "P"));
  EXPECT_TRUE(contains(a.err, "linked 36 of 38 host nodes by external-id (36 with the same name)")) << a.err;
  r = run({"anonymize", src, "-o", src + "/copy"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, src + "/copy: inside the run folder " + src)) << r.err;
  EXPECT_FALSE(fs::exists(src + "/copy"));
  r = run({"anonymize", src, dir + "/anon/host_et.0.json.gz", "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "a PyTorch run folder is anonymized on its own")) << r.err;
}

// A Chakra JSON trace (chakra jsonize) is anonymized as its .et is.
TEST(CliAnonymize, ChakraJsonAnonymizesAsItsEt) {
  const std::string dir = temp_dir();
  ASSERT_EQ(run({"jsonize", example(0), dir + "/t.json"}).exit_code, 0);
  ASSERT_EQ(run({"anonymize", dir + "/t.json", "-o", dir + "/a.json", "--key", "k", "--quiet"}).exit_code, 0);
  ASSERT_EQ(run({"anonymize", example(0), "-o", dir + "/a.et", "--key", "k", "--quiet"}).exit_code, 0);
  ASSERT_EQ(run({"jsonize", dir + "/a.et", dir + "/b.json"}).exit_code, 0);
  EXPECT_EQ(read_raw(dir + "/a.json"), read_raw(dir + "/b.json"));
  EXPECT_FALSE(contains(read_raw(dir + "/a.json"), "aten::"));
}

// Files that are not traces are refused by name and by what they are, leaving nothing; chakra
// info says so too instead of reading a config as protobuf records.
TEST(CliAnonymize, RefusesFilesThatAreNotTraces) {
  const std::string dir = temp_dir();
  const std::string yaml = std::string(CHAKRA_SOURCE_DIR) + "/tests/data/hostile/ok/ring2.yml";
  write_raw(dir + "/notes.txt", "these are my notes\nnothing to trace here\n");
  write_raw(dir + "/shot.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  write_raw(dir + "/system.json", R"({"scheduling-policy": "LIFO", "all-reduce-implementation": ["ring"]})");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {yaml, "an ASTRA-sim network config (YAML)"},
      {dir + "/notes.txt", "text of no kind chakrakit reads"},
      {dir + "/shot.png", "a PNG image"},
      {dir + "/system.json", "an ASTRA-sim system config (JSON)"}};
  for (const auto& [file, what] : cases) {
    SCOPED_TRACE(file);
    Result r = run({"anonymize", file, "-o", dir + "/out.json"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(
        contains(r.err, "chakra anonymize: error: " + file + ": " + what + ", not a trace chakra anonymize reads"))
        << r.err;
    EXPECT_FALSE(fs::exists(dir + "/out.json"));
    r = run({"info", file});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "chakra info: error: " + file + ": " + what + ", not a Chakra .et trace")) << r.err;
    EXPECT_FALSE(contains(r.err, "record length")) << r.err;
  }
  // Among several inputs, the one that is no trace is named, and no copy is written.
  Result r = run({"anonymize", example(0), yaml, "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, yaml + ": an ASTRA-sim network config (YAML)")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.0.et"));
}

// 200,000 levels of nesting in each kind of JSON anonymize reads (host ET, Kineto, Chakra JSON,
// and a run folder's) is an error naming the file, not a crash, and leaves nothing.
TEST(CliAnonymize, DeepNestingIsRefusedWithoutCrashing) {
  const std::string dir = temp_dir();
  const std::string open(200000, '['), close(200000, ']');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"host.json", R"({"schema": "1.0.1", "nodes": [{"name": "x", "inputs": )" + open + close + "}]}"},
      {"kineto.json", R"({"traceEvents": [{"ph": "X", "args": {"Input Dims": )" + open + close + "}}]}"},
      {"chakra.json", R"({"nodes": [{"id": 1, "name": "x", "type": "COMP_NODE", "dataDeps": )" + open + close + "}]}"}};
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    write_raw(dir + "/" + name, text);
    Result r = run({"anonymize", dir + "/" + name, "-o", dir + "/out/x.json"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "chakra anonymize: error: " + dir + "/" + name)) << r.err;
    EXPECT_TRUE(contains(r.err, "nested deeper than 512 levels") || contains(r.err, "nested too deeply")) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/out/x.json"));
  }
  fs::create_directories(dir + "/run/rank0");
  fs::copy_file(dir + "/host.json", dir + "/run/rank0/host.json");
  write_raw(dir + "/run/rank0/kineto.json", R"({"schemaVersion": 1, "traceEvents": [{"args": )" + open + close + "}]}");
  Result r = run({"anonymize", dir + "/run", "-o", dir + "/copy"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "nested deeper than 512 levels")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/copy/rank0/host_et.0.json"));
  EXPECT_FALSE(fs::exists(dir + "/copy/rank0/kineto.json"));
}

// chakra project on the real 8-rank DLRM run (no process groups: every collective spans the
// world, all-reduces of flat gradient buckets and all-to-alls of the sharded embeddings): the
// world is data-parallel from the buckets' shapes; 8 → 8 writes the same bytes, 8 → 32 grows
// the world and simulates, and validates; --explain writes nothing; --pp re-stages synthetic
// traces only.
TEST(CliProject, RealRunProjectsAndSimulates) {
  const std::string dir = temp_dir(), pairs = shared("data/pairs/dlrm_8rank_v100");
  ASSERT_EQ(run({"link", pairs, "-o", dir + "/linked/dlrm.json", "--quiet"}).exit_code, 0);
  ASSERT_EQ(run({"convert", "pytorch", dir + "/linked", "-o", dir + "/et/dlrm"}).exit_code, 0);
  Result r = run({"project", dir + "/et/dlrm", "--to", "8", "-o", dir + "/same/dlrm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "data-parallel groups from the tensors they carry")) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "no group (all 8 ranks): 3 all-reduces, 5 all-to-alls per rank; 448 B to 1.5 MiB, "
                       "2.4 MiB per rank, flat buffers -> data-parallel"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "its all-to-alls grow with the world")) << r.err;
  for (int rank = 0; rank < 8; ++rank)
    EXPECT_EQ(read_raw(dir + "/same/dlrm." + std::to_string(rank) + ".et"),
              read_raw(dir + "/et/dlrm." + std::to_string(rank) + ".et"));
  r = run({"project", dir + "/et/dlrm", "--to", "32", "-o", dir + "/big/dlrm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "8 -> 32 ranks, 4 data-parallel replicas")) << r.err;
  Result v = run({"validate", dir + "/big"});
  EXPECT_EQ(v.exit_code, 0) << v.out;
  Result s8 = run({"simulate", "--workload", dir + "/et/dlrm", "--preset", "h100-ib-2x8", "--npus", "8", "--json",
                   dir + "/s8.json"});
  Result s32 = run({"simulate", "--workload", dir + "/big/dlrm", "--preset", "h100-ib-2x8", "--npus", "32", "--json",
                    dir + "/s32.json"});
  ASSERT_EQ(s8.exit_code, 0) << s8.err;
  ASSERT_EQ(s32.exit_code, 0) << s32.err;
  EXPECT_TRUE(contains(s32.out, "sys[31] finished")) << s32.out;
  // The 8 measured ranks are compared with their simulation; the 32 projected ones never: their
  // times are copies of the traced ranks'.
  EXPECT_TRUE(contains(s8.out, "measured vs simulated over the whole trace")) << s8.out;
  EXPECT_FALSE(contains(s32.out, "measured vs simulated")) << s32.out;
  EXPECT_TRUE(contains(s32.out, "no measured-vs-simulated figures: these traces' times are copies of a traced rank's"))
      << s32.out;
  EXPECT_FALSE(nlohmann::json::parse(read_raw(dir + "/s32.json"))["npus"][0].contains("measured_step_ns"));
  // A straggler made with --slowdown is the one the straggler analysis of the simulated times finds.
  Result slow = run({"simulate", "--workload", dir + "/et/dlrm", "--preset", "h100-hgx-8", "--slowdown",
                     "npu=3:compute=3", "--times-out", dir + "/slow/t"});
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  std::vector<std::string> analyze = {"analyze", "--json"};
  for (int rank = 0; rank < 8; ++rank) analyze.push_back(dir + "/slow/t." + std::to_string(rank) + ".et");
  Result a = run(analyze);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto stragglers = nlohmann::json::parse(a.out)["stragglers"]["ranks"];
  EXPECT_EQ(stragglers[0]["rank"], 3) << stragglers.dump();
  EXPECT_GT(stragglers[0]["arrived_last"].get<int>(), 0);
  EXPECT_EQ(stragglers[1]["arrived_last"], 0) << stragglers.dump();
  // Simulated times simulated again are not compared with themselves as if measured.
  r = run({"simulate", "--workload", dir + "/slow/t", "--preset", "h100-hgx-8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "these traces' times are simulated (chakra simulate --times-out)")) << r.out;
  r = run({"project", dir + "/et/dlrm", "--to", "16", "-o", dir + "/explained/dlrm", "--explain"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(dir + "/explained"));
  r = run({"project", dir + "/et/dlrm", "--to", "16", "-o", dir + "/x", "--pp"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "only traces chakra synth made name")) << r.err;
  // Pipeline re-staging where the layers are known: a synthetic pp2 step re-staged over 4 stages
  // is what chakra synth makes at pp4, byte for byte, and simulates.
  const std::vector<std::string> synth = {"synth",           "--preset", "llama2-7b", "--layers", "4",     "--dp", "2",
                                          "--micro-batches", "4",        "--batch",   "8",        "--seq", "1024"};
  auto synth_at = [&](const std::string& pp, const std::string& out) {
    std::vector<std::string> a = synth;
    a.insert(a.end(), {"--pp", pp, "-o", out});
    ASSERT_EQ(run(a).exit_code, 0);
  };
  synth_at("2", dir + "/pp2/x");
  synth_at("4", dir + "/pp4/x");
  r = run({"project", dir + "/pp2/x", "--pp", "--to", "8", "-o", dir + "/restaged/x"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "--pp 2 -> 4")) << r.err;
  for (int rank = 0; rank < 8; ++rank)
    EXPECT_EQ(read_raw(dir + "/restaged/x." + std::to_string(rank) + ".et"),
              read_raw(dir + "/pp4/x." + std::to_string(rank) + ".et"))
        << rank;
  EXPECT_EQ(read_raw(dir + "/restaged/x.comm_group.json"), read_raw(dir + "/pp4/x.comm_group.json"));
  Result restaged = run({"simulate", "--workload", dir + "/restaged/x", "--comm-group",
                         dir + "/restaged/x.comm_group.json", "--preset", "h100-hgx-8"});
  EXPECT_EQ(restaged.exit_code, 0) << restaged.err;
  r = run({"project", dir + "/et/dlrm", "--to", "12", "-o", dir + "/x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "must be a multiple of the 8 ranks traced")) << r.err;
}

// chakra project infers data parallelism only from evidence: pure tensor parallelism is refused
// and asks for --groups, which must name known groups; a trace failing validation (here
// duplicate node ids) is refused with what validation found, and nothing is written.
TEST(CliProject, RefusesWithoutEvidenceAndChecksWhatItIsGiven) {
  const std::string dir = temp_dir();
  const std::vector<std::string> synth = {"synth",   "--preset", "llama2-7b", "--layers", "2",
                                          "--batch", "8",        "--seq",     "1024"};
  auto synth_at = [&](const std::vector<std::string>& degrees, const std::string& out) {
    std::vector<std::string> a = synth;
    a.insert(a.end(), degrees.begin(), degrees.end());
    a.insert(a.end(), {"-o", out});
    ASSERT_EQ(run(a).exit_code, 0);
  };
  synth_at({"--tp", "4"}, dir + "/tp/x");  // groups 1-4: single-rank DP, 5: TP [0..3], 6-9: single-rank CP
  Result r = run({"project", dir + "/tp/x", "--to", "8", "-o", dir + "/out/x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "chakra synth made them with --dp 1 --tp 4")) << r.err;
  EXPECT_TRUE(contains(r.err, "--groups FILE")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  write_raw(dir + "/empty.json", R"({"dp": []})");
  r = run({"project", dir + "/tp/x", "--to", "8", "-o", dir + "/out/x", "--groups", dir + "/empty.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "empty.json: dp is an empty list")) << r.err;
  write_raw(dir + "/unknown.json", R"({"dp": [1, 2, 3, 4, 10]})");
  r = run({"project", dir + "/tp/x", "--to", "8", "-o", dir + "/out/x", "--groups", dir + "/unknown.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err,
                       "unknown.json: dp names group 10, which is not among the groups "
                       "(1, 2, 3, 4, 5, 6, 7, 8, 9)"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  write_raw(dir + "/dp.json", R"({"dp": [1, 2, 3, 4]})");
  r = run({"project", dir + "/tp/x", "--to", "8", "-o", dir + "/out/x", "--groups", dir + "/dp.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "data-parallel groups as given:\n  groups 1, 2, 3, 4 (1 rank): no collectives -> "
                       "data-parallel: grows 2x"))
      << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_raw(dir + "/out/x.comm_group.json"))["1"], nlohmann::json::parse("[0, 4]"));

  // dp x tp: the data-parallel groups, never the tensor-parallel ones.
  synth_at({"--dp", "2", "--tp", "2"}, dir + "/dptp/x");
  r = run({"project", dir + "/dptp/x", "--to", "8", "--explain"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "groups 1, 2 (2 ranks, spacing 1): 4 all-reduces per rank")) << r.err;
  EXPECT_TRUE(contains(r.err, "-> data-parallel: grows 2x\n  groups 3, 4 (2 ranks, spacing 2)")) << r.err;

  // Rank 1 with a node listed twice.
  ASSERT_EQ(run({"jsonize", dir + "/dptp/x.1.et", dir + "/x1.json"}).exit_code, 0);
  nlohmann::json j = nlohmann::json::parse(read_raw(dir + "/x1.json"));
  j["nodes"].push_back(j["nodes"][0]);
  write_raw(dir + "/x1.json", j.dump());
  ASSERT_EQ(run({"dejsonize", dir + "/x1.json", dir + "/dptp/x.1.et"}).exit_code, 0);
  r = run({"project", dir + "/dptp/x", "--to", "8", "-o", dir + "/broken/x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "x.1.et: fails validation (1 error), so it is not projected:\n  duplicate-id: "))
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/broken"));
}
