// chakra replay and chakra calibrate with real Open MPI processes (mpirun --oversubscribe): what
// each rank ran is read back from the traces it wrote and from the summary.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "chakra/format/et_io.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"
#include "cli/cli_support.h"
#include "test_support.h"

using namespace chakra;
using cli_testing::contains;
using cli_testing::run;
using testing_support::temp_dir;
namespace fs = std::filesystem;

namespace {

// Writes PREFIX.<rank>.et for `ranks` ranks, each made by make(rank, trace, nodes).
std::string write_ranks(uint32_t ranks, const std::function<void(uint32_t, Trace&, std::vector<NodeDraft>&)>& make,
                        const std::string& dir = temp_dir()) {
  const std::string prefix = dir + "/w";
  for (uint32_t r = 0; r < ranks; ++r) {
    Trace t;
    std::vector<NodeDraft> nodes;
    make(r, t, nodes);
    for (const NodeDraft& d : nodes) t.append(d);
    write_et(t, prefix + "." + std::to_string(r) + ".et");
  }
  return prefix;
}

NodeDraft collective(Trace& t, uint64_t id, CommType type, int64_t bytes, std::vector<uint64_t> deps,
                     const std::string& pg = "") {
  NodeDraft d;
  d.id = id;
  d.name = t.intern(std::string(comm_type_name(int64_t(type))) + "_" + std::to_string(id));
  d.type = int32_t(NodeType::CommColl);
  d.data_deps = std::move(deps);
  d.attrs.add_int64(t.intern("comm_type"), int64_t(type));
  d.attrs.add_int64(t.intern("comm_size"), bytes);
  if (!pg.empty()) d.attrs.add_string(t.intern("pg_name"), t.intern(pg));
  return d;
}

NodeDraft message(Trace& t, uint64_t id, bool send, int64_t peer, int64_t tag, int64_t bytes,
                  std::vector<uint64_t> deps = {}) {
  NodeDraft d;
  d.id = id;
  d.name = t.intern(std::string(send ? "send_" : "recv_") + std::to_string(id));
  d.type = int32_t(send ? NodeType::CommSend : NodeType::CommRecv);
  d.data_deps = std::move(deps);
  d.attrs.add_int64(t.intern(send ? "comm_dst" : "comm_src"), peer);
  d.attrs.add_int64(t.intern("comm_tag"), tag);
  d.attrs.add_int64(t.intern("comm_size"), bytes);
  return d;
}

NodeDraft compute(Trace& t, uint64_t id, uint64_t micros, std::vector<uint64_t> deps = {}, int64_t stream = -1) {
  NodeDraft d;
  d.id = id;
  d.name = t.intern("gemm_" + std::to_string(id));
  d.type = int32_t(NodeType::Comp);
  d.duration_micros = micros;
  d.data_deps = std::move(deps);
  if (stream >= 0) d.attrs.add_int64(t.intern("stream"), stream);
  return d;
}

cli_testing::Result replay(uint32_t ranks, std::vector<std::string> args) {
  std::vector<std::string> argv{"--oversubscribe", "-n", std::to_string(ranks), CHAKRA_BIN, "replay"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, MPIRUN);
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(testing_support::read_raw(path)); }

// The summary's row for a collective type, group size and size.
const nlohmann::json* row(const nlohmann::json& summary, const std::string& type, uint32_t ranks, uint64_t bytes) {
  for (const auto& r : summary["collectives"])
    if (r["type"] == type && r["ranks"] == ranks && r["bytes"] == bytes) return &r;
  return nullptr;
}

// Replayed [start, end) in µs of each node, by id.
std::map<uint64_t, std::pair<uint64_t, uint64_t>> replayed_times(const std::string& path) {
  const Trace t = read_et(path);
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> out;
  for (uint32_t n = 0; n < t.size(); ++n)
    out[t.id(n)] = {t.start_time_micros(n), t.start_time_micros(n) + t.duration_micros(n)};
  return out;
}

}  // namespace

