#include "chakra/pytorch/trace_link.h"

#include <algorithm>
#include <span>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "chakra/format/json_pull.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/string_pool.h"
#include "pytorch/link/link_parts.h"

namespace chakra {

// The parts of the linker (link/): its types and functions are used here unqualified.
using namespace link;

std::string_view link_method_name(LinkMethod m) {
  switch (m) {
    case LinkMethod::Auto: return "auto";
    case LinkMethod::RecordFunctionId: return "rf-id";
    case LinkMethod::ExternalId: return "external-id";
    case LinkMethod::EvIdx: return "ev-idx";
    case LinkMethod::InOrder: return "in-order";
  }
  return "?";
}

bool parse_link_method(std::string_view text, LinkMethod* out) {
  for (LinkMethod m :
       {LinkMethod::Auto, LinkMethod::RecordFunctionId, LinkMethod::ExternalId, LinkMethod::EvIdx, LinkMethod::InOrder})
    if (link_method_name(m) == text) {
      *out = m;
      return true;
    }
  return false;
}

std::optional<uint32_t> kineto_rank(std::string_view head) {
  size_t at = head.find("\"distributedInfo\"");
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = head.find_first_not_of(" \t\r\n", at + 17);
  if (i == std::string_view::npos || head[i] != ':') return std::nullopt;
  i = head.find_first_not_of(" \t\r\n", i + 1);
  if (i == std::string_view::npos || head[i] != '{') return std::nullopt;
  // Walk the object, strings skipped, and read the "rank" member at its own level (pg_config
  // lists nested "ranks").
  int depth = 0;
  for (; i < head.size(); ++i) {
    char c = head[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return std::nullopt;
    } else if (c == '"') {
      size_t end = i + 1;
      while (end < head.size() && head[end] != '"') end += head[end] == '\\' ? 2 : 1;
      if (end >= head.size()) return std::nullopt;
      std::string_view key = head.substr(i + 1, end - i - 1);
      i = end;
      if (depth != 1 || key != "rank"sv) continue;
      size_t v = head.find_first_not_of(" \t\r\n", end + 1);
      if (v == std::string_view::npos || head[v] != ':') continue;
      v = head.find_first_not_of(" \t\r\n", v + 1);
      size_t digits = v;
      while (digits < head.size() && digits - v < 7 && std::isdigit(static_cast<unsigned char>(head[digits]))) ++digits;
      if (digits == v || digits - v > 6 || digits >= head.size() ||
          std::isdigit(static_cast<unsigned char>(head[digits])))
        return std::nullopt;
      return static_cast<uint32_t>(std::stoul(std::string(head.substr(v, digits - v))));
    }
  }
  return std::nullopt;
}

std::optional<uint32_t> kineto_file_rank(std::string_view head, const std::string& file_name) {
  std::optional<uint32_t> stated = kineto_rank(head), named = rank_from_file_name(file_name);
  if (stated && named && *stated != *named)
    throw Error(file_name + ": the trace says it is rank " + std::to_string(*stated) +
                " (distributedInfo) but its name "
                "says rank " +
                std::to_string(*named) + "; rename the file or fix the trace");
  return stated ? stated : named;
}

namespace {

// ---------------------------------------------------------------- output

struct Member {
  std::string_view key;                         // raw key token, quotes included
  size_t value = 0;                             // offset of the value in the host text
  size_t rendered_begin = 0, rendered_end = 0;  // its rendered text, where object_members rendered it
};

// Top-level members of the JSON object at `p`; a repeated key keeps its first position and its
// last value, as a Python dict does. With `rendered`, each value is also rendered there (in the
// reference's layout at `depth`) as it is walked: one pass over a node's text instead of a skip
// and a render, and a host node's GPU copies reuse the text.
// `walked` lists values whose extent [begin, end) is known already (they are not skipped again).
void object_members(std::string_view t, size_t p, std::vector<Member>& out, pyjson::OutBuffer* rendered = nullptr,
                    int depth = 0, std::span<const std::pair<size_t, size_t>> walked = {}) {
  out.clear();
  if (rendered) rendered->clear();
  p = pyjson::skip_space(t, p) + 1;
  p = pyjson::skip_space(t, p);
  if (t[p] == '}') return;
  for (;;) {
    size_t key_end = pyjson::skip_value(t, p);
    std::string_view key = t.substr(p, key_end - p);
    Member m{key, pyjson::skip_space(t, pyjson::skip_space(t, key_end) + 1)};
    size_t value_end;
    if (rendered) {
      m.rendered_begin = rendered->size();
      value_end = pyjson::render_value(t, m.value, depth, *rendered);
      m.rendered_end = rendered->size();
    } else {
      auto known = std::find_if(walked.begin(), walked.end(), [&](const auto& w) { return w.first == m.value; });
      value_end = known != walked.end() ? known->second : pyjson::skip_value(t, m.value);
    }
    auto same = std::find_if(out.begin(), out.end(), [&](const Member& x) { return x.key == key; });
    if (same != out.end())
      *same = m;
    else
      out.push_back(m);
    p = pyjson::skip_space(t, value_end);
    if (t[p] != ',') return;
    p = pyjson::skip_space(t, p + 1);
  }
}

// A computed member: replaces the member of the same key in place, or is appended.
struct Override {
  std::string_view key;  // with quotes
  std::string value;
};

class NodeWriter {
 public:
  explicit NodeWriter(ByteSink& sink) : sink_(sink) {}

