// GPU analyses against HolisticTraceAnalysis's outputs on the same Kineto traces
// (../shared/reference/hta, made by run_hta.py there).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "chakra/analysis/analysis_report.h"
#include "chakra/analysis/gpu_analysis.h"
#include "chakra/analysis/trace_diff.h"
#include "chakra/app/workspace.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/trace_link.h"
#include "test_support.h"

using testing_support::shared;
namespace fs = std::filesystem;

namespace {

// Rows of a CSV file with a header, fields by column name; quoted fields may hold commas.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  const std::string text = testing_support::read_raw(path);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row(1);
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        row.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        row.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.emplace_back();
    } else if (c == '\n') {
      rows.push_back(std::move(row));
      row.assign(1, "");
    } else if (c != '\r') {
      row.back() += c;
    }
  }
  std::vector<std::map<std::string, std::string>> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> fields;
    for (size_t k = 0; k < rows[0].size() && k < rows[r].size(); ++k) fields[rows[0][k]] = rows[r][k];
    out.push_back(std::move(fields));
  }
  return out;
}

double number(const std::map<std::string, std::string>& row, const std::string& key) {
  auto it = row.find(key);
  EXPECT_NE(it, row.end()) << key;
  return it == row.end() || it->second.empty() ? NAN : std::stod(it->second);
}

// The ranks' Kineto traces of a reference folder, analysed.
struct Case {
  std::string reference;            // under reference/hta
  std::vector<std::string> traces;  // by rank
};

std::vector<Case> cases() {
  Case dlrm{"dlrm_8rank_v100", {}};
  for (int r = 0; r < 8; ++r)
    for (const auto& e : fs::directory_iterator(shared("data/pairs/dlrm_8rank_v100/rank" + std::to_string(r))))
      if (e.path().string().find(".pt.trace.json") != std::string::npos) dlrm.traces.push_back(e.path().string());
  Case sampled{"trace_filter_sampled_2rank",
               {shared("data/kineto/hta__trace_filter__sampled_rank-0.json.gz"),
                shared("data/kineto/hta__trace_filter__sampled_rank-1.json.gz")}};
  return {dlrm, sampled};
}

// Equal within 1% or 2 µs, the tolerance the issue sets.
void expect_close(double ours, double hta, const std::string& what) {
  EXPECT_LE(std::abs(ours - hta), std::max(2.0, 0.01 * std::abs(hta))) << what << ": ours " << ours << ", HTA " << hta;
}

}  // namespace

