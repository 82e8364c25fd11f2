// Host ET + Kineto → linked JSON: the reference linker's bytes, the fallback pairings on real
// pairs without Record function ids, Python json.dump rendering, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <set>

#include "pytorch/python_json.h"  // private to the pytorch layer (core/src)
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;
using json = nlohmann::json;

namespace {

struct Linked {
  chakra::LinkReport report;
  std::string text;
};

Linked link_files(const std::string& host, const std::string& device, chakra::LinkOptions o = {}) {
  chakra::StringSink sink;
  Linked l;
  l.report = chakra::link_traces(chakra::open_input(host), chakra::open_input(device), sink, o);
  l.text = std::move(sink.out);
  return l;
}

Linked link_text(const std::string& host, const std::string& device, chakra::LinkOptions o = {}) {
  static std::string h, d;  // memory_input borrows the bytes
  h = host;
  d = device;
  chakra::StringSink sink;
  Linked l;
  l.report = chakra::link_traces(chakra::memory_input(as_bytes(h), "host.json"),
                                 chakra::memory_input(as_bytes(d), "kineto.json"), sink, o);
  l.text = std::move(sink.out);
  return l;
}

std::string link_error(const std::string& host, const std::string& device, chakra::LinkOptions o = {}) {
  try {
    link_text(host, device, o);
  } catch (const chakra::Error& e) {
    return e.what();
  }
  return "no error";
}

std::string rendered(const std::string& value) {
  std::string out;
  chakra::pyjson::render_value(value, 0, 0, out);
  return out;
}

const std::string kLinkIn = "reference/chakra/inputs/link/";
const std::string kLinkOut = "reference/chakra/outputs/trace_link/";

// A small host ET: process root 1, thread root 2, ops 3..5 on tid 1 (4 inside 3), op 6 on tid 2.
std::string small_host() {
  auto node = [](int id, const char* name, int parent, int rf, int tid) {
    return "{\"id\": " + std::to_string(id) + ", \"name\": \"" + name + "\", \"ctrl_deps\": " + std::to_string(parent) +
           ", \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": [], "
           "\"shapes\": [], \"types\": []}, \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": " +
           std::to_string(rf) + "}, {\"name\": \"tid\", \"type\": \"uint64\", \"value\": " + std::to_string(tid) +
           "}]}";
  };
  return "{\"schema\": \"1.1.0-chakra.0.0.4\", \"pid\": 7, \"nodes\": [" +
         node(2, "[pytorch|profiler|execution_trace|thread]", 1, 0, 1) + ", " + node(3, "aten::linear", 2, 1, 1) +
         ", " + node(4, "aten::addmm", 3, 2, 1) + ", " + node(5, "aten::relu", 2, 3, 1) + ", " +
         node(6, "autograd::backward", 2, 4, 2) + ", " +
         node(1, "[pytorch|profiler|execution_trace|process]", 1, 0, 0) + "], \"finish_ts\": 99}";
}

// Kineto events for small_host(); float microseconds as PyTorch >= 2.2 writes them.
std::string small_kineto(bool with_rf = true) {
  auto op = [&](const char* name, int rf, int ext, const char* ts, const char* dur, int tid) {
    std::string args = "\"External id\": " + std::to_string(ext);
    if (with_rf) args += ", \"Record function id\": " + std::to_string(rf);
    return std::string("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"") + name +
           "\", \"pid\": 7, \"tid\": " + std::to_string(tid) + ", \"ts\": " + ts + ", \"dur\": " + dur +
           ", \"args\": {" + args + "}}";
  };
  return "{\"traceEvents\": [" + op("aten::linear", 1, 11, "100.5", "10.5", 1) + ", " +
         op("aten::addmm", 2, 12, "101.75", "2.25", 1) + ", " + op("aten::relu", 3, 13, "3000.0", "1.0", 1) + ", " +
         op("autograd::backward", 4, 14, "2500.25", "5", 2) +
         ", {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"tid\": 1, \"ts\": 102, "
         "\"dur\": 1, \"args\": {\"External id\": 12, \"correlation\": 77}}"
         ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\\u00e9\", \"tid\": 7, \"ts\": 110.125, \"dur\": 4, "
         "\"args\": {\"External id\": 12, \"correlation\": 77, \"stream\": 7}}]}";
}

}  // namespace

TEST(TraceLink, ReferenceOutputsAreByteIdentical) {
  for (const std::string c : {"p2p_collectives", "reduce_unsupported"}) {
    Linked l = link_files(shared(kLinkIn + c + "_host_et.json"), shared(kLinkIn + c + "_kineto.synthetic.json"));
    EXPECT_EQ(l.report.method, chakra::LinkMethod::RecordFunctionId);
    EXPECT_TRUE(l.text == read_raw(shared(kLinkOut + c + ".linked.json"))) << c;
  }
  Linked r = link_files(shared(kLinkIn + "resnet_2gpu_rank1_host_et.json.gz"),
                        shared(kLinkIn + "resnet_2gpu_rank1_kineto.synthetic.json.gz"));
  EXPECT_TRUE(r.text == read_decompressed(shared(kLinkOut + "resnet_2gpu_rank1.linked.json.gz")));
  EXPECT_EQ(r.report.output_nodes, 16783u);
  EXPECT_EQ(r.report.gpu_ops_linked, 2391u);
}

TEST(TraceLink, WorksWithoutProfilerStep) {
  // The reference crashes on this input (HTA finds no ProfilerStep); the renamed step is an
  // ordinary annotation here, so one more op links and everything else is the same.
  Linked with = link_files(shared(kLinkIn + "p2p_collectives_host_et.json"),
                           shared(kLinkIn + "p2p_collectives_kineto.synthetic.json"));
  Linked without = link_files(shared(kLinkIn + "p2p_collectives_host_et.json"),
                              shared(kLinkIn + "p2p_collectives_kineto.no_profilerstep.synthetic.json"));
  EXPECT_EQ(without.report.host_ops_linked, with.report.host_ops_linked + 1);
  EXPECT_EQ(without.report.gpu_nodes, with.report.gpu_nodes);
  EXPECT_EQ(json::parse(without.text)["nodes"].size(), json::parse(with.text)["nodes"].size());
}

// DLRM (schema 1.0.1, Kineto without Record function ids): per-thread in-order pairing must
// attach every GPU op under the same host op as the older chakra linker did.
TEST(TraceLink, DlrmPairsMatchTheOlderLinker) {
  const std::string dir = shared("data/pairs/dlrm_8rank_v100/");
  Linked l = link_files(dir + "rank0/dlrm_eg_0.json", dir + "rank0/worker0_step_12.1694128201545.pt.trace.json");
  EXPECT_EQ(l.report.method, chakra::LinkMethod::InOrder);
  EXPECT_EQ(l.report.host_ops_linked, 1672u);
  EXPECT_EQ(l.report.names_agree, 1672u);
  EXPECT_EQ(l.report.gpu_ops, 261u);  // 245 kernels + 16 memcpys
  EXPECT_EQ(l.report.gpu_ops_linked, 261u);

  // GPU op names under each host op (by rf_id), ours and the older linker's.
  auto children = [](const json& doc, const char* parent_key) {
    std::map<int64_t, const json*> by_id;
    for (const json& n : doc["nodes"]) by_id[n["id"].get<int64_t>()] = &n;
    std::map<int64_t, std::multiset<std::string>> out;
    for (const json& n : doc["nodes"]) {
      if (!n.contains("cat")) continue;
      const json& parent = *by_id.at(n[parent_key].get<int64_t>());
      out[parent["rf_id"].get<int64_t>()].insert(n["name"].get<std::string>());
    }
    return out;
  };
  json ours = json::parse(l.text);
  json old = json::parse(read_raw(dir + "reference_linked_by_old_chakra/dlrm_eg_0_plus.json"));
  EXPECT_EQ(children(ours, "ctrl_deps"), children(old, "parent"));
  // Host durations and times agree too, and 1.0.1's "parent" is renumbered with the ids.
  std::map<int64_t, std::pair<int64_t, int64_t>> old_times;
  for (const json& n : old["nodes"])
    if (!n.contains("cat") && n.contains("ts")) old_times[n["rf_id"]] = {n["ts"], n["dur"]};
  std::map<int64_t, std::string> name_of;
  for (const json& n : ours["nodes"]) name_of[n["id"]] = n["name"];
  std::map<int64_t, std::string> old_name_of;
  for (const json& n : old["nodes"]) old_name_of[n["id"]] = n["name"];
  std::map<std::pair<int64_t, int64_t>, std::string> old_parent_name;  // (rf_id, tid) → name
  for (const json& o : old["nodes"])
    if (!o.contains("cat")) old_parent_name[{o["rf_id"], o["tid"]}] = old_name_of[o["parent"]];
  size_t agree = 0, same_parent = 0;
  for (const json& n : ours["nodes"]) {
    if (n.contains("cat")) continue;
    auto it = old_times.find(n["rf_id"]);
    agree += n.contains("ts") && it != old_times.end() &&
             it->second == std::make_pair(n["ts"].get<int64_t>(), n["inclusive_dur"].get<int64_t>());
    auto p = old_parent_name.find({n["rf_id"], n["tid"]});  // parents survive the renumbering
    same_parent += p != old_parent_name.end() && p->second == name_of[n["parent"]];
  }
  EXPECT_EQ(agree, 1672u);
  EXPECT_GE(same_parent, 1672u);
}

TEST(TraceLink, ExternalIdOffsetAndIterationWindow) {
  const std::string pairs = shared("data/pairs/");
  Linked add = link_files(pairs + "hta_simple_add_a100_1rank/benchmark_simple_add_et.json.gz",
                          pairs + "hta_simple_add_a100_1rank/benchmark_simple_add_trace.json.gz");
  EXPECT_EQ(add.report.method, chakra::LinkMethod::ExternalId);
  EXPECT_EQ(add.report.id_offset, 0);
  EXPECT_EQ(add.report.host_ops_linked, 36u);
  EXPECT_EQ(add.report.gpu_ops_linked, 4u);

  // 60 training iterations in the Kineto trace, one in the host ET.
  Linked lin = link_files(pairs + "param_linear_rtx2080ti_1rank/linear_et.json.gz",
                          pairs + "param_linear_rtx2080ti_1rank/linear_kineto.json.gz");
  EXPECT_EQ(lin.report.method, chakra::LinkMethod::InOrder);
  EXPECT_EQ(lin.report.names_agree, 928u);
  EXPECT_FALSE(lin.report.window.empty());
  EXPECT_GT(lin.report.gpu_ops_linked, 100u);
  EXPECT_LT(lin.report.gpu_ops_linked, lin.report.gpu_ops / 10);  // one iteration's kernels only

  // Forcing a method the data does not support is reported, not silently accepted.
  chakra::LinkOptions rf;
  rf.method = chakra::LinkMethod::RecordFunctionId;
  EXPECT_THROW(link_files(pairs + "hta_simple_add_a100_1rank/benchmark_simple_add_et.json.gz",
                          pairs + "hta_simple_add_a100_1rank/benchmark_simple_add_trace.json.gz", rf),
               chakra::Error);
}

TEST(TraceLink, RankFromTheKinetoTraceItself) {
  using chakra::kineto_rank;
  EXPECT_EQ(kineto_rank(R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 5, "world_size": 8}})"),
            5u);
  // pg_config's nested "ranks" are not the rank; the rank may come after them
  EXPECT_EQ(kineto_rank(R"({"distributedInfo": {"pg_config": [{"pg_name": "0", "ranks": [0, 1]}], "rank" : 1}})"), 1u);
  EXPECT_FALSE(kineto_rank(R"({"distributedInfo": {"backend": "nccl"}, "rank": 3})").has_value());
  EXPECT_FALSE(kineto_rank(R"({"traceEvents": []})").has_value());
  EXPECT_FALSE(kineto_rank(R"({"distributedInfo": {"rank": 12)").has_value());  // cut off mid-number
  EXPECT_FALSE(kineto_rank(R"({"distributedInfo": {"rank": "2"}})").has_value());
  // the name is the fallback, and a contradiction is an error naming the file
  std::string head = R"({"distributedInfo": {"rank": 2}})";
  EXPECT_EQ(chakra::kineto_file_rank(head, "dir/trace.2023-07.json"), 2u);
  EXPECT_EQ(chakra::kineto_file_rank("{}", "dir/worker_4.json"), 4u);
  try {
    chakra::kineto_file_rank(head, "dir/rank3.json");
    ADD_FAILURE() << "no error";
  } catch (const chakra::Error& e) {
    EXPECT_STREQ(e.what(),
                 "dir/rank3.json: the trace says it is rank 2 (distributedInfo) but its name says rank 3; "
                 "rename the file or fix the trace");
  }
}

