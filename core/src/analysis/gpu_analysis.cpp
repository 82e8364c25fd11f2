#include "chakra/analysis/gpu_analysis.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>

#include "chakra/analysis/critical_path.h"
#include "chakra/trace/graph.h"
#include "chakra/trace/schema.h"

namespace chakra {

std::string gpu_kinds_label(unsigned set) {
  std::string label;
  for (int k = 0; k < kGpuKinds; ++k)
    if (set & (1u << k))
      label += (label.empty() ? "" : " overlapping ") + std::string(gpu_kind_name(static_cast<GpuKind>(k)));
  return label;
}

std::vector<GpuOp> gpu_ops_of(const Trace& t) {
  // Attribute names looked up once: a trace without them has no GPU ops.
  StrId is_cpu_op = StringPool::kEmpty, stream = StringPool::kEmpty;
  std::vector<GpuOp> ops;
  if (!t.strings().find("stream", &stream)) return ops;
  t.strings().find("is_cpu_op", &is_cpu_op);
  auto cpu_flag = [&](uint32_t n) -> std::optional<bool> {
    if (is_cpu_op == StringPool::kEmpty) return std::nullopt;
    if (auto a = t.find_attr(n, is_cpu_op)) return a->as_bool();
    return std::nullopt;
  };
  const IdIndex index(t);
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (cpu_flag(n).value_or(true)) continue;  // GPU ops say is_cpu_op = false
    auto s = t.find_attr(n, stream);
    if (!s) continue;
    GpuOp op;
    op.start = t.start_time_micros(n);
    if (op.start == 0) continue;  // no measured time (a trace converted without them)
    op.end = op.start + t.duration_micros(n);
    op.stream = s->as_int64().value_or(0);
    op.node = n;
    op.kind = classify_gpu_op(t.name(n), t.type(n));
    for (uint64_t id : t.data_deps(n))
      if (auto d = index.find(id); d && cpu_flag(*d).value_or(false)) {
        op.launch_node = *d;
        op.launch_start = t.start_time_micros(*d);
        op.launch_duration = t.duration_micros(*d);
        break;
      }
    ops.push_back(op);
  }
  // Iterations (with recorded times): with two or more, ops launched in the last one are left out.
  std::vector<std::string_view> steps;
  uint64_t last_step = 0;
  for (uint32_t n = 0; n < t.size(); ++n)
    if (t.name(n).rfind("ProfilerStep#", 0) == 0 && cpu_flag(n).value_or(false) && t.start_time_micros(n) > 0) {
      steps.push_back(t.name(n));
      last_step = std::max(last_step, t.start_time_micros(n));
    }
  std::sort(steps.begin(), steps.end());
  if (std::unique(steps.begin(), steps.end()) - steps.begin() >= 2)
    std::erase_if(ops, [&](const GpuOp& op) { return op.launch_node == UINT32_MAX || op.launch_start >= last_step; });
  std::stable_sort(ops.begin(), ops.end(), [](const GpuOp& a, const GpuOp& b) { return a.start < b.start; });
  return ops;
}