  // `members` as object_members gave them with their values rendered into `rendered`.
  void write_node(const std::vector<Member>& members, const pyjson::OutBuffer& rendered,
                  const std::vector<Override>& overrides) {
    out_ += first_ ? "\n        {" : ",\n        {";
    first_ = false;
    bool any = false;
    used_.assign(overrides.size(), false);
    for (const Member& m : members) {
      out_ += any ? ",\n            " : "\n            ";
      any = true;
      pyjson::render_string(m.key, 0, out_);
      out_ += ": ";
      auto o = std::find_if(overrides.begin(), overrides.end(), [&](const Override& x) { return x.key == m.key; });
      if (o != overrides.end()) {
        out_ += o->value;
        used_[o - overrides.begin()] = true;
      } else {
        out_ += rendered.view().substr(m.rendered_begin, m.rendered_end - m.rendered_begin);
      }
    }
    for (size_t i = 0; i < overrides.size(); ++i) {
      if (used_[i]) continue;
      out_ += any ? ",\n            " : "\n            ";
      any = true;
      out_ += overrides[i].key;
      out_ += ": ";
      out_ += overrides[i].value;
    }
    out_ += any ? "\n        }" : "}";
    if (out_.size() > (1u << 20)) flush();
  }
  pyjson::OutBuffer& buffer() { return out_; }
  void flush() {
    sink_.write(out_.view());
    out_.clear();
  }
  bool wrote_any() const { return !first_; }