// Every collective kind, a send and a receive, and compute: sizes, counts and group sizes in
// the summary are the trace's, the traces written carry a time for every node in dependency
// order, keep their comm_size and are marked as replayed.
TEST(Replay, EveryCollectiveAndMessageRunsAsTheTraceSays) {
  const std::string dir = temp_dir();
  const std::string prefix = write_ranks(
      4,
      [](uint32_t r, Trace& t, std::vector<NodeDraft>& nodes) {
        nodes.push_back(collective(t, 1, CommType::AllReduce, 1 << 20, {}));
        nodes.push_back(collective(t, 2, CommType::AllGather, 64 << 10, {1}));
        nodes.push_back(collective(t, 3, CommType::ReduceScatter, 256 << 10, {2}));
        nodes.push_back(collective(t, 4, CommType::AllToAll, 128 << 10, {3}));
        nodes.push_back(collective(t, 5, CommType::Broadcast, 4096 + 3, {4}));  // not a whole number of floats
        nodes.push_back(collective(t, 6, CommType::Barrier, 0, {5}));
        nodes.push_back(message(t, 7, true, (r + 1) % 4, 5, 8192, {6}));
        nodes.push_back(message(t, 8, false, (r + 3) % 4, 5, 8192, {6}));
        nodes.push_back(compute(t, 9, 3000, {7, 8}));
      },
      dir);
  const auto r = replay(4, {prefix, "--out", dir + "/out/r", "--summary-json", dir + "/s.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "all_reduce")) << r.out;
  const nlohmann::json s = read_json(dir + "/s.json");
  ASSERT_EQ(s["ranks"].size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s["ranks"][i]["trace_rank"], i);
    EXPECT_EQ(s["ranks"][i]["nodes"], 9u);
    EXPECT_GE(s["ranks"][i]["step_ns"].get<uint64_t>(), 3'000'000u);  // the compute spun its 3 ms
  }
  const std::vector<std::tuple<std::string, uint32_t, uint64_t>> expected = {{"all_reduce", 4, 1 << 20},
                                                                             {"all_gather", 4, 64 << 10},
                                                                             {"reduce_scatter", 4, 256 << 10},
                                                                             {"all_to_all", 4, 128 << 10},
                                                                             {"broadcast", 4, 4096 + 3},
                                                                             {"barrier", 4, 0},
                                                                             {"send", 2, 8192},
                                                                             {"recv", 2, 8192}};
  for (const auto& [type, ranks, bytes] : expected) {
    const nlohmann::json* x = row(s, type, ranks, bytes);
    ASSERT_NE(x, nullptr) << type << " " << s.dump();
    EXPECT_EQ((*x)["count"], 4u) << type;
    EXPECT_GT((*x)["median_ns"].get<uint64_t>(), 0u) << type;
  }
  EXPECT_EQ(s["collectives"].size(), expected.size());
  for (uint32_t rank = 0; rank < 4; ++rank) {
    const std::string path = dir + "/out/r." + std::to_string(rank) + ".et";
    const Trace t = read_et(path);
    bool replayed = false;
    for (uint32_t a = 0; a < t.metadata_attrs().size(); ++a) replayed |= t.metadata_attr(a).name() == kReplayedByAttr;
    EXPECT_TRUE(replayed) << path;
    const auto times = replayed_times(path);
    for (uint32_t n = 0; n < t.size(); ++n) {
      EXPECT_GT(t.start_time_micros(n), 0u) << path << " node " << t.id(n);
      for (uint64_t dep : t.data_deps(n)) EXPECT_GE(times.at(t.id(n)).first, times.at(dep).second) << t.id(n);
    }
    EXPECT_GE(t.duration_micros(8), 3000u) << "the compute node spins its duration";
  }
  // The same comm-only (--compute skip): the compute node takes no time.
  const auto skip = replay(4, {prefix, "--compute", "skip", "--summary-json", dir + "/skip.json"});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  for (const auto& rank : read_json(dir + "/skip.json")["ranks"])
    EXPECT_LT(rank["step_ns"].get<uint64_t>(), 3'000'000u);
}

// Groups of a comm-group file: ranks 0 and 2 all-reduce 1 MiB in group 1, ranks 1 and 3 2 MiB in
// group 2 (a wrong mapping would pair different sizes, which MPI refuses); --ranks replays
// trace ranks 4..7 of an 8-rank workload as processes 0..3.
TEST(Replay, GroupsOfACommGroupFileMapToTheirRanks) {
  const std::string dir = temp_dir();
  const std::string prefix = write_ranks(
      8,
      [](uint32_t r, Trace& t, std::vector<NodeDraft>& nodes) {
        const bool even = r % 2 == 0;
        nodes.push_back(collective(t, 1, CommType::AllReduce, even ? 1 << 20 : 2 << 20, {}, even ? "1" : "2"));
      },
      dir);
  testing_support::write_raw(dir + "/groups.json", R"({"1": [4, 6], "2": [5, 7]})");
  const auto r = replay(4, {prefix, "--comm-group", dir + "/groups.json", "--ranks", "4-7", "--summary-json",
                            dir + "/s.json", "--out", dir + "/out/g"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json s = read_json(dir + "/s.json");
  ASSERT_NE(row(s, "all_reduce", 2, 1 << 20), nullptr) << s.dump();
  ASSERT_NE(row(s, "all_reduce", 2, 2 << 20), nullptr) << s.dump();
  EXPECT_EQ((*row(s, "all_reduce", 2, 1 << 20))["count"], 2u);
  EXPECT_EQ((*row(s, "all_reduce", 2, 2 << 20))["count"], 2u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(s["ranks"][i]["trace_rank"], 4 + i);
  EXPECT_TRUE(fs::exists(dir + "/out/g.4.et") && fs::exists(dir + "/out/g.7.et") && !fs::exists(dir + "/out/g.0.et"));
  EXPECT_EQ(read_json(dir + "/out/g.comm_group.json"), nlohmann::json::parse(R"({"1": [4, 6], "2": [5, 7]})"));
  // One rank cannot write its trace (a folder has its name): no rank's trace is left.
  fs::create_directories(dir + "/partial/g.5.et/x");
  const auto unwritable =
      replay(4, {prefix, "--comm-group", dir + "/groups.json", "--ranks", "4-7", "--out", dir + "/partial/g"});
  EXPECT_NE(unwritable.exit_code, 0);
  EXPECT_TRUE(contains(unwritable.err, "could not all be written (none are left)")) << unwritable.err;
  EXPECT_TRUE(contains(unwritable.err, "rank 0: written, then removed")) << unwritable.err;
  for (const char* f : {"g.4.et", "g.6.et", "g.7.et", "g.comm_group.json"})
    EXPECT_FALSE(fs::exists(dir + "/partial/" + f)) << f;
  EXPECT_TRUE(fs::exists(dir + "/partial/g.5.et/x")) << "what was there stays";
  // A group with a member nobody replays: refused before anything runs.
  testing_support::write_raw(dir + "/bad.json", R"({"1": [4, 3], "2": [5, 7]})");
  const auto bad = replay(4, {prefix, "--comm-group", dir + "/bad.json", "--ranks", "4-7"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.err, "some of whose ranks are not replayed")) << bad.err;
  // No groups file at all: the message says how to give one.
  const auto none = replay(4, {prefix, "--ranks", "4-7"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_TRUE(
      contains(none.err, "collectives of group 1, which the trace does not define, and no groups file was given"))
      << none.err;
}

// Replay-model traces run a lane per GPU stream: two 40 ms kernels on streams 1 and 2 overlap
// (about 40 ms), while ASTRA-sim's one compute slot runs them one after the other (80 ms).
TEST(Replay, LanesOverlapAsTheyDidAndSlotsSerialise) {
  auto make = [](bool lanes) {
    return write_ranks(2, [lanes](uint32_t, Trace& t, std::vector<NodeDraft>& nodes) {
      if (lanes) {
        AttrDrafts meta;
        meta.add_bool(t.intern(std::string(kReplayLanesAttr)), true);
        t.set_metadata(StringPool::kEmpty, meta);
      }
      nodes.push_back(compute(t, 1, 40000, {}, 1));
      nodes.push_back(compute(t, 2, 40000, {}, 2));
      nodes.push_back(collective(t, 3, CommType::AllReduce, 1 << 16, {}));
    });
  };
  const std::string dir = temp_dir();
  for (bool lanes : {true, false}) {
    const std::string json = dir + (lanes ? "/lanes.json" : "/slots.json");
    const auto r = replay(2, {make(lanes), "--summary-json", json});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json summary = read_json(json);
    ASSERT_EQ(summary["ranks"].size(), 2u);
    for (const auto& rank : summary["ranks"]) {
      const uint64_t step = rank["step_ns"];
      if (lanes)
        EXPECT_LT(step, 70'000'000u) << "kernels of two streams overlap";
      else
        EXPECT_GE(step, 80'000'000u) << "one compute slot: one kernel at a time";
    }
  }
}

// Each rank receives before it sends: nobody can go on. The timeout reports per rank which node
// it waits on, and the job ends instead of hanging.
TEST(Replay, DeadlockIsReportedPerRankInsteadOfHanging) {
  const std::string prefix = write_ranks(2, [](uint32_t r, Trace& t, std::vector<NodeDraft>& nodes) {
    nodes.push_back(message(t, 1, false, 1 - r, 3, 1024));
    nodes.push_back(message(t, 2, true, 1 - r, 3, 1024, {1}));
  });
  const auto start = std::chrono::steady_clock::now();
  const auto r = replay(2, {prefix, "--timeout", "2"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(seconds, 30.0);
  EXPECT_TRUE(contains(r.err, "a deadlock")) << r.err;
  EXPECT_TRUE(contains(r.err, "the replay stopped (in warm-up pass 1 of 1)")) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 0: waits on node 1 (recv_1, recv from rank 1, 1.0 KiB)")) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 1: waits on node 1 (recv_1, recv from rank 0, 1.0 KiB)")) << r.err;
}

// --warmup K: K untimed passes over the trace, then the timed one: a 300 ms compute node takes
// about 900 ms of wall time with 2 warm-up passes, and the step reported is one pass.
TEST(Replay, WarmupPassesRunUntimedBeforeTheTimedOne) {
  const std::string dir = temp_dir();
  const std::string prefix = write_ranks(
      2,
      [](uint32_t, Trace& t, std::vector<NodeDraft>& nodes) {
        nodes.push_back(compute(t, 1, 300'000));
        nodes.push_back(collective(t, 2, CommType::AllReduce, 4096, {1}));
      },
      dir);
  const auto start = std::chrono::steady_clock::now();
  const auto r = replay(2, {prefix, "--warmup", "2", "--summary-json", dir + "/s.json"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(seconds, 0.9);
  const nlohmann::json s = read_json(dir + "/s.json");
  for (const auto& rank : s["ranks"]) {
    EXPECT_GE(rank["step_ns"].get<uint64_t>(), 300'000'000u);
    EXPECT_LT(rank["step_ns"].get<uint64_t>(), 600'000'000u) << "one pass timed, not three";
  }
  EXPECT_EQ((*row(s, "all_reduce", 2, 4096))["count"], 2u) << "the timed pass's collectives only (one per rank)";
  EXPECT_TRUE(contains(s["replayed_by"].get<std::string>(), "2 untimed warm-up passes")) << s.dump();
}

// Rank 0 has a second all-reduce that rank 1 never reaches: rank 0 waits on it, rank 1 says it
// finished; the job ends after the timeout.
TEST(Replay, ACollectiveSomeRanksNeverReachIsReportedWhereEachRankIs) {
  const std::string prefix = write_ranks(2, [](uint32_t r, Trace& t, std::vector<NodeDraft>& nodes) {
    nodes.push_back(collective(t, 1, CommType::AllReduce, 4096, {}));
    if (r == 0) nodes.push_back(collective(t, 2, CommType::AllReduce, 4096, {1}));
  });
  const auto r = replay(2, {prefix, "--timeout", "2"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 0: waits on node 2 (ALL_REDUCE_2, all_reduce of all ranks, 4.0 KiB)")) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 1: finished its trace, waiting for the others")) << r.err;
}

// Ctrl-C on mpirun (here SIGINT after 2 s) ends every rank of a replay that would spin a minute.
TEST(Replay, InterruptEndsEveryRank) {
  const std::string prefix = write_ranks(2, [](uint32_t, Trace& t, std::vector<NodeDraft>& nodes) {
    nodes.push_back(compute(t, 1, 60'000'000));
    nodes.push_back(collective(t, 2, CommType::AllReduce, 4096, {1}));
  });
  const auto start = std::chrono::steady_clock::now();
  const auto r = run({"-s", "INT", "-k", "30", "2", MPIRUN, "--oversubscribe", "-n", "2", CHAKRA_BIN, "replay", prefix},
                     "/usr/bin/timeout");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(seconds, 20.0) << r.err;
  bool left = true;  // the ranks may take a moment to go once mpirun has
  for (int i = 0; i < 100 && left; ++i) {
    left = run({"-f", prefix}, "/usr/bin/pgrep").exit_code == 0;
    if (left) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(left) << "a replay process is still running 10 s after mpirun ended";
}

// A truncated trace on one rank: every rank stops before any communication, with one message
// that names the rank and the file, and no trace is written.
TEST(Replay, BadTraceOnOneRankFailsEveryRankWithOneMessage) {
  const std::string dir = temp_dir();
  const std::string prefix = write_ranks(
      4,
      [](uint32_t, Trace& t, std::vector<NodeDraft>& nodes) {
        for (uint64_t i = 1; i <= 20; ++i)
          nodes.push_back(collective(t, i, CommType::AllReduce, 4096,
                                     i > 1 ? std::vector<uint64_t>{i - 1} : std::vector<uint64_t>{}));
      },
      dir);
  const std::string bytes = testing_support::read_raw(prefix + ".2.et");
  testing_support::write_raw(prefix + ".2.et", bytes.substr(0, bytes.size() - 7));
  const auto r = replay(4, {prefix, "--out", dir + "/out/x"});
  EXPECT_NE(r.exit_code, 0);
  size_t messages = 0;
  for (size_t at = r.err.find("cannot be replayed"); at != std::string::npos;
       at = r.err.find("cannot be replayed", at + 1))
    ++messages;
  EXPECT_EQ(messages, 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 2: " + prefix + ".2.et")) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 0: read and checked")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out")) << "nothing written";
}

// chakra calibrate runs microbenchmarks through chakra replay and writes a network and a system
// that chakra simulate reads; its residuals are those of the simulator on the written files.
TEST(Calibrate, RunsMicrobenchmarksAndWritesConfigsSimulateReads) {
  const std::string dir = temp_dir();
  const auto r =
      run({"calibrate", "--out", dir + "/cal", "--npus", "2", "--sizes", "64KiB,1MiB", "--count", "3", "--repeat", "2",
           "--types", "all_reduce,all_gather", "--mpirun", std::string(MPIRUN) + " --oversubscribe"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "rms error")) << r.out;
  const nlohmann::json c = read_json(dir + "/cal/calibration.json");
  ASSERT_EQ(c["residuals"].size(), 4u);  // each of the 2 runs of a case fitted as one
  for (const auto& res : c["residuals"]) EXPECT_EQ(res["runs"], 2) << c.dump();
  EXPECT_TRUE(fs::exists(dir + "/cal/microbenchmarks/all_gather_1MB.run2.summary.json"));
  // The residual of all-reduce 1 MiB is what chakra simulate gives for it on the written files.
  ASSERT_EQ(run({"generate", "collective", "--type", "all_reduce", "--size", "1MiB", "--npus", "2", "--output",
                 dir + "/one/ar"})
                .exit_code,
            0);
  const auto sim = run({"simulate", "--workload", dir + "/one/ar", "--network", dir + "/cal/network.yml", "--system",
                        dir + "/cal/system.json", "--json", dir + "/sim.json"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json simulated = read_json(dir + "/sim.json");
  const uint64_t end = simulated["end_ns"];
  bool found = false;
  for (const auto& res : c["residuals"])
    if (res["type"] == "all_reduce" && res["bytes"] == 1 << 20) {
      EXPECT_EQ(res["simulated_ns"].get<uint64_t>(), end) << simulated.dump();
      found = true;
    }
  EXPECT_TRUE(found) << c.dump();
}

// --sizes-of: the microbenchmarks are the workload's collectives, each type and size once.
TEST(Calibrate, SizesOfAWorkloadAreItsCollectives) {
  const std::string dir = temp_dir();
  ASSERT_EQ(run({"generate", "collective", "--type", "all_gather", "--size", "96KiB", "--npus", "2", "--count", "3",
                 "--output", dir + "/w/ag"})
                .exit_code,
            0);
  const auto r = run({"calibrate", "--out", dir + "/cal", "--npus", "2", "--sizes-of", dir + "/w", "--count", "2",
                      "--repeat", "1", "--mpirun", std::string(MPIRUN) + " --oversubscribe"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "all_gather: 96.0 KiB")) << r.out;
  const nlohmann::json c = read_json(dir + "/cal/calibration.json");
  ASSERT_EQ(c["residuals"].size(), 1u) << c.dump();
  EXPECT_EQ(c["residuals"][0]["type"], "all_gather");
  EXPECT_EQ(c["residuals"][0]["bytes"], 96 << 10);
  const auto both = run({"calibrate", "--out", dir + "/cal2", "--sizes-of", dir + "/w", "--sizes", "1MiB"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_TRUE(contains(both.err, "--sizes-of takes the types and sizes from the workload")) << both.err;
}

// A collective name calibrate does not know is a usage error before any microbenchmark runs.
TEST(Calibrate, UnknownCollectiveIsRefusedBeforeAnyReplay) {
  const std::string dir = temp_dir();
  const auto r = run({"calibrate", "--out", dir + "/cal", "--npus", "2", "--sizes", "64KiB", "--types",
                      "all_reduce,all_reduse", "--mpirun", std::string(MPIRUN) + " --oversubscribe"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--types: unknown collective 'all_reduse' (all_reduce, all_gather")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/cal/microbenchmarks/all_reduce_64KB.0.et")) << "nothing replayed first";
}