namespace {

// The analyses of `ops` (sorted by start); name_of(op) names an op.
GpuAnalysis analyze_ops(const std::vector<GpuOp>& ops, const std::function<std::string_view(const GpuOp&)>& name_of) {
  GpuAnalysis a;
  a.ops = ops.size();
  if (ops.empty()) return a;

  // Time per set of kinds running: a sweep over +1/-1 events per kind (ops of one kind may
  // overlap, so each kind keeps a count).
  struct Edge {
    uint64_t time;
    int kind, delta;
  };
  std::vector<Edge> edges;
  edges.reserve(ops.size() * 2);
  uint64_t first = UINT64_MAX, last = 0;
  for (const GpuOp& op : ops) {
    if (op.end == op.start) continue;  // covers no time
    edges.push_back({op.start, static_cast<int>(op.kind), +1});
    edges.push_back({op.end, static_cast<int>(op.kind), -1});
  }
  for (const GpuOp& op : ops) first = std::min(first, op.start), last = std::max(last, op.end);
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) { return x.time < y.time; });
  int running[kGpuKinds] = {};
  for (size_t i = 0; i < edges.size();) {
    const uint64_t now = edges[i].time;
    for (; i < edges.size() && edges[i].time == now; ++i) running[edges[i].kind] += edges[i].delta;
    if (i == edges.size()) break;
    unsigned set = 0;
    for (int k = 0; k < kGpuKinds; ++k)
      if (running[k] > 0) set |= 1u << k;
    a.by_kinds[set] += edges[i].time - now;
  }
  constexpr unsigned kComp = 1u << static_cast<int>(GpuKind::Computation),
                     kComm = 1u << static_cast<int>(GpuKind::Communication);
  uint64_t busy = 0;
  for (unsigned set = 1; set < (1u << kGpuKinds); ++set) {
    busy += a.by_kinds[set];
    if (set & kComp) a.compute += a.by_kinds[set];
    if (set & kComm) a.communication += a.by_kinds[set];
    if ((set & kComp) && (set & kComm)) a.comm_overlapped += a.by_kinds[set];
  }
  a.span = last - first;
  a.idle = a.span - busy;
  a.non_compute = a.span - a.compute - a.idle;

  // Per name.
  std::unordered_map<std::string_view, size_t> slot;
  std::vector<std::vector<uint64_t>> durations;
  for (const GpuOp& op : ops) {
    auto [it, fresh] = slot.emplace(name_of(op), a.names.size());
    if (fresh) {
      a.names.push_back({std::string(it->first), op.kind});
      durations.emplace_back();
    }
    durations[it->second].push_back(op.end - op.start);
  }
  for (size_t i = 0; i < a.names.size(); ++i) {
    GpuAnalysis::Name& n = a.names[i];
    const std::vector<uint64_t>& d = durations[i];
    n.count = d.size();
    n.min = *std::min_element(d.begin(), d.end());
    n.max = *std::max_element(d.begin(), d.end());
    for (uint64_t v : d) n.sum += v;
    n.mean = static_cast<double>(n.sum) / static_cast<double>(n.count);
    double squares = 0;
    for (uint64_t v : d) squares += (static_cast<double>(v) - n.mean) * (static_cast<double>(v) - n.mean);
    n.stddev = n.count > 1 ? std::sqrt(squares / static_cast<double>(n.count - 1)) : 0.0;
  }
  std::sort(a.names.begin(), a.names.end(), [](const GpuAnalysis::Name& x, const GpuAnalysis::Name& y) {
    return x.sum != y.sum ? x.sum > y.sum : x.name < y.name;
  });
  for (const GpuAnalysis::Name& n : a.names)
    if (n.kind == GpuKind::Computation && !is_known_compute_kernel(n.name)) a.unknown_kernels.push_back(n.name);

  for (const GpuOp& op : ops)
    if (op.launch_node != UINT32_MAX) {
      const int64_t since_call = static_cast<int64_t>(op.start) - static_cast<int64_t>(op.launch_start);
      const int64_t delay = since_call - static_cast<int64_t>(op.launch_duration);
      a.launches.push_back(
          {op.node, op.launch_duration, op.end - op.start, since_call, delay > 0 ? static_cast<uint64_t>(delay) : 0});
    }

  // Idle gaps per stream, in order of each stream's first op.
  std::map<int64_t, size_t> stream_slot;
  std::vector<uint64_t> previous_end;
  for (const GpuOp& op : ops) {
    auto [it, fresh] = stream_slot.emplace(op.stream, a.idle_by_stream.size());
    if (fresh) {
      a.idle_by_stream.push_back({op.stream});
      previous_end.push_back(op.end);
      continue;
    }
    GpuAnalysis::StreamIdle& s = a.idle_by_stream[it->second];
    uint64_t& prev = previous_end[it->second];
    const uint64_t gap = op.start > prev ? op.start - prev : 0;
    if (op.launch_node != UINT32_MAX && op.launch_start > prev) {
      s.host_wait += gap, ++s.host_wait_gaps;
    } else if (gap < GpuAnalysis::kKernelWaitMicros) {
      s.kernel_wait += gap, ++s.kernel_wait_gaps;
    } else {
      s.other += gap, ++s.other_gaps;
    }
    prev = std::max(prev, op.end);
  }
  return a;
}

}  // namespace

GpuAnalysis analyze_gpu(const Trace& t) { return analyze_gpu(t, gpu_ops_of(t)); }

GpuAnalysis analyze_gpu(const Trace& t, const std::vector<GpuOp>& ops) {
  return analyze_ops(ops, [&](const GpuOp& op) { return t.name(op.node); });
}