// --method rf-id on a Kineto trace without record-function ids says so and what to use.
TEST(TraceLink, RecordFunctionIdMethodNeedsTheIds) {
  chakra::LinkOptions rf;
  rf.method = chakra::LinkMethod::RecordFunctionId;
  std::string e;
  try {
    link_text(small_host(), small_kineto(false), rf);
  } catch (const chakra::Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("kineto.json: --method rf-id needs Kineto CPU ops with a \"Record function id\", and this trace "
                   "has none"),
            std::string::npos)
      << e;
  EXPECT_EQ(link_text(small_host(), small_kineto(true), rf).report.method, chakra::LinkMethod::RecordFunctionId);
}

TEST(TraceLink, SmallTraceFieldsFollowTheReferenceRules) {
  Linked l = link_text(small_host(), small_kineto());
  json doc = json::parse(l.text);
  const json& nodes = doc["nodes"];
  ASSERT_EQ(nodes.size(), 7u);  // 6 host nodes + 1 kernel after its launcher
  // Dense ids in original id order; the kernel right after aten::addmm.
  EXPECT_EQ(nodes[0]["name"], "[pytorch|profiler|execution_trace|process]");
  EXPECT_EQ(nodes[0]["ctrl_deps"], 0);  // the root's self-reference, renumbered
  EXPECT_EQ(nodes[3]["name"], "aten::addmm");
  EXPECT_EQ(nodes[4]["name"], "gemm\u00e9");
  EXPECT_EQ(nodes[4]["ctrl_deps"], 3);
  EXPECT_EQ(nodes[4]["cat"], "kernel");
  EXPECT_EQ(nodes[4]["stream"], 7);
  EXPECT_EQ(nodes[4]["ts"], 110.125);
  EXPECT_EQ(nodes[4]["attrs"], nodes[3]["attrs"]);  // a copy of its launcher
  // aten::linear: 10.5 long, aten::addmm inside it for 2.25.
  EXPECT_EQ(nodes[2]["inclusive_dur"], 10.5);
  EXPECT_EQ(nodes[2]["exclusive_dur"], 8.25);
  EXPECT_EQ(nodes[2]["ts"], 100.5);
  // aten::relu starts a new group (gap > 1 ms) after autograd::backward ran on tid 2.
  EXPECT_EQ(nodes[5]["name"], "aten::relu");
  EXPECT_TRUE(nodes[5]["inter_thread_dep"].is_null());  // its dependency has a larger id
  EXPECT_EQ(nodes[6]["inter_thread_dep"], 3);           // backward after aten::addmm
  // Unlinked nodes get none of the added keys; the top-level keys keep their order.
  EXPECT_FALSE(nodes[1].contains("ts"));
  EXPECT_NE(l.text.find("\"gemm\\u00e9\""), std::string::npos);  // ensure_ascii
  EXPECT_LT(l.text.find("\"pid\""), l.text.find("\"nodes\""));
  EXPECT_LT(l.text.find("\"nodes\""), l.text.find("\"finish_ts\""));

  // The same traces without Record function ids link by External id (offset 10).
  Linked e = link_text(small_host(), small_kineto(false));
  EXPECT_EQ(e.report.method, chakra::LinkMethod::ExternalId);
  EXPECT_EQ(e.report.id_offset, 10);
  EXPECT_EQ(e.report.host_ops_linked, 4u);
  EXPECT_EQ(e.report.gpu_nodes, 1u);
}

