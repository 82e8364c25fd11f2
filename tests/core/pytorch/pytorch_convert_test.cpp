// PyTorch execution traces → .et: the reference converter's bytes (--reference-bytes), its
// defects fixed by default, Python repr() of IOInfo values, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "chakra/analysis/validate.h"
#include "chakra/astra/config.h"
#include "chakra/format/json_pull.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;

namespace {

chakra::PytorchConvertResult convert_file(const std::string& path, chakra::PytorchConvertOptions o = {}) {
  return chakra::convert_pytorch(chakra::open_input(path), o);
}
chakra::PytorchConvertResult convert_text(const std::string& json, chakra::PytorchConvertOptions o = {}) {
  static std::string keep;  // memory_input borrows the bytes
  keep = json;
  return chakra::convert_pytorch(chakra::memory_input(as_bytes(keep), "t.json"), o);
}
std::string error_of(const std::string& json, chakra::PytorchConvertOptions o = {}) {
  try {
    convert_text(json, o);
  } catch (const chakra::Error& e) {
    return e.what();
  }
  return "no error";
}
// The warnings other than the note every host ET without GPU ops gets (tested on its own).
std::vector<std::string> other_warnings(const chakra::PytorchConvertResult& r) {
  std::vector<std::string> out;
  for (const std::string& w : r.warnings)
    if (w.find("no GPU ops in this trace") == std::string::npos) out.push_back(w);
  return out;
}
int32_t find(const chakra::Trace& t, uint64_t id) {
  for (uint32_t n = 0; n < t.size(); ++n)
    if (t.id(n) == id) return static_cast<int32_t>(n);
  return -1;
}

// A minimal host ET: a thread root, two ops, the second calling a third.
std::string host_et(const std::string& extra_nodes = "", int64_t inter_thread_dep_of_4 = 0) {
  auto node = [](int id, const char* name, int parent, const std::string& more = "") {
    return std::string("{\"id\": ") + std::to_string(id) + ", \"name\": \"" + name +
           "\", \"ctrl_deps\": " + std::to_string(parent) +
           ", \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": [], "
           "\"shapes\": [], \"types\": []}, \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": " +
           std::to_string(id) + "}]" + more + "}";
  };
  std::string itd = inter_thread_dep_of_4 ? ", \"inter_thread_dep\": " + std::to_string(inter_thread_dep_of_4) : "";
  return "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1, \"time\": \"t\", \"start_ts\": 1, \"finish_ts\": 2, "
         "\"nodes\": [" +
         node(2, "[pytorch|profiler|execution_trace|thread]", 1) + ", " + node(3, "aten::a", 2) + ", " +
         node(4, "aten::b", 2, itd) + ", " + node(5, "aten::c", 4) + extra_nodes + ", " +
         node(1, "[pytorch|profiler|execution_trace|process]", 1) + "]}";
}

}  // namespace

// --reference-bytes: every reference converter output, byte for byte.
TEST(PytorchConvert, ReproducesReferenceOutputsByteForByte) {
  struct Case {
    const char* input;
    const char* expected;
  } cases[] = {
      {"reference/chakra/inputs/1.0.2-chakra.0.0.4.json",
       "reference/chakra/outputs/converter_pytorch/1.0.2-chakra.0.0.4.et"},
      {"reference/chakra/inputs/link/resnet_1gpu_host_et.json.gz",
       "reference/chakra/outputs/converter_pytorch/resnet_1gpu_hostonly.et.gz"},
      {"reference/chakra/outputs/trace_link/p2p_collectives.linked.json",
       "reference/chakra/outputs/trace_link/p2p_collectives.et"},
      {"reference/chakra/outputs/trace_link/resnet_2gpu_rank1.linked.json.gz",
       "reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz"},
  };
  chakra::PytorchConvertOptions o;
  o.reference_bytes = true;
  for (const Case& c : cases) {
    chakra::PytorchConvertResult r = convert_file(shared(c.input), o);
    EXPECT_TRUE(chakra::encode_et(r.trace) == read_decompressed(shared(c.expected))) << c.input;
    EXPECT_TRUE(r.warnings.empty()) << c.input << ": " << (r.warnings.empty() ? "" : r.warnings[0]);
  }
}

