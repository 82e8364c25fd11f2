#include "chakra/analysis/analysis_report.h"

#include "chakra/support/text.h"
#include "chakra/trace/schema.h"

namespace chakra {

namespace {

void write_rank(const AnalyzedRank& r, bool every_launch, JsonWriter& w) {
  const GpuAnalysis& a = *r.analysis;
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
    for (const GpuAnalysis::Launch& launch : a.launches) {
      w.begin_object();
      w.key("id").value_uint(r.trace->id(launch.node));
      w.key("name").value(r.trace->name(launch.node));
      w.key("cpu_duration").value_uint(launch.cpu_duration);
      w.key("gpu_duration").value_uint(launch.gpu_duration);
      w.key("since_call").value_int(launch.since_call);
      w.key("delay").value_uint(launch.delay);
      w.end_object();
    }
    w.end_array();
  }
  write_host_stalls_json(*r.trace, *r.stalls, w);
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

void write_stragglers(const Stragglers& s, std::span<const AnalyzedRank> ranks, JsonWriter& w) {
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

void write_analysis_json(std::span<const AnalyzedRank> ranks, std::span<const std::string> notes, JsonWriter& w,
                         bool every_launch) {
  std::vector<const Trace*> traces;
  for (const AnalyzedRank& r : ranks) traces.push_back(r.trace);
  w.begin_object();
  w.key("unit").value("us");
  w.key("ranks").begin_array();
  for (const AnalyzedRank& r : ranks) write_rank(r, every_launch, w);
  w.end_array();
  write_collectives(collective_buckets(traces), static_cast<uint32_t>(ranks.size()), w);
  write_stragglers(find_stragglers(traces), ranks, w);
  w.key("notes").begin_array();
  for (const std::string& n : notes) w.value(n);
  w.end_array();
  w.end_object();
}

std::string analysis_json(std::span<const AnalyzedRank> ranks, std::span<const std::string> notes, bool every_launch) {
  StringSink out;
  JsonWriter w(out, JsonStyle::python_indent(2, false));
  write_analysis_json(ranks, notes, w, every_launch);
  w.raw("\n");
  w.flush();
  return out.out;
}

std::string breakdown_csv(std::span<const AnalyzedRank> ranks) {
  std::string out =
      "rank,span_us,idle_us,compute_us,non_compute_us,communication_us,communication_overlapped_us,"
      "exposed_communication_us,overlap_percent,gpu_ops\n";
  for (const AnalyzedRank& r : ranks) {
    const GpuAnalysis& a = *r.analysis;
    for (uint64_t v : {uint64_t{r.rank}, a.span, a.idle, a.compute, a.non_compute, a.communication, a.comm_overlapped,
                       a.exposed_communication()})
      out += std::to_string(v) + ",";
    out += format_number(a.overlap_percent()) + "," + std::to_string(a.ops) + "\n";
  }
  return out;
}

}  // namespace chakra