 private:
  ByteSink& sink_;
  pyjson::OutBuffer out_;
  std::vector<bool> used_;  // per override: replaced a member in place
  bool first_ = true;
};
}  // namespace

LinkReport link_traces(std::unique_ptr<ByteSource> host_in, std::unique_ptr<ByteSource> device_in, ByteSink& out,
                       const LinkOptions& options) {
  LinkReport report;
  Host h;
  load_host(std::move(host_in), h, options.progress);
  Device d;
  load_device(*device_in, d, options.progress);
  check_pairing(h, d, options, report);
  report.host_nodes = h.nodes.size();
  report.kineto_cpu_ops = d.cpu.size();
  report.gpu_ops = d.gpu.size();
  if (d.duplicate_correlations)
    report.warnings.push_back(d.name + ": " + std::to_string(d.duplicate_correlations) +
                              " launch calls repeat a correlation id; the first of each is used");

  // Host nodes in id order (the reference processes them so); ids must be unique.
  std::vector<int32_t> by_id(h.nodes.size());
  std::iota(by_id.begin(), by_id.end(), 0);
  std::stable_sort(by_id.begin(), by_id.end(), [&](int32_t a, int32_t b) { return h.nodes[a].id < h.nodes[b].id; });
  std::unordered_map<int64_t, int32_t> index_of_id;
  index_of_id.reserve(h.nodes.size());
  for (int32_t i : by_id)
    if (!index_of_id.emplace(h.nodes[i].id, i).second)
      throw Error(h.name + ": node id " + std::to_string(h.nodes[i].id) + " appears twice");
  report.outside_root = count_outside_root(h.nodes, index_of_id);
  if (report.outside_root.nodes)
    report.warnings.push_back(
        h.name + ": " + std::to_string(report.outside_root.nodes) + " of " + std::to_string(h.nodes.size()) +
        " nodes are not under node 1, the process root (" + std::to_string(report.outside_root.missing_parent) +
        " name a parent that is not in the trace); the reference links only the tree under "
        "node 1 and leaves them out of its output, chakra link and chakra_trace_link link them too");

  compute_exclusive(d, report.warnings);
  compute_inter_thread(d);
  report_progress(options.progress, "linking", 0, 0);

  // The Kineto ops a fallback may pair with: the host ET's profiler step if the device trace
  // has the same one, else everything.
  std::vector<int32_t> window = d.cpu;
  for (const HostNode& n : h.nodes) {
    std::string_view name = h.strings.view(n.name);
    if (name.rfind("ProfilerStep#", 0) != 0) continue;
    for (const Device::Step& step : d.profiler_steps) {
      if (d.strings.view(step.name) != name) continue;
      std::vector<int32_t> inside;
      for (int32_t k : d.cpu)
        if (!pyjson::less(d.ops[k].ts, step.begin) && !pyjson::less(step.end, d.ops[k].ts)) inside.push_back(k);
      window = std::move(inside);
      report.window = std::string(name);
    }
    break;
  }

  // Choose how to pair host ops with Kineto ops.
  Pairing pair;
  LinkMethod method = options.method;
  uint64_t host_ops = 0;
  for (const HostNode& n : h.nodes) host_ops += !is_et_annotation(h.strings.view(n.name));
  auto good_enough = [&](uint64_t agreeing) {
    return agreeing > 0 && agreeing * 10 >= std::min<uint64_t>(host_ops, window.size()) * 9;
  };
  if (method == LinkMethod::RecordFunctionId && !d.any_rf)
    throw Error(d.name +
                ": --method rf-id needs Kineto CPU ops with a \"Record function id\", and this trace has "
                "none (older PyTorch profilers do not write it); --method auto pairs by External id instead");
  if (method == LinkMethod::Auto || method == LinkMethod::RecordFunctionId) {
    if (d.any_rf || method == LinkMethod::RecordFunctionId) {
      pair = pair_by_rf(h, d);
      method = LinkMethod::RecordFunctionId;
    }
  }
  for (LinkMethod m : {LinkMethod::ExternalId, LinkMethod::EvIdx}) {
    if (method != LinkMethod::Auto && method != m) continue;
    uint64_t agreeing = 0;
    int64_t offset = 0;
    Pairing p = pair_by_offset(h, d, window, m == LinkMethod::EvIdx, &offset, &agreeing);
    if (method == m || good_enough(agreeing)) {
      pair = std::move(p);
      method = m;
      report.id_offset = offset;
      break;
    }
  }
  if (method == LinkMethod::Auto || method == LinkMethod::InOrder) {
    uint64_t matched = 0;
    Number start;
    pair = pair_in_order(h, by_id, d, window, &matched, &start);
    method = LinkMethod::InOrder;
    if (report.window.empty() && matched > 0 && window.size() > matched * 2) {
      std::string s;
      pyjson::append_number(s, start);
      report.window = "from ts " + s;
      report.warnings.push_back(d.name + ": the device trace holds more CPU ops (" + std::to_string(window.size()) +
                                ") than the host trace (" + std::to_string(host_ops) +
                                "); the earliest window that matches the host ops by name is used");
    }
  }
  report.method = method;
  const bool by_rf = method == LinkMethod::RecordFunctionId;
  if (by_rf) report.window.clear();  // rf ids are unique in a process: no window is needed
  uint64_t orphan_gpu = 0;
  std::vector<int32_t> launcher = find_launchers(d, /*innermost=*/!by_rf, &orphan_gpu);

  // GPU ops grouped under their launcher: by the launcher's External id (the reference's key,
  // under which ops sharing an External id share their kernels) or by the launcher itself.
  auto group_key = [&](int32_t kineto_op) -> int64_t { return by_rf ? d.ops[kineto_op].external_id : kineto_op; };
  std::unordered_map<int64_t, std::pair<uint32_t, uint32_t>> group;  // key → [begin, end) in grouped
  std::vector<int32_t> grouped;
  {
    std::vector<std::pair<int64_t, int32_t>> keyed;  // (key, position in ts order)
    for (size_t gi = 0; gi < d.gpu.size(); ++gi)
      if (launcher[d.gpu[gi]] != kNone) keyed.emplace_back(group_key(launcher[d.gpu[gi]]), static_cast<int32_t>(gi));
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keyed.size(); ++i) {
      auto& range = group[keyed[i].first];
      if (range.second == 0) range.first = static_cast<uint32_t>(grouped.size());
      grouped.push_back(d.gpu[keyed[i].second]);
      range.second = static_cast<uint32_t>(grouped.size());
    }
  }

