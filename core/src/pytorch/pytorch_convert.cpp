#include "chakra/pytorch/pytorch_convert.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <span>
#include <unordered_map>

using namespace std::string_view_literals;

#include <nlohmann/json.hpp>

#include "chakra/format/json_pull.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/graph.h"
#include "chakra/trace/schema.h"
#include "pytorch/host_et_reader.h"
#include "pytorch/replay_costs.h"

namespace chakra {

using namespace convert;

namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Values grouped by row in flat arrays (compressed rows): row r holds values[begin[r], begin[r + 1]).
template <class Value>
struct Rows {
  std::vector<uint32_t> begin;
  std::vector<Value> values;
  std::span<const Value> of(uint32_t r) const { return {values.data() + begin[r], begin[r + 1] - begin[r]}; }
};
// Groups `items` items by row, each row's values in item order: item i goes to row row_of(i)
// (left out when that is `rows` or more) with value value_of(i).
template <class Value, class RowOf, class ValueOf>
Rows<Value> group_rows(size_t rows, size_t items, RowOf row_of, ValueOf value_of) {
  Rows<Value> out;
  out.begin.assign(rows + 1, 0);
  for (size_t i = 0; i < items; ++i)
    if (size_t r = row_of(i); r < rows) ++out.begin[r + 1];
  for (size_t r = 0; r < rows; ++r) out.begin[r + 1] += out.begin[r];
  out.values.resize(out.begin.back());
  std::vector<uint32_t> fill(out.begin.begin(), out.begin.end() - 1);
  for (size_t i = 0; i < items; ++i)
    if (size_t r = row_of(i); r < rows) out.values[fill[r]++] = value_of(i);
  return out;
}

// The data dependencies of the converted nodes, in flat arrays rather than a vector per node:
// (node, dependency) pairs are collected as the walk finds them, then grouped by node.
class DepLists {
 public:
  void add(uint32_t node, int64_t dep) { found_.emplace_back(node, dep); }
  // Groups what add() collected by node, in the order added; a repeated dependency of a node
  // keeps its first place. Call once, before the functions below.
  void group(size_t nodes) {
    rows_ = group_rows<int64_t>(
        nodes, found_.size(), [&](size_t i) { return found_[i].first; }, [&](size_t i) { return found_[i].second; });
    found_ = {};
    size_.assign(nodes, 0);
    for (uint32_t k = 0; k < nodes; ++k) {
      int64_t* d = rows_.values.data() + rows_.begin[k];
      for (int64_t dep : rows_.of(k))
        if (std::find(d, d + size_[k], dep) == d + size_[k]) d[size_[k]++] = dep;
    }
  }
  std::span<const int64_t> of(uint32_t node) const { return rows_.of(node).first(size_[node]); }
  void drop(uint32_t node, size_t i) {
    int64_t* d = rows_.values.data() + rows_.begin[node];
    std::copy(d + i + 1, d + size_[node], d + i);
    --size_[node];
  }

 private:
  std::vector<std::pair<uint32_t, int64_t>> found_;
  Rows<int64_t> rows_;
  std::vector<uint32_t> size_;  // node k's dependencies: the first size_[k] of rows_.of(k)
};

}  // namespace

int64_t collective_of(std::string_view name, bool beyond_reference) {
  std::string squashed;
  for (char c : name)
    if (c != '_' && c != '-') squashed += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // The reference's five first: "reduce" must not match "allreduce" before it does.
  static const std::pair<std::string_view, CommType> kKnown[] = {
      {"allreduce", CommType::AllReduce}, {"alltoall", CommType::AllToAll},
      {"allgather", CommType::AllGather}, {"reducescatter", CommType::ReduceScatter},
      {"broadcast", CommType::Broadcast}, {"reduce", CommType::Reduce},
      {"gather", CommType::Gather},       {"scatter", CommType::Scatter},
      {"barrier", CommType::Barrier}};
  constexpr size_t kReferenceTypes = 5;
  const size_t known = beyond_reference ? std::size(kKnown) : kReferenceTypes;
  for (size_t k = 0; k < known; ++k)
    if (squashed.find(kKnown[k].first) != std::string::npos) return static_cast<int64_t>(kKnown[k].second);
  return -1;
}

