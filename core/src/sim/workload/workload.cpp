#include "sim/workload/workload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "chakra/format/io.h"
#include "chakra/trace/schema.h"

namespace chakra::sim {
namespace {

// The node id of the event that starts an NPU whose replay begins later than time 0 (no trace
// node has it: ids are below 2^63 in every writer).
constexpr uint64_t kStartNode = UINT64_MAX;

bool is_comm(NodeType t) { return t == NodeType::CommColl || t == NodeType::CommSend || t == NodeType::CommRecv; }

// Length of the union of intervals (recorded as nodes finish: mostly in order already).
Tick union_length(std::vector<std::pair<Tick, Tick>>& v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  Tick total = 0, cur_b = 0, cur_e = 0;
  bool open = false;
  for (auto [b, e] : v) {
    if (!open || b > cur_e) {
      if (open) total += cur_e - cur_b;
      cur_b = b, cur_e = e, open = true;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (open) total += cur_e - cur_b;
  return total;
}

// A trace's bytes with its host stalls replayed as waits (StallMode::Wait): nodes take their
// kStallWaitDurationAttr and depend on their kStallWaitDepsAttr too. Traces without stalls are
// returned as they are (only their metadata is read).
std::string stalls_as_waits(std::string bytes, const std::string& name, const ReadOptions& read) {
  auto input = [&] {
    return memory_input({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, name, read.input);
  };
  {
    Trace meta;
    EtReader reader(input(), read);
    reader.read_metadata(meta);
    bool stalls = false;
    for (uint32_t a = 0; a < meta.metadata_attrs().size(); ++a)
      stalls |= meta.metadata_attr(a).name() == kHostStallsAttr;
    if (!stalls) return bytes;
  }
  Trace t = read_et(input(), read);
  StrId duration, deps;
  const bool has_duration = t.strings().find(kStallWaitDurationAttr, &duration),
             has_deps = t.strings().find(kStallWaitDepsAttr, &deps);
  std::vector<std::pair<uint32_t, uint64_t>> extra;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (has_duration)
      if (auto a = t.find_attr(n, duration))
        if (auto v = a->as_uint64()) t.set_times(n, t.start_time_micros(n), *v);
    if (has_deps)
      if (auto a = t.find_attr(n, deps))
        for (uint64_t id : a->list()) extra.emplace_back(n, id);
  }
  t.add_data_deps(extra);
  return encode_et(t);
}

}  // namespace

std::string_view stall_mode_name(StallMode m) { return m == StallMode::Wait ? "wait" : "keep"; }

Workload::Workload(EventQueue& queue, const SimInputs& in, const SimOptions& o, System& system, MirrorMode mirror)
    : queue_(queue), in_(in), o_(o), system_(system) {
  const bool mirrored = mirror != MirrorMode::None;
  n_npus_ = static_cast<uint32_t>(in.network.total_npus());
  local_mem_bw_ = in.system.local_mem_bw * 1000000000;
  peak_perf_ = in.system.peak_perf * 1000000000000;
  if (in_.encoded_traces && in_.encoded_traces->size() != n_npus_)
    throw Error(in_.workload + ": " + std::to_string(in_.encoded_traces->size()) + " traces for a network of " +
                std::to_string(n_npus_) + " NPUs");
  // Mirrored: the traces are compared first, and only one NPU of each class is read for running.
  std::vector<std::string> rep_bytes;
  if (mirrored) {
    find_classes(rep_bytes, mirror == MirrorMode::Orbits);
    slot_.assign(n_npus_, UINT32_MAX);
    for (uint32_t k = 0; k < mirror_.reps.size(); ++k) slot_[mirror_.reps[k]] = k;
    system_.set_mirror(mirror_);
  }
  npus_.resize(mirrored ? mirror_.reps.size() : n_npus_);
  FeederOptions fo;
  fo.gate = DepKind::Both;
  fo.dangling_is_error = true;
  fo.read = in_.read;
  fo.read.progress = nullptr;  // the run reports its own progress
  for (uint32_t slot = 0; slot < npus_.size(); ++slot) {
    const uint32_t n = npu_at(slot);
    Npu& p = npus_[slot];
    p.file = trace_file(n);
    if (!mirrored && n % 1024 == 1023) report_progress(o_.progress, "read traces", n + 1, n_npus_);
    // A file's bytes are moved in; bytes given in memory are copied (the caller keeps them).
    std::string owned;
    if (mirrored) {
      owned = std::move(rep_bytes[slot]);
    } else {
      std::string file_bytes;
      const std::string_view bytes = trace_bytes(n, file_bytes);
      owned = in_.encoded_traces ? std::string(bytes) : std::move(file_bytes);
      if (o_.stalls == StallMode::Wait) owned = stalls_as_waits(std::move(owned), p.file, in_.read);
    }
    p.bytes = std::make_unique<const std::string>(std::move(owned));
    p.feeder = std::make_unique<Feeder>(
        memory_input({reinterpret_cast<const uint8_t*>(p.bytes->data()), p.bytes->size()}, p.file, in_.read.input), fo);
    // A trace read whole already (it fits the feeder's window) needs its bytes no more: freeing
    // them now lets the next NPU's reuse that memory (fresh pages cost a fault each).
    if (p.feeder->fully_read()) p.bytes.reset();
    read_metadata(p);
  }
  // Replay traces start as far apart as their measured starts, when every NPU has one (traces
  // of other runs mixed in would otherwise start hours or years apart).
  if (std::all_of(npus_.begin(), npus_.end(), [](const Npu& p) { return p.replay_start.has_value(); })) {
    uint64_t earliest = UINT64_MAX;
    for (const Npu& p : npus_) earliest = std::min(earliest, *p.replay_start);
    for (Npu& p : npus_) p.start = queue_.to_tick(double(*p.replay_start - earliest) * 1000.0);
    started_as_measured_ = true;
  }
  for (uint32_t slot = 0; slot < npus_.size(); ++slot)
    npus_[slot].start += queue_.to_tick(static_cast<double>(o_.slowdown.delay_of(npu_at(slot))));
}

std::string Workload::trace_file(uint32_t n) const {
  return in_.encoded_traces || in_.make_trace ? in_.workload + "." + std::to_string(n) + ".et"
                                              : npu_trace_file(in_.workload, n);
}

std::string_view Workload::trace_bytes(uint32_t n, std::string& file_bytes) const {
  if (in_.encoded_traces) return (*in_.encoded_traces)[n];
  if (in_.make_trace) return file_bytes = in_.make_trace(n);
  const std::string file = trace_file(n);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw Error(file + ": workload file of NPU " + std::to_string(n) + " does not exist (the network has " +
                std::to_string(n_npus_) + " NPUs), nor " + file + ".gz");
  file_bytes = read_file(file, in_.read.input);
  return file_bytes;
}

// What the trace's GlobalMetadata says about how to run it and what to report.
void Workload::read_metadata(Npu& p) {
  const Trace& meta = p.feeder->metadata();
  std::span<const uint64_t> step_names, step_begins, step_ends;
  for (uint32_t a = 0; a < meta.metadata_attrs().size(); ++a) {
    const AttrView attr = meta.metadata_attr(a);
    const std::string_view name = attr.name();
    if (name == kReplayLanesAttr)
      p.resources.set_lanes(attr.as_bool().value_or(false));
    else if (name == kReplayStartAttr)
      p.replay_start = attr.as_uint64();
    else if (name == kHostStallsAttr)
      p.has_stalls = attr.as_uint64().value_or(0) > 0;
    else if (name == kTimesOriginAttr)
      p.derived = true, times_origin_ = std::string(attr.as_string().value_or("derived"));
    else if (name == kProfilerStepNamesAttr && attr.kind() == AttrKind::StringList)
      step_names = attr.list();
    else if (name == kProfilerStepBeginAttr && attr.kind() == AttrKind::Uint64List)
      step_begins = attr.list();
    else if (name == kProfilerStepEndAttr && attr.kind() == AttrKind::Uint64List)
      step_ends = attr.list();
  }
  if (step_names.size() == step_begins.size() && step_names.size() == step_ends.size())
    for (size_t k = 0; k < step_names.size(); ++k)
      if (step_ends[k] > step_begins[k])
        p.windows.push_back({std::string(meta.str(static_cast<StrId>(step_names[k]))), step_begins[k], step_ends[k]});
}

void Workload::start() {
  for (uint32_t slot = 0; slot < npus_.size(); ++slot) {
    const uint32_t n = npu_at(slot);
    if (npus_[slot].start == 0) {
      npus_[slot].started = true;
      step(n);
    } else {
      system_.finish_after(n, npus_[slot].start, kStartNode);
    }
  }
}

// Issue every issuable node whose resource is free, smallest id first; repeated while nodes
// finish instantly (INVALID, METADATA), whose dependants the reference would leave waiting.
void Workload::step(uint32_t n) {
  Npu& p = npu(n);
  if (p.finished || !p.started) return;
  bool again = true;
  // Scratch kept for its capacity; taken out while in use (issuing may step another NPU).
  std::vector<uint64_t> ready = std::move(ready_scratch_);
  while (again) {
    again = false;
    npu(n).feeder->take_all(ready);
    for (uint64_t id : ready) {
      Npu& q = npu(n);
      FeederNode node = q.feeder->node(id);
      if (!q.resources.free_for(node)) {
        q.feeder->untake(id);
        continue;
      }
      if (issue(n, node)) again = true;
    }
  }
  ready_scratch_ = std::move(ready);
  Npu& q = npu(n);
  if (q.feeder->finished() && q.resources.idle()) {
    q.finished = true;
    q.finish = queue_.now();
  }
}

// Returns true when the node finished at once.
bool Workload::issue(uint32_t n, const FeederNode& node) {
  Npu& p = npu(n);
  p.resources.occupy(node, +1);
  uint64_t id = node.id();
  NodeType type = node.type();
  Where what{p.file, node};
  SpanKind kind = node.is_cpu_op()                                            ? SpanKind::Cpu
                  : type == NodeType::Comp                                    ? SpanKind::Compute
                  : type == NodeType::CommColl                                ? SpanKind::Collective
                  : type == NodeType::CommSend                                ? SpanKind::Send
                  : type == NodeType::CommRecv                                ? SpanKind::Recv
                  : (type == NodeType::MemLoad || type == NodeType::MemStore) ? SpanKind::Memory
                                                                              : SpanKind::Other;
  const Tick now = queue_.now();
  p.in_flight[id] = Running{now, kind};
  if (p.has_stalls) {
    if (auto cls = node.string_attr(kStallClassAttr))
      if (auto c = parse_stall_class(*cls))
        p.stalls[static_cast<int>(*c)] += node.uint_attr(kStallMicrosAttr).value_or(0) * 1000;
    p.stall_waits += node.trace().find_attr(node.position(), kStallWaitDepsAttr).has_value();
  }
  if (uint64_t start = node.start_time_micros(); start > 0 && !p.derived) {
    p.measured_first = std::min(p.measured_first, start);
    p.measured_last = std::max(p.measured_last, start + node.duration_micros());
    const std::pair<Tick, Tick> measured{start * 1000, (start + node.duration_micros()) * 1000};
    if (kind == SpanKind::Collective)
      p.measured_work.collectives[std::string(node.pg_name().value_or(""))].push_back(measured);
    else if (kind == SpanKind::Compute)
      p.measured_work.kernels.push_back(measured);
    if (started_as_measured_ && start >= *p.replay_start) {
      const Tick expected = p.start + queue_.to_tick(double(start - *p.replay_start) * 1000.0);
      start_errors_.push_back(now > expected ? now - expected : expected - now);
    }
  }
  // What-if speedups and this NPU's slowdowns (SimOptions::slowdown) for the node's kind, on
  // durations replayed or computed here (a slower NPU's transfers are the network's, Topology).
  const double speedup = speedup_of(node) / (is_comm(type) ? o_.slowdown.comm_of(n) : o_.slowdown.compute_of(n));
  auto replay = [&] {
    Tick t = faster(replay_time(what), speedup);
    if (!node.is_cpu_op()) p.gpu_time += t;
    system_.finish_after(n, t, id);
  };
  if (in_.system.replay_only) {
    replay();
    return false;
  }
  if (is_comm(type) && node.is_cpu_op())
    throw Error(what() + ": a communication node cannot be a CPU op (is_cpu_op is set)");
  switch (type) {
    case NodeType::MemLoad:
    case NodeType::MemStore: {
      const RemoteMemoryConfig& m = in_.memory;
      if (m.type == MemoryType::None)
        throw Error(what() +
                    ": remote memory access needs a remote-memory configuration other "
                    "than NO_MEMORY_EXPANSION");
      auto size = node.tensor_size();
      if (!size) throw Error(what() + ": memory node without a tensor_size attribute");
      Tick access = queue_.to_tick(m.latency + double(*size) / m.bandwidth);
      Tick start = now;
      if (m.type != MemoryType::PerNpu) {
        uint32_t unit = m.type == MemoryType::Pool ? 0 : n / m.npus_per_node + 1;
        Tick& busy_until = memory_busy_[unit];
        start = std::max(start, busy_until);
        if (access > UINT64_MAX - start) queue_.clock_overflow();
        busy_until = start + access;
      }
      system_.finish_after(n, start + access - now, id);
      return false;
    }
    case NodeType::Comp: {
      if (!in_.system.roofline || node.is_cpu_op()) {
        replay();
        return false;
      }
      auto ops = node.num_ops();
      auto size = node.tensor_size();
      if (!ops || !size) throw Error(what() + ": roofline compute needs num_ops and tensor_size attributes");
      if (*size == 0) return finish_now(n, id);  // the reference skips it as invalid
      if (!(peak_perf_ > 0)) throw Error(what() + ": roofline-enabled needs 'peak-perf' in the system configuration");
      double intensity = static_cast<double>(*ops) / static_cast<double>(*size);
      double perf = std::min(local_mem_bw_ * intensity, peak_perf_);
      double seconds = static_cast<double>(*ops) / perf / speedup;
      Tick t = queue_.to_tick(seconds * 1e9);
      p.gpu_time += t;
      system_.finish_after(n, t, id);
      return false;
    }
    case NodeType::CommColl: return issue_coll(n, node, what);
    case NodeType::CommSend: return issue_p2p(n, node, what, true);
    case NodeType::CommRecv: return issue_p2p(n, node, what, false);
    case NodeType::Invalid: return finish_now(n, id);
    case NodeType::Metadata: read_process_groups(n, node, what); return finish_now(n, id);
  }
  throw Error(what() + ": unknown node type " + std::to_string(int(type)));
}

double Workload::speedup_of(const FeederNode& node) const {
  double k = 1;
  for (const SimOptions::Speedup& s : o_.speedups)
    if (node.name().find(s.name_part) != std::string_view::npos) k *= s.speedup;
  return k;
}

double Workload::comm_speedup(uint32_t n, const FeederNode& node) const {
  return speedup_of(node) / o_.slowdown.comm_of(n);
}

// A time or size `speedup` times smaller (a time of at least 1 ns stays at least 1 ns).
uint64_t Workload::faster(uint64_t v, double speedup) {
  if (speedup == 1 || v == 0) return v;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(static_cast<double>(v) / speedup)));
}

// SEND: the peer is comm_dst and comm_src (optional) must be this NPU; RECV the other way.
bool Workload::issue_p2p(uint32_t n, const FeederNode& node, const Where& what, bool send) {
  const char* peer_key = send ? "comm_dst" : "comm_src";
  const char* self_key = send ? "comm_src" : "comm_dst";
  auto peer = send ? node.comm_dst() : node.comm_src();
  auto tag = node.comm_tag();
  if (!peer || !tag)
    throw Error(what() + ": a " + (send ? "send" : "recv") + " needs " + peer_key + " and comm_tag attributes");
  int64_t self = (send ? node.comm_src() : node.comm_dst()).value_or(n);
  if (self != int64_t(n)) throw Error(what() + ": " + self_key + " " + std::to_string(self) + " is not this NPU");
  if (*peer < 0 || *peer >= int64_t(n_npus_) || *peer == int64_t(n))
    throw Error(what() + ": " + peer_key + " " + std::to_string(*peer) + " is not another NPU");
  uint64_t size = faster(static_cast<uint64_t>(node.comm_size().value_or(0)), speedup_of(node));
  system_.node_message(n, node.id(), static_cast<uint32_t>(*peer), size, *tag, send);
  return false;
}

bool Workload::issue_coll(uint32_t n, const FeederNode& node, const Where& what) {
  auto comm_type = node.comm_type();
  auto size = node.comm_size();
  if (!comm_type) throw Error(what() + ": collective without a comm_type attribute");
  if (!size || *size < 0) throw Error(what() + ": collective without a comm_size attribute");
  std::vector<bool> involved;
  if (auto a = node.attr(NodeAttr::involved_dim)) {
    if (a->kind() != AttrKind::BoolList) throw Error(what() + ": involved_dim must be a bool_list");
    for (uint64_t v : a->list()) involved.push_back(v != 0);
  }
  int group = -1;
  if (auto pg = node.pg_name(); pg && names_group(*pg)) {
    const std::string name(*pg);
    const auto number = group_number(name);
    if (!number) throw Error(what() + ": pg_name '" + name + "' is not a group number");
    group = system_.group_of(n, *number, name, what);
  }
  if (*comm_type == 5) {  // broadcast: replayed with its duration, as the reference
    system_.replay_broadcast(n, node.id(), uint64_t(*size), faster(replay_time(what), comm_speedup(n, node)));
    return false;
  }
  const std::optional<Collective> type = collective_of(*comm_type);
  if (!type)
    throw Error(what() + ": collective type " + std::to_string(*comm_type) +
                " is not supported (all-reduce 0, all-gather 2, broadcast 5, all-to-all 6, reduce-scatter 7)");
  system_.issue_collective(n, what, *type, faster(uint64_t(*size), speedup_of(node)), involved, group,
                           static_cast<int>(node.comm_priority()));
  return false;
}

// A METADATA node may carry PyTorch process groups: [{"pg_name": "3", "ranks": [..]}, ...],
// stored by the converter as the Python repr of a one-string list (['[{"pg_name": ...}]']),
// which the reference unwraps by dropping two characters at each end; a JSON string list
// is accepted too.
void Workload::read_process_groups(uint32_t n, const FeederNode& node, const Where& what) {
  if (auto groups = astra::metadata_process_groups(node.inputs_values(), n_npus_, what()))
    for (auto& [id, members] : *groups) system_.add_process_group(n, id, std::move(members));
}

bool Workload::finish_now(uint32_t n, uint64_t id) {
  complete(n, id);
  return true;
}

// Bookkeeping of a finished node (no issuing).
void Workload::complete(uint32_t n, uint64_t id) {
  Npu& p = npu(n);
  FeederNode node = p.feeder->node(id);
  p.resources.occupy(node, -1);
  auto it = p.in_flight.find(id);
  if (it != p.in_flight.end()) {
    Running r = it->second;
    const Tick now = queue_.now();
    int cls = r.kind == SpanKind::Compute                                                                ? 0
              : (r.kind == SpanKind::Collective || r.kind == SpanKind::Send || r.kind == SpanKind::Recv) ? 1
              : r.kind == SpanKind::Cpu                                                                  ? 2
              : r.kind == SpanKind::Memory                                                               ? 3
                                           : -1;  // INVALID / METADATA: no busy time
    if (cls >= 0 && now > r.start) p.intervals[cls].emplace_back(r.start, now);
    if (o_.record_spans) spans_.push_back(Span{n, r.kind, id, r.start, now, std::string(node.name())});
    if (const uint64_t start = node.start_time_micros(); start > 0 && !p.derived) {
      if (r.kind == SpanKind::Collective)
        p.simulated_work.collectives[std::string(node.pg_name().value_or(""))].emplace_back(r.start, now);
      else if (r.kind == SpanKind::Compute)
        p.simulated_work.kernels.emplace_back(r.start, now);
      if (r.kind == SpanKind::Collective)
        if (auto type = node.comm_type()) collective_fit_[*type].add(node.duration_micros() * 1000, now - r.start);
      const uint64_t end = start + node.duration_micros();
      for (Npu::Window& w : p.windows) {
        if (start < w.begin || end > w.end) continue;
        w.measured_first = std::min(w.measured_first, start), w.measured_last = std::max(w.measured_last, end);
        w.simulated_first = std::min(w.simulated_first, r.start), w.simulated_last = std::max(w.simulated_last, now);
        ++w.nodes;
      }
    }
    p.in_flight.erase(it);
  }
  ++p.nodes;
  nodes_run_ += mirror_.size.empty() ? 1 : mirror_.size[n];
  p.feeder->mark_done(id);
}

void Workload::node_done(uint32_t n, uint64_t id) {
  Npu& p = npu(n);
  if (p.finished) return;
  if (id == kStartNode && !p.started)
    p.started = true;
  else
    complete(n, id);
  step(n);
}

void Workload::finish(SimResult& result) {
  const bool mirrored = !slot_.empty();
  if (mirrored && std::any_of(npus_.begin(), npus_.end(), [](const Npu& p) { return !p.finished; }))
    throw NotMirrored{};
  result.simulated_npus = npus_.size();
  result.stall_mode = o_.stalls;
  result.times_origin = times_origin_;
  result.npus.resize(n_npus_);
  for (uint32_t slot = 0; slot < npus_.size(); ++slot) {
    const uint32_t n = npu_at(slot);
    Npu& p = npus_[slot];
    NpuResult& r = result.npus[n];
    r.finished = p.finished;
    r.nodes = p.nodes;
    r.finish = p.finished ? p.finish : 0;
    r.start = p.start;
    r.astra_exposed_comm = p.finished ? r.step() - std::min(r.step(), p.gpu_time) : 0;
    std::vector<std::pair<Tick, Tick>> both = p.intervals[0];
    both.insert(both.end(), p.intervals[1].begin(), p.intervals[1].end());
    r.compute = union_length(p.intervals[0]);
    r.comm = union_length(p.intervals[1]);
    r.cpu = union_length(p.intervals[2]);
    r.memory = union_length(p.intervals[3]);
    Tick u = union_length(both);
    r.overlap = r.compute + r.comm - u;
    if (p.measured_last > p.measured_first) r.measured_step = (p.measured_last - p.measured_first) * 1000;
    r.stalls = p.stalls;
    r.stall_waits = p.stall_waits;
    for (const Npu::Window& w : p.windows)
      r.profiler_steps.push_back({w.name, (w.end - w.begin) * 1000,
                                  w.nodes ? (w.measured_last - w.measured_first) * 1000 : 0,
                                  w.nodes ? w.simulated_last - w.simulated_first : 0, w.nodes});
    if (!p.finished) {
      result.deadlock = true;
      describe_stuck(n, r);
    }
  }
  for (uint32_t n = 0; mirrored && n < n_npus_; ++n)
    if (mirror_.rep[n] != n) result.npus[n] = result.npus[mirror_.rep[n]];
  add_exposed_figures(result);
  result.spans = std::move(spans_);
  auto quantile = [](std::vector<Tick>& v, size_t tenths) {  // the value at v.size() × tenths / 10
    std::nth_element(v.begin(), v.begin() + v.size() * tenths / 10, v.end());
    return v[v.size() * tenths / 10];
  };
  auto median = [&](std::vector<Tick>& v) { return quantile(v, 5); };
  if (!start_errors_.empty()) {
    result.start_error.nodes = start_errors_.size();
    result.start_error.median = median(start_errors_);
    result.start_error.p90 = quantile(start_errors_, 9);
  }
  for (auto& [type, fit] : collective_fit_)
    result.measured_collectives.push_back(
        CollectiveFit{type, fit.measured.size(), median(fit.measured), median(fit.simulated)});
}

// A collective's kernels end together once its last rank arrives: from the latest start of one
// collective over its ranks to a rank's end, the rank waits for the transfer itself, which is on
// every participant's critical path. Of that window, the time the rank's compute kernels left
// uncovered is its exposed transfer. (Before the last arrival a rank waits for a late peer:
// exposed, but not communication's doing, and no faster network removes it.) The k-th
// collective of a communicator on each NPU is taken to be the same collective, as NCCL
// requires; communicators whose NPUs recorded different counts are left out.
std::vector<Tick> Workload::exposed_transfer(Npu::GpuWork Npu::*work) {
  std::map<std::string, std::vector<uint32_t>, std::less<>> members;  // communicator → NPUs with its collectives
  for (uint32_t slot = 0; slot < npus_.size(); ++slot)
    for (auto& [group, list] : (npus_[slot].*work).collectives) {
      std::sort(list.begin(), list.end());
      members[group].push_back(npu_at(slot));
    }
  std::vector<std::vector<std::pair<Tick, Tick>>> exposed(n_npus_);  // windows per NPU
  for (const auto& entry : members) {
    const std::string& group = entry.first;  // named: clang 14 lambdas cannot capture bindings
    const std::vector<uint32_t>& npus = entry.second;
    auto of = [&](uint32_t n) -> const std::vector<std::pair<Tick, Tick>>& {
      return (npu(n).*work).collectives.at(group);
    };
    const size_t count = of(npus[0]).size();
    bool same = npus.size() > 1;
    for (uint32_t n : npus) same = same && of(n).size() == count;
    if (!same) continue;
    for (size_t k = 0; k < count; ++k) {
      Tick last_arrival = 0;
      for (uint32_t n : npus) last_arrival = std::max(last_arrival, of(n)[k].first);
      for (uint32_t n : npus)
        if (of(n)[k].second > last_arrival) exposed[n].emplace_back(last_arrival, of(n)[k].second);
    }
  }
  std::vector<Tick> out(n_npus_, 0);
  for (uint32_t n = 0; n < n_npus_; ++n) {
    if (exposed[n].empty()) continue;
    // Exposed = |windows| − |windows ∩ kernels| = |windows ∪ kernels| − |kernels|.
    std::vector<std::pair<Tick, Tick>> kernels = (npu(n).*work).kernels, both = exposed[n];
    both.insert(both.end(), kernels.begin(), kernels.end());
    out[n] = union_length(both) - union_length(kernels);
  }
  return out;
}

void Workload::add_exposed_figures(SimResult& result) {
  const std::vector<Tick> measured = exposed_transfer(&Npu::measured_work),
                          simulated = exposed_transfer(&Npu::simulated_work);
  for (uint32_t slot = 0; slot < npus_.size(); ++slot) {
    const uint32_t n = npu_at(slot);
    NpuResult& r = result.npus[n];
    r.measured_exposed_transfer = measured[n];
    r.exposed_transfer = simulated[n];
    // Measured exposed communication: the collectives' kernels less the compute kernels' cover.
    std::vector<std::pair<Tick, Tick>> comm, kernels = npus_[slot].measured_work.kernels;
    for (const auto& [group, list] : npus_[slot].measured_work.collectives)
      comm.insert(comm.end(), list.begin(), list.end());
    if (comm.empty()) continue;
    std::vector<std::pair<Tick, Tick>> both = comm;
    both.insert(both.end(), kernels.begin(), kernels.end());
    r.measured_exposed_comm = union_length(both) - union_length(kernels);
  }
}

void Workload::describe_stuck(uint32_t n, NpuResult& r) {
  Npu& p = npu(n);
  std::vector<uint64_t> ids;
  for (const auto& [id, run] : p.in_flight) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (uint64_t id : ids) {
    FeederNode node = p.feeder->node(id);
    std::string s = node_label(node) + " ";
    switch (node.type()) {
      case NodeType::CommRecv:
        s += "waits for a message from NPU " + std::to_string(node.comm_src().value_or(-1)) + " (tag " +
             std::to_string(node.comm_tag().value_or(-1)) + ", " + std::to_string(node.comm_size().value_or(0)) +
             " bytes) that was never sent";
        break;
      case NodeType::CommSend:
        s +=
            "sent to NPU " + std::to_string(node.comm_dst().value_or(-1)) + ", which never posted the matching receive";
        break;
      case NodeType::CommColl: s += "is a collective some of its peers never reached"; break;
      default: s += "never finished"; break;
    }
    r.stuck.push_back(s);
  }
  std::vector<uint64_t> ready = p.feeder->take_all();
  for (uint64_t id : ready) {
    r.stuck.push_back(node_label(p.feeder->node(id)) + " was ready but never issued");
    p.feeder->untake(id);
  }
  if (p.in_flight.empty() && ready.empty()) {
    std::string why = p.feeder->stalled() ? p.feeder->stall_report() : "nodes remain";
    r.stuck.push_back(why);
  }
}

}  // namespace chakra::sim