// Default mode differs from the reference only by the documented fixes.
TEST(PytorchConvert, FixesDanglingCtrlDepsAndGivesSendRecvTheirPeers) {
  std::string in = shared("reference/chakra/outputs/trace_link/p2p_collectives.linked.json");
  chakra::PytorchConvertOptions ref_opts;
  ref_opts.reference_bytes = true;
  chakra::Trace ref = convert_file(in, ref_opts).trace;
  chakra::PytorchConvertOptions o;
  o.rank = 0;
  o.replay_model = false;  // the reference's graph, only its defects fixed
  chakra::Trace fixed = convert_file(in, o).trace;
  ASSERT_EQ(ref.size(), fixed.size());
  // The reference keeps ctrl_deps = [0] on the thread root after pruning node 0.
  int32_t root = find(ref, 1);
  ASSERT_GE(root, 0);
  EXPECT_EQ(std::vector<uint64_t>(ref.ctrl_deps(root).begin(), ref.ctrl_deps(root).end()), std::vector<uint64_t>{0});
  EXPECT_TRUE(fixed.ctrl_deps(find(fixed, 1)).empty());
  EXPECT_TRUE(chakra::validate(fixed).ok());
  // c10d::send(tensors, dst=1, tag=0) → SEND src 0 (the rank given), dst 1, tag 0; recv_ mirrors it.
  int32_t send = find(fixed, 11), recv = find(fixed, 14);
  ASSERT_EQ(fixed.type(send), static_cast<int32_t>(chakra::NodeType::CommSend));
  ASSERT_EQ(fixed.type(recv), static_cast<int32_t>(chakra::NodeType::CommRecv));
  EXPECT_EQ(fixed.find_attr(send, "comm_src")->as_int64(), 0);
  EXPECT_EQ(fixed.find_attr(send, "comm_dst")->as_int64(), 1);
  EXPECT_EQ(fixed.find_attr(send, "comm_tag")->as_int64(), 0);
  EXPECT_EQ(fixed.find_attr(recv, "comm_src")->as_int64(), 1);
  EXPECT_EQ(fixed.find_attr(recv, "comm_dst")->as_int64(), 0);
  EXPECT_EQ(fixed.find_attr(send, "comm_src")->kind(), chakra::AttrKind::Int32);  // what feeder v1 reads
  EXPECT_FALSE(ref.find_attr(find(ref, 11), "comm_dst").has_value());
  // Everything else is identical: same nodes, types, deps and the reference's attributes.
  for (uint32_t n = 0; n < ref.size(); ++n) {
    EXPECT_EQ(ref.id(n), fixed.id(n));
    EXPECT_EQ(ref.type(n), fixed.type(n));
    EXPECT_TRUE(std::equal(ref.data_deps(n).begin(), ref.data_deps(n).end(), fixed.data_deps(n).begin(),
                           fixed.data_deps(n).end()));
    for (uint32_t a = ref.attr_begin(n); a < ref.attr_end(n); ++a) {
      auto same = fixed.find_attr(n, ref.attr(a).name());
      ASSERT_TRUE(same.has_value());
      EXPECT_EQ(same->bits() == ref.attr(a).bits() || same->kind() == chakra::AttrKind::String, true);
    }
  }
}

// The reference aborts the whole file on ncclDevKernel_Reduce; we convert it with a warning.
// Outside --reference-bytes each node of a linked trace keeps its measured start: the host op's
// "ts", or its kernel's for a GPU op (checked against the JSON read independently).
TEST(PytorchConvert, KeepsMeasuredStartTimesOfLinkedTraces) {
  const std::string in = shared("reference/chakra/outputs/trace_link/resnet_2gpu_rank1.linked.json.gz");
  const nlohmann::json doc = nlohmann::json::parse(read_decompressed(in));
  std::map<uint64_t, std::pair<double, bool>> ts;  // id → (ts, is a GPU op)
  for (const auto& n : doc["nodes"])
    if (n.contains("ts")) ts[n["id"].get<uint64_t>()] = {n["ts"].get<double>(), n.contains("cat")};
  const chakra::Trace t = convert_file(in).trace;
  size_t cpu = 0, gpu = 0;
  for (uint32_t n = 0; n < t.size(); ++n) {
    auto it = ts.find(t.id(n));
    if (it == ts.end()) {  // a few roots carry no time
      EXPECT_EQ(t.start_time_micros(n), 0u) << "node " << t.id(n);
      continue;
    }
    EXPECT_EQ(t.start_time_micros(n), static_cast<uint64_t>(std::llround(it->second.first))) << "node " << t.id(n);
    ++(it->second.second ? gpu : cpu);
  }
  EXPECT_GT(cpu, 10000u);
  EXPECT_GT(gpu, 2000u);
  // The reference's bytes have none.
  chakra::PytorchConvertOptions ref;
  ref.reference_bytes = true;
  const chakra::Trace dropped = convert_file(in, ref).trace;
  for (uint32_t n = 0; n < dropped.size(); ++n) ASSERT_EQ(dropped.start_time_micros(n), 0u);
}

