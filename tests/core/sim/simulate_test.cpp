// The simulator against ASTRA-sim: every reference case in ../shared (exact per-NPU numbers),
// closed forms of the collective algorithms, the reference's defects handled, bad configs.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>

#include "chakra/analysis/sim_report.h"
#include "chakra/astra/generate.h"
#include "chakra/astra/text_workload.h"
#include "chakra/format/io.h"
#include "chakra/format/et_io.h"
#include "chakra/sim/simulate.h"
#include "chakra/synth/synth.h"
#include "chakra/support/error.h"
#include "chakra/trace/schema.h"
#include "test_support.h"

using namespace chakra;
using namespace chakra::astra;
using namespace chakra::sim;
using namespace testing_support;

namespace {

const std::string& inputs() {
  static const std::string dir = shared("reference/astra-sim/inputs");
  return dir;
}

struct Case {
  std::string name, backend, workload, system, network, memory, groups, flags;
  int rc;
  std::vector<uint64_t> finish, exposed;
};

std::vector<Case> load_cases() {
  std::ifstream in(shared("reference/astra-sim/cases.jsonl"));
  EXPECT_TRUE(in) << "cases.jsonl missing";
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    Case c{j["name"],
           j["backend"],
           j["workload"],
           j["system"],
           j["network"],
           j["remote_memory"],
           j["comm_group"],
           j["extra_flags"],
           j["rc"].get<int>(),
           j["finish_ns"].get<std::vector<uint64_t>>(),
           j["exposed_comm_ns"].get<std::vector<uint64_t>>()};
    cases.push_back(std::move(c));
  }
  return cases;
}

SimResult run_case(const Case& c, bool every_message = false) {
  // The reference ran in the inputs folder; relative paths (custom collectives) resolve there.
  std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(inputs());
  struct Restore {
    std::filesystem::path p;
    ~Restore() { std::filesystem::current_path(p); }
  } restore{cwd};
  SimInputs in;
  in.workload = c.workload;
  in.network = load_network(c.network);
  in.system = load_system(c.system);
  // The reference ran with ASTRA-sim's custom ring all-reduce traces under
  // examples/system/custom_collectives/; ../shared keeps them under data/chakra_et.
  std::string& custom = in.system.custom[int(Collective::AllReduce)];
  if (custom.find("custom_ring_allreduce_8npus_1MB") != std::string::npos)
    custom = shared("data/chakra_et/astra-sim_custom_ring_allreduce_8npus_1MB/custom_allreduce");
  in.memory = load_remote_memory(c.memory);
  if (c.groups != "empty") in.groups = load_comm_groups(c.groups);
  SimOptions o;
  o.backend = c.backend == "aware" ? Backend::CongestionAware : Backend::CongestionUnaware;
  o.every_message = every_message;
  std::istringstream flags(c.flags);
  for (std::string f; flags >> f;) {
    std::string value = f.substr(f.find('=') + 1);
    if (f.rfind("--num-queues-per-dim", 0) == 0)
      o.queues_per_dim = std::stoul(value);
    else if (f.rfind("--injection-scale", 0) == 0)
      o.injection_scale = std::stod(value);
    else if (f.rfind("--rendezvous-protocol", 0) == 0)
      o.rendezvous = value == "true";
    // anything else was a deliberately misspelt flag the reference ignored
  }
  return simulate(in, o);
}

std::string error_of(const Case& c) {
  return testing_support::error_of([&] { run_case(c); });
}

}  // namespace

// Every case where ASTRA-sim printed results: identical to the nanosecond, per NPU.
TEST(SimulateReference, EveryCaseWithResultsMatchesExactly) {
  std::vector<Case> cases = load_cases();
  ASSERT_EQ(cases.size(), 129u);
  int compared = 0, closed_form_aware = 0, contended = 0;
  for (const Case& c : cases) {
    if (c.rc != 0 || c.finish.empty()) continue;
    SimResult r = run_case(c);
    ASSERT_EQ(r.npus.size(), c.finish.size()) << c.name;
    std::vector<uint64_t> finish, exposed;
    for (const NpuResult& n : r.npus) {
      EXPECT_TRUE(n.finished) << c.name;
      finish.push_back(n.finish);
      exposed.push_back(n.astra_exposed_comm);
    }
    EXPECT_EQ(finish, c.finish) << c.name;
    EXPECT_EQ(exposed, c.exposed) << c.name;
    EXPECT_FALSE(r.deadlock) << c.name;
    // the every-message path matches the reference too
    SimResult e = run_case(c, true);
    for (size_t i = 0; i < e.npus.size(); ++i) EXPECT_EQ(e.npus[i].finish, c.finish[i]) << c.name;
    EXPECT_FALSE(e.closed_form_contended);
    closed_form_aware += c.backend == "aware" && !r.closed_form_contended && r.events < e.events;
    contended += r.closed_form_contended;
    ++compared;
  }
  EXPECT_EQ(compared, 123);
  // Both congestion-aware paths are exercised: ring phases solved in closed form, and runs
  // where a solved phase met other traffic on its links and was redone message by message.
  EXPECT_GE(closed_form_aware, 10);
  EXPECT_GE(contended, 1);
}

const Case& find_case(const std::vector<Case>& cases, const std::string& name) {
  for (const Case& c : cases)
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

// Where the reference crashed or printed nothing: the right numbers or a clear error.
TEST(SimulateReference, ReferenceDefectsGetResultsOrClearErrors) {
  std::vector<Case> cases = load_cases();
  // A node released by an INVALID node is issued (the reference never issues it: 0 NPUs report).
  SimResult r = run_case(find_case(cases, "case_invalid_then_comp"));
  for (const NpuResult& n : r.npus) {
    EXPECT_TRUE(n.finished);
    EXPECT_EQ(n.finish, 10000u);  // the 10 µs compute node
    EXPECT_EQ(n.astra_exposed_comm, 0u);
  }
  // A METADATA node does not crash the statistics (reference: assert, rc 134).
  r = run_case(find_case(cases, "case_metadata_node"));
  for (const NpuResult& n : r.npus) EXPECT_EQ(n.finish, 1000u);
  EXPECT_NE(error_of(find_case(cases, "case_mem_load")).find("NO_MEMORY_EXPANSION"), std::string::npos);
  std::string e = error_of(find_case(cases, "case_missing_parent"));
  EXPECT_NE(e.find("t.0.et"), std::string::npos) << e;
  EXPECT_NE(e.find("not in the file"), std::string::npos) << e;
  e = error_of(find_case(cases, "cfg_no_splits"));
  EXPECT_NE(e.find("preferred-dataset-splits"), std::string::npos) << e;
  // Multi-dimensional congestion-aware (the reference refuses, rc 255): store-and-forward makes
  // it slower than the unaware model, and every NPU ends together.
  const Case& aware = find_case(cases, "md_AR1MB_32_sw8ring4_aware_expect_fail");
  r = run_case(aware);
  uint64_t unaware = find_case(cases, "md_AR1MB_32_sw8ring4_ring2_lbw").finish[0];
  for (const NpuResult& n : r.npus) {
    EXPECT_TRUE(n.finished);
    EXPECT_EQ(n.finish, r.npus[0].finish);
  }
  EXPECT_GT(r.npus[0].finish, unaware);
}

// ---- closed forms (spec c.2) on generated workloads ----------------------------------------

namespace {

struct Fixture {
  std::string dir = temp_dir();
  std::string write_collective(CommType type, uint64_t size, uint32_t npus, uint32_t count = 1) {
    std::string prefix = dir + "/w" + std::to_string(int(type)) + "_" + std::to_string(npus);
    CollectiveOptions o;
    o.type = type, o.size = size, o.npus = npus, o.count = count;
    for (uint32_t n = 0; n < npus; ++n) write_et(collective_trace(o, n), prefix + "." + std::to_string(n) + ".et");
    return prefix;
  }
};

SystemConfig ring_system(const char* algo, uint32_t splits = 4, uint32_t active = 1) {
  std::string json = std::string(R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
    "active-chunks-per-dimension": )") +
                     std::to_string(active) + R"(, "preferred-dataset-splits": )" + std::to_string(splits) +
                     R"(, "all-reduce-implementation": [")" + algo + R"("], "all-gather-implementation": [")" + algo +
                     R"("], "reduce-scatter-implementation": [")" + algo + R"("], "all-to-all-implementation": [")" +
                     algo + R"("], "collective-optimization": "localBWAware", "local-mem-bw": 1600})";
  return parse_system(json, "test.json");
}

NetworkConfig net1(const char* topo, uint32_t n, double bw = 50, double lat = 500) {
  return parse_network(std::string("topology: [ ") + topo + " ]\nnpus_count: [ " + std::to_string(n) +
                           " ]\nbandwidth: [ " + std::to_string(bw) + " ]\nlatency: [ " + std::to_string(lat) + " ]\n",
                       "test.yml");
}

uint64_t net_time(double hops, double lat, uint64_t bytes, double bw) {
  return static_cast<uint64_t>(hops * lat + double(bytes) / (bw * (1 << 30) / 1e9));
}
uint64_t reduction(uint64_t bytes) { return 3 * static_cast<uint64_t>(double(bytes) / 1.6e12 * 1e9); }

uint64_t run_all_same(const SimInputs& in, Backend b = Backend::CongestionUnaware) {
  SimOptions o;
  o.backend = b;
  SimResult r = simulate(in, o);
  for (const NpuResult& n : r.npus) EXPECT_EQ(n.finish, r.npus[0].finish);
  return r.npus[0].finish;
}

// Every link of a congestion-aware run: its ends, messages, bytes, busy time and queueing.
void expect_same_links(const SimResult& a, const SimResult& b, const std::string& what) {
  ASSERT_EQ(a.links.size(), b.links.size()) << what;
  for (size_t l = 0; l < a.links.size(); ++l)
    EXPECT_EQ(std::tie(a.links[l].from, a.links[l].to, a.links[l].messages, a.links[l].bytes, a.links[l].busy,
                       a.links[l].queued),
              std::tie(b.links[l].from, b.links[l].to, b.links[l].messages, b.links[l].bytes, b.links[l].busy,
                       b.links[l].queued))
        << what << " link " << l;
}

}  // namespace

TEST(SimulateClosedForm, RingCollectivesOnRingSwitchAndFullyConnected) {
  Fixture f;
  const uint64_t E = 10, size = 1 << 20, chunk = size / 4;
  for (const char* topo : {"Ring", "Switch", "FullyConnected"}) {
    double hops = std::string(topo) == "Switch" ? 2 : 1;
    for (uint32_t n : {4u, 8u, 16u}) {
      SimInputs in;
      in.network = net1(topo, n);
      in.system = ring_system("ring");
      // all-reduce: E + (n-1)(net + E + R) + (n-1)(net + E) per chunk, chunks back to back
      in.workload = f.write_collective(CommType::AllReduce, size, n);
      uint64_t msg = chunk / n, net = net_time(hops, 500, msg, 50);
      EXPECT_EQ(run_all_same(in), 4 * (E + (n - 1) * (net + E + reduction(msg)) + (n - 1) * (net + E)))
          << topo << " " << n;
      // reduce-scatter: E + (n-1)(net + E + R)
      in.workload = f.write_collective(CommType::ReduceScatter, size, n);
      EXPECT_EQ(run_all_same(in), 4 * (E + (n - 1) * (net + E + reduction(msg)))) << topo << n;
      // all-gather of D per NPU: E + (n-1)(net(D) + E)
      in.workload = f.write_collective(CommType::AllGather, size, n);
      uint64_t ag = net_time(hops, 500, chunk, 50);
      EXPECT_EQ(run_all_same(in), 4 * (E + (n - 1) * (ag + E))) << topo << n;
      // all-to-all around the ring: E + n(n-1)/2 (net + E)
      in.workload = f.write_collective(CommType::AllToAll, size, n);
      EXPECT_EQ(run_all_same(in), 4 * (E + n * (n - 1) / 2 * (net + E))) << topo << n;
    }
  }
}