LaunchSummary summarize_launches(const GpuAnalysis& a) {
  LaunchSummary s;
  std::vector<uint64_t> delays;
  for (const auto& l : a.launches) {
    delays.push_back(l.delay);
    s.short_kernels += l.cpu_duration <= 50 && l.gpu_duration < l.cpu_duration;
    s.delayed += l.delay > 100;
  }
  s.launches = delays.size();
  if (delays.empty()) return s;
  std::sort(delays.begin(), delays.end());
  s.median = delays[delays.size() / 2];
  s.p90 = delays[delays.size() * 9 / 10];
  s.max = delays.back();
  return s;
}

void write_breakdown_json(const GpuAnalysis& a, JsonWriter& w) {
  w.key("gpu_ops").value_uint(a.ops);
  w.key("span").value_uint(a.span);
  w.key("idle").value_uint(a.idle);
  w.key("compute").value_uint(a.compute);
  w.key("non_compute").value_uint(a.non_compute);
  w.key("communication").value_uint(a.communication);
  w.key("communication_overlapped").value_uint(a.comm_overlapped);
  w.key("exposed_communication").value_uint(a.exposed_communication());
  w.key("overlap_percent").value_double(a.overlap_percent());
}

double CollectiveBucket::bus_gbps(uint32_t ranks) const {
  const double n = ranks, algbw = algorithm_gbps();
  if (ranks < 2) return algbw;
  switch (static_cast<CommType>(comm_type)) {
    case CommType::AllReduce: return algbw * 2 * (n - 1) / n;
    case CommType::AllGather:
    case CommType::ReduceScatter:
    case CommType::ReduceScatterBlock:
    case CommType::AllToAll: return algbw * (n - 1) / n;
    default: return algbw;
  }
}

std::vector<CollectiveBucket> collective_buckets(const Trace& t, std::span<const uint64_t> micros) {
  std::map<std::pair<int32_t, uint32_t>, CollectiveBucket> buckets;
  StrId comm_type = StringPool::kEmpty, comm_size = StringPool::kEmpty;
  if (!t.strings().find("comm_type", &comm_type) || !t.strings().find("comm_size", &comm_size)) return {};
  for (uint32_t n = 0; n < t.size(); ++n) {
    const uint64_t time = micros.empty() ? t.duration_micros(n) : micros[n];
    if (t.type(n) != static_cast<int32_t>(NodeType::CommColl) || time == 0) continue;
    auto type = t.find_attr(n, comm_type);
    auto size = t.find_attr(n, comm_size);
    if (!type || !size) continue;
    const std::optional<int64_t> ct = type->as_int64();
    const std::optional<uint64_t> bytes = size->as_uint64();
    if (!ct || !bytes || *bytes == 0) continue;
    const uint32_t log2 = static_cast<uint32_t>(std::bit_width(*bytes) - 1);
    CollectiveBucket& b = buckets[{static_cast<int32_t>(*ct), log2}];
    b.comm_type = static_cast<int32_t>(*ct);
    b.size_log2 = log2;
    ++b.count;
    b.bytes += *bytes;
    b.micros += time;
  }
  std::vector<CollectiveBucket> out;
  for (auto& [key, b] : buckets) out.push_back(b);
  return out;
}

std::vector<CollectiveBucket> sum_buckets(std::span<const std::vector<CollectiveBucket>> per_rank) {
  std::map<std::pair<int32_t, uint32_t>, CollectiveBucket> all;
  for (const std::vector<CollectiveBucket>& rank : per_rank)
    for (const CollectiveBucket& b : rank) {
      CollectiveBucket& sum = all[{b.comm_type, b.size_log2}];
      sum.comm_type = b.comm_type;
      sum.size_log2 = b.size_log2;
      sum.count += b.count;
      sum.bytes += b.bytes;
      sum.micros += b.micros;
    }
  std::vector<CollectiveBucket> out;
  for (const auto& [key, b] : all) out.push_back(b);
  return out;
}

std::vector<CollectiveBucket> collective_buckets(std::span<const Trace* const> ranks,
                                                 std::span<const std::vector<uint64_t>> micros) {
  std::vector<std::vector<CollectiveBucket>> per_rank;
  for (size_t r = 0; r < ranks.size(); ++r)
    per_rank.push_back(collective_buckets(*ranks[r], micros.empty() ? std::span<const uint64_t>{} : micros[r]));
  return sum_buckets(per_rank);
}