  // Link host ops in id order: durations, ts, inter-thread dependency, GPU ops.
  struct Linked {
    int32_t kineto = kNone;
    int32_t dep = kNone;  // host node index of the inter-thread dependency
    uint32_t gpu_begin = 0, gpu_end = 0;
  };
  std::vector<Linked> linked(h.nodes.size());
  std::vector<bool> gpu_used(d.ops.size(), false);
  for (int32_t i : by_id) {
    int32_t k = pair[i];
    if (k == kNone) continue;
    KinetoOp& op = d.ops[k];
    op.host = i;
    Linked& l = linked[i];
    l.kineto = k;
    ++report.host_ops_linked;
    int32_t other = op.other_thread;
    if (other != kNone && by_rf) {  // the reference goes through the rf_id of that op
      const KinetoOp& o = d.ops[other];
      auto it = o.has_rf && o.rf_id != 0 ? d.cpu_by_rf.find(o.rf_id) : d.cpu_by_rf.end();
      other = it == d.cpu_by_rf.end() ? kNone : it->second;
    }
    if (other != kNone) l.dep = d.ops[other].host;
    auto g = group.find(group_key(k));
    if (g != group.end()) {
      l.gpu_begin = g->second.first;
      l.gpu_end = g->second.second;
      report.gpu_nodes += l.gpu_end - l.gpu_begin;
      for (uint32_t x = l.gpu_begin; x < l.gpu_end; ++x) {
        report.gpu_ops_linked += !gpu_used[grouped[x]];
        gpu_used[grouped[x]] = true;
      }
    }
  }
  // Pairs must mostly agree on names, or the two files do not belong together.
  for (size_t i = 0; i < h.nodes.size(); ++i)
    if (pair[i] != kNone && !is_et_annotation(h.strings.view(h.nodes[i].name)))
      report.names_agree += same_name(h, h.nodes[i], d, d.ops[pair[i]]);
  if (report.names_agree * 2 < host_ops || report.host_ops_linked == 0)
    throw Error(h.name + " + " + d.name + ": only " + std::to_string(report.names_agree) + " of " +
                std::to_string(host_ops) + " host ops found a Kineto CPU op of the same name (method " +
                std::string(link_method_name(method)) + "); are the traces from the same run and rank?");
  if (orphan_gpu)
    report.warnings.push_back(d.name + ": " + std::to_string(orphan_gpu) +
                              " GPU ops have no launch call or launching CPU op and are left out");
  if (report.gpu_ops_linked < report.gpu_ops - orphan_gpu)
    report.warnings.push_back(std::to_string(report.gpu_ops - orphan_gpu - report.gpu_ops_linked) +
                              " GPU ops were launched by CPU ops that no host op matched and are left out");