TEST(SimulateClosedForm, DirectAllReduceAndActiveChunks) {
  Fixture f;
  const uint64_t E = 10, size = 1 << 20, chunk = size / 4;
  for (uint32_t n : {4u, 8u, 16u}) {
    SimInputs in;
    in.network = net1("FullyConnected", n);
    in.system = ring_system("direct");
    in.workload = f.write_collective(CommType::AllReduce, size, n);
    // every peer at once: E + (net + E + R) + (net + E) per chunk
    uint64_t msg = chunk / n, net = net_time(1, 500, msg, 50);
    EXPECT_EQ(run_all_same(in), 4 * (E + net + E + reduction(msg) + net + E)) << n;
    // 4 chunks in flight on a congestion-free network take one chunk's time
    in.system = ring_system("ring", 4, 4);
    uint64_t one = E + (n - 1) * (net + E + reduction(msg)) + (n - 1) * (net + E);
    EXPECT_EQ(run_all_same(in), one) << n;
  }
}

TEST(SimulateClosedForm, CongestionAwareSwitchIsStoreAndForward) {
  Fixture f;
  // 2 NPUs on a switch, one chunk, ring all-gather: one message each way per step, each
  // crossing two links: 2 (L + S/B) instead of 2L + S/B.
  SimInputs in;
  in.network = net1("Switch", 2);
  in.system = ring_system("ring", 1);
  in.workload = f.write_collective(CommType::AllGather, 1 << 20, 2);
  uint64_t S = 1 << 20;
  double bw = 50.0 * (1 << 30) / 1e9;
  uint64_t hop = static_cast<uint64_t>(500 + double(S) / bw);
  EXPECT_EQ(run_all_same(in, Backend::CongestionAware), 10 + 2 * hop + 10);
  EXPECT_EQ(run_all_same(in, Backend::CongestionUnaware), 10 + net_time(2, 500, S, 50) + 10);
}

// Network load: a ring all-reduce of S bytes on n NPUs moves 2(n−1)/n × S from each NPU, all on
// the ring's one dimension; busy time is those bytes at its bandwidth. On the congestion-aware
// network each message crosses one link (Ring) or two (Switch: in and out of the switch), so the
// links together carry the dimension's bytes once or twice.
TEST(SimulateNetworkLoad, BytesPerDimensionAndLink) {
  Fixture f;
  const uint64_t size = 1 << 20;
  for (uint32_t n : {4u, 8u}) {
    for (const char* topo : {"Ring", "Switch"}) {
      SimInputs in;
      in.network = net1(topo, n);
      in.system = ring_system("ring");
      in.workload = f.write_collective(CommType::AllReduce, size, n);
      for (Backend b : {Backend::CongestionUnaware, Backend::CongestionAware}) {
        SimOptions o;
        o.backend = b;
        const SimResult r = simulate(in, o);
        ASSERT_EQ(r.dimensions.size(), 1u);
        const DimensionLoad& d = r.dimensions[0];
        EXPECT_EQ(d.bytes, uint64_t(n) * 2 * (n - 1) * size / n) << topo << n;
        EXPECT_EQ(d.messages, uint64_t(n) * 4 * 2 * (n - 1)) << topo << n;  // 4 chunks, 2(n−1) steps
        EXPECT_EQ(d.busy, static_cast<uint64_t>(double(d.bytes) / (50.0 * (1 << 30) / 1e9))) << topo << n;
        if (b == Backend::CongestionUnaware) {
          EXPECT_TRUE(r.links.empty());
          continue;
        }
        uint64_t link_bytes = 0;
        for (const LinkLoad& l : r.links) link_bytes += l.bytes;
        const bool via_switch = std::string(topo) == "Switch";
        EXPECT_EQ(link_bytes, d.bytes * (via_switch ? 2 : 1)) << topo << n;
        EXPECT_EQ(r.links.size(), via_switch ? 2u * n : uint64_t(n)) << topo << n;  // ring: one direction used
        for (size_t i = 1; i < r.links.size(); ++i) EXPECT_GE(r.links[i - 1].busy, r.links[i].busy);
      }
    }
  }
}

// ---- deadlocks, bad input ------------------------------------------------------------------

namespace {

void write_nodes(const std::string& path, const std::vector<NodeDraft>& nodes, Trace& t) {
  for (const NodeDraft& d : nodes) t.append(d);
  write_et(t, path);
}

}  // namespace

// A single-GPU trace on a 1-NPU network: compute replays, a collective has nobody to talk to and
// finishes at once.
TEST(SimulateGroups, OneNpuNetworkRunsASingleGpuTrace) {
  std::string dir = temp_dir();
  Trace t;
  std::vector<NodeDraft> nodes(3);
  for (uint64_t i = 0; i < 3; ++i) {
    nodes[i].id = i + 1;
    if (i) nodes[i].data_deps = {i};
  }
  nodes[0].name = t.intern("forward");
  nodes[0].type = int32_t(NodeType::Comp);
  nodes[0].duration_micros = 5;
  nodes[1].name = t.intern("all_reduce");
  nodes[1].type = int32_t(NodeType::CommColl);
  nodes[1].attrs.add_int64(t.intern("comm_type"), 0);
  nodes[1].attrs.add_int64(t.intern("comm_size"), 1 << 20);
  nodes[2].name = t.intern("backward");
  nodes[2].type = int32_t(NodeType::Comp);
  nodes[2].duration_micros = 7;
  write_nodes(dir + "/single.0.et", nodes, t);
  for (const char* topo : {"Ring", "Switch", "FullyConnected"}) {
    SimInputs in;
    in.workload = dir + "/single";
    in.network = net1(topo, 1);
    in.system = ring_system("ring");
    SimResult r = simulate(in);
    ASSERT_EQ(r.npus.size(), 1u);
    EXPECT_TRUE(r.npus[0].finished) << topo;
    EXPECT_EQ(r.npus[0].finish, 12000u) << topo;
    EXPECT_EQ(r.npus[0].astra_exposed_comm, 0u) << topo;
    EXPECT_EQ(r.messages, 0u);
  }
}

TEST(SimulateErrors, RecvWithoutSendIsAReportedDeadlock) {
  std::string dir = temp_dir();
  for (uint32_t npu = 0; npu < 2; ++npu) {
    Trace t;
    NodeDraft d;
    d.id = 1;
    d.name = t.intern(npu == 0 ? "compute" : "wait_for_npu0");
    if (npu == 0) {
      d.type = int32_t(NodeType::Comp);
      d.duration_micros = 5;
    } else {
      d.type = int32_t(NodeType::CommRecv);
      d.attrs.add_int32(t.intern("comm_src"), 0);
      d.attrs.add_int32(t.intern("comm_tag"), 7);
      d.attrs.add_int64(t.intern("comm_size"), 4096);
    }
    write_nodes(dir + "/p." + std::to_string(npu) + ".et", {d}, t);
  }
  SimInputs in;
  in.workload = dir + "/p";
  in.network = net1("Ring", 2);
  in.system = ring_system("ring");
  SimResult r = simulate(in);
  EXPECT_TRUE(r.deadlock);
  EXPECT_TRUE(r.npus[0].finished);
  EXPECT_EQ(r.npus[0].finish, 5000u);
  EXPECT_FALSE(r.npus[1].finished);
  ASSERT_EQ(r.npus[1].stuck.size(), 1u);
  EXPECT_NE(r.npus[1].stuck[0].find("wait_for_npu0"), std::string::npos);
  EXPECT_NE(r.npus[1].stuck[0].find("never sent"), std::string::npos);
}

TEST(SimulateErrors, BadConfigurationsNameTheFileAndKey) {
  auto net_error = [](const std::string& yaml) {
    return testing_support::error_of([&] { parse_network(yaml, "n.yml"); });
  };
  EXPECT_NE(net_error("topology: [ Torus ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n").find("Torus"),
            std::string::npos);
  EXPECT_NE(net_error("topology: [ Ring ]\nnpus_count: [ 0 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n")
                .find("npus_count '0' must be an integer from 1 to 2^24"),
            std::string::npos);
  EXPECT_NE(net_error("topology: [ Ring, Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n")
                .find("'npus_count' has 1 entries"),
            std::string::npos);
  EXPECT_NE(net_error("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwith: [ 1 ]\nlatency: [ 1 ]\n").find("bandwith"),
            std::string::npos);
  EXPECT_NE(net_error("topology: [ [ Ring ] ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n")
                .find("'topology' must be a list of single values"),
            std::string::npos);
  EXPECT_NE(net_error("topology: Ring\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n")
                .find("'topology' must be a list like [ 8, 4 ]"),
            std::string::npos);
  EXPECT_NE(net_error("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\nlatency: [ 2 ]\n")
                .find("n.yml: line 5: key 'latency' given twice"),
            std::string::npos);  // one YAML reader, its line numbers
  // block lists are YAML too
  NetworkConfig block =
      parse_network("topology:\n  - Switch\nnpus_count:\n  - 8\nbandwidth:\n  - 400\nlatency:\n  - 936.25\n", "b.yml");
  EXPECT_EQ(block.total_npus(), 8u);
  EXPECT_EQ(block.latency[0], 936.25);

  auto sys_error = [](const std::string& json) {
    return testing_support::error_of([&] { parse_system(json, "s.json"); });
  };
  EXPECT_NE(sys_error(R"({"preferred-dataset-split": 4})").find("preferred-dataset-split'"), std::string::npos);
  EXPECT_NE(sys_error(R"({"scheduling-policy": "RANDOM"})").find("RANDOM"), std::string::npos);
  EXPECT_NE(sys_error(R"({"all-reduce-implementation": ["rign"]})").find("rign"), std::string::npos);
  EXPECT_NE(sys_error(R"({"active-chunks-per-dimension": 0})").find("active-chunks"), std::string::npos);
  EXPECT_NE(sys_error("{").find("s.json"), std::string::npos);
  SystemConfig s = parse_system(R"({"all-to-all-implementation": ["oneDirect4", "direct"]})", "s.json");
  ASSERT_EQ(s.algorithms[int(Collective::AllToAll)].size(), 2u);
  EXPECT_TRUE(s.algorithms[int(Collective::AllToAll)][0].flat);
  EXPECT_EQ(s.algorithms[int(Collective::AllToAll)][0].window, 4);

  // A missing trace file names the file and the NPU count.
  SimInputs in;
  in.workload = temp_dir() + "/none";
  in.network = net1("Ring", 4);
  in.system = ring_system("ring");
  std::string e = testing_support::error_of([&] { simulate(in); });
  EXPECT_NE(e.find("none.0.et"), std::string::npos) << e;
}