std::vector<std::string> simulate_conversion(const Trace& t, Progress* progress) {
  struct Info {
    bool gpu;
    int64_t tid;
    std::optional<int64_t> stream;
    uint32_t pending;  // data dependencies not issued yet
  };
  std::unordered_map<uint64_t, uint32_t> position;
  for (uint32_t n = 0; n < t.size(); ++n) position.emplace(t.id(n), n);
  std::vector<Info> info(t.size());
  std::vector<std::vector<uint32_t>> children(t.size());
  std::deque<uint32_t> cpu_ready;  // popped from the front, as the reference's list
  std::vector<uint32_t> gpu_ready;
  auto attr_int = [&](uint32_t n, const char* name) -> std::optional<int64_t> {
    auto a = t.find_attr(n, name);
    return a ? a->as_int64() : std::nullopt;
  };
  for (uint32_t n = 0; n < t.size(); ++n) {
    auto cpu = t.find_attr(n, "is_cpu_op");
    info[n].gpu = cpu && cpu->as_bool() == std::optional<bool>(false);
    info[n].tid = attr_int(n, "tid").value_or(0);
    info[n].stream = attr_int(n, "stream");
    for (uint64_t dep : t.data_deps(n)) {
      auto it = position.find(dep);
      if (it == position.end())
        throw Error("node " + std::to_string(t.id(n)) + " depends on node " + std::to_string(dep) +
                    ", which is not in the trace");
      children[it->second].push_back(n);
      ++info[n].pending;
    }
  }
  auto make_ready = [&](uint32_t n) {
    if (info[n].gpu)
      gpu_ready.push_back(n);
    else
      cpu_ready.push_back(n);
  };
  for (uint32_t n = 0; n < t.size(); ++n)
    if (info[n].pending == 0) make_ready(n);
  auto by_id = [&](uint32_t a, uint32_t b) { return t.id(a) < t.id(b); };
  std::stable_sort(cpu_ready.begin(), cpu_ready.end(), by_id);
  std::stable_sort(gpu_ready.begin(), gpu_ready.end(), by_id);
  auto stream_text = [](const std::optional<int64_t>& s) { return s ? std::to_string(*s) : std::string("None"); };
  auto node_text = [&](uint32_t n) { return std::to_string(t.id(n)) + " (" + std::string(t.name(n)) + ")"; };

  std::vector<std::string> log;
  log.push_back("Simulating execution of Chakra nodes based on data dependencies.");
  constexpr uint32_t kIdle = UINT32_MAX;
  uint32_t cpu = kIdle;  // the running CPU node
  uint64_t cpu_start = 0;
  std::vector<std::pair<std::optional<int64_t>, std::pair<uint32_t, uint64_t>>> gpu;  // by stream, in issue order
  std::vector<uint32_t> issued, order;
  int slot[8];
  uint64_t now = 0;
  while (!cpu_ready.empty() || !gpu_ready.empty() || cpu != kIdle || !gpu.empty()) {
    if (!cpu_ready.empty() && cpu == kIdle) {
      uint32_t n = cpu_ready.front();
      cpu_ready.pop_front();
      cpu = n;
      cpu_start = now;
      issued.push_back(n);
      log.push_back("Issuing CPU Node ID " + node_text(n) + " at " + std::to_string(now) + "us with duration " +
                    std::to_string(t.duration_micros(n)) + "us, tid: " + std::to_string(info[n].tid));
    }
    for (size_t i = 0; i < gpu_ready.size();) {
      uint32_t n = gpu_ready[i];
      bool busy = std::any_of(gpu.begin(), gpu.end(), [&](const auto& g) { return g.first == info[n].stream; });
      if (busy) {
        ++i;
        continue;
      }
      gpu_ready.erase(gpu_ready.begin() + static_cast<std::ptrdiff_t>(i));
      gpu.push_back({info[n].stream, {n, now}});
      issued.push_back(n);
      std::string s = stream_text(info[n].stream);
      log.push_back("Issuing GPU Node ID " + node_text(n) + " at " + std::to_string(now) + "us on stream " + s +
                    " with duration " + std::to_string(t.duration_micros(n)) + "us, tid: stream " + s);
    }
    ++now;
    if (cpu != kIdle && now - cpu_start >= t.duration_micros(cpu)) {
      log.push_back("CPU Node ID " + std::to_string(t.id(cpu)) + " completed at " + std::to_string(now) +
                    "us, tid: " + std::to_string(info[cpu].tid));
      cpu = kIdle;
    }
    for (size_t i = 0; i < gpu.size();) {
      auto [stream, run] = gpu[i];
      if (now - run.second >= t.duration_micros(run.first)) {
        std::string s = stream_text(stream);
        log.push_back("GPU Node ID " + std::to_string(t.id(run.first)) + " on stream " + s + " completed at " +
                      std::to_string(now) + "us, tid: stream " + s);
        gpu.erase(gpu.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    // Children of the nodes issued this tick become ready, visited in the order CPython
    // iterates a set of up to 4 ints: its 8-slot table, filled by CPython's probe sequence.
    if (issued.size() <= 4) {
      std::fill(std::begin(slot), std::end(slot), -1);
      for (uint32_t k = 0; k < issued.size(); ++k) {
        uint64_t perturb = t.id(issued[k]);
        size_t i = perturb & 7;
        while (slot[i] >= 0) {
          perturb >>= 5;
          i = (i * 5 + 1 + perturb) & 7;
        }
        slot[i] = static_cast<int>(k);
      }
      order.clear();
      for (int k : slot)
        if (k >= 0) order.push_back(issued[k]);
    } else {
      order = issued;  // rare (more than three busy streams); insertion order
    }
    for (uint32_t p : order)
      for (uint32_t c : children[p])
        if (--info[c].pending == 0) make_ready(c);
    issued.clear();
    if ((now & 0xffff) == 0) report_progress(progress, "simulating", now, 0);
  }
  log.push_back("Simulation of Chakra node execution completed.");
  return log;
}

PytorchConvertResult convert_pytorch(std::unique_ptr<ByteSource> in, const PytorchConvertOptions& options) {
  PytorchConvertResult result;
  Trace& t = result.trace;
  const std::string source = in->name();
  auto warn = [&](const std::string& m) { result.warnings.push_back(source + ": " + m); };

  JsonPull json(*in);
  const HostEt parser = read_host_et(json, t, options.progress, *in);
  const Column<HostNode>& nodes = parser.nodes;
  result.host_nodes = nodes.size();
  if (auto it = parser.metadata.find("schema"); it != parser.metadata.end() && it->second.is_string())
    result.schema = it->second.get<std::string>();

  // ---- index and tree ----
  std::unordered_map<int64_t, uint32_t> by_id;
  by_id.reserve(nodes.size() * 2);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    auto [it, fresh] = by_id.emplace(nodes[i].id, i);
    if (!fresh)
      throw Error(source + ": duplicate node id " + std::to_string(nodes[i].id) + " (nodes " +
                  std::to_string(it->second) + " and " + std::to_string(i) + " in the \"nodes\" list)");
    result.gpu_nodes += nodes[i].gpu;
  }
  // parent_pos[i]: position of node i's parent, kNoParent when it has none or it is missing.
  constexpr uint32_t kNoParent = UINT32_MAX;
  std::vector<uint32_t> parent_pos(nodes.size(), kNoParent);
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].has_parent)
      if (auto it = by_id.find(nodes[i].parent); it != by_id.end()) parent_pos[i] = it->second;
  // children.of(i): positions of the nodes whose parent is node i, in file order.
  const Rows<uint32_t> children = group_rows<uint32_t>(
      nodes.size(), nodes.size(), [&](size_t i) { return parent_pos[i]; },
      [](size_t i) { return static_cast<uint32_t>(i); });
  // Parent cycles (a node its own ancestor; being one's own parent marks a root) put nodes
  // under no thread: they get no dependencies and are pruned, so say why they are missing.
  {
    std::vector<uint32_t> walk_of(nodes.size(), 0);  // 0: not visited, else the walk's number
    for (uint32_t start = 0; start < nodes.size(); ++start) {
      uint32_t i = start;
      bool cycle = false;
      for (;;) {
        if (walk_of[i] != 0) {  // met this walk again (a cycle) or an earlier one (no news)
          cycle = walk_of[i] == start + 1;
          break;
        }
        walk_of[i] = start + 1;
        if (parent_pos[i] == kNoParent || parent_pos[i] == i) break;
        i = parent_pos[i];
      }
      if (!cycle) continue;
      // i is on a cycle found by this walk: name its members from i round to i.
      std::string text = "node " + std::to_string(nodes[i].id);
      for (uint32_t j = parent_pos[i]; j != i; j = parent_pos[j]) text += " -> " + std::to_string(nodes[j].id);
      warn("parent cycle: " + text + " -> " + std::to_string(nodes[i].id) +
           " (each is its own ancestor, so none is under a thread and all are left out)");
    }
  }

  // ---- conversion order: every non-GPU node in file order, each followed by its GPU children ----
  constexpr uint32_t kNotConverted = UINT32_MAX;
  std::vector<uint32_t> order;                              // host positions in conversion order
  std::vector<uint32_t> slot(nodes.size(), kNotConverted);  // host position → index in `order`
  order.reserve(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].gpu) continue;
    slot[i] = static_cast<uint32_t>(order.size());
    order.push_back(i);
    for (uint32_t g : children.of(i)) {
      if (!nodes[g].gpu || slot[g] != kNotConverted) continue;
      slot[g] = static_cast<uint32_t>(order.size());
      order.push_back(g);
    }
  }
  // ctrl_deps = [parent] only if the parent was converted before the node (reference rule).
  std::vector<int64_t> ctrl(order.size(), -1);
  for (uint32_t k = 0; k < order.size(); ++k) {
    const uint32_t p = parent_pos[order[k]];
    if (p != kNoParent && slot[p] != kNotConverted && slot[p] < k) ctrl[k] = nodes[p].id;
  }

  // ---- data dependencies: a pre-order walk of each thread's call tree ----
  DepLists data;
  std::vector<std::vector<uint32_t>> cpu_chains;      // per thread: its CPU ops (host positions) in replay order
  std::vector<double> launch_cut(nodes.size(), NAN);  // per CPU op: the latest measured start of a GPU op it launched
  {
    std::vector<uint32_t> stack;
    std::vector<uint32_t> visited_epoch(nodes.size(), 0);
    uint32_t epoch = 0;
    std::vector<uint32_t> kids;
    for (uint32_t k = 0; k < order.size(); ++k) {
      std::string_view name = t.str(nodes[order[k]].name);
      if (name != "[pytorch|profiler|execution_trace|thread]" && name != "[pytorch|profiler|execution_graph|thread]")
        continue;
      ++epoch;
      int64_t last_cpu = -1, last_any = -1;  // host positions
      cpu_chains.emplace_back();
      stack.assign(1, order[k]);
      while (!stack.empty()) {
        uint32_t h = stack.back();
        stack.pop_back();
        if (visited_epoch[h] == epoch) continue;
        visited_epoch[h] = epoch;
        uint32_t s = slot[h];
        if (s != kNotConverted) {
          const HostNode& n = nodes[h];
          if (n.gpu) {
            if (last_any >= 0) data.add(s, nodes[last_any].id);
            if (last_cpu >= 0 && !std::isnan(n.ts) && !(launch_cut[last_cpu] >= n.ts)) launch_cut[last_cpu] = n.ts;
            last_any = last_cpu;
          } else {
            if (n.inter_thread_dep) data.add(s, n.inter_thread_dep);
            if (last_cpu >= 0) data.add(s, nodes[last_cpu].id);
            last_cpu = last_any = h;
            cpu_chains.back().push_back(h);
          }
        }
        kids.assign(children.of(h).begin(), children.of(h).end());
        std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) { return nodes[a].id > nodes[b].id; });
        for (uint32_t c : kids) stack.push_back(c);
      }
      report_progress(options.progress, "dependencies", k, order.size());
    }
  }

  // Sync dependencies (`chakra link --sync-deps`): the reference converter never adds them.
  if (!options.reference_bytes)
    for (const auto& [position, dep] : parser.sync_deps)
      if (slot[position] != kNotConverted) data.add(slot[position], dep);
  // The replay model (core/docs/pytorch-replay.md): a stream runs its GPU ops one after the
  // other in launch order, so each measured GPU op waits for the one before it on its stream.
  const bool replay = options.replay_model && !options.reference_bytes;
  double first_start = INFINITY;  // earliest measured start of a converted node (µs)
  if (replay) {
    std::vector<uint32_t> gpu;  // host positions of converted GPU ops with a stream and a start
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].ts >= 0 && nodes[i].ts < first_start && slot[i] != kNotConverted) first_start = nodes[i].ts;
      if (nodes[i].gpu && !nodes[i].stream_null && !std::isnan(nodes[i].ts) && slot[i] != kNotConverted)
        gpu.push_back(i);
    }
    std::stable_sort(gpu.begin(), gpu.end(), [&](uint32_t a, uint32_t b) {
      return nodes[a].stream != nodes[b].stream ? nodes[a].stream < nodes[b].stream : nodes[a].ts < nodes[b].ts;
    });
    for (size_t x = 1; x < gpu.size(); ++x)
      if (nodes[gpu[x]].stream == nodes[gpu[x - 1]].stream) data.add(slot[gpu[x]], nodes[gpu[x - 1]].id);
  }
  data.group(order.size());

  // A CPU op's cost in the replay model: its own time where it was spent (see
  // core/docs/pytorch-replay.md, "Own time where it was spent"); NaN where the trace lacks the
  // times, and the op then costs its exclusive time less its blocked time.
  // The same in the wait replay of host stalls: each stall that ended just after GPU work is
  // blocked until that work's end, and the thread's next op waits for it (pytorch-replay.md).
  std::vector<double> replay_cost, wait_cost;
  if (replay) {
    std::vector<uint8_t> waits(nodes.size(), 0);
    auto add_wait = [&](std::vector<uint8_t>& bits, uint32_t waiter, int64_t on) {
      bits[waiter] |= kWaits;
      if (auto it = by_id.find(on); it != by_id.end()) bits[it->second] |= kWaitedFor;
    };
    for (const auto& [position, dep] : parser.sync_deps) add_wait(waits, position, dep);
    for (uint32_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].inter_thread_dep) add_wait(waits, i, nodes[i].inter_thread_dep);
    replay_cost = interleaved_cpu_costs(nodes, parent_pos, cpu_chains, parser.blocked_spans, launch_cut, waits);
    if (!parser.stall_spans.empty() || !parser.stall_deps.empty()) {
      std::vector<BlockedSpan> blocked = parser.blocked_spans;
      blocked.insert(blocked.end(), parser.stall_spans.begin(), parser.stall_spans.end());
      std::stable_sort(blocked.begin(), blocked.end(),
                       [](const BlockedSpan& a, const BlockedSpan& b) { return a.position < b.position; });
      for (const auto& [position, dep] : parser.stall_deps) add_wait(waits, position, dep);
      wait_cost = interleaved_cpu_costs(nodes, parent_pos, cpu_chains, blocked, launch_cut, waits);
    }
  }

  // ---- node types and communication attributes ----
  auto parent_of = [&](const HostNode& n) -> const HostNode* {
    auto it = n.has_parent ? by_id.find(n.parent) : by_id.end();
    return it == by_id.end() ? nullptr : &nodes[it->second];
  };
  std::vector<int32_t> type(order.size(), static_cast<int32_t>(NodeType::Comp));
  std::vector<int64_t> coll_type(order.size(), -1);
  std::vector<StrId> pg(order.size(), StringPool::kEmpty);
  std::vector<std::optional<int64_t>> peer(order.size()), tag(order.size());
  // A host ET without its Kineto trace has no GPU ops, so no NCCL kernels: its collectives are
  // the "nccl:<collective>" ops ProcessGroupNCCL records around each launch, which become the
  // collective nodes instead (the reference leaves such a trace without communication).
  const bool collectives_from_host_ops = result.gpu_nodes == 0 && !options.reference_bytes;
  std::vector<bool> host_collective(order.size(), false);
  uint64_t host_collectives = 0;
  for (uint32_t k = 0; k < order.size(); ++k) {
    const HostNode& n = nodes[order[k]];
    std::string_view name = t.str(n.name);
    pg[k] = n.pg_name;
    if (contains(name, "process_group:init")) {
      type[k] = static_cast<int32_t>(NodeType::Metadata);
      continue;
    }
    if (collectives_from_host_ops && name.rfind("nccl:", 0) == 0) {
      if (const int64_t ct = collective_of(name); ct >= 0) {
        type[k] = static_cast<int32_t>(NodeType::CommColl);
        coll_type[k] = ct;
        host_collective[k] = true;
        ++host_collectives;
      }
      continue;
    }
    if (!n.gpu) continue;
    bool is_comm = false;
    if (contains(name, "ncclDevKernel_SendRecv") || contains(name, "ncclKernel_SendRecv")) {
      // The launcher is record_param_comms (then its caller names the operation) or the op itself.
      const HostNode* launcher = parent_of(n);
      std::string keyword;
      const HostNode* op = launcher;
      if (launcher && t.str(launcher->name) == "record_param_comms") {
        if (launcher->pg_name != StringPool::kEmpty) pg[k] = launcher->pg_name;
        op = parent_of(*launcher);
      }
      if (op) keyword = std::string(t.str(op->name));
      if (contains(keyword, "send") || contains(keyword, "recv")) {
        type[k] = static_cast<int32_t>(contains(keyword, "send") ? NodeType::CommSend : NodeType::CommRecv);
        if (op) peer[k] = op->int_input1, tag[k] = op->int_input2;
        if (!peer[k] || !tag[k])
          warn("node " + std::to_string(n.id) + " \"" + std::string(name) +
               "\": the peer rank and tag of this point-to-point operation are not in its launcher's inputs");
        continue;
      }
      is_comm = contains(keyword, "nccl:all_to_all") || contains(name, "ncclDevKernel_SendRecv") ||
                contains(name, "ncclKernel_SendRecv");
      if (!is_comm) continue;
    }
    if (!is_comm && !contains(name, "ncclKernel") && !contains(name, "ncclDevKernel")) continue;
    int64_t ct = collective_of(name);
    if (ct < 0 && contains(name, "SendRecv")) ct = static_cast<int64_t>(CommType::AllToAll);
    if (ct < 0)
      if (ct = collective_of(name, true); ct >= 0)
        warn("node " + std::to_string(n.id) + " \"" + std::string(name) + "\": collective " +
             std::string(comm_type_name(ct)) +
             " is not one the reference converter knows (it aborts here); converted, but ASTRA-sim cannot simulate it");
    if (ct < 0) {
      warn("node " + std::to_string(n.id) + " \"" + std::string(name) +
           "\": unknown NCCL kernel; kept as a compute node (the reference converter aborts here)");
      continue;
    }
    type[k] = static_cast<int32_t>(NodeType::CommColl);
    coll_type[k] = ct;
  }

  if (collectives_from_host_ops && host_collectives)
    warn("no GPU ops in this trace (a host ET not linked with its Kineto trace): every duration is 0 and its " +
         std::to_string(host_collectives) +
         " collectives come from their nccl:* host ops, so a simulation models communication only; link it "
         "(chakra link --sync-deps) to replay what ran");
  else if (result.gpu_nodes == 0 && !options.reference_bytes)
    warn(
        "no GPU ops in this trace (a host ET not linked with its Kineto trace) and no nccl:* collective ops: "
        "every duration is 0; link it with its Kineto trace (chakra link --sync-deps) to replay what ran");

  // Position in `order` of the converted node with this id, or kNotConverted.
  auto slot_of_id = [&](int64_t id) {
    auto it = by_id.find(id);
    return it == by_id.end() ? kNotConverted : slot[it->second];
  };

  // ---- pruning: nodes with no data deps that nobody depends on ----
  std::vector<bool> depended_on(order.size(), false);
  for (uint32_t k = 0; k < order.size(); ++k)
    for (int64_t x : data.of(k))
      if (uint32_t s = slot_of_id(x); s != kNotConverted) depended_on[s] = true;
  std::vector<bool> keep(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    keep[k] = !data.of(k).empty() || depended_on[k];
    result.pruned += !keep[k];
  }
  auto kept = [&](int64_t id) {
    uint32_t s = slot_of_id(id);
    return s != kNotConverted && keep[s];
  };
  // Dependencies on nodes that do not exist (an inter_thread_dep naming a missing node) are
  // dropped; the reference crashes on them.
  for (uint32_t k = 0; k < order.size(); ++k) {
    if (!keep[k]) continue;
    for (size_t x = 0; x < data.of(k).size();) {
      const int64_t dep = data.of(k)[x];
      if (kept(dep)) {
        ++x;
        continue;
      }
      warn("node " + std::to_string(nodes[order[k]].id) + " depends on node " + std::to_string(dep) +
           ", which is not in the trace; dependency dropped");
      data.drop(k, x);
    }
    if (!options.reference_bytes && ctrl[k] >= 0 && !kept(ctrl[k])) ctrl[k] = -1;
  }

  // ---- cycles: over data and ctrl deps, since simulators wait for both ----
  // The graph's cycle finder reports one cycle per strongly connected component; breaking
  // drops each reported cycle's closing edge and looks again until none is left.
  for (;;) {
    DepGraph g;
    g.offsets.assign(1, 0);
    for (uint32_t k = 0; k < order.size(); ++k) {
      if (keep[k]) {
        for (int64_t x : data.of(k)) g.targets.push_back(slot_of_id(x));
        if (ctrl[k] >= 0 && kept(ctrl[k])) g.targets.push_back(slot_of_id(ctrl[k]));
      }
      g.offsets.push_back(static_cast<uint32_t>(g.targets.size()));
    }
    CycleReport cycles = find_cycles(g, options.break_cycles ? SIZE_MAX : 1);
    if (cycles.components == 0) break;
    for (const std::vector<uint32_t>& cycle : cycles.examples) {
      std::string text;
      for (uint32_t k : cycle)
        text +=
            "node " + std::to_string(nodes[order[k]].id) + " \"" + std::string(t.str(nodes[order[k]].name)) + "\" -> ";
      text += "node " + std::to_string(nodes[order[cycle[0]]].id);
      if (!options.break_cycles)
        throw Error(source + ": dependency cycle: " + text + " (use --break-cycles to drop the closing edge)");
      warn("dependency cycle broken by dropping its last edge: " + text);
      ++result.cycles_broken;
      // The last node depends on the first: drop that data dependency, else the ctrl one.
      const uint32_t last = cycle.back();
      const int64_t first_id = nodes[order[cycle[0]]].id;
      std::span<const int64_t> d = data.of(last);
      if (auto it = std::find(d.begin(), d.end(), first_id); it != d.end())
        data.drop(last, static_cast<size_t>(it - d.begin()));
      else
        ctrl[last] = -1;
    }
  }

  // ---- process groups (METADATA node) ----
  for (uint32_t k = 0; k < order.size(); ++k) {
    if (type[k] != static_cast<int32_t>(NodeType::Metadata)) continue;
    // inputs.values is "['<json list of groups>']"
    std::string_view v = t.str(nodes[order[k]].inputs.values);
    if (v.size() < 4) continue;
    std::string inner(v.substr(2, v.size() - 4));
    auto groups = nlohmann::json::parse(inner, nullptr, false);
    if (!groups.is_array()) {
      warn("process_group:init node " + std::to_string(nodes[order[k]].id) + ": its process-group list is not JSON");
      continue;
    }
    for (const auto& g : groups) {
      if (!g.is_object() || !g.contains("pg_name") || !g.contains("ranks") || !g["ranks"].is_array()) continue;
      std::vector<int64_t> ranks;
      for (const auto& r : g["ranks"])
        if (r.is_number_integer()) ranks.push_back(r.get<int64_t>());
      if (!ranks.empty() && g["pg_name"].is_string()) result.process_groups[g["pg_name"].get<std::string>()] = ranks;
    }
  }

  // ---- output ----
  AttrDrafts meta;
  auto meta_string = [&](const char* key) {
    auto it = parser.metadata.find(key);
    if (it == parser.metadata.end() || !it->second.is_string()) {
      warn(std::string("no \"") + key + "\" string in the trace's metadata");
      return;
    }
    meta.add_string(t.intern(key), t.intern(it->second.get<std::string>()));
  };
  auto meta_uint = [&](const char* key) {
    auto it = parser.metadata.find(key);
    if (it == parser.metadata.end() || !it->second.is_number_integer()) {
      warn(std::string("no integer \"") + key + "\" in the trace's metadata");
      return;
    }
    meta.add_uint64(t.intern(key), it->second.get<uint64_t>());
  };
  meta_string("schema");
  meta_uint("pid");
  meta_string("time");
  meta_uint("start_ts");
  meta_uint("finish_ts");
  uint64_t stalls = 0;
  for (uint32_t i = 0; i < nodes.size(); ++i) stalls += nodes[i].stall_class >= 0 && slot[i] != kNotConverted;
  if (stalls && replay) meta.add_uint64(t.intern(kHostStallsAttr), stalls);
  if (!parser.profiler_steps.empty() && !options.reference_bytes) {
    std::vector<uint64_t> names, begins, ends;
    for (const auto& step : parser.profiler_steps) {
      names.push_back(t.intern(step.name));
      begins.push_back(static_cast<uint64_t>(std::llround(step.ts)));
      ends.push_back(static_cast<uint64_t>(std::llround(step.ts + step.dur)));
    }
    meta.add_list(t.intern(kProfilerStepNamesAttr), AttrKind::StringList, names);
    meta.add_list(t.intern(kProfilerStepBeginAttr), AttrKind::Uint64List, begins);
    meta.add_list(t.intern(kProfilerStepEndAttr), AttrKind::Uint64List, ends);
  }
  // Tells chakra simulate that this trace follows the replay model: CPU ops run one at a time
  // per thread, GPU ops one at a time per stream, each lane in parallel with the others.
  if (first_start < 0x1p63) {
    meta.add_bool(t.intern(kReplayLanesAttr), true);
    meta.add_uint64(t.intern(kReplayStartAttr), static_cast<uint64_t>(std::llround(first_start)));
  }
  t.set_metadata(StringPool::kEmpty, meta);

  std::vector<uint32_t> out_order;
  for (uint32_t k = 0; k < order.size(); ++k)
    if (keep[k]) out_order.push_back(k);
  std::sort(out_order.begin(), out_order.end(),
            [&](uint32_t a, uint32_t b) { return nodes[order[a]].id < nodes[order[b]].id; });

  StrId attr_name[kIntAttrCount];
  for (int a = 0; a < kIntAttrCount; ++a) attr_name[a] = t.intern(kIntAttrs[a]);
  const StrId op_schema = t.intern("op_schema"), is_cpu_op = t.intern("is_cpu_op"), stream = t.intern("stream"),
              comm_type = t.intern("comm_type"), comm_size = t.intern("comm_size"), pg_name = t.intern("pg_name"),
              comm_src = t.intern("comm_src"), comm_dst = t.intern("comm_dst"), comm_tag = t.intern("comm_tag");
  const StrId stall_class = t.intern(kStallClassAttr), stall_micros = t.intern(kStallMicrosAttr),
              stall_evidence = t.intern("stall_evidence"), stall_wait_duration = t.intern(kStallWaitDurationAttr),
              stall_wait_deps = t.intern(kStallWaitDepsAttr);
  std::unordered_map<uint32_t, std::vector<uint64_t>> wait_deps;  // host position → node ids (kept nodes only)
  if (replay)
    for (const auto& [position, dep] : parser.stall_deps)
      if (kept(dep)) wait_deps[position].push_back(static_cast<uint64_t>(dep));
  t.reserve(out_order.size(), 2, 10);
  NodeDraft d;
  for (uint32_t k : out_order) {
    const HostNode& n = nodes[order[k]];
    d.clear();
    d.id = static_cast<uint64_t>(n.id);
    d.name = n.name;
    d.type = type[k];
    if (ctrl[k] >= 0) d.ctrl_deps.push_back(static_cast<uint64_t>(ctrl[k]));
    for (int64_t x : data.of(k)) d.data_deps.push_back(static_cast<uint64_t>(x));
    // A CPU op costs its own time; time it spent blocked (on the GPU, on another thread) is
    // left to the dependencies to reproduce. The reference keeps both, and zeroes optimizer
    // steps, whose own time (hundreds of µs) is as real as any other op's.
    double own = n.exclusive_dur;
    if (!replay)
      own = contains(t.str(n.name), "Optimizer.step") ? 0 : own;
    else if (!n.gpu)
      own = std::isnan(replay_cost[order[k]]) ? std::max(0.0, own - n.blocked_dur) : replay_cost[order[k]];
    d.duration_micros = static_cast<uint64_t>(static_cast<int64_t>(own));
    uint64_t wait_duration = d.duration_micros;
    if (replay && !n.gpu && !wait_cost.empty() && !std::isnan(wait_cost[order[k]]))
      wait_duration = static_cast<uint64_t>(static_cast<int64_t>(wait_cost[order[k]]));
    // The measured start (the host op's, or its kernel's for a GPU op), which the reference drops.
    if (!options.reference_bytes && !std::isnan(n.ts)) {
      if (n.ts >= 0 && n.ts < 0x1p63) {
        d.start_time_micros = static_cast<uint64_t>(std::llround(n.ts));
      } else {
        warn("node " + std::to_string(n.id) + ": \"ts\" " + format_number(n.ts) +
             " is not a time in µs (negative or too large); its start time is left out");
      }
    }
    d.has_inputs = d.has_outputs = true;
    d.inputs = n.inputs;
    d.outputs = n.outputs;
    for (int a = 0; a < kIntAttrCount; ++a)
      if (n.int_attr_present & (1u << a)) d.attrs.add_int64(attr_name[a], n.int_attr[a]);
    if (n.has_op_schema) d.attrs.add_string(op_schema, n.op_schema);
    d.attrs.add_bool(is_cpu_op, !n.gpu && !host_collective[k]);
    if (!n.stream_null) d.attrs.add_int64(stream, n.stream);
    bool coll = type[k] == static_cast<int32_t>(NodeType::CommColl);
    bool p2p =
        type[k] == static_cast<int32_t>(NodeType::CommSend) || type[k] == static_cast<int32_t>(NodeType::CommRecv);
    if (coll) d.attrs.add_int64(comm_type, coll_type[k]);
    if (coll || p2p) {
      if (n.malformed_tensor)
        warn("node " + std::to_string(n.id) +
             ": an input typed Tensor is not [id, storage, offset, numel, itemsize, device]; comm_size counts only the "
             "well-formed ones");
      d.attrs.add_int64(comm_size, static_cast<int64_t>(n.input_tensor_bytes));
      if (pg[k] != StringPool::kEmpty) d.attrs.add_string(pg_name, pg[k]);
    }
    if (replay && n.stall_class >= 0) {
      d.attrs.add_string(stall_class, t.intern(stall_class_name(static_cast<StallClass>(n.stall_class))));
      d.attrs.add_uint64(stall_micros, static_cast<uint64_t>(std::llround(std::max(0.0, n.stall_dur))));
      if (n.stall_evidence != StringPool::kEmpty) d.attrs.add_string(stall_evidence, n.stall_evidence);
    }
    if (wait_duration != d.duration_micros) d.attrs.add_uint64(stall_wait_duration, wait_duration);
    if (auto w = wait_deps.find(order[k]); w != wait_deps.end())
      d.attrs.add_list(stall_wait_deps, AttrKind::Uint64List, w->second);
    if (p2p && !options.reference_bytes) {
      bool send = type[k] == static_cast<int32_t>(NodeType::CommSend);
      std::optional<int64_t> src = send ? options.rank : peer[k], dst = send ? peer[k] : options.rank;
      if (src) d.attrs.add_int32(comm_src, static_cast<int32_t>(*src));
      if (dst) d.attrs.add_int32(comm_dst, static_cast<int32_t>(*dst));
      if (tag[k]) d.attrs.add_int32(comm_tag, static_cast<int32_t>(*tag[k]));
    }
    t.append(d);
  }
  return result;
}

}  // namespace chakra