TEST(GpuAnalysis, KernelsAreClassifiedByNameAndType) {
  using chakra::GpuKind;
  EXPECT_EQ(chakra::classify_gpu_op("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            GpuKind::Communication);
  EXPECT_EQ(chakra::classify_gpu_op("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            GpuKind::Communication);
  EXPECT_EQ(chakra::classify_gpu_op("Memcpy DtoH (Device -> Pinned)"), GpuKind::Memory);
  EXPECT_EQ(chakra::classify_gpu_op("Memset (Device)"), GpuKind::Memory);
  EXPECT_EQ(chakra::classify_gpu_op("ampere_sgemm_128x64_nn"), GpuKind::Computation);
  EXPECT_EQ(chakra::classify_gpu_op("anything", static_cast<int32_t>(chakra::NodeType::CommColl)),
            GpuKind::Communication);
  EXPECT_EQ(chakra::gpu_kinds_label(3), "COMPUTATION overlapping COMMUNICATION");
  EXPECT_EQ(chakra::gpu_kinds_label(7), "COMPUTATION overlapping COMMUNICATION overlapping MEMORY");
}

// Communication libraries other than NCCL: kernel names as CUPTI and roctracer write them (demangled),
// from the libraries' sources (the patterns' comment in core/src/trace/schema.cpp cites them).
TEST(GpuAnalysis, KernelsOfOtherCommunicationLibrariesCommunicate) {
  using chakra::GpuKind;
  for (const char* name :
       {// DeepEP: normal (intranode, internode), low-latency, 2026's legacy namespace, EPv2
        "void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int const*, int*, int, int, int, "
        "bool const*, int*, int*, int, int, void**, int**, int, int)",
        "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*)",
        "void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int, int, int**, int, int)",
        "void deep_ep::internode::combine<false, 2, 8, 4, 4>(int4*, float*, bool const*, void*)",
        "void deep_ep::internode_ll::dispatch<true, 3, 7168>(void*, float*, int*, int*, int*, int*, void*)",
        "void deep_ep::legacy::intranode::combine<__nv_bfloat16, 8, 768, 4096>(__nv_bfloat16*, float*)",
        "void deep_ep::elastic::hybrid_dispatch_impl<false, 24, 4, 2, 8>(void*, void*)",
        // MSCCL, MSCCL++
        "mscclKernel_Sum_float_LL(ncclDevComm*, mscclAlgo*, mscclWork)",
        "void mscclpp::executionKernel<float, false>(int, float*, float*, float*, unsigned long)",
        "void mscclpp::collective::allreduceAllPairs<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*)",
        // NVSHMEM's stream collectives and proxy entry points; PyTorch's NVSHMEM all-to-all
        "void alltoall_on_stream_kernel<float>(int, float*, float const*, unsigned long)",
        "void barrier_on_stream_kernel_threadgroup<(threadgroup_t)4>(int, int)",
        "nvshmemi_proxy_rma_entrypoint(void*, void*, rma_bytesdesc_t, int, nvshmemi_op_t)",
        "c10d::nvshmem_extension::allToAllV(void*, void*, long*, unsigned long, int)",
        // oneCCL's SYCL collectives
        "Allreduce_small_kernel<float, 4ul>", "AllgathervMediumKernel_LocalSync<sycl::_V1::detail::half_impl::half>",
        "ReduceScatterLargeKernel<float, 4ul>", "Reduce_scatter_small_kernel_scalar<float, 1, 32>"}) {
    EXPECT_EQ(chakra::classify_gpu_op(name), GpuKind::Communication) << name;
  }
  // DeepEP's kernels on local memory compute, and the table knows them (they are not listed).
  for (const char* name : {"void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, bool*, int)",
                           "void deep_ep::internode_ll::clean_low_latency_buffer<32>(int*, int, int*, int)",
                           "void deep_ep::elastic::combine_reduce_epilogue_impl<false, true, 132>(__nv_bfloat16*)"}) {
    EXPECT_EQ(chakra::classify_gpu_op(name), GpuKind::Computation) << name;
    EXPECT_TRUE(chakra::is_known_compute_kernel(name)) << name;
  }
  // "dispatch" and "combine" outside DeepEP are no communication.
  EXPECT_EQ(chakra::classify_gpu_op("void vllm::moe::dispatch_kernel<float>(float*)"), GpuKind::Computation);
}

TEST(GpuAnalysis, MatchesHtaOnSharedKinetoTraces) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.reference);
    const std::string ref = shared("reference/hta/" + c.reference);
    std::vector<chakra::GpuAnalysis> ranks;
    for (const std::string& path : c.traces) {
      ranks.push_back(chakra::analyze_gpu(chakra::kineto_activity(chakra::open_input(path))));
    }
    ASSERT_FALSE(ranks.empty());
    // Ranks in HTA's files are the traces' own (distributedInfo), which the paths above follow.
    for (const auto& row : read_csv(ref + "/temporal_breakdown.csv")) {
      const size_t r = static_cast<size_t>(number(row, "rank"));
      ASSERT_LT(r, ranks.size());
      const chakra::GpuAnalysis& a = ranks[r];
      const std::string at = "rank " + std::to_string(r);
      expect_close(static_cast<double>(a.span), number(row, "kernel_time(us)"), at + " kernel time");
      expect_close(static_cast<double>(a.idle), number(row, "idle_time(us)"), at + " idle");
      expect_close(static_cast<double>(a.compute), number(row, "compute_time(us)"), at + " compute");
      expect_close(static_cast<double>(a.non_compute), number(row, "non_compute_time(us)"), at + " non-compute");
    }
    for (const auto& row : read_csv(ref + "/comm_comp_overlap.csv")) {
      const size_t r = static_cast<size_t>(number(row, "rank"));
      EXPECT_NEAR(ranks[r].overlap_percent(), number(row, "comp_comm_overlap_pctg"),
                  0.01 + 0.01 * number(row, "comp_comm_overlap_pctg"))
          << "rank " << r;
    }
    // Time per set of kinds running, summed over ranks.
    std::map<std::string, uint64_t> by_label;
    for (const auto& a : ranks)
      for (unsigned set = 1; set < 8; ++set)
        if (a.by_kinds[set]) by_label[chakra::gpu_kinds_label(set)] += a.by_kinds[set];
    const auto types = read_csv(ref + "/gpu_kernel_breakdown_0.csv");
    EXPECT_EQ(types.size(), by_label.size());
    for (const auto& row : types)
      expect_close(static_cast<double>(by_label[row.at("kernel_type")]), number(row, "sum"), row.at("kernel_type"));
    // Per-name sums: HTA keeps each kind's top 20 names per rank and sums the rest as "others".
    std::map<std::tuple<std::string, std::string, size_t>, double> hta_sums;
    for (const auto& row : read_csv(ref + "/gpu_kernel_breakdown_1.csv"))
      hta_sums[{row.at("kernel_type"), row.at("name"), static_cast<size_t>(number(row, "rank"))}] =
          number(row, "sum (us)");
    size_t compared = 0;
    for (size_t r = 0; r < ranks.size(); ++r)
      for (chakra::GpuKind kind : {chakra::GpuKind::Computation, chakra::GpuKind::Communication}) {
        std::vector<const chakra::GpuAnalysis::Name*> names;
        for (const auto& n : ranks[r].names)
          if (n.kind == kind) names.push_back(&n);
        double others = 0;
        for (size_t i = 0; i < names.size(); ++i) {
          if (i >= 20) {
            others += static_cast<double>(names[i]->sum);
            continue;
          }
          auto it = hta_sums.find({chakra::gpu_kind_name(kind), names[i]->name, r});
          if (it == hta_sums.end()) {
            // Names tied at the cut: HTA's sort keeps another of them; the sum is the same.
            EXPECT_TRUE(names.size() > 20 && names[i]->sum == names[19]->sum) << names[i]->name << " on rank " << r;
            continue;
          }
          EXPECT_EQ(static_cast<double>(names[i]->sum), it->second) << names[i]->name << " on rank " << r;
          ++compared;
        }
        if (names.size() > 20) {
          EXPECT_EQ(others, (hta_sums[{chakra::gpu_kind_name(kind), "others", r}])) << "others on rank " << r;
        }
      }
    EXPECT_GT(compared, 20u);
    // Launch statistics on rank 0: one per op, the same call and kernel durations as HTA's. HTA's
    // "launch_delay" is the kernel's start less the call's start plus the call's duration (the
    // call's end would subtract it): e.g. cudaMemcpyAsync at 427992 for 11 µs, its copy at
    // 428006, HTA 25 µs, here 3 µs. So HTA's figure is compared as such.
    std::vector<std::tuple<double, double, double>> ours, theirs;
    for (const auto& l : ranks[0].launches) {
      ours.emplace_back(static_cast<double>(l.cpu_duration), static_cast<double>(l.gpu_duration),
                        static_cast<double>(std::max<int64_t>(0, l.since_call + static_cast<int64_t>(l.cpu_duration))));
      EXPECT_EQ(l.delay,
                static_cast<uint64_t>(std::max<int64_t>(0, l.since_call - static_cast<int64_t>(l.cpu_duration))));
    }
    for (const auto& row : read_csv(ref + "/cuda_kernel_launch_stats_0.csv"))
      theirs.emplace_back(number(row, "cpu_duration"), number(row, "gpu_duration"), number(row, "launch_delay"));
    std::sort(ours.begin(), ours.end());
    std::sort(theirs.begin(), theirs.end());
    EXPECT_GT(theirs.size(), 200u);
    EXPECT_EQ(ours, theirs);
    // Idle time per stream on rank 0 (HTA's default rank), by category.
    std::map<std::pair<int64_t, std::string>, double> idle;
    for (const auto& s : ranks[0].idle_by_stream) {
      idle[{s.stream, "host_wait"}] = static_cast<double>(s.host_wait);
      idle[{s.stream, "kernel_wait"}] = static_cast<double>(s.kernel_wait);
      idle[{s.stream, "other"}] = static_cast<double>(s.other);
    }
    const auto idle_rows = read_csv(ref + "/idle_time_breakdown_0.csv");
    EXPECT_FALSE(idle_rows.empty());
    for (const auto& row : idle_rows) {
      const std::pair<int64_t, std::string> key{static_cast<int64_t>(number(row, "stream")), row.at("idle_category")};
      ASSERT_TRUE(idle.count(key)) << key.first << " " << key.second;
      expect_close(idle[key], number(row, "idle_time"), "stream " + std::to_string(key.first) + " " + key.second);
    }
  }
}

namespace {

// A rank's trace of GPU kernels: (name, start, duration) on stream 1.
chakra::Trace kernels(std::initializer_list<std::tuple<const char*, uint64_t, uint64_t>> ops) {
  chakra::Trace t;
  const chakra::StrId cpu = t.intern("is_cpu_op"), stream = t.intern("stream");
  chakra::NodeDraft d;
  uint64_t id = 0;
  for (const auto& [name, start, dur] : ops) {
    d.clear();
    d.id = ++id;
    d.name = t.intern(name);
    d.start_time_micros = start;
    d.duration_micros = dur;
    d.attrs.add_bool(cpu, false);
    d.attrs.add_int64(stream, 1);
    t.append(d);
  }
  return t;
}

}  // namespace

// Stragglers on crafted ranks: the k-th kernel of a name is one collective; the last to arrive
// makes the others wait the skew.
TEST(GpuAnalysis, StragglersFromArrivalsOfEachCollective) {
  const chakra::Trace r0 =
      kernels({{"ncclKernel_AllReduce", 100, 50}, {"ncclKernel_AllReduce", 300, 20}, {"gemm", 10, 5}});
  const chakra::Trace r1 =
      kernels({{"ncclKernel_AllReduce", 130, 20}, {"ncclKernel_AllReduce", 290, 30}, {"ncclKernel_SendRecv", 5, 1}});
  const chakra::Trace r2 = kernels({{"ncclKernel_AllReduce", 110, 40}, {"ncclKernel_AllReduce", 320, 1}});
  const chakra::Trace* ranks[] = {&r0, &r1, &r2};
  const chakra::Stragglers s = chakra::find_stragglers(ranks);
  ASSERT_EQ(s.instances.size(), 2u);
  EXPECT_EQ(s.instances[0].skew, 30u);  // 320 − 290, instance 1 (ties keep name/index order)
  EXPECT_EQ(s.instances[0].index, 0u);  // instance 0: 130 − 100 = 30 as well
  EXPECT_EQ(s.instances[0].last, 1u);
  EXPECT_EQ(s.instances[1].last, 2u);
  EXPECT_EQ(s.unmatched, std::vector<std::string>{"ncclKernel_SendRecv"});  // rank 1 only
  std::map<uint32_t, chakra::Stragglers::Rank> by_rank;
  for (const auto& r : s.ranks) by_rank[r.rank] = r;
  EXPECT_EQ(by_rank[1].last, 1u);
  EXPECT_EQ(by_rank[1].caused, 30u);
  EXPECT_EQ(by_rank[2].caused, 30u);
  EXPECT_EQ(by_rank[0].caused, 0u);
  EXPECT_EQ(by_rank[0].waited, 30u + 20u);  // (130 − 100) + (320 − 300)
  EXPECT_EQ(by_rank[1].waited, 0u + 30u);
  EXPECT_EQ(by_rank[2].waited, 20u + 0u);
}

// On the DLRM ranks, the two that waited least for the others (they arrive last) are HTA's
// potential stragglers.
TEST(GpuAnalysis, StragglersAgreeWithHtaOnDlrm) {
  const Case dlrm = cases()[0];
  std::vector<chakra::Trace> traces;
  for (const std::string& path : dlrm.traces) traces.push_back(chakra::kineto_activity(chakra::open_input(path)));
  std::vector<const chakra::Trace*> ranks;
  for (const auto& t : traces) ranks.push_back(&t);
  ASSERT_EQ(ranks.size(), 8u);
  chakra::Stragglers s = chakra::find_stragglers(ranks);
  EXPECT_TRUE(s.unmatched.empty());
  EXPECT_GT(s.instances.size(), 5u);
  std::sort(s.ranks.begin(), s.ranks.end(), [](const auto& a, const auto& b) { return a.waited < b.waited; });
  std::set<uint32_t> least_waiting = {s.ranks[0].rank, s.ranks[1].rank};
  const std::string hta = testing_support::read_raw(shared("reference/hta/dlrm_8rank_v100/potential_stragglers.txt"));
  std::set<uint32_t> theirs;
  for (char c : hta)
    if (c >= '0' && c <= '9') theirs.insert(static_cast<uint32_t>(c - '0'));
  EXPECT_EQ(least_waiting, theirs) << hta;
}

// A rank's digest holds all the report needs: the report from digests of the traces equals the
// one from the traces themselves (the stragglers across ranks included), and a digest written
// as JSON reads back into the same report, doubles and all; anything else is refused by name.
TEST(GpuAnalysis, DigestsGiveTheReportOfTheTracesAndReadBackExactly) {
  const Case dlrm = cases()[0];
  std::vector<chakra::Trace> traces;
  for (const std::string& path : dlrm.traces) traces.push_back(chakra::kineto_activity(chakra::open_input(path)));
  std::vector<chakra::RankDigest> digests, read_back;
  std::vector<const chakra::Trace*> ranks;
  for (uint32_t r = 0; r < traces.size(); ++r) {
    ranks.push_back(&traces[r]);
    digests.push_back(chakra::digest_rank(traces[r], r, dlrm.traces[r], true));
    chakra::StringSink out;
    chakra::JsonWriter w(out);
    chakra::write_digest_json(digests.back(), w);
    w.flush();
    read_back.push_back(chakra::read_digest_json(out.out, "digest " + std::to_string(r)));
  }
  const chakra::Stragglers direct = chakra::find_stragglers(ranks);
  std::vector<const chakra::CommStarts*> starts;
  for (const auto& d : digests) starts.push_back(&d.comm_starts);
  const chakra::Stragglers via = chakra::find_stragglers(starts);
  ASSERT_EQ(via.instances.size(), direct.instances.size());
  ASSERT_GT(via.instances.size(), 5u);
  for (size_t i = 0; i < via.instances.size(); ++i) {
    EXPECT_EQ(via.instances[i].arrival, direct.instances[i].arrival);
    EXPECT_EQ(via.instances[i].last, direct.instances[i].last);
  }
  const std::string report = chakra::analysis_json(digests, {}, true);
  EXPECT_EQ(chakra::analysis_json(read_back, {}, true), report);
  EXPECT_NE(report.find("\"launch_list\""), std::string::npos);
  EXPECT_EQ(chakra::breakdown_csv(read_back), chakra::breakdown_csv(digests));
  // The launch list needs the digests made with it.
  digests[0].launch_ops.clear();
  EXPECT_THROW(chakra::analysis_json(digests, {}, true), chakra::Error);
  for (const char* bad : {"{}", "[1,2]", "{\"rank\": -1}", "not json"}) {
    try {
      chakra::read_digest_json(bad, "part.json");
      ADD_FAILURE() << bad;
    } catch (const chakra::Error& e) {
      EXPECT_NE(std::string(e.what()).find("part.json: not a rank's analysis digest"), std::string::npos) << e.what();
    }
  }
}

// Collectives by type and power-of-two size: counts, bytes, time and nccl-tests' bandwidths.
TEST(GpuAnalysis, CollectiveBucketsAndBandwidths) {
  chakra::Trace t;
  const chakra::StrId type = t.intern("comm_type"), size = t.intern("comm_size");
  chakra::NodeDraft d;
  uint64_t id = 0;
  auto add = [&](int64_t comm_type, uint64_t bytes, uint64_t micros) {
    d.clear();
    d.id = ++id;
    d.name = t.intern("nccl:coll");
    d.type = static_cast<int32_t>(chakra::NodeType::CommColl);
    d.duration_micros = micros;
    d.attrs.add_int64(type, comm_type);
    if (bytes) d.attrs.add_uint64(size, bytes);
    t.append(d);
  };
  const auto all_reduce = static_cast<int64_t>(chakra::CommType::AllReduce),
             all_gather = static_cast<int64_t>(chakra::CommType::AllGather);
  add(all_reduce, 1 << 20, 100);
  add(all_reduce, (1 << 20) + 5, 100);  // the same bucket: [1 MiB, 2 MiB)
  add(all_reduce, 1 << 21, 50);         // the next
  add(all_gather, 3000, 10);            // [2048, 4096)
  add(all_gather, 0, 10);               // no size: left out
  add(all_gather, 3000, 0);             // no duration: left out
  const auto b = chakra::collective_buckets(t);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].comm_type, all_reduce);
  EXPECT_EQ(b[0].size_log2, 20u);
  EXPECT_EQ(b[0].count, 2u);
  EXPECT_EQ(b[0].bytes, 2u * (1 << 20) + 5);
  EXPECT_EQ(b[0].micros, 200u);
  EXPECT_DOUBLE_EQ(b[0].algorithm_gbps(), (2.0 * (1 << 20) + 5) / 200 / 1e3);
  EXPECT_DOUBLE_EQ(b[0].bus_gbps(8), b[0].algorithm_gbps() * 2 * 7 / 8);
  EXPECT_EQ(b[1].size_log2, 21u);
  EXPECT_EQ(b[2].comm_type, all_gather);
  EXPECT_EQ(b[2].size_log2, 11u);
  EXPECT_DOUBLE_EQ(b[2].bus_gbps(4), b[2].algorithm_gbps() * 3 / 4);
  EXPECT_DOUBLE_EQ(b[2].bus_gbps(1), b[2].algorithm_gbps());
}