// The closed-form ring phases against simulating every message: NPUs reach the collectives at
// different times (skewed compute), on 1-D and 2-D networks, in communicator groups, for every
// collective type.
TEST(SimulateClosedForm, RingPhasesInClosedFormEqualEveryMessageSimulated) {
  std::string dir = temp_dir();
  const uint32_t npus = 16;
  CommGroups groups{{1, {0, 2, 4, 6, 8, 10, 12, 14}}, {2, {15, 1, 13, 3, 11, 5, 9, 7}}};
  for (uint32_t npu = 0; npu < npus; ++npu) {
    Trace t;
    uint64_t id = 0;
    std::vector<uint64_t> prev;
    auto add = [&](NodeType type, uint64_t micros, int comm_type, uint64_t size, const char* pg) {
      NodeDraft d;
      d.id = id++;
      d.name = t.intern("n" + std::to_string(d.id));
      d.type = int32_t(type);
      d.duration_micros = micros;
      d.data_deps = prev;
      d.attrs.add_bool(t.intern("is_cpu_op"), false);
      if (type == NodeType::CommColl) {
        d.attrs.add_int64(t.intern("comm_type"), comm_type);
        d.attrs.add_int64(t.intern("comm_size"), int64_t(size));
        if (pg) d.attrs.add_string(t.intern("pg_name"), t.intern(pg));
      }
      t.append(d);
      prev = {d.id};
    };
    add(NodeType::Comp, 1 + (npu * 7) % 5, 0, 0, nullptr);
    add(NodeType::CommColl, 0, 0, 1 << 20, nullptr);  // all-reduce
    add(NodeType::Comp, 1 + (npu * 3) % 4, 0, 0, nullptr);
    add(NodeType::CommColl, 0, 7, 3 << 18, nullptr);              // reduce-scatter
    add(NodeType::CommColl, 0, 2, 1 << 16, nullptr);              // all-gather
    add(NodeType::CommColl, 0, 6, 1 << 18, nullptr);              // all-to-all
    add(NodeType::CommColl, 0, 0, 1 << 19, npu % 2 ? "2" : "1");  // group all-reduce
    write_et(t, dir + "/skew." + std::to_string(npu) + ".et");
  }
  // Congestion-aware: runs solved in closed form, and runs where a solved phase met other
  // traffic on its links and was redone message by message (both must give the same figures).
  int aware_closed = 0, aware_contended = 0, aware_rerun_kept = 0;
  for (const char* net :
       {"topology: [ Ring ]\nnpus_count: [ 16 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
        "topology: [ Switch ]\nnpus_count: [ 16 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
        "topology: [ FullyConnected ]\nnpus_count: [ 16 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
        "topology: [ Switch, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 700, 1000 ]\n"}) {
    for (const char* opt : {"localBWAware", "baseline"}) {
      for (int chunks : {1, 2}) {
        SimInputs in;
        in.workload = dir + "/skew";
        in.network = parse_network(net, "n.yml");
        in.system = parse_system(std::string(R"({"endpoint-delay": 10, "active-chunks-per-dimension": )") +
                                     std::to_string(chunks) +
                                     R"(, "preferred-dataset-splits": 3, "all-reduce-implementation": ["ring", "ring"],
          "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
          "all-to-all-implementation": ["ring", "ring"], "local-mem-bw": 1600, "collective-optimization": ")" +
                                     opt + "\"}",
                                 "s.json");
        if (in.network.npus.size() == 1)
          for (auto& a : in.system.algorithms) a.resize(1);
        in.groups = groups;
        for (Backend backend : {Backend::CongestionUnaware, Backend::CongestionAware}) {
          const std::string what = std::string(net) + opt + " chunks " + std::to_string(chunks) +
                                   (backend == Backend::CongestionAware ? " aware" : " unaware");
          SimOptions fast, exact;
          fast.backend = exact.backend = backend;
          exact.every_message = true;
          SimResult a = simulate(in, fast), b = simulate(in, exact);
          ASSERT_EQ(a.npus.size(), npus);
          for (uint32_t i = 0; i < npus; ++i) {
            EXPECT_TRUE(a.npus[i].finished);
            EXPECT_EQ(a.npus[i].finish, b.npus[i].finish) << what << " NPU " << i;
            EXPECT_EQ(a.npus[i].astra_exposed_comm, b.npus[i].astra_exposed_comm) << what;
          }
          EXPECT_EQ(a.messages, b.messages) << what;
          if (backend == Backend::CongestionUnaware) {
            EXPECT_FALSE(a.closed_form_contended);
            EXPECT_LT(a.events * 4, b.events) << what;
          } else if (a.closed_form_contended) {
            ++aware_contended;
            aware_rerun_kept += a.events < b.events;  // the rerun kept the phases that had ended
          } else {
            ++aware_closed;
            EXPECT_LT(a.events, b.events) << what;
          }
          // Closed-form phases load the network exactly as the messages they stand for.
          ASSERT_EQ(a.dimensions.size(), b.dimensions.size());
          for (size_t d = 0; d < a.dimensions.size(); ++d) {
            EXPECT_EQ(a.dimensions[d].messages, b.dimensions[d].messages) << what << " dim " << d;
            EXPECT_EQ(a.dimensions[d].bytes, b.dimensions[d].bytes) << what << " dim " << d;
            EXPECT_EQ(a.dimensions[d].busy, b.dimensions[d].busy) << what << " dim " << d;
          }
          expect_same_links(a, b, what);
        }
      }
    }
  }
  EXPECT_GE(aware_closed, 3);
  EXPECT_GE(aware_contended, 1);
  EXPECT_GE(aware_rerun_kept, 1);
  std::printf("congestion-aware: %d runs in closed form, %d redone (%d keeping the closed forms that had ended)\n",
              aware_closed, aware_contended, aware_rerun_kept);
}

// One collective on NPUs that all start together, congestion-aware: every member goes through
// the same times, so one member is solved for all (ASTRA-sim's 1024-NPU switch figure: the
// all-reduce of ../shared/docs/astra-sim-analytical-model.md c.5, here on 64 NPUs), and ring
// links on a ring or fully-connected network are never shared.
TEST(SimulateClosedForm, CongestionAwareRingPhasesOfEqualStartsEqualEveryMessage) {
  Fixture f;
  for (const char* topo : {"Switch", "Ring", "FullyConnected"}) {
    for (CommType type : {CommType::AllReduce, CommType::AllToAll, CommType::AllGather}) {
      SimInputs in;
      in.network = net1(topo, 64, 50, 500);
      in.system = ring_system("ring");
      in.workload = f.write_collective(type, 1 << 20, 64);
      SimOptions fast, exact;
      fast.backend = exact.backend = Backend::CongestionAware;
      exact.every_message = true;
      SimResult a = simulate(in, fast), b = simulate(in, exact);
      ASSERT_EQ(a.npus.size(), 64u);
      EXPECT_FALSE(a.closed_form_contended) << topo;
      EXPECT_LT(a.events * 100, b.events) << topo;
      for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(a.npus[i].finish, b.npus[i].finish) << topo << " NPU " << i;
      ASSERT_EQ(a.links.size(), b.links.size());
      for (size_t l = 0; l < a.links.size(); ++l)
        EXPECT_EQ(std::tie(a.links[l].messages, a.links[l].bytes, a.links[l].queued),
                  std::tie(b.links[l].messages, b.links[l].bytes, b.links[l].queued))
            << topo << " link " << l;
    }
  }
}

namespace {

// Writes PREFIX.{npu}.et, each NPU's nodes made by `make(npu, trace, nodes)`.
std::string write_traces(uint32_t npus, const std::function<void(uint32_t, Trace&, std::vector<NodeDraft>&)>& make) {
  std::string prefix = temp_dir() + "/t";
  for (uint32_t npu = 0; npu < npus; ++npu) {
    Trace t;
    std::vector<NodeDraft> nodes;
    make(npu, t, nodes);
    write_nodes(prefix + "." + std::to_string(npu) + ".et", nodes, t);
  }
  return prefix;
}

}  // namespace

// Replay-model traces (chakra convert pytorch of a linked trace): a lane per CPU thread and GPU
// stream instead of one CPU, one compute and one communication slot; each NPU starts as much
// later as its measured start, and the result has the measured step beside the simulated one.
TEST(SimulateReplay, LanesPerThreadAndStreamAndMeasuredStarts) {
  auto make = [](bool lanes, bool every_start = true) {
    return write_traces(2, [lanes, every_start](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
      if (lanes) {
        AttrDrafts meta;
        meta.add_bool(t.intern("replay_lanes"), true);
        if (every_start || npu == 0) meta.add_uint64(t.intern("replay_start_micros"), 1000 + 3 * npu);
        t.set_metadata(StringPool::kEmpty, meta);
      }
      // Two CPU ops on threads 1 and 2; on stream 7 two kernels, one after each; on stream 9 one.
      auto node = [&](uint64_t id, bool cpu, int64_t lane, uint64_t dur, std::vector<uint64_t> deps) {
        NodeDraft d;
        d.id = id;
        d.name = t.intern("op" + std::to_string(id));
        d.type = int32_t(NodeType::Comp);
        d.duration_micros = dur;
        d.data_deps = std::move(deps);
        d.start_time_micros = 1000 + 3 * npu + (id == 4 ? 15 : 0);
        d.attrs.add_bool(t.intern("is_cpu_op"), cpu);
        d.attrs.add_int64(t.intern(cpu ? "tid" : "stream"), lane);
        nodes.push_back(d);
      };
      node(1, true, 1, 10, {});
      node(2, true, 2, 10, {});
      node(3, false, 7, 5, {1});
      node(4, false, 7, 5, {2});
      node(5, false, 9, 5, {2});
    });
  };
  SimInputs in;
  in.network = net1("Ring", 2);
  in.system = ring_system("ring");
  in.workload = make(false);
  SimResult slots = simulate(in);  // ASTRA-sim: CPU 0-10, 10-20; compute 10-15, 20-25, 25-30
  EXPECT_EQ(slots.npus[0].finish, 30000u);
  EXPECT_EQ(slots.npus[1].finish, 30000u);
  EXPECT_EQ(slots.npus[0].measured_step, 20000u);  // measured: first start to op4's end
  in.workload = make(true);
  SimResult lanes = simulate(in);  // threads together 0-10; stream 7: 10-15, 15-20; stream 9: 10-15
  EXPECT_EQ(lanes.npus[0].start, 0u);
  EXPECT_EQ(lanes.npus[0].finish, 20000u);
  EXPECT_EQ(lanes.npus[1].start, 3000u);
  EXPECT_EQ(lanes.npus[1].finish, 23000u);
  EXPECT_EQ(lanes.npus[1].measured_step, 20000u);
  EXPECT_EQ(lanes.npus[1].astra_exposed_comm, 5000u);  // its 20 µs step less 15 µs of kernels
  // A trace without a measured start among them: no NPU is offset.
  in.workload = make(true, false);
  SimResult unaligned = simulate(in);
  EXPECT_EQ(unaligned.npus[1].start, 0u);
  EXPECT_EQ(unaligned.npus[1].finish, 20000u);
}

