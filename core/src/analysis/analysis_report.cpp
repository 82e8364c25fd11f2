#include "chakra/analysis/analysis_report.h"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"

namespace chakra {

namespace {

void write_stalls(const std::vector<RankDigest::Stall>& stalls, JsonWriter& w) {
  std::array<uint64_t, kStallClassCount> by_class{};
  uint64_t total = 0;
  for (const RankDigest::Stall& e : stalls) by_class[static_cast<int>(e.cls)] += e.micros, total += e.micros;
  w.key("host_stalls").begin_object();
  w.key("total_us").value_uint(total);
  w.key("by_class").begin_object();
  for (int c = 0; c < kStallClassCount; ++c)
    w.key(std::string(stall_class_name(StallClass(c)))).value_uint(by_class[c]);
  w.end_object();
  w.key("stalls").begin_array();
  for (const RankDigest::Stall& e : stalls) {
    w.begin_object();
    w.key("node_id").value_uint(e.node_id);
    w.key("name").value(e.name);
    w.key("start").value_uint(e.start);
    w.key("class").value(std::string(stall_class_name(e.cls)));
    w.key("us").value_uint(e.micros);
    w.key("evidence").value(e.evidence);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void write_rank(const RankDigest& r, bool every_launch, JsonWriter& w) {
  const GpuAnalysis& a = r.analysis;
  w.begin_object();
  w.key("rank").value_uint(r.rank);
  w.key("file").value(r.file);
  write_breakdown_json(a, w);
  w.key("by_kinds").begin_object();
  for (unsigned set = 1; set < (1u << kGpuKinds); ++set)
    if (a.by_kinds[set]) w.key(gpu_kinds_label(set)).value_uint(a.by_kinds[set]);
  w.end_object();
  w.key("names").begin_array();
  for (const auto& n : a.names) {
    w.begin_object();
    w.key("name").value(n.name);
    w.key("kind").value(gpu_kind_name(n.kind));
    w.key("count").value_uint(n.count);
    w.key("sum").value_uint(n.sum);
    w.key("min").value_uint(n.min);
    w.key("max").value_uint(n.max);
    w.key("mean").value_double(n.mean);
    w.key("stddev").value_double(n.stddev);
    w.end_object();
  }
  w.end_array();
  w.key("unknown_kernels").begin_array();
  for (const std::string& n : a.unknown_kernels) w.value(n);
  w.end_array();
  const LaunchSummary l = summarize_launches(a);
  w.key("launches").begin_object();
  w.key("count").value_uint(l.launches);
  w.key("delay_median").value_uint(l.median);
  w.key("delay_p90").value_uint(l.p90);
  w.key("delay_max").value_uint(l.max);
  w.key("kernels_shorter_than_launch").value_uint(l.short_kernels);
  w.key("delayed_over_100us").value_uint(l.delayed);
  w.end_object();
  if (every_launch) {
    w.key("launch_list").begin_array();
    if (r.launch_ops.size() != a.launches.size())
      throw Error(r.file + ": the launch list was not kept for rank " + std::to_string(r.rank));
    for (size_t i = 0; i < a.launches.size(); ++i) {
      const GpuAnalysis::Launch& launch = a.launches[i];
      w.begin_object();
      w.key("id").value_uint(r.launch_ops[i].first);
      w.key("name").value(r.launch_ops[i].second);
      w.key("cpu_duration").value_uint(launch.cpu_duration);
      w.key("gpu_duration").value_uint(launch.gpu_duration);
      w.key("since_call").value_int(launch.since_call);
      w.key("delay").value_uint(launch.delay);
      w.end_object();
    }
    w.end_array();
  }
  write_stalls(r.stalls, w);
  w.key("idle_by_stream").begin_array();
  for (const auto& s : a.idle_by_stream) {
    w.begin_object();
    w.key("stream").value_int(s.stream);
    w.key("host_wait").value_uint(s.host_wait);
    w.key("kernel_wait").value_uint(s.kernel_wait);
    w.key("other").value_uint(s.other);
    w.key("host_wait_gaps").value_uint(s.host_wait_gaps);
    w.key("kernel_wait_gaps").value_uint(s.kernel_wait_gaps);
    w.key("other_gaps").value_uint(s.other_gaps);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void write_collectives(std::span<const CollectiveBucket> buckets, uint32_t ranks, JsonWriter& w) {
  w.key("collectives").begin_array();
  for (const auto& b : buckets) {
    w.begin_object();
    w.key("type").value(comm_type_name(b.comm_type));
    w.key("size_from").value_uint(uint64_t{1} << b.size_log2);
    w.key("count").value_uint(b.count);
    w.key("bytes").value_uint(b.bytes);
    w.key("time").value_uint(b.micros);
    w.key("algorithm_gbps").value_double(b.algorithm_gbps());
    w.key("bus_gbps").value_double(b.bus_gbps(ranks));
    w.end_object();
  }
  w.end_array();
}

void write_stragglers(const Stragglers& s, std::span<const RankDigest> ranks, JsonWriter& w) {
  w.key("stragglers").begin_object();
  w.key("ranks").begin_array();
  for (const auto& r : s.ranks) {
    w.begin_object();
    w.key("rank").value_uint(ranks[r.rank].rank);
    w.key("arrived_last").value_uint(r.last);
    w.key("made_others_wait").value_uint(r.caused);
    w.key("waited").value_uint(r.waited);
    w.end_object();
  }
  w.end_array();
  w.key("instances").begin_array();
  for (const auto& in : s.instances) {
    w.begin_object();
    w.key("name").value(in.name);
    w.key("index").value_uint(in.index);
    w.key("last_rank").value_uint(ranks[in.last].rank);
    w.key("skew").value_uint(in.skew);
    w.end_object();
  }
  w.end_array();
  w.key("unmatched").begin_array();
  for (const std::string& n : s.unmatched) w.value(n);
  w.end_array();
  w.end_object();
}

}  // namespace

void write_analysis_json(std::span<const RankDigest> ranks, std::span<const std::string> notes, JsonWriter& w,
                         bool every_launch) {
  std::vector<std::vector<CollectiveBucket>> buckets;
  std::vector<const CommStarts*> starts;
  for (const RankDigest& r : ranks) buckets.push_back(r.collectives), starts.push_back(&r.comm_starts);
  w.begin_object();
  w.key("unit").value("us");
  w.key("ranks").begin_array();
  for (const RankDigest& r : ranks) write_rank(r, every_launch, w);
  w.end_array();
  write_collectives(sum_buckets(buckets), static_cast<uint32_t>(ranks.size()), w);
  write_stragglers(find_stragglers(starts), ranks, w);
  w.key("notes").begin_array();
  for (const std::string& n : notes) w.value(n);
  w.end_array();
  w.end_object();
}

std::string analysis_json(std::span<const RankDigest> ranks, std::span<const std::string> notes, bool every_launch) {
  StringSink out;
  JsonWriter w(out, JsonStyle::python_indent(2, false));
  write_analysis_json(ranks, notes, w, every_launch);
  w.raw("\n");
  w.flush();
  return out.out;
}

std::string breakdown_csv(std::span<const RankDigest> ranks) {
  std::string out =
      "rank,span_us,idle_us,compute_us,non_compute_us,communication_us,communication_overlapped_us,"
      "exposed_communication_us,overlap_percent,gpu_ops\n";
  for (const RankDigest& r : ranks) {
    const GpuAnalysis& a = r.analysis;
    for (uint64_t v : {uint64_t{r.rank}, a.span, a.idle, a.compute, a.non_compute, a.communication, a.comm_overlapped,
                       a.exposed_communication()})
      out += std::to_string(v) + ",";
    out += format_number(a.overlap_percent()) + "," + std::to_string(a.ops) + "\n";
  }
  return out;
}

namespace {

RankDigest digest_of(const Trace& trace, uint32_t rank, std::string file, GpuAnalysis analysis,
                     std::span<const HostStallEntry> stalls, const std::vector<GpuOp>& ops, bool every_launch) {
  RankDigest d;
  d.rank = rank;
  d.file = std::move(file);
  d.analysis = std::move(analysis);
  for (const HostStallEntry& e : stalls)
    d.stalls.push_back({trace.id(e.node), trace.start_time_micros(e.node), e.micros, e.cls,
                        std::string(trace.name(e.node)), std::string(e.evidence)});
  d.collectives = collective_buckets(trace);
  d.comm_starts = comm_starts_of(trace, ops);
  if (every_launch)
    for (const GpuAnalysis::Launch& l : d.analysis.launches)
      d.launch_ops.emplace_back(trace.id(l.node), std::string(trace.name(l.node)));
  return d;
}

}  // namespace

RankDigest digest_rank(const Trace& trace, uint32_t rank, std::string file, bool every_launch) {
  const std::vector<GpuOp> ops = gpu_ops_of(trace);
  return digest_of(trace, rank, std::move(file), analyze_gpu(trace, ops), host_stalls_of(trace), ops, every_launch);
}

RankDigest digest_rank(const Trace& trace, uint32_t rank, std::string file, GpuAnalysis analysis,
                       std::span<const HostStallEntry> stalls, bool every_launch) {
  return digest_of(trace, rank, std::move(file), std::move(analysis), stalls, gpu_ops_of(trace), every_launch);
}

std::string host_stalls_text(std::span<const RankDigest> ranks, size_t top) {
  if (std::all_of(ranks.begin(), ranks.end(), [](const RankDigest& r) { return r.stalls.empty(); })) return "";
  std::string out =
      "\nhost stalls: host ops one stretch of whose own time is far longer than their kind takes, with what the trace "
      "shows (classes and evidence: core/docs/pytorch-replay.md); a replay charges them as CPU time unless told "
      "otherwise (chakra simulate --stalls wait)\n";
  for (const RankDigest& r : ranks) {
    if (r.stalls.empty()) continue;
    std::array<uint64_t, kStallClassCount> by_class{};
    uint64_t total = 0;
    for (const RankDigest::Stall& e : r.stalls) by_class[static_cast<int>(e.cls)] += e.micros, total += e.micros;
    out += "  rank " + std::to_string(r.rank) + ": " + std::to_string(r.stalls.size()) + " stalls, " +
           format_number(static_cast<double>(total)) + " µs (";
    bool first = true;
    for (int c = 0; c < kStallClassCount; ++c)
      if (by_class[c]) {
        out += (first ? "" : ", ") + std::string(stall_class_name(StallClass(c))) + " " +
               format_number(static_cast<double>(by_class[c])) + " µs";
        first = false;
      }
    out += ")\n";
    for (size_t i = 0; i < r.stalls.size() && i < top; ++i) {
      const RankDigest::Stall& e = r.stalls[i];
      char head[96];
      std::snprintf(head, sizeof head,
                    "    %10s µs  %-13s node %llu at %s: ", format_number(static_cast<double>(e.micros)).c_str(),
                    std::string(stall_class_name(e.cls)).c_str(), static_cast<unsigned long long>(e.node_id),
                    std::to_string(e.start).c_str());
      const std::string name = e.name.size() > 60 ? e.name.substr(0, 57) + "..." : e.name;
      out += head + name + (e.evidence.empty() ? "" : "\n      " + e.evidence) + "\n";
    }
    if (r.stalls.size() > top) out += "    ... " + std::to_string(r.stalls.size() - top) + " more (--top, --json)\n";
  }
  return out;
}

// The digest's fields in arrays of numbers and strings, in the order the reader takes them.
void write_digest_json(const RankDigest& d, JsonWriter& w) {
  const GpuAnalysis& a = d.analysis;
  w.begin_object();
  w.key("rank").value_uint(d.rank);
  w.key("file").value(d.file);
  w.key("breakdown").begin_array();
  for (uint64_t v : {a.ops, a.span, a.idle, a.compute, a.non_compute, a.communication, a.comm_overlapped})
    w.value_uint(v);
  w.end_array();
  w.key("by_kinds").begin_array();
  for (uint64_t v : a.by_kinds) w.value_uint(v);
  w.end_array();
  w.key("names").begin_array();
  for (const GpuAnalysis::Name& n : a.names) {
    w.begin_array().value(n.name).value_uint(static_cast<uint64_t>(n.kind));
    w.value_uint(n.count).value_uint(n.sum).value_uint(n.min).value_uint(n.max);
    w.value_double(n.mean).value_double(n.stddev).end_array();
  }
  w.end_array();
  w.key("unknown_kernels").begin_array();
  for (const std::string& n : a.unknown_kernels) w.value(n);
  w.end_array();
  w.key("idle_by_stream").begin_array();
  for (const GpuAnalysis::StreamIdle& s : a.idle_by_stream) {
    w.begin_array().value_int(s.stream);
    for (uint64_t v : {s.host_wait, s.kernel_wait, s.other, s.host_wait_gaps, s.kernel_wait_gaps, s.other_gaps})
      w.value_uint(v);
    w.end_array();
  }
  w.end_array();
  w.key("launches").begin_array();
  for (const GpuAnalysis::Launch& l : a.launches) {
    w.begin_array().value_uint(l.node).value_uint(l.cpu_duration).value_uint(l.gpu_duration);
    w.value_int(l.since_call).value_uint(l.delay).end_array();
  }
  w.end_array();
  w.key("launch_ops").begin_array();
  for (const auto& [id, name] : d.launch_ops) w.begin_array().value_uint(id).value(name).end_array();
  w.end_array();
  w.key("stalls").begin_array();
  for (const RankDigest::Stall& e : d.stalls) {
    w.begin_array().value_uint(e.node_id).value_uint(e.start).value_uint(e.micros);
    w.value_uint(static_cast<uint64_t>(e.cls)).value(e.name).value(e.evidence).end_array();
  }
  w.end_array();
  w.key("collectives").begin_array();
  for (const CollectiveBucket& b : d.collectives) {
    w.begin_array().value_int(b.comm_type).value_uint(b.size_log2);
    w.value_uint(b.count).value_uint(b.bytes).value_uint(b.micros).end_array();
  }
  w.end_array();
  w.key("comm_starts").begin_object();
  for (const auto& [name, starts] : d.comm_starts) {
    w.key(name).begin_array();
    for (uint64_t t : starts) w.value_uint(t);
    w.end_array();
  }
  w.end_object();
  w.key("no_gpu_op").value(d.no_gpu_op);
  w.end_object();
}

RankDigest read_digest_json(std::string_view json, const std::string& source) {
  RankDigest d;
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    d.rank = j.at("rank").get<uint32_t>();
    d.file = j.at("file").get<std::string>();
    GpuAnalysis& a = d.analysis;
    const auto& b = j.at("breakdown");
    uint64_t* fields[] = {&a.ops, &a.span, &a.idle, &a.compute, &a.non_compute, &a.communication, &a.comm_overlapped};
    if (b.size() != std::size(fields)) throw Error("a breakdown of " + std::to_string(b.size()) + " values");
    for (size_t i = 0; i < b.size(); ++i) *fields[i] = b[i].get<uint64_t>();
    const auto& k = j.at("by_kinds");
    if (k.size() != std::size(a.by_kinds)) throw Error("by_kinds of " + std::to_string(k.size()) + " values");
    for (size_t i = 0; i < k.size(); ++i) a.by_kinds[i] = k[i].get<uint64_t>();
    for (const auto& n : j.at("names")) {
      const auto kind = n.at(1).get<uint32_t>();
      if (kind >= static_cast<uint32_t>(kGpuKinds)) throw Error("a kernel kind " + std::to_string(kind));
      a.names.push_back({n.at(0).get<std::string>(), static_cast<GpuKind>(kind), n.at(2).get<uint64_t>(),
                         n.at(3).get<uint64_t>(), n.at(4).get<uint64_t>(), n.at(5).get<uint64_t>(),
                         n.at(6).get<double>(), n.at(7).get<double>()});
    }
    a.unknown_kernels = j.at("unknown_kernels").get<std::vector<std::string>>();
    for (const auto& s : j.at("idle_by_stream"))
      a.idle_by_stream.push_back({s.at(0).get<int64_t>(), s.at(1).get<uint64_t>(), s.at(2).get<uint64_t>(),
                                  s.at(3).get<uint64_t>(), s.at(4).get<uint64_t>(), s.at(5).get<uint64_t>(),
                                  s.at(6).get<uint64_t>()});
    for (const auto& l : j.at("launches"))
      a.launches.push_back({l.at(0).get<uint32_t>(), l.at(1).get<uint64_t>(), l.at(2).get<uint64_t>(),
                            l.at(3).get<int64_t>(), l.at(4).get<uint64_t>()});
    for (const auto& l : j.at("launch_ops"))
      d.launch_ops.emplace_back(l.at(0).get<uint64_t>(), l.at(1).get<std::string>());
    for (const auto& e : j.at("stalls")) {
      const auto cls = e.at(3).get<uint32_t>();
      if (cls >= static_cast<uint32_t>(kStallClassCount)) throw Error("a stall class " + std::to_string(cls));
      d.stalls.push_back({e.at(0).get<uint64_t>(), e.at(1).get<uint64_t>(), e.at(2).get<uint64_t>(),
                          static_cast<StallClass>(cls), e.at(4).get<std::string>(), e.at(5).get<std::string>()});
    }
    for (const auto& c : j.at("collectives"))
      d.collectives.push_back({c.at(0).get<int32_t>(), c.at(1).get<uint32_t>(), c.at(2).get<uint64_t>(),
                               c.at(3).get<uint64_t>(), c.at(4).get<uint64_t>()});
    for (const auto& [name, starts] : j.at("comm_starts").items())
      d.comm_starts.emplace(name, starts.get<std::vector<uint64_t>>());
    d.no_gpu_op = j.at("no_gpu_op").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": not a rank's analysis digest (" + e.what() + ")");
  } catch (const Error& e) {
    throw Error(source + ": not a rank's analysis digest (" + e.what() + ")");
  }
  return d;
}

}  // namespace chakra