// The replay model charges a parent's own time where it was spent: the stretch before its
// first child to the parent, each stretch after a child (and the gap to the next top-level op)
// to the op that ran just before it, and takes the thread's blocked spans out of them. Time
// after a block comes after the wait, so it goes to the next op. aten::p (100–150 µs) calls
// aten::a (110–120) and aten::b (130–140), and sat blocked 142–146; aten::q (200–205) is the
// next top-level op, after 50 µs of Python.
TEST(PytorchConvert, ReplayModelChargesOwnTimeWhereItWasSpent) {
  auto node = [](int id, const char* name, int parent, const std::string& more) {
    return std::string("{\"id\": ") + std::to_string(id) + ", \"name\": \"" + name +
           "\", \"ctrl_deps\": " + std::to_string(parent) +
           ", \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": " +
           "{\"values\": [], \"shapes\": [], \"types\": []}, \"attrs\": [], \"inter_thread_dep\": null" + more + "}";
  };
  auto trace = [&](const std::string& blocked) {
    return "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1, \"time\": \"t\", \"start_ts\": 1, \"finish_ts\": 2, "
           "\"nodes\": [" +
           node(1, "[pytorch|profiler|execution_trace|process]", 1, "") + ", " +
           node(2, "[pytorch|profiler|execution_trace|thread]", 1, "") + ", " +
           node(3, "aten::p", 2, ", \"ts\": 100, \"inclusive_dur\": 50, \"exclusive_dur\": 30" + blocked) + ", " +
           node(4, "aten::a", 3, ", \"ts\": 110, \"inclusive_dur\": 10, \"exclusive_dur\": 10") + ", " +
           node(5, "aten::b", 3, ", \"ts\": 130, \"inclusive_dur\": 10, \"exclusive_dur\": 10") + ", " +
           node(6, "aten::q", 2, ", \"ts\": 200, \"inclusive_dur\": 5, \"exclusive_dur\": 5") + "]}";
  };
  auto durations = [&](const chakra::PytorchConvertResult& r) {
    std::map<std::string, uint64_t> d;
    for (uint32_t n = 0; n < r.trace.size(); ++n) d[std::string(r.trace.name(n))] = r.trace.duration_micros(n);
    return d;
  };
  const std::string blocked = ", \"blocked_dur\": 4, \"blocked_spans\": [[142, 146]]";
  auto d = durations(convert_text(trace(blocked)));
  EXPECT_EQ(d["aten::p"], 10u);  // 100–110, before its first child
  EXPECT_EQ(d["aten::a"], 20u);  // 110–130: its own 10 and p's 10 after it
  EXPECT_EQ(d["aten::b"], 12u);  // 130–142, until it was blocked
  EXPECT_EQ(d["aten::q"], 59u);  // 146–200 (p's last 4 µs and the gap) and its own 5
  // Same total as exclusive less blocked, which the reference graph charges p up front.
  chakra::PytorchConvertOptions reference_graph;
  reference_graph.replay_model = false;
  auto r = durations(convert_text(trace(blocked), reference_graph));
  EXPECT_EQ(r["aten::p"], 30u);
  EXPECT_EQ(r["aten::a"] + r["aten::b"], 20u);
  // Linked by an older chakra (blocked time without its spans): exclusive less blocked.
  auto old = durations(convert_text(trace(", \"blocked_dur\": 4")));
  EXPECT_EQ(old["aten::p"], 26u);
  EXPECT_EQ(old["aten::a"], 10u);
  EXPECT_EQ(old["aten::b"], 10u);
  // A malformed span is an error naming the key.
  EXPECT_NE(error_of(trace(", \"blocked_dur\": 4, \"blocked_spans\": [[142]]")).find("blocked_spans"),
            std::string::npos);
  EXPECT_NE(error_of(trace(", \"blocked_dur\": 4, \"blocked_spans\": [142, 146]")).find("blocked_spans"),
            std::string::npos);
}