// Measured exposed communication: per collective, from its last measured arrival over the
// ranks to the rank's end of it, less the time the rank's measured compute kernels covered.
TEST(SimulateReplay, MeasuredExposedCommunicationStartsAtTheLastArrival) {
  // Two all-reduces per NPU, measured at (µs): NPU 0 100-200 and 300-340, NPU 1 150-200 and
  // 320-345; NPU 0 also ran a kernel 160-180 (inside the first window) and NPU 1 one 90-140
  // (before it). Windows: first 150-200 on both, second 320-340 and 320-345.
  auto prefix = [](bool same_count) {
    return write_traces(2, [same_count](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
      auto node = [&](uint64_t id, NodeType type, uint64_t start, uint64_t end) {
        NodeDraft d;
        d.id = id;
        d.name = t.intern("op" + std::to_string(id));
        d.type = int32_t(type);
        d.start_time_micros = start;
        d.duration_micros = end - start;
        d.attrs.add_bool(t.intern("is_cpu_op"), false);
        if (type == NodeType::CommColl) {
          d.attrs.add_int64(t.intern("comm_type"), 0);
          d.attrs.add_int64(t.intern("comm_size"), 1024);
        }
        nodes.push_back(d);
      };
      node(1, NodeType::CommColl, npu ? 150 : 100, 200);
      node(2, NodeType::CommColl, npu ? 320 : 300, npu ? 345 : 340);
      if (!same_count && npu == 1) nodes.back().start_time_micros = 0;  // not measured
      node(3, NodeType::Comp, npu ? 90 : 160, npu ? 140 : 180);
    });
  };
  SimInputs in;
  in.network = net1("Ring", 2);
  in.system = ring_system("ring");
  in.workload = prefix(true);
  SimResult r = simulate(in);
  EXPECT_EQ(r.npus[0].measured_exposed_transfer, (50u - 20u + 20u) * 1000u);
  EXPECT_EQ(r.npus[1].measured_exposed_transfer, (50u + 25u) * 1000u);
  // Exposed communication, one definition: communication kernels while no compute kernel runs
  // (NPU 0: 100–200 and 300–340 less 160–180; NPU 1: 150–200 and 320–345, its kernel before).
  EXPECT_EQ(r.npus[0].measured_exposed_comm, (100u + 40u - 20u) * 1000u);
  EXPECT_EQ(r.npus[1].measured_exposed_comm, (50u + 25u) * 1000u);
  // The simulated figures by the same definitions, from the simulated spans.
  for (const NpuResult& n : r.npus) {
    EXPECT_EQ(n.exposed_comm(), n.comm - n.overlap);
    EXPECT_LE(n.exposed_transfer, n.exposed_comm());
  }
  // NPUs with different numbers of a communicator's measured collectives: not matched.
  in.workload = prefix(false);
  r = simulate(in);
  EXPECT_EQ(r.npus[0].measured_exposed_transfer, 0u);
  EXPECT_EQ(r.npus[1].measured_exposed_transfer, 0u);
  EXPECT_EQ(r.npus[1].measured_exposed_comm, 50u * 1000u);  // only its measured collective
}

// Remote memory: per NPU accesses are independent; per node and pooled ones queue (FIFO).
TEST(SimulateMemory, PerNodeAndPoolAccessesQueue) {
  std::string prefix = write_traces(4, [](uint32_t, Trace& t, std::vector<NodeDraft>& nodes) {
    NodeDraft d;
    d.id = 1;
    d.name = t.intern("load");
    d.type = int32_t(NodeType::MemLoad);
    d.attrs.add_uint64(t.intern("tensor_size"), 1 << 20);
    nodes.push_back(d);
  });
  SimInputs in;
  in.workload = prefix;
  in.network = net1("Ring", 4);
  in.system = ring_system("ring");
  const Tick access = 1000 + (1 << 20) / 100;  // latency + bytes / (GB/s as B/ns), truncated
  auto finishes = [&](const char* json) {
    in.memory = parse_remote_memory(json, "m.json");
    std::vector<Tick> f;
    for (const NpuResult& n : simulate(in).npus) f.push_back(n.finish);
    return f;
  };
  EXPECT_EQ(
      finishes(R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 1000, "remote-mem-bw": 100})"),
      (std::vector<Tick>{access, access, access, access}));
  EXPECT_EQ(finishes(R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-latency": 1000,
                         "remote-mem-bw": 100, "num-npus-per-node": 2})"),
            (std::vector<Tick>{access, 2 * access, access, 2 * access}));
  EXPECT_EQ(finishes(R"({"memory-type": "MEMORY_POOL", "remote-mem-latency": 1000, "remote-mem-bw": 100})"),
            (std::vector<Tick>{access, 2 * access, 3 * access, 4 * access}));
}

// Process groups announced by a METADATA node (PyTorch's JSON, as the converter stores it)
// behave exactly as the same groups given in a comm-group file.
TEST(SimulateGroups, MetadataProcessGroupsEqualTheGroupFile) {
  auto make = [](bool metadata) {
    return write_traces(4, [metadata](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
      if (metadata) {
        NodeDraft m;
        m.id = 0;
        m.name = t.intern("## process_group:init ##");
        m.type = int32_t(NodeType::Metadata);
        m.has_inputs = true;
        m.inputs.values = t.intern(R"(['[{"pg_name": "1", "ranks": [0, 2]}, {"pg_name": "2", "ranks": [3, 1]}]'])");
        nodes.push_back(m);
      }
      NodeDraft c;
      c.id = 1;
      c.name = t.intern("ar");
      c.type = int32_t(NodeType::CommColl);
      if (metadata) c.data_deps = {0};
      c.attrs.add_int64(t.intern("comm_type"), 0);
      c.attrs.add_int64(t.intern("comm_size"), 1 << 20);
      c.attrs.add_string(t.intern("pg_name"), t.intern(npu % 2 ? "2" : "1"));
      nodes.push_back(c);
    });
  };
  SimInputs in;
  in.network = net1("Ring", 4);
  in.system = ring_system("ring");
  in.workload = make(true);
  SimResult from_metadata = simulate(in);
  in.workload = make(false);
  in.groups = parse_comm_groups(R"({"1": [0, 2], "2": [3, 1]})", "g.json");
  SimResult from_file = simulate(in);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(from_metadata.npus[i].finished);
    EXPECT_GT(from_metadata.npus[i].finish, 0u);
    EXPECT_EQ(from_metadata.npus[i].finish, from_file.npus[i].finish) << i;
  }
  // without the groups the pg_name is an error naming it
  in.groups.clear();
  std::string e = testing_support::error_of([&] { simulate(in); });
  EXPECT_NE(e.find("communicator group 1 is not defined"), std::string::npos) << e;
}

TEST(SimulateErrors, BadNodesAndOtherConfigFiles) {
  std::string prefix = write_traces(2, [](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
    NodeDraft d;
    d.id = 1;
    d.name = t.intern("self_send");
    d.type = int32_t(NodeType::CommSend);
    d.attrs.add_int32(t.intern("comm_dst"), int32_t(npu));
    d.attrs.add_int32(t.intern("comm_tag"), 1);
    d.attrs.add_int64(t.intern("comm_size"), 8);
    nodes.push_back(d);
  });
  SimInputs in;
  in.workload = prefix;
  in.network = net1("Ring", 2);
  in.system = ring_system("ring");
  std::string e = testing_support::error_of([&] { simulate(in); });
  EXPECT_NE(e.find("t.0.et: node 1 (self_send): comm_dst 0 is not another NPU"), std::string::npos) << e;
  EXPECT_NE(
      testing_support::error_of([] { parse_system(R"({"model-shared-bus": 1})", "s.json"); }).find("model-shared-bus"),
      std::string::npos);
  EXPECT_NE(testing_support::error_of([] {
              parse_system(R"({"per-node-custom-implementation": "x.yml"})", "s.json");
            }).find("per-node-custom-implementation"),
            std::string::npos);
  EXPECT_NE(testing_support::error_of([] {
              parse_remote_memory(R"({"memory-type": "MEMORY_POOL"})", "m.json");
            }).find("'remote-mem-latency' is required"),
            std::string::npos);
  EXPECT_NE(
      testing_support::error_of([] { parse_remote_memory(R"({"memory-type": "FLASH"})", "m.json"); }).find("FLASH"),
      std::string::npos);
  EXPECT_NE(testing_support::error_of([] { parse_comm_groups(R"({"0": [1, 2]})", "g.json"); }).find("0 means all NPUs"),
            std::string::npos);
  EXPECT_NE(testing_support::error_of([] { parse_comm_groups(R"({"1": [1, 1]})", "g.json"); }).find("repeated"),
            std::string::npos);
}

// A group's collectives are told apart from the global ones by their stream ids (tags), as in
// the reference: NPUs that issue a group and a global all-reduce in opposite orders wait for
// each other forever instead of pairing one's group messages with the other's global ones.
TEST(SimulateGroups, GroupAndGlobalCollectivesDoNotMatchEachOther) {
  std::string prefix = write_traces(2, [](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
    for (uint64_t k = 0; k < 2; ++k) {
      NodeDraft c;
      c.id = k;
      c.name = t.intern("ar" + std::to_string(k));
      c.type = int32_t(NodeType::CommColl);
      if (k) c.data_deps = {0};
      c.attrs.add_int64(t.intern("comm_type"), 0);
      c.attrs.add_int64(t.intern("comm_size"), 1 << 20);
      if ((npu == 0) == (k == 0)) c.attrs.add_string(t.intern("pg_name"), t.intern("1"));
      nodes.push_back(c);
    }
  });
  SimInputs in;
  in.workload = prefix;
  in.network = net1("Ring", 2);
  in.system = ring_system("ring");
  in.groups = parse_comm_groups(R"({"1": [0, 1]})", "g.json");
  for (bool every_message : {false, true}) {
    SimOptions o;
    o.every_message = every_message;
    SimResult r = simulate(in, o);
    EXPECT_TRUE(r.deadlock);
    EXPECT_FALSE(r.npus[0].finished);
    EXPECT_FALSE(r.npus[1].finished);
  }
}

// A run that keeps making events while its clock and its finished nodes stand still is stopped
// with a report. With no latency, no endpoint delay and a link fast enough that every message
// takes 0 ns, a congestion-aware all-to-all makes all its events at time 0.
TEST(SimulateErrors, EventsWithoutProgressStopTheRun) {
  Fixture f;
  SimInputs in;
  in.network = net1("Ring", 16, 1e9, 0);
  in.system = ring_system("ring");
  in.system.endpoint_delay = 0;
  in.workload = f.write_collective(CommType::AllToAll, 1 << 10, 16);
  SimOptions o;
  o.backend = Backend::CongestionAware;
  o.every_message = true;             // events at time 0 (closed-form phases would make few)
  SimResult whole = simulate(in, o);  // the default bound is far above this run's events
  ASSERT_EQ(whole.npus.size(), 16u);
  for (const NpuResult& n : whole.npus) EXPECT_TRUE(n.finished && n.finish == 0);
  ASSERT_GT(whole.events, uint64_t{3} << 12);
  o.max_events_without_progress = uint64_t{2} << 12;
  try {
    simulate(in, o);
    ADD_FAILURE() << "the run was not stopped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(in.workload + ".*.et: no progress: 8192 events at 0 ns without the clock "
                                                       "advancing or a node finishing (0 nodes finished"),
              std::string::npos)
        << e.what();
  }
}