// The launch summary: HTA's cutoffs and the delays' order statistics.
TEST(GpuAnalysis, LaunchSummaryCountsShortKernelsAndLongDelays) {
  chakra::GpuAnalysis a;
  // (call, op, delay): a short op after a short call, a long call, a delay over 100.
  a.launches = {{0, 10, 2, 5, 0}, {0, 60, 2, 70, 10}, {0, 10, 20, 150, 140}, {0, 4, 3, 7, 3}};
  const chakra::LaunchSummary s = chakra::summarize_launches(a);
  EXPECT_EQ(s.launches, 4u);
  EXPECT_EQ(s.short_kernels, 2u);  // 2 < 10 and 3 < 4; the 60-unit call is over the cutoff
  EXPECT_EQ(s.delayed, 1u);
  EXPECT_EQ(s.median, 10u);  // delays 0, 3, 10, 140
  EXPECT_EQ(s.p90, 140u);
  EXPECT_EQ(s.max, 140u);
  EXPECT_EQ(chakra::summarize_launches(chakra::GpuAnalysis{}).launches, 0u);
}

// Two sources of one rank compared by their GPU analyses (the page's comparison): against itself
// nothing differs; with one kernel twice as long, exactly that name, by its own time, in the
// common unit the scales give.
TEST(GpuAnalysis, DiffOfAnalysesFindsTheOneChangedKernel) {
  const chakra::Trace a = kernels({{"gemm", 10, 5}, {"gemm", 20, 5}, {"ncclKernel_AllReduce", 30, 8}});
  const chakra::Trace b = kernels({{"gemm", 10, 5}, {"gemm", 20, 5}, {"ncclKernel_AllReduce", 30, 16}});
  const chakra::GpuAnalysis ga = chakra::analyze_gpu(a), gb = chakra::analyze_gpu(b);
  EXPECT_EQ(chakra::diff_gpu_analyses(ga, 1000, ga, 1000).changed(), 0u);
  const chakra::TraceDiff d = chakra::diff_gpu_analyses(ga, 1000, gb, 1000);
  ASSERT_EQ(d.changed(), 1u);
  EXPECT_EQ(d.names[0].name, "ncclKernel_AllReduce");
  EXPECT_EQ(d.names[0].delta(), 8000);
  EXPECT_EQ(d.step_a, 28000u);  // GPU span 10..38 µs, in ns
  EXPECT_EQ(d.step_b, 36000u);
  EXPECT_EQ(d.gpu_b.compute, 10000u);
  // Exposed communication: what no computation kernel covers.
  EXPECT_EQ(ga.exposed_communication(), 8u);
  EXPECT_EQ(chakra::analyze_gpu(kernels({{"ncclKernel_AllReduce", 10, 10}, {"gemm", 15, 3}})).exposed_communication(),
            7u);
}