  // New ids: dense, in id order, each host op followed by copies of its GPU ops.
  std::vector<int64_t> new_id(h.nodes.size());
  int64_t next = 0;
  for (int32_t i : by_id) {
    new_id[i] = next;
    next += 1 + (linked[i].gpu_end - linked[i].gpu_begin);
  }
  report.output_nodes = static_cast<uint64_t>(next);
  std::unordered_map<int64_t, int64_t> dangling;  // parent ids not in the trace get fresh ids
  int64_t null_parent = -1;
  auto remap_parent = [&](const HostNode& n) -> int64_t {
    if (n.parent_is_null) {
      if (null_parent < 0) null_parent = next++;
      return null_parent;
    }
    auto it = index_of_id.find(n.parent);
    if (it != index_of_id.end()) return new_id[it->second];
    auto [d_it, fresh] = dangling.try_emplace(n.parent, next);
    if (fresh) ++next;
    return d_it->second;
  };

  SyncDeps sync;
  struct LinkedStall {
    HostStall stall;
    std::pair<double, double> wait_span{0, 0};  // blocked in the wait replay; empty: none
  };
  std::unordered_map<int64_t, LinkedStall> stalls;               // by host node id
  std::unordered_map<int64_t, std::vector<int64_t>> stall_deps;  // waiter id → GPU node ids
  if (options.sync_deps) {
    std::vector<int64_t> gpu_out(d.ops.size(), -1);  // an op copied under several host ops: its first node
    for (int32_t i : by_id)
      for (uint32_t x = linked[i].gpu_begin; x < linked[i].gpu_end; ++x)
        if (gpu_out[grouped[x]] < 0) gpu_out[grouped[x]] = new_id[i] + 1 + (x - linked[i].gpu_begin);
    sync = compute_sync_deps(d, gpu_out, [&](int32_t host) { return new_id[host]; });
    std::vector<std::pair<int32_t, int32_t>> thread_deps;
    for (int32_t i : by_id)
      if (linked[i].kineto != kNone && linked[i].dep != kNone && linked[linked[i].dep].kineto != kNone)
        thread_deps.emplace_back(linked[i].kineto, linked[linked[i].dep].kineto);
    add_cross_thread_blocked(
        d, thread_deps, [&](int32_t host) { return new_id[host]; }, sync);
    sort_sync_deps(sync);
    report.sync_calls = sync.calls;
    report.sync_waits = sync.resolved;
    report.sync_edges = sync.edges;
    report.sync_thread_waits = sync.thread_waits;
    if (sync.inferred)
      report.warnings.push_back(d.name + ": " + std::to_string(sync.inferred) +
                                " stream waits (cudaStreamWaitEvent) name no event (no cuda_sync events in this "
                                "Kineto trace): each makes the thread's next GPU op wait for the last op launched "
                                "before it on every other stream");
    if (sync.unidentified)
      report.warnings.push_back(d.name + ": " + std::to_string(sync.unidentified) +
                                " event waits (cudaStreamWaitEvent/cudaEventSynchronize) give no sync dependency: "
                                "without Kineto's cuda_sync events the event they wait for is unknown");
    if (sync.no_waiter)
      report.warnings.push_back(d.name + ": " + std::to_string(sync.no_waiter) +
                                " synchronisation calls give no sync dependency: no linked op follows them");
    // Host stalls on linked ops; those that ended just after GPU work get what the wait
    // replay needs: the stretch up to that work's end, blocked, and the thread's next op
    // waiting for it (as for a synchronisation call).
    for (const HostStall& st : find_stalls(d, sync)) {
      const KinetoOp& op = d.ops[d.cpu[st.op]];
      if (op.host == kNone) continue;
      LinkedStall& out = stalls[new_id[op.host]];
      out.stall = st;
      ++report.stalls[static_cast<int>(st.cls)];
      report.stall_micros += st.micros;
      if (st.gpu < 0 || gpu_out[d.gpu[st.gpu]] < 0) continue;
      const KinetoOp& g = d.ops[d.gpu[st.gpu]];
      const double gpu_end = pyjson::add(g.ts, g.dur).as_double();
      const int32_t waiter = first_linked_cpu_op_after(d, op.tid, Number::of_float(st.end));
      if (waiter == kNone) continue;
      out.wait_span = {st.begin, std::max(st.begin, gpu_end)};
      stall_deps[new_id[d.ops[waiter].host]].push_back(gpu_out[d.gpu[st.gpu]]);
      ++report.stall_waits;
    }
    for (auto& [waiter, deps] : stall_deps) {
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    }
  }
  auto sync_list = [&](int64_t node_id) -> const std::vector<int64_t>* {
    auto it = sync.of.find(node_id);
    return it == sync.of.end() ? nullptr : &it->second;
  };
  auto render_ids = [](const std::vector<int64_t>& ids) {
    std::string list = "[";
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k) list += ", ";
      append_int(list, ids[k]);
    }
    list += ']';
    std::string out;
    pyjson::render_value(list, 0, 3, out);
    return out;
  };

  auto json_string = [](std::string_view text) {
    std::string out;
    append_json_string(out, text, /*ascii_only=*/true);
    return out;
  };
  auto render_spans = [](std::vector<std::pair<double, double>>& spans) {
    std::sort(spans.begin(), spans.end());
    std::string list = "[";
    for (size_t k = 0; k < spans.size(); ++k) {
      list += k ? ", [" : "[";
      pyjson::append_number(list, Number::of_float(spans[k].first));
      list += ", ";
      pyjson::append_number(list, Number::of_float(spans[k].second));
      list += ']';
    }
    list += ']';
    std::string out;
    pyjson::render_value(list, 0, 3, out);
    return out;
  };

  // Write: the host ET's top-level members in order, "nodes" replaced.
  std::string_view text = h.text;
  std::vector<Member> top, members;
  pyjson::OutBuffer rendered;  // the current host node's member values
  object_members(text, 0, top, nullptr, 0, h.node_arrays);
  NodeWriter writer(out);
  pyjson::OutBuffer& buf = writer.buffer();
  buf += '{';
  auto num = [](int64_t v) {
    std::string s;
    append_int(s, v);
    return s;
  };
  auto py = [](Number v) {
    std::string s;
    pyjson::append_number(s, v);
    return s;
  };
  std::vector<Override> host_over, gpu_over;
  uint64_t written = 0;
  for (size_t t = 0; t < top.size(); ++t) {
    buf += t ? ",\n    " : "\n    ";
    pyjson::render_string(top[t].key, 0, buf);
    buf += ": ";
    if (top[t].key != "\"nodes\""sv) {
      pyjson::render_value(text, top[t].value, 1, buf);
      continue;
    }
    buf += '[';
    for (int32_t i : by_id) {
      const HostNode& n = h.nodes[i];
      const Linked& l = linked[i];
      object_members(text, n.begin, members, &rendered, 3);
      host_over.clear();
      host_over.push_back({"\"id\"", num(new_id[i])});
      // Schema 1.0.1 names the parent "parent"; the reference leaves it in the old id space,
      // which breaks every later reader, so it is renumbered like ctrl_deps.
      if (n.has_ctrl_deps || n.has_parent)
        host_over.push_back({n.has_ctrl_deps ? "\"ctrl_deps\"" : "\"parent\"", num(remap_parent(n))});
      if (l.kineto != kNone) {
        const KinetoOp& k = d.ops[l.kineto];
        host_over.push_back({"\"inclusive_dur\"", py(k.dur)});
        host_over.push_back({"\"exclusive_dur\"", py(d.exclusive_of(l.kineto))});
        host_over.push_back({"\"ts\"", py(k.ts)});
        host_over.push_back({"\"inter_thread_dep\"", l.dep != kNone ? num(new_id[l.dep]) : "null"});
      }
      // Only on the host node: the GPU copies below are made from host_over without it, as the
      // reference adds sync_dep after copying.
      const std::vector<int64_t>* waits = sync_list(new_id[i]);
      if (waits) host_over.push_back({"\"sync_dep\"", render_ids(*waits)});
      auto blocked = sync.blocked.find(new_id[i]);
      const bool has_blocked = blocked != sync.blocked.end();
      if (has_blocked) {
        host_over.push_back({"\"blocked_dur\"", py(Number::of_float(blocked->second))});
        host_over.push_back({"\"blocked_spans\"", render_spans(sync.blocked_spans[new_id[i]])});
      }
      const size_t before_stall = host_over.size();
      if (auto st = stalls.find(new_id[i]); st != stalls.end()) {
        const HostStall& x = st->second.stall;
        host_over.push_back({"\"stall_class\"", json_string(stall_class_name(x.cls))});
        host_over.push_back({"\"stall_dur\"", py(Number::of_float(x.micros))});
        host_over.push_back({"\"stall_evidence\"", json_string(x.evidence)});
        if (auto span = st->second.wait_span; span.second > span.first) {
          std::vector<std::pair<double, double>> spans{span};
          host_over.push_back({"\"stall_spans\"", render_spans(spans)});
        }
      }
      if (auto deps = stall_deps.find(new_id[i]); deps != stall_deps.end())
        host_over.push_back({"\"stall_dep\"", render_ids(deps->second)});
      writer.write_node(members, rendered, host_over);
      host_over.resize(before_stall);
      if (has_blocked) host_over.resize(host_over.size() - 2);
      if (waits) host_over.pop_back();
      ++written;
      int64_t gpu_id = new_id[i];
      for (uint32_t x = l.gpu_begin; x < l.gpu_end; ++x) {
        const KinetoOp& g = d.ops[grouped[x]];
        gpu_over = host_over;  // a copy of the updated host node, then the GPU op's fields
        gpu_over[0].value = num(++gpu_id);
        auto set = [&](std::string_view key, std::string value) {
          auto it = std::find_if(gpu_over.begin(), gpu_over.end(), [&](const Override& o) { return o.key == key; });
          if (it != gpu_over.end())
            it->value = std::move(value);
          else
            gpu_over.push_back({key, std::move(value)});
        };
        set("\"ctrl_deps\"", num(new_id[i]));
        std::string s;
        append_json_string(s, d.strings.view(g.cat), true);
        set("\"cat\"", s);
        s.clear();
        append_json_string(s, d.strings.view(g.name), true);
        set("\"name\"", s);
        auto value = [&](uint32_t v) { return v ? std::string(d.strings.view(v - 1)) : std::string("null"); };
        set("\"ph\"", value(g.ph));
        set("\"inclusive_dur\"", py(g.dur));
        set("\"exclusive_dur\"", py(g.dur));
        set("\"ts\"", py(g.ts));
        set("\"stream\"", value(g.stream));
        if (g.pg_name && d.strings.view(g.name).find("ncclDevKernel") != std::string_view::npos)
          set("\"pg_name\"", value(g.pg_name));
        if (const std::vector<int64_t>* waits = sync_list(gpu_id)) set("\"sync_dep\"", render_ids(*waits));
        writer.write_node(members, rendered, gpu_over);
        ++written;
      }
      if ((written & 0xfff) == 0) report_progress(options.progress, "writing", written, report.output_nodes);
    }
    buf += writer.wrote_any() ? "\n    ]" : "]";
  }
  // The iterations the profiler marked, for chakra convert and simulate (the host ET has none).
  if (options.sync_deps && !d.profiler_steps.empty()) {
    buf += top.empty() ? "\n    \"profiler_steps\": [" : ",\n    \"profiler_steps\": [";
    for (size_t k = 0; k < d.profiler_steps.size(); ++k) {
      const Device::Step& step = d.profiler_steps[k];
      buf += k ? ", {\"name\": " : "{\"name\": ";
      buf += json_string(d.strings.view(step.name));
      buf += ", \"ts\": " + py(step.begin) + ", \"dur\": " + py(pyjson::sub(step.end, step.begin)) + "}";
    }
    buf += "]";
  }
  buf += top.empty() && !(options.sync_deps && !d.profiler_steps.empty()) ? "}" : "\n}";
  writer.flush();
  return report;
}

}  // namespace chakra