// --sync-deps: a stream sync makes the next op on its thread wait for the stream's last GPU op;
// a stream wait makes the next kernel on the waiting stream wait for the op before the event.
TEST(TraceLink, SyncDepsFromSynchronisationCalls) {
  std::string kineto = small_kineto();
  auto event = [](const char* cat, const char* name, int tid, const char* ts, const char* dur,
                  const std::string& args) {
    return std::string(", {\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" + name +
           "\", \"tid\": " + std::to_string(tid) + ", \"ts\": " + ts + ", \"dur\": " + dur + ", \"args\": {" + args +
           "}}";
  };
  kineto.replace(
      kineto.rfind("]}"), 0,
      // tid 1 syncs stream 7 (which ran gemm) before aten::relu starts.
      event("cuda_runtime", "cudaStreamSynchronize", 1, "200", "5", "\"correlation\": 90") +
          event("cuda_sync", "Stream Sync", 7, "200", "5", "\"stream\": 7, \"correlation\": 90") +
          // An event recorded on stream 7 after gemm; stream 9 waits for it, then runs bwd.
          event("cuda_runtime", "cudaEventRecord", 1, "105", "1", "\"correlation\": 91") +
          event("cuda_runtime", "cudaStreamWaitEvent", 2, "2500.5", "1", "\"correlation\": 92") +
          event("cuda_sync", "Stream Wait Event", 9, "2501", "1",
                "\"stream\": 9, \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 91, "
                "\"correlation\": 92") +
          event("cuda_runtime", "cudaLaunchKernel", 2, "2502", "1", "\"External id\": 14, \"correlation\": 93") +
          event("kernel", "bwd", 9, "2510", "3", "\"correlation\": 93, \"stream\": 9") +
          // Nothing runs on tid 2 after this one, and this event wait names no event.
          event("cuda_runtime", "cudaDeviceSynchronize", 2, "2600", "1", "\"correlation\": 94") +
          event("cuda_runtime", "cudaEventSynchronize", 1, "2700", "1", "\"correlation\": 95"));
  chakra::LinkOptions o;
  o.sync_deps = true;
  Linked l = link_text(small_host(), kineto, o);
  json nodes = json::parse(l.text)["nodes"];
  ASSERT_EQ(nodes.size(), 8u);  // ..., 4 gemm, 5 aten::relu, 6 autograd::backward, 7 bwd
  EXPECT_EQ(nodes[5]["name"], "aten::relu");
  EXPECT_EQ(nodes[5]["sync_dep"], json::array({4}));
  EXPECT_EQ(nodes[7]["name"], "bwd");
  EXPECT_EQ(nodes[7]["sync_dep"], json::array({4}));
  EXPECT_FALSE(nodes[6].contains("sync_dep"));  // a GPU copy of its launcher does not inherit it
  EXPECT_EQ(l.report.sync_calls, 4u);
  EXPECT_EQ(l.report.sync_waits, 2u);
  EXPECT_EQ(l.report.sync_edges, 2u);
  std::string warnings;
  for (const std::string& w : l.report.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("1 synchronisation calls give no sync dependency: no linked op follows"), std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("1 event waits"), std::string::npos) << warnings;
  // Off by default, as the reference writes none.
  EXPECT_EQ(link_text(small_host(), kineto).text.find("sync_dep"), std::string::npos);
}

// --sync-deps also writes blocked_dur: the part of an op's own time spent inside calls that
// block its thread on the GPU (here a stream sync inside aten::linear, after its child addmm).
TEST(TraceLink, BlockedTimeIsOwnTimeInsideBlockingCalls) {
  std::string kineto = small_kineto();
  kineto.replace(kineto.rfind("]}"), 0,
                 ", {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"tid\": 1, "
                 "\"ts\": 105, \"dur\": 3.5, \"args\": {\"correlation\": 90}}");
  chakra::LinkOptions o;
  o.sync_deps = true;
  json nodes = json::parse(link_text(small_host(), kineto, o).text)["nodes"];
  ASSERT_EQ(nodes[2]["name"], "aten::linear");
  EXPECT_EQ(nodes[2]["exclusive_dur"], 8.25);
  EXPECT_EQ(nodes[2]["blocked_dur"], 3.5);
  EXPECT_EQ(nodes[2]["blocked_spans"], json::parse("[[105.0, 108.5]]"));  // when: the sync call
  for (const json& n : nodes) {
    if (n["name"] != "aten::linear") {
      EXPECT_FALSE(n.contains("blocked_dur")) << n["name"];
    }
  }
  // aten::relu, the next op of the thread, waits for gemm, the stream's work before the sync.
  EXPECT_EQ(nodes[5]["sync_dep"], json::array({4}));
  // Not without --sync-deps: the reference writes no such key.
  EXPECT_EQ(link_text(small_host(), kineto).text.find("blocked_dur"), std::string::npos);

  // The converter's replay model charges aten::linear's own time where it was spent, less the
  // blocked 3.5 µs: 100.5–101.75 before addmm to linear, 101.75–105 (addmm's 2.25 and linear's
  // 1 after it, until the block) to addmm, the op running before that stretch; the rest (after
  // the wait, and the gap to relu) goes to the next op.
  std::string text = link_text(small_host(), kineto, o).text;
  chakra::PytorchConvertResult c = chakra::convert_pytorch(chakra::memory_input(as_bytes(text), "linked.json"));
  chakra::PytorchConvertOptions reference_graph;
  reference_graph.replay_model = false;
  chakra::PytorchConvertResult r =
      chakra::convert_pytorch(chakra::memory_input(as_bytes(text), "linked.json"), reference_graph);
  ASSERT_EQ(c.trace.size(), r.trace.size());
  int found = 0;
  for (uint32_t i = 0; i < c.trace.size(); ++i) {
    if (c.trace.name(i) == "aten::linear") {
      ++found;
      EXPECT_EQ(c.trace.duration_micros(i), 1u);  // int(1.25)
      EXPECT_EQ(r.trace.duration_micros(i), 8u);  // int(8.25), all of it up front
    }
    if (c.trace.name(i) == "aten::addmm") {
      ++found;
      EXPECT_EQ(c.trace.duration_micros(i), 3u);  // int(105 - 101.75)
      EXPECT_EQ(r.trace.duration_micros(i), 2u);  // int(2.25)
    }
  }
  EXPECT_EQ(found, 2);
}

// A blocking call is blocked only until the work it waits for ends: the rest of the call (the
// thread waking up) is the op's own time. Here gemm runs 104–106 and the stream sync inside
// aten::linear 105–108.5: 1 µs blocked. A sync that starts after gemm ended waited for nothing.
// One outside every host op is given to the op before it.
TEST(TraceLink, BlockedTimeEndsWhenTheAwaitedWorkEnds) {
  std::string kineto = small_kineto();
  const std::string gemm_at = "\"ts\": 110.125, \"dur\": 4";
  kineto.replace(kineto.find(gemm_at), gemm_at.size(), "\"ts\": 104, \"dur\": 2");
  auto with_sync = [&](const char* ts, const char* dur) {
    std::string k = kineto;
    k.replace(
        k.rfind("]}"), 0,
        std::string(
            ", {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"tid\": 1, \"ts\": ") +
            ts + ", \"dur\": " + dur + ", \"args\": {\"correlation\": 90}}");
    return k;
  };
  chakra::LinkOptions o;
  o.sync_deps = true;
  json nodes = json::parse(link_text(small_host(), with_sync("105", "3.5"), o).text)["nodes"];
  ASSERT_EQ(nodes[2]["name"], "aten::linear");
  EXPECT_EQ(nodes[2]["blocked_dur"], 1.0);
  EXPECT_EQ(nodes[2]["blocked_spans"], json::parse("[[105.0, 106.0]]"));
  EXPECT_EQ(nodes[5]["sync_dep"], json::array({4}));  // aten::relu still waits for gemm
  nodes = json::parse(link_text(small_host(), with_sync("107", "2"), o).text)["nodes"];
  EXPECT_FALSE(nodes[2].contains("blocked_dur"));

  // A device sync between host ops (torch.cuda.synchronize() in Python, 200–205) waiting for
  // gemm, which now runs 198–202: its 2 blocked µs go to the thread's op that ended last before
  // it started (aten::addmm), so that the replay does not charge them as the thread's own time.
  std::string late = small_kineto();
  late.replace(late.find(gemm_at), gemm_at.size(), "\"ts\": 198, \"dur\": 4");
  late.replace(late.rfind("]}"), 0,
               ", {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"tid\": 1, "
               "\"ts\": 200, \"dur\": 5, \"args\": {\"correlation\": 95}}");
  nodes = json::parse(link_text(small_host(), late, o).text)["nodes"];
  ASSERT_EQ(nodes[3]["name"], "aten::addmm");
  EXPECT_EQ(nodes[3]["blocked_dur"], 2.0);
  EXPECT_EQ(nodes[3]["blocked_spans"], json::parse("[[200.0, 202.0]]"));
  EXPECT_FALSE(nodes[2].contains("blocked_dur"));
}

// On a real trace every sync dependency must hold physically: the GPU op ended before the op
// that waited for it started. The converter turns them into data dependencies.
TEST(TraceLink, DlrmSyncDepsHoldInTimeAndReachTheConverter) {
  const std::string dir = shared("data/pairs/dlrm_8rank_v100/rank0/");
  chakra::LinkOptions o;
  o.sync_deps = true;
  Linked l = link_files(dir + "dlrm_eg_0.json", dir + "worker0_step_12.1694128201545.pt.trace.json", o);
  EXPECT_EQ(l.report.sync_calls, 55u);  // 10 stream syncs, 1 device sync, 44 stream waits
  // The stream syncs, and the stream waits that the launch-order rule resolves (this Kineto has
  // no cuda_sync events); no op follows the device sync.
  EXPECT_EQ(l.report.sync_waits, 49u);
  json nodes = json::parse(l.text)["nodes"];
  std::map<int64_t, const json*> by_id;
  for (const json& n : nodes) by_id[n["id"].get<int64_t>()] = &n;
  std::map<int64_t, std::vector<int64_t>> waits;  // host ops that waited → GPU ops
  size_t gpu_waiters = 0;
  std::vector<std::string> thread_waiters;  // host ops that waited for another thread's work
  for (const json& n : nodes) {
    if (!n.contains("sync_dep")) continue;
    for (const json& g : n["sync_dep"]) {
      const json& gpu = *by_id.at(g.get<int64_t>());
      EXPECT_LE(gpu["ts"].get<int64_t>() + gpu["inclusive_dur"].get<int64_t>(), n["ts"].get<int64_t>());
      if (!gpu.contains("cat")) {  // the end of work handed to another thread
        EXPECT_NE(gpu["tid"], n["tid"]);
        thread_waiters.push_back(n["name"]);
        continue;
      }
      if (n.contains("cat")) {
        EXPECT_NE(gpu["stream"], n["stream"]);  // a stream waits for another stream's work
      } else {
        EXPECT_EQ(gpu["cat"], "gpu_memcpy");  // DLRM's host waits follow host copies
        EXPECT_EQ(gpu["tid"], n["tid"]);      // launched by the thread that synchronised
        waits[n["id"]].push_back(g.get<int64_t>());
      }
    }
    gpu_waiters += n.contains("cat");
  }
  EXPECT_EQ(waits.size(), 10u);
  EXPECT_GT(gpu_waiters, 10u);
  // The optimizer waits for the backward pass's last op on the autograd thread (not merely for
  // one before the main thread's last op inside "## backward ##").
  EXPECT_EQ(thread_waiters.size(), l.report.sync_thread_waits);
  EXPECT_NE(std::find(thread_waiters.begin(), thread_waiters.end(), "## optimizer ##"), thread_waiters.end());
  // Blocked time: the copies to pageable memory wait for the GPU, and the main thread waits in
  // "## backward ##" while the autograd thread runs the backward pass.
  double backward_blocked = -1;
  for (const json& n : nodes) {
    if (!n.contains("blocked_dur")) continue;
    EXPECT_GT(n["blocked_dur"].get<double>(), 0);
    EXPECT_LE(n["blocked_dur"].get<double>(), n["exclusive_dur"].get<double>());
    if (n["name"] == "## backward ##")
      backward_blocked = n["blocked_dur"].get<double>() / n["exclusive_dur"].get<double>();
  }
  EXPECT_GT(backward_blocked, 0.8);  // 3.8 of its 4.3 ms

  std::string text = l.text;
  chakra::PytorchConvertResult c = chakra::convert_pytorch(chakra::memory_input(as_bytes(text), "linked.json"));
  size_t found = 0;
  for (uint32_t i = 0; i < c.trace.size(); ++i) {
    auto it = waits.find(static_cast<int64_t>(c.trace.id(i)));
    if (it == waits.end()) continue;
    ++found;
    auto deps = c.trace.data_deps(i);
    for (int64_t g : it->second) EXPECT_NE(std::find(deps.begin(), deps.end(), static_cast<uint64_t>(g)), deps.end());
  }
  EXPECT_EQ(found, 10u);
}

// A second tree beside node 1's (as in a host ET replicated with a root per copy: each copy's
// root is its own parent) is left out by the reference; it is linked here, and counted.
TEST(TraceLink, CountsTheNodesTheReferenceLeavesOutsideTheRoot) {
  std::string host = small_host();
  host.replace(
      host.find("], \"finish_ts\""), 1,
      ", {\"id\": 31, \"name\": \"[pytorch|profiler|execution_trace|process]\", \"ctrl_deps\": 31, \"attrs\": []}"
      ", {\"id\": 32, \"name\": \"[pytorch|profiler|execution_trace|thread]\", \"ctrl_deps\": 31, \"attrs\": "
      "[{\"name\": \"rf_id\", \"value\": 0}, {\"name\": \"tid\", \"value\": 1}]}"
      ", {\"id\": 40, \"name\": \"cycle\", \"ctrl_deps\": 41, \"attrs\": []}"
      ", {\"id\": 41, \"name\": \"cycle\", \"ctrl_deps\": 40, \"attrs\": []}]");
  Linked l = link_text(host, small_kineto());
  EXPECT_EQ(l.report.outside_root.nodes, 4u);
  EXPECT_EQ(l.report.outside_root.missing_parent, 0u);
  json doc = json::parse(l.text);
  std::multiset<std::string> names;  // ids are renumbered, as the reference does
  for (const auto& n : doc["nodes"]) names.insert(n["name"].get<std::string>());
  EXPECT_EQ(names.count("cycle"), 2u);
  EXPECT_EQ(names.count("[pytorch|profiler|execution_trace|process]"), 2u);
  EXPECT_EQ(names.count("[pytorch|profiler|execution_trace|thread]"), 2u);
  // Without them, nothing is outside and nothing is said.
  Linked plain = link_text(small_host(), small_kineto());
  EXPECT_EQ(plain.report.outside_root.nodes, 0u);
  for (const std::string& w : plain.report.warnings) EXPECT_EQ(w.find("not under node 1"), std::string::npos) << w;
}

// Inputs on which the reference aborts or silently drops nodes link here, with a warning each.
TEST(TraceLink, WarnsWhereTheReferenceAborts) {
  std::string host = small_host();
  // Node 7's parent is not in the trace (the reference never reaches it from the root).
  host.replace(host.find("], \"finish_ts\""), 1,
               ", {\"id\": 7, \"name\": \"aten::relu\", \"ctrl_deps\": 99, \"attrs\": [{\"name\": \"rf_id\", "
               "\"value\": 3}, {\"name\": \"tid\", \"value\": 1}]}]");
  std::string kineto = small_kineto();
  // aten::addmm exactly as long as aten::linear: 0.2 - (0.1 + 0.2 - 0.1) is negative in doubles.
  for (std::string times : {"\"ts\": 100.5, \"dur\": 10.5", "\"ts\": 101.75, \"dur\": 2.25"})
    kineto.replace(kineto.find(times), times.size(), "\"ts\": 0.1, \"dur\": 0.2");
  // A second launch call with the same correlation.
  kineto.replace(kineto.find("]}"), 1,
                 ", {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"tid\": 1, "
                 "\"ts\": 103, \"dur\": 1, \"args\": {\"correlation\": 77}}]");
  Linked l = link_text(host, kineto);
  std::string warnings;
  for (const std::string& w : l.report.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("1 of 7 nodes are not under node 1, the process root (1 name a parent that is not in the "
                          "trace); the reference links only the tree under node 1"),
            std::string::npos)
      << warnings;
  EXPECT_EQ(l.report.outside_root.nodes, 1u);
  EXPECT_NE(warnings.find("'aten::linear' has children longer than itself"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("1 launch calls repeat a correlation id"), std::string::npos) << warnings;
  json doc = json::parse(l.text);
  EXPECT_EQ(doc["nodes"][2]["name"], "aten::linear");
  EXPECT_EQ(doc["nodes"][2]["exclusive_dur"], 0.0);
  EXPECT_TRUE(doc["nodes"][2]["exclusive_dur"].is_number_float());
  EXPECT_TRUE(doc["nodes"].back().contains("ts"));  // node 7 is linked
  EXPECT_EQ(doc["nodes"].back()["ctrl_deps"], 8);   // its missing parent gets the next free id
}

// Numbers as Python's json reads them: ints (of any size up to int64, then floats), floats.
TEST(TraceLink, PythonJsonNumbers) {
  using chakra::pyjson::parse_number;
  auto is_int = [](const char* t, int64_t v) {
    const chakra::pyjson::Number n = parse_number(t);
    return n.is_int && n.i == v;
  };
  auto is_float = [](const char* t, double v) {
    const chakra::pyjson::Number n = parse_number(t);
    return !n.is_int && (n.f == v || (std::isnan(n.f) && std::isnan(v)));
  };
  EXPECT_TRUE(is_int("0", 0));
  EXPECT_TRUE(is_int("-0", 0));
  EXPECT_TRUE(is_int("1700000000001500", 1700000000001500));
  EXPECT_TRUE(is_int("-123", -123));
  EXPECT_TRUE(is_int("999999999999999999", 999999999999999999));  // 18 digits
  EXPECT_TRUE(is_int("9223372036854775807", INT64_MAX));          // 19 digits
  EXPECT_TRUE(is_int("-9223372036854775808", INT64_MIN));
  EXPECT_TRUE(is_float("9223372036854775808", 9223372036854775808.0));  // past int64
  EXPECT_TRUE(is_float("51744.25", 51744.25));
  EXPECT_TRUE(is_float("-2.5", -2.5));
  EXPECT_TRUE(is_float("1e5", 1e5));
  EXPECT_TRUE(is_float("0.1", 0.1));
  EXPECT_TRUE(is_float("1700000000001500.125", 1700000000001500.125));
  EXPECT_TRUE(is_float("Infinity", HUGE_VAL));
  EXPECT_TRUE(is_float("-Infinity", -HUGE_VAL));
  EXPECT_TRUE(is_float("NaN", NAN));
  EXPECT_TRUE(is_float("1e400", HUGE_VAL));  // out of range: infinity, as Python's float()
  EXPECT_TRUE(is_float("-1e400", -HUGE_VAL));
  EXPECT_TRUE(is_float("5e-324", 5e-324));
  // Whatever path a float takes, it is strtod's correctly rounded value.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    char text[64];
    const double x = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 160) - 100);
    std::snprintf(text, sizeof text, i % 3 == 0 ? "%.17g" : i % 3 == 1 ? "%.3f" : "%.6e", x);
    if (!std::strpbrk(text, ".e")) continue;  // integers are ints
    ASSERT_TRUE(is_float(text, std::strtod(text, nullptr))) << text;
  }
}