// What-if speedups: matching nodes' replayed durations shrink, others do not; a collective's
// size shrinks, so its transfer does.
TEST(SimulateWhatIf, MatchingNodesRunFaster) {
  std::string prefix = write_traces(2, [](uint32_t, Trace& t, std::vector<NodeDraft>& nodes) {
    auto add = [&](uint64_t id, const char* name, NodeType type, uint64_t micros, std::vector<uint64_t> deps) {
      NodeDraft d;
      d.id = id;
      d.name = t.intern(name);
      d.type = int32_t(type);
      d.duration_micros = micros;
      d.data_deps = std::move(deps);
      d.attrs.add_bool(t.intern("is_cpu_op"), false);
      if (type == NodeType::CommColl) {
        d.attrs.add_int64(t.intern("comm_type"), 0);
        d.attrs.add_int64(t.intern("comm_size"), 1 << 24);
      }
      nodes.push_back(d);
    };
    add(1, "gemm_fwd", NodeType::Comp, 100, {});
    add(2, "softmax", NodeType::Comp, 40, {1});
    add(3, "allreduce_grads", NodeType::CommColl, 0, {2});
  });
  SimInputs in;
  in.workload = prefix;
  in.network = net1("Ring", 2);
  in.system = ring_system("ring");
  const SimResult base = simulate(in);
  SimOptions o;
  o.speedups.push_back({"gemm", 4});
  const SimResult gemm = simulate(in, o);
  EXPECT_EQ(base.end() - gemm.end(), 75000u);  // 100 µs → 25 µs
  o.speedups = {{"allreduce", 2}};
  const SimResult comm = simulate(in, o);
  EXPECT_LT(comm.end(), base.end());
  EXPECT_EQ(comm.dimensions[0].bytes * 2, base.dimensions[0].bytes);
  o.speedups = {{"nothing matches", 3}};
  EXPECT_EQ(simulate(in, o).end(), base.end());
}