std::vector<uint64_t> simulated_micros(const Trace& trace, std::span<const sim::Span> spans, uint32_t npu) {
  const RankTimes times = simulated_times(trace, spans, npu);
  std::vector<uint64_t> out(trace.size(), 0);
  for (uint32_t n = 0; n < trace.size(); ++n)
    if (times.start[n] != RankTimes::kUntimed && times.end[n] > times.start[n])
      out[n] = std::max<uint64_t>(1, (times.end[n] - times.start[n] + 500) / 1000);
  return out;
}

GpuAnalysis analyze_spans(std::span<const sim::Span> spans, uint32_t npu) {
  std::vector<GpuOp> ops;
  std::vector<std::string_view> names;
  for (const sim::Span& s : spans) {
    if (s.npu != npu) continue;
    GpuOp op;
    switch (s.kind) {
      case sim::SpanKind::Compute: op.kind = GpuKind::Computation; break;
      case sim::SpanKind::Collective:
      case sim::SpanKind::Send:
      case sim::SpanKind::Recv: op.kind = GpuKind::Communication; break;
      case sim::SpanKind::Memory: op.kind = GpuKind::Memory; break;
      default: continue;  // CPU work is not GPU time
    }
    op.start = s.start;
    op.end = s.end;
    op.stream = op.kind == GpuKind::Communication ? 1 : 0;  // the simulator's compute and comm slots
    op.node = static_cast<uint32_t>(names.size());
    names.push_back(s.name);
    ops.push_back(op);
  }
  std::stable_sort(ops.begin(), ops.end(), [](const GpuOp& a, const GpuOp& b) { return a.start < b.start; });
  return analyze_ops(ops, [&](const GpuOp& op) { return names[op.node]; });
}

CommStarts comm_starts_of(const Trace& trace, const std::vector<GpuOp>& ops) {
  CommStarts out;
  for (const GpuOp& op : ops) {
    if (op.kind != GpuKind::Communication) continue;
    const std::string_view name = trace.name(op.node);
    auto it = out.find(name);
    if (it == out.end()) it = out.emplace(std::string(name), std::vector<uint64_t>{}).first;
    it->second.push_back(op.start);
  }
  return out;
}

Stragglers find_stragglers(std::span<const Trace* const> ranks) {
  std::vector<CommStarts> starts;
  std::vector<const CommStarts*> of;
  for (const Trace* t : ranks) starts.push_back(comm_starts_of(*t, gpu_ops_of(*t)));
  for (const CommStarts& s : starts) of.push_back(&s);
  return find_stragglers(of);
}

Stragglers find_stragglers(std::span<const CommStarts* const> ranks) {
  Stragglers out;
  const size_t n = ranks.size();
  for (uint32_t r = 0; r < n; ++r) out.ranks.push_back({r});
  if (n < 2) return out;
  // Per name: each rank's communication kernel starts, in order (empty where a rank has none).
  std::map<std::string_view, std::vector<const std::vector<uint64_t>*>> starts;
  static const std::vector<uint64_t> kNone;
  for (size_t r = 0; r < n; ++r)
    for (const auto& [name, at] : *ranks[r]) {
      auto& per_rank = starts[name];
      per_rank.resize(n, &kNone);
      per_rank[r] = &at;
    }
  for (auto& [name, per_rank] : starts) {
    const size_t count = per_rank[0]->size();
    if (std::any_of(per_rank.begin(), per_rank.end(), [&](const auto* v) { return v->size() != count; })) {
      out.unmatched.emplace_back(name);
      continue;
    }
    for (uint32_t k = 0; k < count; ++k) {
      Stragglers::Instance in{std::string(name), k, {}, 0, 0};
      for (size_t r = 0; r < n; ++r) in.arrival.push_back((*per_rank[r])[k]);
      const auto last = std::max_element(in.arrival.begin(), in.arrival.end());
      in.last = static_cast<uint32_t>(last - in.arrival.begin());
      in.skew = *last - *std::min_element(in.arrival.begin(), in.arrival.end());
      Stragglers::Rank& culprit = out.ranks[in.last];
      ++culprit.last;
      culprit.caused += in.skew;
      for (size_t r = 0; r < n; ++r) out.ranks[r].waited += *last - in.arrival[r];
      out.instances.push_back(std::move(in));
    }
  }
  std::stable_sort(out.instances.begin(), out.instances.end(),
                   [](const Stragglers::Instance& a, const Stragglers::Instance& b) { return a.skew > b.skew; });
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const Stragglers::Rank& a, const Stragglers::Rank& b) { return a.caused > b.caused; });
  return out;
}

}  // namespace chakra