// A kernel starts while its launcher still runs: the launcher's node ends at the kernel's
// start and the rest of its stretch goes to the next op, so that the kernel is not held back by
// CPU time spent after the launch. aten::x (100–120 µs) launches k, which starts at 105;
// aten::y (130–140) follows after 10 µs of Python. Not when y waits for something and x was
// not blocked (x's rest ran during that wait); an op that launched nothing but that another
// thread waits for ends where it ended.
TEST(PytorchConvert, ReplayModelEndsALaunchersNodeWhereItsKernelStarted) {
  auto node = [](int id, const char* name, int parent, const std::string& more) {
    return std::string("{\"id\": ") + std::to_string(id) + ", \"name\": \"" + name +
           "\", \"ctrl_deps\": " + std::to_string(parent) +
           ", \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": " +
           "{\"values\": [], \"shapes\": [], \"types\": []}, \"attrs\": []" + more + "}";
  };
  auto trace = [&](const std::string& y_more, const std::string& other_thread, bool launches = true) {
    return "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1, \"time\": \"t\", \"start_ts\": 1, \"finish_ts\": 2, "
           "\"nodes\": [" +
           node(1, "[pytorch|profiler|execution_trace|process]", 1, "") + ", " +
           node(2, "[pytorch|profiler|execution_trace|thread]", 1, "") + ", " +
           node(3, "aten::x", 2, ", \"ts\": 100, \"inclusive_dur\": 20, \"exclusive_dur\": 20") + ", " +
           (launches ? node(4, "k", 3,
                            ", \"ts\": 105, \"inclusive_dur\": 30, \"exclusive_dur\": 30, \"cat\": \"kernel\", "
                            "\"stream\": 7") +
                           ", "
                     : "") +
           node(5, "aten::y", 2, ", \"ts\": 130, \"inclusive_dur\": 10, \"exclusive_dur\": 10" + y_more) +
           other_thread + "]}";
  };
  auto durations = [&](const std::string& text) {
    chakra::PytorchConvertResult r = convert_text(text);
    std::map<std::string, uint64_t> d;
    for (uint32_t n = 0; n < r.trace.size(); ++n) d[std::string(r.trace.name(n))] = r.trace.duration_micros(n);
    return d;
  };
  auto d = durations(trace("", ""));
  EXPECT_EQ(d["aten::x"], 5u);   // 100–105, until k started
  EXPECT_EQ(d["aten::y"], 35u);  // x's 105–130 and its own 10
  EXPECT_EQ(d["k"], 30u);
  // y waits for k: x's rest ran while k did, so it stays with x.
  d = durations(trace(", \"sync_dep\": [4]", ""));
  EXPECT_EQ(d["aten::x"], 30u);  // 100–130
  EXPECT_EQ(d["aten::y"], 10u);
  // z, on another thread, waits for x: without a launch, x's node ends where x ended.
  const std::string thread2 =
      ", " + node(6, "[pytorch|profiler|execution_trace|thread]", 1, "") + ", " +
      node(7, "aten::z", 6, ", \"ts\": 125, \"inclusive_dur\": 5, \"exclusive_dur\": 5, \"inter_thread_dep\": 3");
  d = durations(trace("", thread2, false));
  EXPECT_EQ(d["aten::x"], 20u);  // 100–120
  EXPECT_EQ(d["aten::y"], 20u);  // the gap 120–130 and its own 10
  d = durations(trace("", "", false));
  EXPECT_EQ(d["aten::x"], 30u);  // nothing waits for a part of it: the whole stretch
  EXPECT_EQ(d["aten::y"], 10u);
  // y is work handed over by another thread (its inter_thread_dep): the gap before it is this
  // thread waiting for that, not its own time.
  const std::string hands_over = ", " + node(6, "[pytorch|profiler|execution_trace|thread]", 1, "") + ", " +
                                 node(7, "aten::w", 6, ", \"ts\": 50, \"inclusive_dur\": 5, \"exclusive_dur\": 5");
  d = durations(trace(", \"inter_thread_dep\": 7", hands_over, false));
  EXPECT_EQ(d["aten::x"], 20u);  // 100–120: the gap 120–130 is left out
  EXPECT_EQ(d["aten::y"], 10u);
}

// The replay model: every GPU op waits for the op launched before it on its stream, and the
// metadata tells simulators to run a lane per thread and stream from the earliest start.
TEST(PytorchConvert, ReplayModelChainsEachStreamInLaunchOrder) {
  const std::string in = shared("reference/chakra/outputs/trace_link/resnet_2gpu_rank1.linked.json.gz");
  const chakra::Trace t = convert_file(in).trace;
  std::map<int64_t, std::vector<uint32_t>> by_stream;  // GPU nodes per stream
  uint64_t earliest = UINT64_MAX;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (t.start_time_micros(n) > 0) earliest = std::min(earliest, t.start_time_micros(n));
    if (t.find_attr(n, "is_cpu_op")->as_bool() == false) by_stream[*t.find_attr(n, "stream")->as_int64()].push_back(n);
  }
  ASSERT_GE(by_stream.size(), 2u);
  size_t chained = 0;
  for (auto& [stream, list] : by_stream) {
    std::stable_sort(list.begin(), list.end(),
                     [&](uint32_t a, uint32_t b) { return t.start_time_micros(a) < t.start_time_micros(b); });
    for (size_t k = 1; k < list.size(); ++k) {
      auto deps = t.data_deps(list[k]);
      EXPECT_NE(std::find(deps.begin(), deps.end(), t.id(list[k - 1])), deps.end())
          << "stream " << stream << " node " << t.id(list[k]);
      ++chained;
    }
  }
  EXPECT_GT(chained, 2000u);
  std::map<std::string, uint64_t> meta;
  for (uint32_t a = 0; a < t.metadata_attrs().size(); ++a)
    meta[std::string(t.metadata_attr(a).name())] = t.metadata_attr(a).as_uint64().value_or(0);
  EXPECT_EQ(meta["replay_lanes"], 1u);
  EXPECT_EQ(meta["replay_start_micros"], earliest);
  // Without the replay model (and in the reference's bytes): no chains, no mark.
  chakra::PytorchConvertOptions o;
  o.replay_model = false;
  const chakra::Trace plain = convert_file(in, o).trace;
  auto edges = [](const chakra::Trace& x) {
    size_t total = 0;
    for (uint32_t n = 0; n < x.size(); ++n) total += x.data_deps(n).size();
    return total;
  };
  EXPECT_GE(edges(t), edges(plain) + chained / 2);  // most chain links are new edges
  for (uint32_t a = 0; a < plain.metadata_attrs().size(); ++a) EXPECT_NE(plain.metadata_attr(a).name(), "replay_lanes");
}