// Kernel classification: every computation kernel of the shared Kineto traces is one the table
// knows, except a bare "Kernel" (Kineto's own documentation traces), which is listed; a kernel of a
// library no pattern knows is listed too, never silently compute.
TEST(GpuAnalysis, UnknownKernelsAreListed) {
  std::set<std::string> unknown;
  size_t traces = 0;
  for (const std::string& path : testing_support::find_files(shared("data"), {".json", ".json.gz"})) {
    const std::string bytes = testing_support::read_decompressed(path);
    const auto head = std::span(reinterpret_cast<const uint8_t*>(bytes.data()), std::min<size_t>(bytes.size(), 65536));
    if (chakra::detect_input_kind(path, head) != chakra::InputKind::KinetoTrace) continue;
    const chakra::Trace t = chakra::kineto_activity(chakra::open_input(path));
    ++traces;
    for (const std::string& n : chakra::analyze_gpu(t).unknown_kernels) unknown.insert(n);
  }
  EXPECT_GT(traces, 20u);
  EXPECT_EQ(unknown, std::set<std::string>{"Kernel"});
  // Listing them found PyTorch's symmetric-memory all-reduce (in the shared TraceLens B200 trace), which
  // HTA and an unlisted default would both count as compute.
  EXPECT_EQ(chakra::classify_gpu_op(
                "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)"),
            chakra::GpuKind::Communication);
  const chakra::Trace odd = kernels({{"myfabric_ring_exchange", 10, 5}, {"volta_sgemm_128x64_nn", 20, 5}});
  EXPECT_EQ(chakra::analyze_gpu(odd).unknown_kernels, std::vector<std::string>{"myfabric_ring_exchange"});
}