TEST(TraceLink, PythonJsonRendering) {
  EXPECT_EQ(rendered("[]"), "[]");
  EXPECT_EQ(rendered("{ }"), "{}");
  EXPECT_EQ(rendered("[1,{\"a\":[2]}]"), "[\n    1,\n    {\n        \"a\": [\n            2\n        ]\n    }\n]");
  EXPECT_EQ(rendered("1.50"), "1.5");
  EXPECT_EQ(rendered("1E5"), "100000.0");
  EXPECT_EQ(rendered("1e-5"), "1e-05");
  EXPECT_EQ(rendered("1e400"), "Infinity");
  EXPECT_EQ(rendered("-0"), "0");
  EXPECT_EQ(rendered("-0.0"), "-0.0");
  EXPECT_EQ(rendered("0e0"), "0.0");
  EXPECT_EQ(rendered("[-5,-Infinity,NaN,Infinity,true,false,null,-1.25E+2]"),
            "[\n    -5,\n    -Infinity,\n    NaN,\n    Infinity,\n    true,\n    false,\n    null,\n    -125.0\n]");
  EXPECT_EQ(rendered("123456789012345678901234567890"), "123456789012345678901234567890");
  EXPECT_EQ(rendered("\"caf\xc3\xa9 \\u00e9 \\/ \x7f\""), "\"caf\\u00e9 \\u00e9 / \\u007f\"");
  EXPECT_EQ(rendered("\"\xf0\x9f\x98\x80\""), "\"\\ud83d\\ude00\"");
  EXPECT_EQ(rendered("\"\\ud800\""), "\"\\ud800\"");  // a lone surrogate stays as Python keeps it
  EXPECT_EQ(rendered("\"a\\\"b\\\\c\\n\\u0001\""), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(rendered("\"\""), "\"\"");
  EXPECT_EQ(rendered("\"\\u0041bc\""), "\"Abc\"");  // an escape first: no plain prefix
  EXPECT_EQ(rendered("[[1, 2]]"), "[\n    [\n        1,\n        2\n    ]\n]");
  // Deeper than the indentation kept ready (8 levels): 10 levels put 40 spaces before the 1.
  const std::string deep = rendered(std::string(10, '[') + "1" + std::string(10, ']'));
  EXPECT_NE(deep.find("\n" + std::string(40, ' ') + "1\n" + std::string(36, ' ') + "]"), std::string::npos);
  EXPECT_EQ(deep.find("\n" + std::string(41, ' ')), std::string::npos);
  // Strings and numbers longer than the renderer's 16-byte steps, with the byte to escape in a
  // later step, and tokens ending near the end of the text (no room for a whole step).
  const std::string plain(37, 'x');
  EXPECT_EQ(rendered("[\"" + plain + "\"," + std::string(40, '7') + "]"),
            "[\n    \"" + plain + "\",\n    " + std::string(40, '7') + "\n]");
  EXPECT_EQ(rendered("\"" + plain + "\x7f" + plain + "\""), "\"" + plain + "\\u007f" + plain + "\"");
  EXPECT_EQ(rendered("\"" + plain + "\xc3\xa9\""), "\"" + plain + "\\u00e9\"");
  EXPECT_EQ(rendered("\"" + plain + "\\\"\""), "\"" + plain + "\\\"\"");
  EXPECT_EQ(rendered("\"" + plain + "\""), "\"" + plain + "\"");
  // An output much longer than the buffer's first allocation, byte for byte.
  std::string many = "[", expected = "[";
  for (int i = 0; i < 20000; ++i) {
    many += (i ? ",\"" : "\"") + std::to_string(i) + plain + "\"";
    expected += std::string(i ? "," : "") + "\n    \"" + std::to_string(i) + plain + "\"";
  }
  EXPECT_EQ(rendered(many + "]"), expected + "\n]");
}

// A host node's members are rendered once and reused for its GPU copies; a repeated key keeps
// its first position and its last value, as Python's dict does, on the host node and its copies.
TEST(TraceLink, RepeatedKeysKeepTheirFirstPlaceAndLastValue) {
  std::string host = small_host();
  const std::string addmm = "\"name\": \"aten::addmm\", ";
  const size_t at = host.find(addmm);
  ASSERT_NE(at, std::string::npos);
  host.insert(at + addmm.size(), "\"pad\": [1, {\"x\": 2.50}], \"ctrl_deps\": 999, \"pad\": \"last\", ");
  Linked l = link_text(host, small_kineto());
  json doc = json::parse(l.text);
  const json& nodes = doc["nodes"];
  ASSERT_EQ(nodes.size(), 7u);
  for (const int i : {3, 4}) {  // aten::addmm and its kernel
    EXPECT_EQ(nodes[i]["pad"], "last") << i;
    const std::string node = nodes[i].dump();
    // "pad" once, where it first stood (before ctrl_deps); ctrl_deps renumbered once.
    EXPECT_EQ(node.find("\"pad\""), node.rfind("\"pad\"")) << i;
  }
  EXPECT_EQ(nodes[3]["ctrl_deps"], 2);
  EXPECT_EQ(nodes[4]["ctrl_deps"], 3);
  const size_t addmm_at = l.text.find("\"aten::addmm\"");
  EXPECT_LT(l.text.find("\"pad\": \"last\"", addmm_at), l.text.find("\"ctrl_deps\": 2", addmm_at));
  EXPECT_EQ(l.text.find("2.5"), std::string::npos);  // the first value is gone
}

TEST(TraceLink, MismatchedTracesAreRefused) {
  // Kineto traces from other runs: recorded by another process, and with --force still refused,
  // as rf ids overlap by chance but names do not.
  const std::string other = read_decompressed(shared(kLinkIn + "p2p_collectives_kineto.synthetic.json"));
  std::string e = link_error(small_host(), other);
  EXPECT_NE(e.find("host.json and kineto.json are not one rank's recording: process 7 by the host ET's \"pid\", 4242 "
                   "by the Kineto trace's CPU ops"),
            std::string::npos)
      << e;
  chakra::LinkOptions force;
  force.force = true;
  e = link_error(small_host(), other, force);
  EXPECT_NE(e.find("host.json + kineto.json: only"), std::string::npos) << e;
  EXPECT_NE(e.find("same run and rank"), std::string::npos) << e;
  // Every Kineto trace of the corpus is read; with an unrelated host ET each either links or
  // says why not.
  for (const std::string& k : find_files(shared("data/kineto"), {".json", ".json.gz"})) {
    try {
      link_files(shared(kLinkIn + "p2p_collectives_host_et.json"), k);
    } catch (const chakra::Error& err) {
      EXPECT_NE(std::string(err.what()).find(k), std::string::npos) << err.what();
    }
  }
}

TEST(TraceLink, BadInputsNameTheFileAndTheProblem) {
  std::string host = small_host(), kineto = small_kineto();
  EXPECT_NE(link_error(host, kineto.substr(0, kineto.size() / 2)).find("kineto.json"), std::string::npos);
  EXPECT_NE(link_error(host.substr(0, host.size() - 40), kineto).find("host.json"), std::string::npos);
  EXPECT_NE(link_error("{\"schema\": \"1.0.1\"}", kineto).find("no \"nodes\" array"), std::string::npos);
  EXPECT_NE(link_error(host, "{\"events\": []}").find("no \"traceEvents\" array"), std::string::npos);
  // The two traces given the wrong way round: each side says what it got.
  std::string swapped = link_error(kineto, host);
  EXPECT_NE(swapped.find("host.json: this is a Kineto (profiler) trace, not a host execution trace (are the host "
                         "and device traces swapped?)"),
            std::string::npos)
      << swapped;
  EXPECT_NE(link_error(host, host).find("kineto.json: this is a PyTorch host execution trace, not a Kineto trace"),
            std::string::npos);
  EXPECT_NE(link_error(host, "[1, 2]").find("not an object"), std::string::npos);
  EXPECT_NE(link_error("{\"nodes\": [{\"id\": 2}, {\"id\": 2}]}", kineto).find("node id 2 appears twice"),
            std::string::npos);
  std::string bad_ts = kineto;
  bad_ts.replace(bad_ts.find("\"ts\": 100.5"), 11, "\"ts\": \"x\"");
  EXPECT_NE(link_error(host, bad_ts).find("\"ts\" is not a number"), std::string::npos);
  EXPECT_NE(link_error(host, "{\"traceEvents\": [{\"args\": " + std::string(600, '[')).find("nested deeper"),
            std::string::npos);
}