// A "ts" that is no time in µs (negative, beyond 64 bits) is left out with a warning naming
// the node; a fractional one is rounded.
TEST(PytorchConvert, StartTimesOutOfRangeAreWarnedAboutAndLeftOut) {
  const std::string io =
      ", \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, "
      "\"outputs\": {\"values\": [], \"shapes\": [], \"types\": []}";
  auto op = [&](int id, const char* ts) {
    return std::string(", {\"id\": ") + std::to_string(id) +
           ", \"name\": \"aten::t\", \"ctrl_deps\": 2, \"ts\": " + ts + io + "}";
  };
  const chakra::PytorchConvertResult r = convert_text(host_et(op(6, "12.6") + op(7, "-5") + op(8, "1e300")));
  EXPECT_EQ(r.trace.start_time_micros(find(r.trace, 6)), 13u);
  EXPECT_EQ(r.trace.start_time_micros(find(r.trace, 7)), 0u);
  EXPECT_EQ(r.trace.start_time_micros(find(r.trace, 8)), 0u);
  const std::vector<std::string> w = other_warnings(r);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("node 7: \"ts\" -5 is not a time"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("node 8: \"ts\""), std::string::npos) << w[1];
}

TEST(PytorchConvert, UnknownCollectiveIsConvertedWithAWarning) {
  chakra::PytorchConvertResult r =
      convert_file(shared("reference/chakra/outputs/trace_link/reduce_unsupported.linked.json"));
  int32_t reduce = find(r.trace, 38);
  ASSERT_GE(reduce, 0);
  EXPECT_EQ(r.trace.type(reduce), static_cast<int32_t>(chakra::NodeType::CommColl));
  EXPECT_EQ(r.trace.find_attr(reduce, "comm_type")->as_int64(), static_cast<int64_t>(chakra::CommType::Reduce));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("node 38"), std::string::npos);
  EXPECT_NE(r.warnings[0].find("REDUCE"), std::string::npos);
  EXPECT_EQ(r.process_groups.at("1"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(chakra::astra::format_comm_groups(r.process_groups), "{\n  \"1\": [0, 1]\n}\n");
}

// The dependency walk on a small tree: CPU ops chain in pre-order; the process root is pruned.
TEST(PytorchConvert, BuildsThreadChainsAndPrunesIsolatedNodes) {
  chakra::PytorchConvertResult r = convert_text(host_et());
  const chakra::Trace& t = r.trace;
  ASSERT_EQ(t.size(), 4u);  // node 1 (process root, no deps either way) is pruned
  EXPECT_EQ(r.pruned, 1u);
  auto deps = [&](uint64_t id) {
    auto d = t.data_deps(find(t, id));
    return std::vector<uint64_t>(d.begin(), d.end());
  };
  EXPECT_EQ(deps(2), std::vector<uint64_t>{});
  EXPECT_EQ(deps(3), std::vector<uint64_t>{2});
  EXPECT_EQ(deps(4), std::vector<uint64_t>{3});
  EXPECT_EQ(deps(5), std::vector<uint64_t>{4});
  EXPECT_EQ(t.find_attr(find(t, 3), "rf_id")->as_int64(), 3);
  EXPECT_EQ(t.find_attr(find(t, 3), "is_cpu_op")->as_bool(), true);
  EXPECT_EQ(t.str(t.inputs(find(t, 3)).values), "[]");
}

TEST(PytorchConvert, CyclesAreReportedWithTheirNodesAndBrokenOnlyOnRequest) {
  // aten::b (4) depends on aten::c (5) across "threads", and c follows b in the chain: a cycle.
  std::string json = host_et("", 5);
  std::string e = error_of(json);
  EXPECT_NE(e.find("t.json: dependency cycle: "), std::string::npos) << e;
  EXPECT_NE(e.find("node 4 \"aten::b\""), std::string::npos) << e;
  EXPECT_NE(e.find("node 5 \"aten::c\""), std::string::npos) << e;
  chakra::PytorchConvertOptions o;
  o.break_cycles = true;
  chakra::PytorchConvertResult r = convert_text(json, o);
  EXPECT_EQ(r.cycles_broken, 2u);  // 4 -> 5 closes a loop with both 5 -> 4 (data) and 5 -> 4 (ctrl)
  chakra::ValidationReport v = chakra::validate(r.trace);
  for (const auto& f : v.findings)
    if (f.code != "no-durations") ADD_FAILURE() << f.code << ": " << f.message;  // a host ET has none
}

TEST(PytorchConvert, BadInputGivesClearErrors) {
  EXPECT_NE(error_of("").find("t.json: byte 0: not a PyTorch execution trace"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("not a PyTorch execution trace"), std::string::npos);
  // A Chakra .et given to the converter: the error says which commands read it.
  std::string et = error_of(std::string("\x0a\x12\x0a\x05", 4) + "1.0.0");
  EXPECT_NE(et.find("a Chakra .et trace is read by chakra info, validate and jsonize"), std::string::npos) << et;
  EXPECT_NE(error_of("{\"nodes\": [{\"id\": 1, \"name\": \"x\"").find("truncated file?"), std::string::npos);
  EXPECT_NE(error_of("{\"traceEvents\": []}").find("Kineto"), std::string::npos);
  EXPECT_NE(error_of("{\"nodes\": []} x").find("trailing data"), std::string::npos);
  EXPECT_NE(error_of("{\"nodes\": [{\"name\": \"x\"}]}").find("a node has no \"id\""), std::string::npos);
  std::string dup = host_et(", {\"id\": 3, \"name\": \"again\", \"ctrl_deps\": 2}");
  EXPECT_NE(error_of(dup).find("duplicate node id 3"), std::string::npos);
  std::string deep(100000, '[');
  EXPECT_NE(error_of("{\"nodes\": [{\"id\": 1, \"inputs\": {\"values\": " + deep).find("nested deeper than"),
            std::string::npos);
  EXPECT_NE(error_of("{\"nodes\": [{\"id\": 1, \"name\": \"a\\q\"}]}").find("bad escape"), std::string::npos);
}

TEST(PytorchConvert, EveryHostTraceInTheCorpusConvertsToAValidTrace) {
  int converted = 0;
  for (const std::string& f : find_files(shared("data"), {".json", ".json.gz"})) {
    std::string head = read_decompressed(f).substr(0, 4096);
    if (head.find("\"nodes\"") == std::string::npos || head.find("\"workload_graph\"") != std::string::npos) continue;
    chakra::PytorchConvertResult r = convert_file(f);
    EXPECT_GT(r.trace.size(), 0u) << f;
    EXPECT_TRUE(chakra::validate(r.trace).ok()) << f;
    ++converted;
  }
  EXPECT_GE(converted, 20);  // 1.0.1 (DLRM ×8, old linked ×8, …), 1.0.2, 1.0.3, 1.1.0, 1.1.1
}

// ---- Python repr() of JSON values, as IOInfo strings carry them ----

TEST(PythonRepr, MatchesPythonForJsonValues) {
  auto repr = [](const std::string& json) {
    auto in = chakra::memory_input(as_bytes(json), "r.json");
    chakra::JsonPull p(*in);
    std::string out;
    p.repr(out);
    return out;
  };
  EXPECT_EQ(repr("[[1],6,0,\"cpu\",false,\"<None>\"]"), "[[1], 6, 0, 'cpu', False, '<None>']");
  EXPECT_EQ(repr("[null, true, -0, 12345678901234567890123]"), "[None, True, 0, 12345678901234567890123]");
  EXPECT_EQ(repr("[1.0, 0.1, 1e-5, 0.0001, 1e16, 1e15, 123.456, -0.0, 2.5e-300, 1E3]"),
            "[1.0, 0.1, 1e-05, 0.0001, 1e+16, 1000000000000000.0, 123.456, -0.0, 2.5e-300, 1000.0]");
  EXPECT_EQ(repr("[\"it's\", \"say \\\"hi\\\"\", \"both ' \\\"\", \"tab\\there\\n\", \"\\u0001\", \"\\u00e9\\u00a0\"]"),
            "[\"it's\", 'say \"hi\"', 'both \\' \"', 'tab\\there\\n', '\\x01', '\u00e9\\xa0']");
  EXPECT_EQ(repr("{\"a\": [1, {\"b\": null}], \"c\": \"d\"}"), "{'a': [1, {'b': None}], 'c': 'd'}");
  EXPECT_EQ(repr("[NaN, Infinity, -Infinity]"), "[nan, inf, -inf]");
  // Beyond double's range, as Python's float(): infinite or zero.
  EXPECT_EQ(repr("[1e400, -1e400, 1e-400]"), "[inf, -inf, 0.0]");
  // Strings are scanned 8 bytes at a time: escapes and quotes at every offset of a word.
  for (int lead = 0; lead < 9; ++lead) {
    const std::string pad(static_cast<size_t>(lead), 'x');
    EXPECT_EQ(repr("[\"" + pad + "\\n" + pad + "\"]"), "['" + pad + "\\n" + pad + "']") << lead;
    EXPECT_EQ(repr("\"" + pad + "abcdefgh\""), "'" + pad + "abcdefgh'") << lead;
  }
  // Misspelt non-numbers, and a raw control character inside a string.
  for (const char* bad : {"[Nan]", "[-Inf]", "[Infinit]", "[\"abcdefghij\x01\"]"})
    EXPECT_THROW(repr(bad), chakra::Error) << bad;
}

// Kernels the reference cannot classify: the pre-2.19 ncclKernel_SendRecv spelling is a
// point-to-point op like ncclDevKernel_SendRecv; an unknown NCCL kernel stays a compute node.
TEST(PytorchConvert, ClassifiesOldSendRecvSpellingAndKeepsUnknownKernelsAsCompute) {
  const std::string io =
      "\"inputs\": {\"values\": [[[10, 11, 0, 256, 4, \"cuda:0\"]], 1, 7], \"shapes\": [[[256]], [], []], "
      "\"types\": [\"GenericList[Tensor(float)]\", \"Int\", \"Int\"]}, \"outputs\": {\"values\": [], \"shapes\": [], "
      "\"types\": []}";
  auto op = [&](int id, const char* name, int parent, const char* more) {
    return ", {\"id\": " + std::to_string(id) + ", \"name\": \"" + name +
           "\", \"ctrl_deps\": " + std::to_string(parent) + ", " + io + more + "}";
  };
  std::string extra = op(6, "c10d::send", 2, "") + op(7, "record_param_comms", 6, "") +
                      op(8, "ncclKernel_SendRecv(ncclDevComm*)", 7, ", \"cat\": \"kernel\", \"stream\": 20") +
                      op(9, "ncclDevKernel_Frobnicate(ncclDevComm*)", 5, ", \"cat\": \"kernel\"");
  chakra::PytorchConvertOptions o;
  o.rank = 3;
  chakra::PytorchConvertResult r = convert_text(host_et(extra), o);
  const chakra::Trace& t = r.trace;
  int32_t send = find(t, 8), unknown = find(t, 9);
  ASSERT_GE(send, 0);
  ASSERT_GE(unknown, 0);
  EXPECT_EQ(t.type(send), static_cast<int32_t>(chakra::NodeType::CommSend));
  EXPECT_EQ(t.find_attr(send, "comm_size")->as_int64(), 256 * 4);
  EXPECT_EQ(t.find_attr(send, "comm_src")->as_int64(), 3);
  EXPECT_EQ(t.find_attr(send, "comm_dst")->as_int64(), 1);
  EXPECT_EQ(t.find_attr(send, "comm_tag")->as_int64(), 7);
  EXPECT_EQ(t.find_attr(send, "is_cpu_op")->as_bool(), false);
  EXPECT_EQ(t.type(unknown), static_cast<int32_t>(chakra::NodeType::Comp));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("node 9 \"ncclDevKernel_Frobnicate(ncclDevComm*)\": unknown NCCL kernel"),
            std::string::npos)
      << r.warnings[0];
}

// A host ET without its Kineto trace: its nccl:* ops are the collectives (with the bytes of
// their tensors), and the converter says what a simulation of it will and will not model.
TEST(PytorchConvert, HostTraceWithoutKinetoKeepsItsCollectives) {
  const std::string in = shared("data/pairs/dlrm_8rank_v100/rank0/dlrm_eg_0.json");
  chakra::PytorchConvertResult r = convert_file(in);
  std::map<std::string, int> collectives;
  for (uint32_t n = 0; n < r.trace.size(); ++n) {
    if (r.trace.type(n) != static_cast<int32_t>(chakra::NodeType::CommColl)) continue;
    EXPECT_EQ(r.trace.name(n).rfind("nccl:", 0), 0u) << r.trace.name(n);
    EXPECT_EQ(r.trace.find_attr(n, "is_cpu_op")->as_bool(), false);
    EXPECT_GT(r.trace.find_attr(n, "comm_size")->as_int64().value_or(0), 0);
    ++collectives[std::string(chakra::comm_type_name(*r.trace.find_attr(n, "comm_type")->as_int64()))];
  }
  EXPECT_EQ(collectives, (std::map<std::string, int>{{"ALL_REDUCE", 3}, {"ALL_TO_ALL", 5}}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(
      r.warnings[0].find("no GPU ops in this trace (a host ET not linked with its Kineto trace): every duration is 0 "
                         "and its 8 collectives come from their nccl:* host ops"),
      std::string::npos)
      << r.warnings[0];
  EXPECT_TRUE(chakra::validate(r.trace).ok());
  // The reference's bytes: no communication at all.
  chakra::PytorchConvertOptions o;
  o.reference_bytes = true;
  const chakra::Trace ref = convert_file(in, o).trace;
  for (uint32_t n = 0; n < ref.size(); ++n) EXPECT_NE(ref.type(n), static_cast<int32_t>(chakra::NodeType::CommColl));
}

TEST(PytorchConvert, DependencyOnAMissingNodeIsDroppedWithAWarning) {
  chakra::PytorchConvertResult r = convert_text(host_et("", 99));
  ASSERT_EQ(other_warnings(r).size(), 1u);
  EXPECT_EQ(other_warnings(r)[0], "t.json: node 4 depends on node 99, which is not in the trace; dependency dropped");
  auto d = r.trace.data_deps(find(r.trace, 4));
  EXPECT_EQ(std::vector<uint64_t>(d.begin(), d.end()), std::vector<uint64_t>{3});
}

// A node's data dependencies keep the order found (inter-thread dependency, then the thread's
// previous op), and one found twice is kept once.
TEST(PytorchConvert, DependenciesKeepTheirOrderAndAppearOnce) {
  auto deps_of_4 = [](int64_t inter_thread_dep) {
    chakra::PytorchConvertResult r = convert_text(host_et("", inter_thread_dep));
    auto d = r.trace.data_deps(find(r.trace, 4));
    return std::vector<uint64_t>(d.begin(), d.end());
  };
  EXPECT_EQ(deps_of_4(2), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(deps_of_4(3), std::vector<uint64_t>{3});
}

// The reference accepts schema 1.1.1-chakra.1.0.0 but then parses no node fields; we convert it.
TEST(PytorchConvert, Schema111Chakra100Converts) {
  std::string json = host_et();
  json.replace(json.find("1.0.2-chakra.0.0.4"), 18, "1.1.1-chakra.1.0.0");
  chakra::PytorchConvertResult r = convert_text(json);
  EXPECT_EQ(r.schema, "1.1.1-chakra.1.0.0");
  EXPECT_EQ(r.trace.size(), 4u);
  EXPECT_EQ(r.trace.find_attr(find(r.trace, 5), "rf_id")->as_int64(), 5);
}

// The reference converter's --simulate log (toy scheduler): every "Issuing ..."/"... completed"
// message of the reference run on the 1.0.2 host ET, in order.
TEST(PytorchConvert, SimulateLogMatchesTheReference) {
  // The reference's graph: by default this host-only trace's nccl:* ops become collectives.
  chakra::PytorchConvertOptions o;
  o.reference_bytes = true;
  chakra::PytorchConvertResult r =
      chakra::convert_pytorch(chakra::open_input(shared("reference/chakra/inputs/1.0.2-chakra.0.0.4.json")), o);
  std::vector<std::string> ours = chakra::simulate_conversion(r.trace);
  std::istringstream log(
      read_raw(shared("reference/chakra/outputs/converter_pytorch/convert_1.0.2_simulate.debug.log")));
  std::vector<std::string> ref;
  for (std::string line; std::getline(log, line);) {
    size_t end = line.find("] ");
    if (line.rfind("DEBUG [", 0) != 0 || end == std::string::npos) continue;
    std::string m = line.substr(end + 2);
    if (m.rfind("Simulat", 0) == 0 || m.rfind("Issuing", 0) == 0 || m.find(" completed at ") != std::string::npos)
      ref.push_back(m);
  }
  ASSERT_EQ(ref.size(), 526u);
  EXPECT_EQ(ours, ref);
}

// GPU nodes: one at a time per stream; a node's children are ready once it is issued.
TEST(PytorchConvert, SimulateRunsOneGpuNodePerStream) {
  chakra::Trace t;
  auto add = [&](uint64_t id, uint64_t micros, bool gpu, std::vector<uint64_t> deps) {
    chakra::NodeDraft d;
    d.id = id;
    d.name = t.intern("n" + std::to_string(id));
    d.type = int32_t(chakra::NodeType::Comp);
    d.duration_micros = micros;
    d.data_deps = std::move(deps);
    d.attrs.add_int64(t.intern("tid"), 1);
    d.attrs.add_bool(t.intern("is_cpu_op"), !gpu);
    if (gpu) d.attrs.add_int64(t.intern("stream"), 7);
    t.append(d);
  };
  add(1, 2, false, {});
  add(2, 3, true, {1});
  add(3, 1, true, {1});
  std::vector<std::string> log = chakra::simulate_conversion(t);
  std::vector<std::string> want = {"Simulating execution of Chakra nodes based on data dependencies.",
                                   "Issuing CPU Node ID 1 (n1) at 0us with duration 2us, tid: 1",
                                   "Issuing GPU Node ID 2 (n2) at 1us on stream 7 with duration 3us, tid: stream 7",
                                   "CPU Node ID 1 completed at 2us, tid: 1",
                                   "GPU Node ID 2 on stream 7 completed at 4us, tid: stream 7",
                                   "Issuing GPU Node ID 3 (n3) at 4us on stream 7 with duration 1us, tid: stream 7",
                                   "GPU Node ID 3 on stream 7 completed at 5us, tid: stream 7",
                                   "Simulation of Chakra node execution completed."};
  EXPECT_EQ(log, want);
}