// A Kineto trace without GPU ops says what it records instead: host-side events only (a profile
// without GPU activities), or another device's events (MTIA), never a bare "no GPU op".
TEST(GpuAnalysis, KinetoTraceWithoutGpuOpsSaysWhatItRecords) {
  chakra::KinetoCategories categories;
  const std::string cpu_only_path = shared("data/kineto/hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  const chakra::Trace cpu_only = chakra::kineto_activity(chakra::open_input(cpu_only_path), &categories);
  EXPECT_EQ(chakra::analyze_gpu(cpu_only).ops, 0u);
  EXPECT_EQ(categories, (chakra::KinetoCategories{{"user_annotation", 11}, {"cpu_op", 4}, {"Trace", 1}}));
  EXPECT_EQ(chakra::kineto_without_gpu_ops(categories),
            "it records only host-side events (user_annotation 11, cpu_op 4, Trace 1): no kernel, gpu_memcpy or "
            "gpu_memset event; profile with GPU activities on (torch.profiler.ProfilerActivity.CUDA)");

  // MTIA's activity types (Kineto's mtia_ccp_events, mtia_runtime) next to host ops.
  const std::string mtia = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "mtia_runtime", "name": "mtiaLaunchKernel", "pid": 1, "tid": 1, "ts": 11, "dur": 1},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "mm_kernel", "pid": 2, "tid": 7, "ts": 12, "dur": 3},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "add_kernel", "pid": 2, "tid": 7, "ts": 16, "dur": 1}]})";
  const chakra::Trace t = chakra::kineto_activity(
      chakra::memory_input({reinterpret_cast<const uint8_t*>(mtia.data()), mtia.size()}, "mtia.json"), &categories);
  EXPECT_EQ(chakra::analyze_gpu(t).ops, 0u);
  EXPECT_EQ(chakra::kineto_without_gpu_ops(categories),
            "an MTIA trace (mtia_* events), not a CUDA or ROCm one: its events are mtia_ccp_events 2, cpu_op 1, "
            "mtia_runtime 1; the analyses read kernel, gpu_memcpy and gpu_memset events");

  // A ROCm trace has kernels: nothing to explain.
  const std::string amd_path = shared("data/kineto/hta__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz");
  const chakra::Trace amd = chakra::kineto_activity(chakra::open_input(amd_path), &categories);
  EXPECT_GT(chakra::analyze_gpu(amd).ops, 0u);
  EXPECT_EQ(chakra::kineto_without_gpu_ops(categories), std::nullopt);
}
