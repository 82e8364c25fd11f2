// kineto_activity (chakra/pytorch/trace_link.h): a Kineto trace alone as a trace of its CPU ops,
// launches and GPU ops, with the host stalls the linker finds; what `chakra analyze` reads.
#include "chakra/pytorch/trace_link.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/support/memory.h"
#include "chakra/support/text.h"
#include "pytorch/link/link_parts.h"

namespace chakra {

using namespace link;

namespace {

uint64_t micros(Number n) {
  const double v = std::round(n.as_double());
  return v > 0 && v < 0x1p63 ? static_cast<uint64_t>(v) : uint64_t{0};
}

// What kineto_activity's trace is made of: one row per node in event order (node ids 1, 2, ...),
// and the host stalls of its CPU ops.
struct NodeRow {  // 32 bytes
  uint64_t start, duration;
  int64_t thread_or_stream;  // a CPU op's thread, a GPU op's stream
  uint32_t launch_id : 31;   // a GPU op's launch call; 0: none (ids stay below 2^31, as ops do)
  uint32_t cpu : 1;
  StrId name;
};
struct ActivityRows {
  Column<NodeRow> rows;
  std::vector<HostStall> stalls;
  std::unordered_map<uint32_t, uint32_t> stall_of;  // row → its stall
};

// Reduces a read device trace to its rows, emptying `d` of all but its strings and steps.
ActivityRows activity_rows(Device& d) {
  // Host stalls as the linker finds them, every CPU op standing for its own host node: blocked
  // in synchronisation calls and in waits for work handed to another thread.
  compute_inter_thread(d);
  for (int32_t k : d.cpu) d.ops[k].host = k;
  std::vector<int64_t> gpu_out(d.ops.size(), -1);
  for (int32_t g : d.gpu) gpu_out[g] = g;
  SyncDeps sync = compute_sync_deps(d, gpu_out, [](int32_t host) { return int64_t{host}; });
  std::vector<std::pair<int32_t, int32_t>> thread_deps;
  for (int32_t k : d.cpu)
    if (d.ops[k].other_thread != kNone) thread_deps.emplace_back(k, d.ops[k].other_thread);
  add_cross_thread_blocked(
      d, thread_deps, [](int32_t host) { return int64_t{host}; }, sync);
  // What the stalls are found from is taken now, so that the ops can go before they are looked
  // for; everything else of the device trace goes first, and is handed back to the system
  // (the rows below are mapped apart from the heap, where they could not reuse it).
  std::vector<int64_t>().swap(gpu_out);
  std::vector<int32_t>().swap(d.candidates);
  d.cpu_by_tid = {}, d.ends_no_sooner_before = {}, d.cpu_by_rf = {};
  d.sync_calls = {}, d.sync_detail = {}, d.event_records = {};
  StallInputs stall_in = stall_inputs(d, sync);
  sync = {};
  d.runtime_calls = {};
  std::vector<int32_t>().swap(d.gpu);
  release_free_memory();

  // One row per node, in event order (node ids 1, 2, ...; a GPU op names its launch call by
  // correlation whether the call came before it in the list or not), with only what the trace
  // takes from its op: then the ops, several times the rows' size, go before the stalls are
  // found and the trace is built, so that a large trace is not held twice over.
  auto is_node = [](const KinetoOp& op) { return op.kind != OpKind::Other && op.kind != OpKind::Annotation; };
  std::vector<uint32_t> id_of(d.ops.size(), 0);  // 0: no node
  uint32_t id = 0;
  for (size_t i = 0; i < d.ops.size(); ++i)
    if (is_node(d.ops[i])) id_of[i] = ++id;
  ActivityRows out;
  Column<NodeRow>& rows = out.rows;
  rows.reserve(id);
  for (size_t i = 0; i < d.ops.size(); ++i) {
    const KinetoOp& op = d.ops[i];
    if (!id_of[i]) continue;
    const bool cpu = op.kind != OpKind::Gpu && op.kind != OpKind::GpuMemset;
    uint32_t launch_id = 0;
    if (!cpu && op.correlation >= 0)
      if (auto l = d.launch_by_correlation.find(op.correlation); l != d.launch_by_correlation.end())
        launch_id = id_of[l->second];
    rows.push_back({micros(op.ts), micros(op.dur), cpu ? op.tid : parse_stream(d, op.stream), launch_id, cpu, op.name});
  }
  std::vector<uint32_t> row_of_cpu(d.cpu.size());  // every CPU op is a node
  for (size_t k = 0; k < d.cpu.size(); ++k) row_of_cpu[k] = id_of[d.cpu[k]] - 1;
  d.ops = {}, d.launch_by_correlation = {};
  std::vector<int32_t>().swap(d.cpu);
  std::vector<uint32_t>().swap(id_of);
  release_free_memory();

  out.stalls = find_host_stalls(stall_in);
  stall_in = {};
  for (uint32_t k = 0; k < out.stalls.size(); ++k) out.stall_of.emplace(row_of_cpu[out.stalls[k].op], k);
  std::vector<uint32_t>().swap(row_of_cpu);
  release_free_memory();
  return out;
}

}  // namespace

Trace kineto_activity(std::unique_ptr<ByteSource> device_in, KinetoCategories* categories) {
  Device d;
  if (categories) categories->clear();
  d.categories = categories;
  load_device(*device_in, d, nullptr);
  const ActivityRows activity = activity_rows(d);
  const Column<NodeRow>& rows = activity.rows;
  const std::vector<HostStall>& stalls = activity.stalls;

  if (categories)
    std::stable_sort(categories->begin(), categories->end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  Trace t;
  t.reserve(rows.size() + d.profiler_steps.size(), 1, 2);
  const StrId is_cpu_op = t.intern("is_cpu_op"), tid = t.intern("tid"), stream = t.intern("stream"),
              comm_type = t.intern("comm_type"), comm_size = t.intern("comm_size"),
              stall_class = t.intern(kStallClassAttr), stall_micros = t.intern(kStallMicrosAttr),
              stall_evidence = t.intern("stall_evidence");
  if (!stalls.empty()) {
    AttrDrafts meta;
    meta.add_uint64(t.intern(kHostStallsAttr), stalls.size());
    t.set_metadata(StringPool::kEmpty, meta);
  }
  NodeDraft node;
  for (size_t r = 0; r < rows.size(); ++r) {
    const NodeRow& row = rows[r];
    const std::string_view name = d.strings.view(row.name);
    node.clear();
    node.id = r + 1;
    node.name = t.intern(name);
    node.type = static_cast<int32_t>(NodeType::Comp);
    node.start_time_micros = row.start;
    node.duration_micros = row.duration;
    node.attrs.add_bool(is_cpu_op, row.cpu);
    node.attrs.add_int64(row.cpu ? tid : stream, row.thread_or_stream);
    if (auto k = activity.stall_of.find(static_cast<uint32_t>(r)); k != activity.stall_of.end()) {
      const HostStall& st = stalls[k->second];
      node.attrs.add_string(stall_class, t.intern(stall_class_name(st.cls)));
      node.attrs.add_uint64(stall_micros, static_cast<uint64_t>(std::llround(st.micros)));
      node.attrs.add_string(stall_evidence, t.intern(st.evidence));
    }
    if (row.launch_id) node.data_deps.push_back(row.launch_id);  // a kernel or copy waits for its launch call
    const bool nccl = !row.cpu && (name.find("ncclKernel") != std::string_view::npos ||
                                   name.find("ncclDevKernel") != std::string_view::npos);
    int64_t ct = nccl ? collective_of(name, true) : -1;
    if (nccl && ct < 0 && name.find("SendRecv") != std::string_view::npos)
      ct = static_cast<int64_t>(CommType::AllToAll);
    if (ct >= 0) {
      node.type = static_cast<int32_t>(NodeType::CommColl);
      node.attrs.add_int64(comm_type, ct);
      node.attrs.add_int64(comm_size, 0);
    }
    t.append(node);
  }
  // ProfilerStep#N annotations: the iterations (analyses drop the last, incomplete one, as HTA).
  uint64_t id = rows.size();
  for (const Device::Step& step : d.profiler_steps) {
    node.clear();
    node.id = ++id;
    node.name = t.intern(d.strings.view(step.name));
    node.type = static_cast<int32_t>(NodeType::Comp);
    node.start_time_micros = micros(step.begin);
    const uint64_t end = micros(step.end);
    node.duration_micros = end > node.start_time_micros ? end - node.start_time_micros : 0;
    node.attrs.add_bool(is_cpu_op, true);
    node.attrs.add_int64(tid, step.tid);
    t.append(node);
  }
  return t;
}

std::optional<std::string> kineto_without_gpu_ops(const KinetoCategories& categories) {
  // The categories of GPU ops (Kineto's names, and those of PyTorch before 1.9).
  for (const auto& [cat, count] : categories)
    for (std::string_view gpu : {"kernel", "gpu_memcpy", "gpu_memset"})
      if (modern_category(cat) == gpu) return std::nullopt;
  if (categories.empty())
    return "it has no event with a category (\"cat\"), so no kernel, gpu_memcpy or gpu_memset event";
  std::string listed;
  for (size_t i = 0; i < categories.size() && i < 8; ++i)
    listed += (i ? ", " : "") + categories[i].first + " " + std::to_string(categories[i].second);
  if (categories.size() > 8) listed += ", and " + std::to_string(categories.size() - 8) + " more categories";
  // Kineto's activity types of devices other than CUDA and ROCm GPUs, by their categories' prefix.
  static constexpr std::pair<std::string_view, std::string_view> kDevices[] = {
      {"mtia_", "MTIA"},         {"xpu_", "Intel XPU"},   {"hpu_", "Gaudi (HPU)"},
      {"mlu_", "Cambricon MLU"}, {"gcu_", "Enflame GCU"}, {"privateuse1_", "PrivateUse1 backend"}};
  for (const auto& [prefix, device] : kDevices)
    for (const auto& [cat, count] : categories)
      if (cat.rfind(prefix, 0) == 0)
        return with_article(std::string(device) + " trace") + " (" + std::string(prefix) +
               "* events), not a CUDA or ROCm one: its events are " + listed +
               "; the analyses read kernel, gpu_memcpy and gpu_memset events";
  // Host-side categories: the CPU ops, Python calls, annotations and the profiler's own.
  static constexpr std::string_view kHost[] = {"cpu_op", "user_annotation", "python_function", "cpu_instant_event",
                                               "Trace",  "overhead",        "Operator"};
  const bool host_only = std::all_of(categories.begin(), categories.end(), [](const auto& c) {
    return std::find(std::begin(kHost), std::end(kHost), c.first) != std::end(kHost);
  });
  if (host_only)
    return "it records only host-side events (" + listed +
           "): no kernel, gpu_memcpy or gpu_memset event; profile "
           "with GPU activities on (torch.profiler.ProfilerActivity.CUDA)";
  return "its events are " + listed + ": no kernel, gpu_memcpy or gpu_memset event, which the analyses read";
}

}  // namespace chakra