// Slowdowns: a synchronous data-parallel step (compute, then an all-reduce every NPU waits for)
// grows by exactly the slow NPU's extra compute or its start delay; half the bandwidth doubles a
// latency-free transfer; every NPU's communication k times slower is the network's bandwidth
// divided by k; one slow sender slows the ring it is in; a spec names what it cannot read.
namespace {
// Whether f throws a chakra::Error whose message contains `part` (printed when not).
::testing::AssertionResult has_error(const std::function<void()>& f, const std::string& part) {
  const std::string e = testing_support::error_of(f);
  if (e.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "error '" << e << "' lacks '" << part << "'";
}
}  // namespace

TEST(SimulateSlowdown, ComputeDelayBandwidthAndComm) {
  const uint64_t compute_us = 500;
  std::string prefix = write_traces(8, [&](uint32_t, Trace& t, std::vector<NodeDraft>& nodes) {
    NodeDraft c;
    c.id = 1;
    c.name = t.intern("gemm");
    c.type = int32_t(NodeType::Comp);
    c.duration_micros = compute_us;
    c.attrs.add_bool(t.intern("is_cpu_op"), false);
    nodes.push_back(c);
    NodeDraft a;
    a.id = 2;
    a.name = t.intern("allreduce");
    a.type = int32_t(NodeType::CommColl);
    a.data_deps = {1};
    a.attrs.add_bool(t.intern("is_cpu_op"), false);
    a.attrs.add_int64(t.intern("comm_type"), 0);
    a.attrs.add_int64(t.intern("comm_size"), 64 << 20);
    nodes.push_back(a);
  });
  SimInputs in;
  in.workload = prefix;
  in.network = net1("Ring", 8, 50, 0);
  in.system = ring_system("ring");
  const SimResult base = simulate(in);
  ASSERT_FALSE(base.deadlock);
  auto run = [&](const std::string& spec) {
    SimOptions o;
    o.slowdown = parse_slowdowns(spec, "test");
    const SimResult r = simulate(in, o);
    EXPECT_FALSE(r.deadlock) << spec;
    return r;
  };
  // Compute ×1.5 on NPU 3: the step grows by 0.5 × its compute (within 1%; here exactly).
  const double extra = 0.5 * compute_us * 1000;
  EXPECT_NEAR(static_cast<double>(run("npu=3:compute=1.5").end() - base.end()), extra, 0.01 * extra);
  EXPECT_EQ(run("npu=3:compute=1.5").npus[3].compute, 750000u);
  EXPECT_EQ(run("npu=3:compute=1.5").npus[0].compute, 500000u);
  // A 20 µs late start on NPU 5 delays everyone's all-reduce by as much.
  EXPECT_EQ(run("npu=5:delay=20us").end() - base.end(), 20000u);
  // Half the bandwidth doubles the transfer time, the part of the step bandwidth decides: a ring
  // all-reduce moves 2 (n - 1) / n of its bytes over each NPU's link (the rest, latency-free here,
  // is reductions and endpoint delays). Within 1%.
  const double serial = 2.0 * 7 / 8 * (64 << 20) / (50.0 * (1 << 30) / 1e9);
  EXPECT_NEAR(static_cast<double>(run("dim=0:bandwidth=0.5").end() - base.end()), serial, 0.01 * serial);
  EXPECT_NEAR(static_cast<double>(base.end() - run("dim=0:bandwidth=2").end()), serial / 2, 0.01 * serial);
  // Every NPU's communication twice as slow is the same as half the bandwidth.
  EXPECT_EQ(run("npu=all:comm=2").end(), run("dim=0:bandwidth=0.5").end());
  // One slow sender slows the ring, less than all of them do.
  const Tick one = run("npu=3:comm=2").end();
  EXPECT_GT(one, base.end());
  EXPECT_LT(one, run("npu=all:comm=2").end());
  // Settings multiply, `all` covers listed NPUs too, delays add.
  const Slowdowns s =
      parse_slowdowns("npu=1-2:compute=2\nnpu=all:compute=1.5  # every NPU\nnpu=2:delay=1ms;npu=2:delay=5", "f.txt");
  EXPECT_EQ(s.compute_of(1), 3);
  EXPECT_EQ(s.compute_of(7), 1.5);
  EXPECT_EQ(s.delay_of(2), 1000005u);
  EXPECT_EQ(s.delay_of(3), 0u);
  // Written back (the web page's table edits it so) it reads as the same slowdowns.
  const Slowdowns back = parse_slowdowns(format_slowdowns(s), "formatted");
  for (uint32_t n = 0; n < 10; ++n) {
    EXPECT_DOUBLE_EQ(back.compute_of(n), s.compute_of(n)) << format_slowdowns(s);
    EXPECT_EQ(back.delay_of(n), s.delay_of(n)) << format_slowdowns(s);
  }
  EXPECT_EQ(format_slowdowns(parse_slowdowns("dim=1:bandwidth=0.5; npu=2:comm=3", "x")),
            "npu=2:comm=3; dim=1:bandwidth=0.5");
  EXPECT_EQ(format_slowdowns(Slowdowns()), "");
  for (const auto& [bad, message] :
       std::vector<std::pair<std::string, std::string>>{{"npu=3", "no setting after the npu list"},
                                                        {"gpu=3:compute=2", "starts with npu=LIST or dim=LIST"},
                                                        {"npu=3:compute=0", "'0' is not a factor"},
                                                        {"npu=3:speed=2", "'speed' is not a setting of npu"},
                                                        {"dim=0:compute=2", "'compute' is not a setting of dim"},
                                                        {"npu=5-2:compute=2", "'5-2' is not a number or a range"},
                                                        {"npu=1:delay=soon", "'soon' is not a delay"}}) {
    const std::string spec = bad;  // a lambda may not capture a structured binding (clang 14)
    EXPECT_TRUE(
        has_error([&] { parse_slowdowns(spec, "--slowdown"); }, "--slowdown: slowdown '" + spec + "': " + message));
  }
  EXPECT_TRUE(has_error([&] { parse_slowdowns("npu=1:compute=2\nnpu=x:comm=2", "f.txt"); },
                        "f.txt:2: slowdown 'npu=x:comm=2'"));
  EXPECT_TRUE(has_error([&] { run("npu=8:compute=2"); }, "the slowdowns name NPU 8, and the network has 8 NPUs"));
  EXPECT_TRUE(
      has_error([&] { run("dim=1:bandwidth=2"); }, "the slowdowns name dimension 1, and the network has 1 dimensions"));
}

// ---- mirrored runs: NPU 0 simulated for every alike NPU --------------------------------------

namespace {

// PREFIX.{npu}.et of one of ../shared's text workloads, numbered as the reference converter
// numbers them (NPU n's ids start at n x nodes per NPU): the same up to node ids on every NPU.
std::string write_text_workload(const std::string& name, uint32_t npus) {
  const std::string file = shared("data/text_workloads/" + name + ".txt");
  const TextWorkload workload = parse_text_workload(read_file(file), file);
  const std::string prefix = temp_dir() + "/" + name;
  uint64_t first_id = 0;
  for (uint32_t n = 0; n < npus; ++n) {
    const Trace t = text_workload_trace(workload, 1, first_id);
    first_id += t.size();
    write_et(t, prefix + "." + std::to_string(n) + ".et");
  }
  return prefix;
}

// Everything a run reports but its event count (a mirrored run has fewer events).
void expect_same_results(const SimResult& a, const SimResult& b, const std::string& what) {
  ASSERT_EQ(a.npus.size(), b.npus.size()) << what;
  for (size_t i = 0; i < a.npus.size(); ++i) {
    const NpuResult &x = a.npus[i], &y = b.npus[i];
    EXPECT_EQ(std::tie(x.finished, x.finish, x.astra_exposed_comm, x.compute, x.comm, x.cpu, x.memory, x.overlap,
                       x.nodes, x.start),
              std::tie(y.finished, y.finish, y.astra_exposed_comm, y.compute, y.comm, y.cpu, y.memory, y.overlap,
                       y.nodes, y.start))
        << what << " NPU " << i;
  }
  for (int t = 0; t <= kCollectiveTypes; ++t)
    EXPECT_EQ(std::tie(a.collectives[t].count, a.collectives[t].bytes, a.collectives[t].time),
              std::tie(b.collectives[t].count, b.collectives[t].bytes, b.collectives[t].time))
        << what << " " << collective_totals_name(t);
  EXPECT_EQ(a.messages, b.messages) << what;
  EXPECT_EQ(a.deadlock, b.deadlock) << what;
  ASSERT_EQ(a.dimensions.size(), b.dimensions.size()) << what;
  for (size_t d = 0; d < a.dimensions.size(); ++d)
    EXPECT_EQ(std::tie(a.dimensions[d].messages, a.dimensions[d].bytes, a.dimensions[d].busy),
              std::tie(b.dimensions[d].messages, b.dimensions[d].bytes, b.dimensions[d].busy))
        << what << " dim " << d;
}

}  // namespace

// Traces that are the same up to node ids on a network that treats every ring of a dimension
// alike: NPU 0 runs for all, and every figure is what simulating each NPU gives, and what
// simulating each NPU's every message gives.
TEST(SimulateMirrored, AlikeNpusRunOnceWithEveryNpusResults) {
  const std::string sys = inputs() + "/sys/";
  int mirrored = 0;
  for (const char* name : {"astra-sim-1.0__Resnet50_DataParallel", "astra-sim-1.0__microAllReduce",
                           "astra-sim-1.0__MLP_ModelParallel", "chakra_eg_converter__AllToAll_128KB",
                           "chakra_eg_converter__ReduceScatter_128KB", "chakra_eg_converter__AllGather_64KB"}) {
    SimInputs in;
    in.workload = write_text_workload(name, 16);
    for (const char* net :
         {"topology: [ Ring ]\nnpus_count: [ 16 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
          "topology: [ Switch, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 100, 700 ]\n",
          "topology: [ FullyConnected, Ring, Switch ]\nnpus_count: [ 2, 4, 2 ]\nbandwidth: [ 300, 100, 25 ]\n"
          "latency: [ 50, 500, 1500 ]\n"}) {
      in.network = parse_network(net, "n.yml");
      for (const char* system : {"ring_s4_c1.json", "ring_s4_c4.json", "ring_fifo.json"}) {
        in.system = load_system(sys + system);
        const std::string what = std::string(name) + " " + net + system;
        SimOptions each, every_message;
        each.every_npu = true;
        every_message.every_message = true;  // every NPU, and every message of every phase
        const SimResult a = simulate(in), b = simulate(in, each), c = simulate(in, every_message);
        EXPECT_EQ(a.simulated_npus, 1u) << what;
        EXPECT_EQ(b.simulated_npus, 16u) << what;
        EXPECT_EQ(c.simulated_npus, 16u) << what;
        EXPECT_LT(a.events * 8, b.events) << what;
        expect_same_results(a, b, what);
        expect_same_results(a, c, what + " (every message)");
        mirrored += a.simulated_npus == 1;
      }
    }
  }
  EXPECT_EQ(mirrored, 54);
}

// Direct phases (every peer at once) run as one where every peer's message takes the same time
// (switch and fully-connected dimensions): the closed form gives every figure of simulating
// each NPU and each message. A direct phase on a ring dimension (peers at different distances)
// or with a window makes the run simulate each NPU, with the same results.
TEST(SimulateMirrored, DirectPhasesRunOnceWhereEveryPeerIsAlike) {
  const std::string sys = inputs() + "/sys/";
  int mirrored = 0, runs = 0;
  for (const char* name : {"astra-sim-1.0__Resnet50_DataParallel", "chakra_eg_converter__AllToAll_128KB",
                           "chakra_eg_converter__ReduceScatter_128KB", "chakra_eg_converter__AllGather_64KB"}) {
    SimInputs in;
    in.workload = write_text_workload(name, 16);
    for (const char* net :
         {"topology: [ Switch ]\nnpus_count: [ 16 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
          "topology: [ FullyConnected ]\nnpus_count: [ 16 ]\nbandwidth: [ 150 ]\nlatency: [ 700 ]\n",
          "topology: [ Switch, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 100, 700 ]\n",
          "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 100, 700 ]\n"}) {
      in.network = parse_network(net, "n.yml");
      for (const char* system : {"direct_s4_c1.json", "direct_ring_s4_c1.json", "direct4"}) {
        if (std::string(system) == "direct4") {  // at most 4 messages in flight: never one for all
          in.system = load_system(sys + "direct_s4_c1.json");
          for (auto& algos : in.system.algorithms)
            for (AlgorithmChoice& a : algos) a.window = 4;
        } else {
          in.system = load_system(sys + system);
        }
        for (auto& algos : in.system.algorithms)  // one algorithm per dimension of the network
          algos.resize(std::min(algos.size(), in.network.npus.size()));
        const std::string what = std::string(name) + " " + net + system;
        SimOptions each, every_message;
        each.every_npu = true;
        every_message.every_message = true;
        const SimResult a = simulate(in), b = simulate(in, each), c = simulate(in, every_message);
        EXPECT_EQ(b.simulated_npus, 16u) << what;
        expect_same_results(a, b, what);
        expect_same_results(a, c, what + " (every message)");
        // Direct on a ring dimension (the first: direct_s4_c1 names one algorithm, so only the
        // first dimension is used), or windowed: every NPU runs.
        const bool expect_one =
            std::string(net).find("[ Ring") == std::string::npos && std::string(system) != "direct4";
        EXPECT_EQ(a.simulated_npus, expect_one ? 1u : 16u) << what;
        if (expect_one) {
          EXPECT_LT(a.events * 8, b.events) << what;
        }
        mirrored += a.simulated_npus == 1;
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 48);
  EXPECT_EQ(mirrored, 24);
}

// Direct phases on a congestion-aware switch whose members start together: one member's
// up-link and down-link stand for all (core/src/sim/collectives/direct.cpp), so the phase costs
// steps, not messages. Every figure, link by link, equals simulating every message: on one and
// two switch dimensions, for each collective; and where a phase is refused (a hand-off of an
// all-reduce ending at its last arrival, skewed starts, two active chunks on the same links) or
// the dimension is no switch, the run simulates every direct message, as before.
TEST(SimulateClosedForm, CongestionAwareDirectPhasesOnSwitchesEqualEveryMessage) {
  Fixture f;
  auto system = [](double endpoint_delay, uint32_t active) {
    SystemConfig sys = ring_system("direct", 4, active);
    sys.endpoint_delay = endpoint_delay;
    return sys;
  };
  auto compare = [](SimInputs in, const std::string& what) {
    for (auto& algos : in.system.algorithms) algos.resize(in.network.npus.size(), algos[0]);  // one per dimension
    SimOptions fast, exact;
    fast.backend = exact.backend = Backend::CongestionAware;
    exact.every_message = true;
    SimResult a = simulate(in, fast), b = simulate(in, exact);
    expect_same_results(a, b, what);
    expect_same_links(a, b, what);
    EXPECT_FALSE(b.closed_form_contended);
    return std::pair{a, b};
  };
  const char* const switch64 = "topology: [ Switch ]\nnpus_count: [ 64 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";
  const char* const switches =
      "topology: [ Switch, Switch ]\nnpus_count: [ 4, 16 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 700, 1000 ]\n";
  for (const char* net : {switch64, switches}) {
    for (CommType type : {CommType::AllReduce, CommType::AllToAll, CommType::AllGather, CommType::ReduceScatter}) {
      for (uint64_t size : {uint64_t(1) << 20, uint64_t(812032)}) {
        SimInputs in;
        in.network = parse_network(net, "n.yml");
        in.system = system(10, 1);
        in.workload = f.write_collective(type, size, 64);
        const std::string what =
            std::string(net) + " type " + std::to_string(int(type)) + " size " + std::to_string(size);
        auto [a, b] = compare(in, what);
        EXPECT_FALSE(a.closed_form_contended) << what;
        EXPECT_LT(a.events * 20, b.events) << what;
      }
    }
  }
  // Hand-off delays 1..40 ns on a 16-NPU switch: the all-reduce's 1 KiB messages take 20 ns, so
  // some hand-offs end exactly at the last arrival; those runs simulate every message, the
  // others solve every phase.
  int tied = 0, solved = 0;
  for (uint32_t e = 1; e <= 40; ++e) {
    SimInputs in;
    in.network = net1("Switch", 16, 50, 500);
    in.system = system(e, 1);
    in.workload = f.write_collective(CommType::AllReduce, 1 << 16, 16, 2);
    const std::string what = "hand-off " + std::to_string(e);
    auto [a, b] = compare(in, what);
    EXPECT_FALSE(a.closed_form_contended) << what;
    tied += a.events == b.events;
    solved += a.events * 20 < b.events;
  }
  EXPECT_GE(tied, 1);
  EXPECT_GE(solved, 30);
  EXPECT_EQ(tied + solved, 40);
  // Members that start apart (compute of 1 to 3 us first), two chunks at once on the same links,
  // a fully-connected or ring dimension: every direct message simulated.
  {
    const std::string dir = temp_dir();
    for (uint32_t npu = 0; npu < 16; ++npu) {
      Trace t;
      std::vector<NodeDraft> nodes(3);
      for (uint64_t i = 0; i < 3; ++i) {
        NodeDraft& d = nodes[i];
        d.id = i;
        d.name = t.intern("n" + std::to_string(i));
        d.type = int32_t(i == 0 ? NodeType::Comp : NodeType::CommColl);
        d.duration_micros = i == 0 ? 1 + npu % 3 : 0;
        if (i) d.data_deps = {i - 1};
        d.attrs.add_bool(t.intern("is_cpu_op"), false);
        if (i) {
          d.attrs.add_int64(t.intern("comm_type"), int64_t(i == 1 ? CommType::AllReduce : CommType::AllToAll));
          d.attrs.add_int64(t.intern("comm_size"), int64_t(1) << 20);
        }
      }
      write_nodes(dir + "/skew." + std::to_string(npu) + ".et", nodes, t);
    }
    SimInputs in;
    in.network = net1("Switch", 16, 50, 500);
    in.system = system(10, 1);
    in.workload = dir + "/skew";
    auto expect_every_message = [&](const std::string& what) {
      auto [a, b] = compare(in, what);
      EXPECT_FALSE(a.closed_form_contended) << what;
      EXPECT_EQ(a.events, b.events) << what;
    };
    expect_every_message("skewed starts");
    // With ring all-reduces the rerun still solves those: only the direct phases run message by
    // message.
    in.system = ring_system("ring");
    in.system.algorithms[int(Collective::AllToAll)] = ring_system("direct").algorithms[int(Collective::AllToAll)];
    {
      auto [a, b] = compare(in, "ring all-reduce, direct all-to-all, skewed");
      EXPECT_LT(a.events * 2, b.events);
    }
    in.workload = f.write_collective(CommType::AllReduce, 1 << 20, 16);
    in.system = system(10, 2);
    expect_every_message("two active chunks");
    in.system = system(10, 1);
    for (const char* topo : {"FullyConnected", "Ring"}) {
      in.network = net1(topo, 16, 50, 500);
      expect_every_message(topo);
    }
  }
}

// Whatever tells NPUs apart makes the run simulate each: traces that differ, an algorithm whose
// peers are not all alike, a slower NPU, a collective over a communicator group, the congestion-aware
// network; and errors and deadlocks are found and reported as when every NPU runs.
TEST(SimulateMirrored, WhatTellsNpusApartRunsEveryNpu) {
  const std::string sys = inputs() + "/sys/";
  SimInputs base;
  base.workload = write_text_workload("astra-sim-1.0__Resnet50_DataParallel", 16);
  base.network = parse_network(
      "topology: [ Switch, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 100, 700 ]\n", "n.yml");
  base.system = load_system(sys + "ring2_s4_c1.json");
  auto compare = [](const SimInputs& in, SimOptions o, const std::string& what) {
    const SimResult a = simulate(in, o);
    o.every_npu = true;
    const SimResult b = simulate(in, o);
    EXPECT_EQ(a.simulated_npus, 16u) << what;
    expect_same_results(a, b, what);
    return a;
  };
  // An input the run of every NPU rejects: the same error, naming `part`, either way.
  auto expect_same_error = [](const SimInputs& in, const std::string& part) {
    SimOptions each;
    each.every_npu = true;
    const std::string error = testing_support::error_of([&] { simulate(in); });
    EXPECT_NE(error.find(part), std::string::npos) << error;
    EXPECT_EQ(error, testing_support::error_of([&] { simulate(in, each); }));
  };
  const SimResult alike = simulate(base);
  EXPECT_EQ(alike.simulated_npus, 1u);

  // The same traces given in memory (the web page's sweeps) run as one too; a damaged one is the
  // error the run of every NPU reports.
  {
    std::vector<std::string> encoded;
    for (uint32_t n = 0; n < 16; ++n) encoded.push_back(read_file(base.workload + "." + std::to_string(n) + ".et"));
    SimInputs in = base;
    in.encoded_traces = &encoded;
    const SimResult r = simulate(in);
    EXPECT_EQ(r.simulated_npus, 1u);
    expect_same_results(r, alike, "traces in memory");
    encoded[11].resize(encoded[11].size() / 2);
    expect_same_error(in, ".11.et");
  }

  // NPU 9's trace with one compute node a microsecond longer.
  {
    SimInputs in = base;
    const std::string dir = temp_dir();
    in.workload = dir + "/w";
    for (uint32_t n = 0; n < 16; ++n) {
      Trace t = read_et(base.workload + "." + std::to_string(n) + ".et");
      if (n == 9)
        for (uint32_t i = 0; i < t.size(); ++i)
          if (t.type(i) == int32_t(NodeType::Comp)) {
            t.set_times(i, t.start_time_micros(i), t.duration_micros(i) + 1);
            break;
          }
      write_et(t, in.workload + "." + std::to_string(n) + ".et");
    }
    const SimResult r = compare(in, {}, "one trace differs");
    EXPECT_NE(r.npus[9].finish, alike.npus[9].finish);
  }
  {  // direct on the ring dimension: its peers are 1 and 2 hops away
    SimInputs in = base;
    in.system = load_system(sys + "direct_ring_s4_c1.json");
    for (auto& algos : in.system.algorithms) std::reverse(algos.begin(), algos.end());
    compare(in, {}, "direct all-reduce on a ring dimension (every message)");
  }
  // A direct all-to-all configured but never issued: the all-reduces still run as one.
  {
    SimInputs in = base;
    for (AlgorithmChoice& a : in.system.algorithms[int(Collective::AllToAll)]) a.kind = Algorithm::Direct;
    SimOptions each;
    each.every_npu = true;
    const SimResult a = simulate(in), b = simulate(in, each);
    EXPECT_EQ(a.simulated_npus, 1u);
    expect_same_results(a, b, "direct all-to-all, unused");
  }
  {
    SimOptions o;
    o.slowdown = parse_slowdowns("npu=3:compute=1.5", "s");
    const SimResult r = compare(base, o, "NPU 3 slower");
    EXPECT_GT(r.npus[3].finish, alike.npus[3].finish);
  }
  {
    SimOptions o;
    o.backend = Backend::CongestionAware;
    compare(base, o, "congestion-aware");
  }
  // Alike traces whose collectives name communicator group 1 (every NPU).
  auto alike_traces = [](const std::function<void(Trace&, std::vector<NodeDraft>&)>& make) {
    return write_traces(16, [&](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
      make(t, nodes);
      for (NodeDraft& d : nodes) {
        d.id += 100 * npu;
        for (uint64_t& dep : d.data_deps) dep += 100 * npu;
      }
    });
  };
  // Node 1 of each trace, a communication node with these int64 attributes.
  auto comm_node = [](Trace& t, NodeType type, const char* name, std::vector<std::pair<const char*, int64_t>> attrs) {
    NodeDraft d;
    d.id = 1;
    d.name = t.intern(name);
    d.type = int32_t(type);
    for (const auto& [key, value] : attrs) d.attrs.add_int64(t.intern(key), value);
    return d;
  };
  {
    SimInputs in = base;
    in.workload = alike_traces([&](Trace& t, std::vector<NodeDraft>& nodes) {
      nodes.push_back(comm_node(t, NodeType::CommColl, "all_reduce", {{"comm_type", 0}, {"comm_size", 1 << 20}}));
      nodes.back().attrs.add_string(t.intern("pg_name"), t.intern("1"));
    });
    // A group of every NPU runs on the dimensions' rings, as a collective over all NPUs: still
    // alike. Two groups of eight, the second in ring order 8, 12, 9, 13, ..: some of its ring
    // neighbours differ first on the ring dimension, so its NPUs cannot stand for the others'.
    in.groups = parse_comm_groups(R"({"1": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]})", "g.json");
    SimOptions each;
    each.every_npu = true;
    const SimResult whole = simulate(in), whole_each = simulate(in, each);
    EXPECT_EQ(whole.simulated_npus, 1u);
    expect_same_results(whole, whole_each, "a communicator group of every NPU");
    in.workload = write_traces(16, [&](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
      nodes.push_back(comm_node(t, NodeType::CommColl, "all_reduce", {{"comm_type", 0}, {"comm_size", 1 << 20}}));
      nodes.back().attrs.add_string(t.intern("pg_name"), t.intern(npu < 8 ? "1" : "2"));
    });
    in.groups = parse_comm_groups(R"({"1": [0, 1, 2, 3, 4, 5, 6, 7], "2": [8, 12, 9, 13, 10, 14, 11, 15]})", "g.json");
    const SimResult r = compare(in, {}, "communicator groups placed differently");
    EXPECT_FALSE(r.deadlock);
  }
  // A pg_name that is not a group number: the error the run of every NPU reports.
  for (const char* bad : {"x1", "-5", "1234567890"}) {
    SimInputs in = base;
    in.workload = alike_traces([&](Trace& t, std::vector<NodeDraft>& nodes) {
      nodes.push_back(comm_node(t, NodeType::CommColl, "all_reduce", {{"comm_type", 0}, {"comm_size", 1 << 20}}));
      nodes.back().attrs.add_string(t.intern("pg_name"), t.intern(bad));
    });
    expect_same_error(in, std::string("pg_name '") + bad + "' is not a group number");
  }
  // A send to NPU 1 on every NPU: NPU 1's is to itself, an error the run of every NPU reports.
  {
    SimInputs in = base;
    in.workload = alike_traces([&](Trace& t, std::vector<NodeDraft>& nodes) {
      nodes.push_back(comm_node(t, NodeType::CommSend, "send", {{"comm_dst", 1}, {"comm_tag", 0}, {"comm_size", 64}}));
    });
    expect_same_error(in, "comm_dst 1 is not another NPU");
  }
  // Two nodes waiting on each other on every NPU: each NPU names its own stuck nodes.
  {
    SimInputs in = base;
    in.workload = alike_traces([](Trace& t, std::vector<NodeDraft>& nodes) {
      for (uint64_t id : {1, 2}) {
        NodeDraft d;
        d.id = id;
        d.name = t.intern("op");
        d.type = int32_t(NodeType::Comp);
        d.duration_micros = 1;
        d.data_deps = {3 - id};
        nodes.push_back(d);
      }
    });
    const SimResult r = compare(in, {}, "deadlock");
    EXPECT_TRUE(r.deadlock);
    ASSERT_FALSE(r.npus[5].stuck.empty());
  }
}

namespace {

// A dp·tp·pp training step of chakra synth (Llama-2-7B shapes, one layer per stage, ranks
// numbered data-parallel fastest) with its communicator groups, on `network` (YAML).
SimInputs synthesized_step(uint64_t dp, uint64_t tp, uint64_t pp, uint64_t micro_batches, const char* network) {
  synth::SynthOptions o;
  synth::apply_preset("llama2-7b", o);
  o.shape.layers = pp;
  o.shape.micro_batches = micro_batches;
  o.par.dp = dp, o.par.tp = tp, o.par.pp = pp;
  const auto w = synth::synthesize(o);
  SimInputs in;
  in.workload = temp_dir() + "/w";
  for (uint32_t r = 0; r < synth::num_ranks(*w); ++r) {
    Trace t;
    synth::rank_trace(*w, r, t);
    write_et(t, in.workload + "." + std::to_string(r) + ".et");
  }
  for (const auto& [id, members] : synth::comm_groups(*w))
    in.groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
  in.network = parse_network(network, "n.yml");
  in.system = load_system(inputs() + "/sys/ring_s4_c1.json");
  in.system.roofline = true;
  in.system.peak_perf = 900;
  return in;
}

// Six NPUs: 0-2 send to 3, 5, 4, and 3-5 receive from 0, 1, 2 (each node one 4 KiB message).
std::string write_crossed_peers() {
  return write_traces(6, [](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
    const bool send = npu < 3;
    const int32_t peer = send ? std::array<int32_t, 3>{3, 5, 4}[npu] : int32_t(npu) - 3;
    NodeDraft d;
    d.id = 1;
    d.name = t.intern(send ? "send" : "recv");
    d.type = int32_t(send ? NodeType::CommSend : NodeType::CommRecv);
    d.attrs.add_int32(t.intern("comm_src"), send ? int32_t(npu) : peer);
    d.attrs.add_int32(t.intern("comm_dst"), send ? peer : int32_t(npu));
    d.attrs.add_int64(t.intern("comm_tag"), 7);
    d.attrs.add_int64(t.intern("comm_size"), 4096);
    nodes.push_back(d);
  });
}

}  // namespace

// Pipeline stages with tensor- and data-parallel groups (chakra synth): the NPUs of a stage are
// alike but for their groups and pipeline peers, which sit alike in the network, so one NPU of
// each stage runs for all of it, with every figure of the run of every NPU. Where a group's ring
// takes different times, or peers do not pair up, every NPU runs, with the same figures.
TEST(SimulateMirrored, ClassesOfAlikeNpusRunOneEach) {
  struct Case {
    uint64_t dp, tp, pp, micro_batches;
    const char* network;
    uint64_t simulated;
  };
  const Case cases[] = {
      {2, 2, 2, 2,
       "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 500, 2000 ]\n", 2},
      {4, 2, 2, 1, "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 100, 700 ]\n",
       2},
      {2, 4, 2, 2,
       "topology: [ FullyConnected, Switch ]\nnpus_count: [ 2, 8 ]\nbandwidth: [ 300, 50 ]\nlatency: [ 200, 1000 ]\n",
       2},
      {2, 2, 4, 4, "topology: [ Switch ]\nnpus_count: [ 16 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", 4},
      // Data-parallel rings of four NPUs on a ring of eight: 3 -> 0 is three hops, the others one.
      {4, 2, 1, 1, "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", 8},
  };
  for (const Case& c : cases) {
    const SimInputs in = synthesized_step(c.dp, c.tp, c.pp, c.micro_batches, c.network);
    const std::string what =
        "dp" + std::to_string(c.dp) + " tp" + std::to_string(c.tp) + " pp" + std::to_string(c.pp) + " on " + c.network;
    SimOptions each;
    each.every_npu = true;
    const SimResult a = simulate(in), b = simulate(in, each);
    EXPECT_EQ(a.simulated_npus, c.simulated) << what;
    EXPECT_EQ(b.simulated_npus, c.dp * c.tp * c.pp) << what;
    EXPECT_FALSE(a.deadlock) << what;
    expect_same_results(a, b, what);
    if (c.simulated < b.simulated_npus) {
      EXPECT_LT(a.events * 2, b.events) << what;
      EXPECT_NE(sim_summary_text(a).find("one NPU of each ran for all"), std::string::npos) << what;
    }
  }

  // NPUs 0-2 send to 3-5 and those receive from them, but not in the same order: 1 sends to 5
  // while 5 waits for 2. Alike up to peers, yet NPU 1 cannot stand in for NPU 0 (3 would then
  // stand for 5): every NPU runs, and both runs find the same deadlock.
  SimInputs in;
  in.network =
      parse_network("topology: [ Switch ]\nnpus_count: [ 6 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", "n.yml");
  in.system = load_system(inputs() + "/sys/ring_s4_c1.json");
  in.workload = write_crossed_peers();
  SimOptions each;
  each.every_npu = true;
  const SimResult a = simulate(in), b = simulate(in, each);
  EXPECT_EQ(a.simulated_npus, 6u);
  EXPECT_TRUE(a.deadlock);
  expect_same_results(a, b, "peers that do not pair up");

  // Groups that do not pair up: NPU 1's group is {1, 2}, where NPU 2 takes part in {2, 3}.
  in.network =
      parse_network("topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", "n.yml");
  in.groups = parse_comm_groups(R"({"1": [0, 1], "2": [2, 3], "3": [1, 2]})", "g.json");
  in.workload = write_traces(4, [](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
    NodeDraft d;
    d.id = 1;
    d.name = t.intern("all_reduce");
    d.type = int32_t(NodeType::CommColl);
    d.attrs.add_int64(t.intern("comm_type"), 0);
    d.attrs.add_int64(t.intern("comm_size"), 1 << 20);
    d.attrs.add_string(t.intern("pg_name"), t.intern(std::array<const char*, 4>{"1", "3", "2", "2"}[npu]));
    nodes.push_back(d);
  });
  const SimResult c = simulate(in), e = simulate(in, each);
  EXPECT_EQ(c.simulated_npus, 4u);
  EXPECT_TRUE(c.deadlock);
  expect_same_results(c, e, "groups that do not pair up");

  // 2,048 traces that all differ (each NPU computes for its own time): the classes are given up
  // on after a few dozen, long before the comparison would report progress at the 1,024th.
  struct Stages : Progress {
    std::map<std::string, uint64_t> total;
    bool report(std::string_view stage, uint64_t, uint64_t of) override {
      total[std::string(stage)] = of;
      return true;
    }
  } stages;
  in.network = net1("Ring", 2048);
  in.groups.clear();
  in.workload = write_traces(2048, [](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
    NodeDraft d;
    d.id = 1;
    d.name = t.intern("compute");
    d.type = int32_t(NodeType::Comp);
    d.duration_micros = 1 + npu;
    nodes.push_back(d);
  });
  SimOptions o;
  o.progress = &stages;
  const SimResult distinct = simulate(in, o);
  EXPECT_EQ(distinct.simulated_npus, 2048u);
  EXPECT_EQ(distinct.npus[2047].finish, 2048000u);
  EXPECT_EQ(stages.total.count("compare traces"), 0u);
  EXPECT_EQ(stages.total["read traces"], 2048u);
}

// Direct exchanges over communicator groups (the system's one algorithm for each collective)
// run as one member where every pair of a group's members is as far apart in the network: each
// collective type, groups of 2 and 4 (an all-reduce's second half is reduced too in groups of
// three or more), every figure that of simulating each NPU and each message. Groups of four
// spanning both dimensions of a 4 x 2 network (pairs at different distances) make every NPU
// run, with the same results.
TEST(SimulateMirrored, GroupDirectExchangesRunOnceWhereMembersAreAlike) {
  int mirrored = 0;
  for (uint32_t size : {2u, 4u})
    for (const char* net : {"topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n",
                            "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 200, 25 ]\n"
                            "latency: [ 100, 700 ]\n"})
      for (uint32_t stride : {1u, 2u}) {
        SimInputs in;
        in.network = parse_network(net, "n.yml");
        in.system = parse_system(
            R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                "preferred-dataset-splits": 4, "all-reduce-implementation": ["direct"],
                "all-gather-implementation": ["direct"], "reduce-scatter-implementation": ["direct"],
                "all-to-all-implementation": ["direct"], "collective-optimization": "baseline", "local-mem-bw": 50})",
            "sys.json");
        // Groups of `size` members `stride` apart: {0, 1}, {2, 3}, ... or {0, 2}, {1, 3}, {4, 6}, ...
        std::vector<int> group_of(8);
        int id = 0;
        for (uint32_t base = 0; base < 8; base += size * stride)
          for (uint32_t first = base; first < base + stride; ++first) {
            ++id;
            for (uint32_t k = 0; k < size; ++k) {
              in.groups[id].push_back(first + k * stride);
              group_of[first + k * stride] = id;
            }
          }
        in.workload = write_traces(8, [&](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
          for (CommType type :
               {CommType::AllReduce, CommType::AllGather, CommType::ReduceScatter, CommType::AllToAll}) {
            NodeDraft d;
            d.id = nodes.size() + 1;
            d.name = t.intern("collective");
            d.type = int32_t(NodeType::CommColl);
            d.attrs.add_int64(t.intern("comm_type"), int64_t(type));
            d.attrs.add_int64(t.intern("comm_size"), 1 << 20);
            d.attrs.add_string(t.intern("pg_name"), t.intern(std::to_string(group_of[npu])));
            if (!nodes.empty()) d.data_deps.push_back(nodes.back().id);
            nodes.push_back(d);
          }
        });
        const std::string what =
            "groups of " + std::to_string(size) + " members " + std::to_string(stride) + " apart on " + net;
        SimOptions each, every_message;
        each.every_npu = true;
        every_message.every_message = true;
        const SimResult a = simulate(in), b = simulate(in, each), c = simulate(in, every_message);
        const bool alike = std::string(net).find("Switch, Switch") == std::string::npos || size * stride <= 4;
        EXPECT_EQ(a.simulated_npus, alike ? 1u : 8u) << what;
        EXPECT_EQ(b.simulated_npus, 8u) << what;
        EXPECT_FALSE(a.deadlock) << what;
        EXPECT_GT(a.npus[0].comm, 0u) << what;
        expect_same_results(a, b, what);
        expect_same_results(a, c, what + " (every message)");
        mirrored += a.simulated_npus == 1;
      }
  EXPECT_EQ(mirrored, 7);
}

// Congestion-aware: the network's symmetries that map the workload onto itself (rotations of
// digits of the NPUs' coordinates) leave one NPU of each orbit to run, the network keeping one
// link of each orbit, with every figure of the run of every NPU, links included. The steps of
// chakra synth number ranks data-parallel fastest, so a tensor-parallel ring crosses other
// groups' links (the run of every NPU finds its closed forms contended and simulates them).
TEST(SimulateMirrored, OrbitsOfTheNetworksSymmetriesRunOneEach) {
  struct Case {
    uint64_t dp, tp, pp, micro_batches;
    const char* network;
    uint64_t simulated;
    bool direct = false;  // every collective's algorithm direct instead of ring
  };
  const Case cases[] = {
      // dp and tp digits of one switch dimension, pp on the other
      {2, 2, 2, 2,
       "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 500, 2000 ]\n", 2},
      {2, 2, 2, 2,
       "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 500, 2000 ]\n", 2, true},
      // a whole ring rotated; a fully-connected digit
      {4, 2, 2, 1, "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 200, 25 ]\nlatency: [ 100, 700 ]\n",
       2},
      {2, 4, 2, 2,
       "topology: [ FullyConnected, Switch ]\nnpus_count: [ 2, 8 ]\nbandwidth: [ 300, 50 ]\nlatency: [ 200, 1000 ]\n",
       2},
      // pipeline stages on one switch dimension's highest digit, which differ
      {2, 2, 4, 4, "topology: [ Switch ]\nnpus_count: [ 16 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", 4},
      // tp's low bit in dimension 0 does not rotate its ring; tp's high bit in dimension 1 does
      {4, 4, 2, 2,
       "topology: [ Switch, Switch ]\nnpus_count: [ 8, 4 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 500, 2000 ]\n", 4},
      // data-parallel rings of four on a ring of eight: rotating the ring mixes them
      {4, 2, 1, 1, "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", 8},
  };
  for (const Case& c : cases) {
    SimInputs in = synthesized_step(c.dp, c.tp, c.pp, c.micro_batches, c.network);
    if (c.direct)
      for (auto& algos : in.system.algorithms) algos.assign(1, AlgorithmChoice{Algorithm::Direct});
    const std::string what = "dp" + std::to_string(c.dp) + " tp" + std::to_string(c.tp) + " pp" + std::to_string(c.pp) +
                             (c.direct ? " direct" : "") + " on " + c.network;
    SimOptions aware, each, every_message;
    aware.backend = each.backend = every_message.backend = Backend::CongestionAware;
    each.every_npu = true;
    every_message.every_message = true;
    const SimResult a = simulate(in, aware), b = simulate(in, each), m = simulate(in, every_message);
    EXPECT_EQ(a.simulated_npus, c.simulated) << what;
    EXPECT_EQ(b.simulated_npus, c.dp * c.tp * c.pp) << what;
    EXPECT_FALSE(a.deadlock) << what;
    expect_same_results(a, b, what);
    expect_same_links(a, b, what);
    expect_same_results(a, m, what + " (every message)");
    expect_same_links(a, m, what + " (every message)");
    if (c.simulated < b.simulated_npus) {
      EXPECT_LT(a.events * (b.simulated_npus / c.simulated), m.events * 2) << what;
    }
  }

  // Every NPU sends to the next round a ring and receives from the one before: one orbit, whose
  // NPU 0 sends to NPU 1 (received as NPU 3's message to NPU 0) and receives from NPU 3.
  SimInputs in;
  in.network =
      parse_network("topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", "n.yml");
  in.system = load_system(inputs() + "/sys/ring_s4_c1.json");
  in.workload = write_traces(4, [](uint32_t npu, Trace& t, std::vector<NodeDraft>& nodes) {
    for (const bool send : {true, false}) {
      NodeDraft d;
      d.id = send ? 1 : 2;
      d.name = t.intern(send ? "send" : "recv");
      d.type = int32_t(send ? NodeType::CommSend : NodeType::CommRecv);
      d.attrs.add_int32(t.intern("comm_src"), int32_t(send ? npu : (npu + 3) % 4));
      d.attrs.add_int32(t.intern("comm_dst"), int32_t(send ? (npu + 1) % 4 : npu));
      d.attrs.add_int64(t.intern("comm_tag"), 7);
      d.attrs.add_int64(t.intern("comm_size"), 1 << 20);
      nodes.push_back(d);
    }
  });
  SimOptions aware, each;
  aware.backend = each.backend = Backend::CongestionAware;
  each.every_npu = true;
  SimResult a = simulate(in, aware), b = simulate(in, each);
  EXPECT_EQ(a.simulated_npus, 1u);
  EXPECT_FALSE(a.deadlock);
  expect_same_results(a, b, "sends round a ring");
  expect_same_links(a, b, "sends round a ring");

  // Peers that no rotation maps alike (NPUs 0-2 send to 3, 5, 4): every NPU runs, and both runs
  // find the same deadlock.
  in.network =
      parse_network("topology: [ Switch ]\nnpus_count: [ 6 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n", "n.yml");
  in.workload = write_crossed_peers();
  a = simulate(in, aware), b = simulate(in, each);
  EXPECT_EQ(a.simulated_npus, 6u);
  EXPECT_TRUE(a.deadlock);
  expect_same_results(a, b, "peers no rotation maps");
}

// Reading and comparing thousands of traces reports progress, and a stop asked for there ends the
// run (it is not taken for NPUs that differ).
TEST(SimulateMirrored, ReadingTracesReportsProgressAndCanBeStopped) {
  struct Stages : Progress {
    std::map<std::string, uint64_t> total;
    std::string stop_at;
    bool report(std::string_view stage, uint64_t, uint64_t of) override {
      total[std::string(stage)] = of;
      return stage != stop_at;
    }
  };
  Fixture f;
  SimInputs in;
  in.network = net1("Ring", 2048);
  in.system = ring_system("ring");
  in.workload = f.write_collective(CommType::AllReduce, 1 << 20, 2048);
  Stages one, each;
  SimOptions o;
  o.progress = &one;
  EXPECT_EQ(simulate(in, o).simulated_npus, 1u);
  EXPECT_EQ(one.total["compare traces"], 2048u);
  o.progress = &each;
  o.every_npu = true;
  EXPECT_EQ(simulate(in, o).simulated_npus, 2048u);
  EXPECT_EQ(each.total["read traces"], 2048u);
  Stages stop;
  stop.stop_at = "compare traces";
  o.progress = &stop;
  o.every_npu = false;
  EXPECT_THROW(simulate(in, o), Cancelled);
  EXPECT_EQ(stop.total.count("read traces"), 0u);  // no run of every NPU after the stop
}
