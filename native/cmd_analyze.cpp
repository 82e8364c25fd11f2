// chakra analyze and chakra diff: HTA's analyses of measured GPU work and its trace diff
// (core/docs/analyses.md), per rank.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "chakra/analysis/analysis_report.h"
#include "chakra/analysis/critical_path.h"
#include "chakra/analysis/gpu_analysis.h"
#include "chakra/analysis/host_stalls.h"
#include "chakra/analysis/trace_diff.h"
#include "chakra/app/workspace.h"
#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/format/json_writer.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

struct Rank {
  uint32_t rank = 0;
  std::string path;
  chakra::GpuAnalysis analysis;
  chakra::Trace trace;  // kept for the analyses across ranks (stragglers)
  std::vector<chakra::HostStallEntry> stalls;
};

// A trace the analyses read: a Kineto trace as recorded, or a Chakra .et (its GPU ops need start
// times). Other kinds give nullopt with what they are in `kind`.
struct Loaded {
  uint32_t rank = 0;
  chakra::Trace trace;
  std::optional<chakra::KinetoCategories> categories;  // a Kineto trace's events per category
};
std::optional<Loaded> load_trace(const std::string& path, size_t position, chakra::InputKind& kind) {
  const std::string head = cli::read_head(path);
  kind = chakra::detect_input_kind(path, std::span(reinterpret_cast<const uint8_t*>(head.data()), head.size()));
  Loaded l;
  std::optional<uint32_t> rank;
  if (kind == chakra::InputKind::KinetoTrace) {
    rank = chakra::kineto_file_rank(head, path);
    l.trace = chakra::kineto_activity(chakra::open_input(path), &l.categories.emplace());
  } else if (kind == chakra::InputKind::ChakraEt) {
    rank = chakra::rank_from_file_name(path);
    l.trace = chakra::read_et(path);
  } else if (kind == chakra::InputKind::ChakraJson) {
    rank = chakra::rank_from_file_name(path);
    l.trace = chakra::read_json_trace_file(path);
  } else {
    return std::nullopt;
  }
  l.rank = rank.value_or(static_cast<uint32_t>(position));
  return l;
}

// Every trace under `paths`, by rank. Host ETs and configs in a folder are skipped with a note;
// named on the command line they are errors. Two traces of one rank are an error.
std::vector<std::pair<std::string, Loaded>> load_all(const std::vector<std::string>& paths,
                                                     std::vector<std::string>& notes) {
  std::vector<std::pair<std::string, Loaded>> out;
  std::map<uint32_t, std::string> owner;
  const std::vector<std::string> files = cli::files_under(paths);
  const bool from_folder = files.size() != paths.size() || (paths.size() == 1 && fs::is_directory(paths[0]));
  for (const std::string& path : files) {
    chakra::InputKind kind;
    std::optional<Loaded> l = load_trace(path, out.size(), kind);
    if (!l) {
      const std::string what = chakra::input_kind_name(kind);
      if (!from_folder)
        throw chakra::Error(
            path + ": " + chakra::with_article(what) +
            ", not a trace this command reads (Kineto traces, Chakra .et and JSON traces" +
            (kind == chakra::InputKind::PytorchHostEt ? "; a host ET's GPU work is in its Kineto trace)" : ")"));
      notes.push_back(path + ": skipped (" + chakra::with_article(what) + ")");
      continue;
    }
    if (auto [it, fresh] = owner.emplace(l->rank, path); !fresh)
      throw chakra::Error("rank " + std::to_string(l->rank) + " twice: " + it->second + " and " + path);
    out.emplace_back(path, std::move(*l));
  }
  if (out.empty()) throw chakra::Error("no trace among the " + std::to_string(files.size()) + " files given");
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.rank < b.second.rank; });
  return out;
}

// Why a trace has no GPU op to analyse: for a Kineto trace without GPU events, what it records
// instead (an MTIA trace, host-side events only...).
std::string why_no_gpu_op(const Loaded& l) {
  if (l.categories)
    if (std::optional<std::string> why = chakra::kineto_without_gpu_ops(*l.categories)) return "no GPU op: " + *why;
  return "no GPU op with a measured start time (is_cpu_op false and a \"stream\"); analyze reads Kineto traces, "
         "and .et traces converted with their times (chakra convert pytorch without --reference-bytes)";
}

std::vector<Rank> load(const std::vector<std::string>& paths, std::vector<std::string>& notes) {
  std::vector<Rank> ranks;
  std::vector<std::string> without;  // "FILE: why", per trace without GPU ops
  for (auto& [path, l] : load_all(paths, notes)) {
    Rank r{l.rank, path, chakra::analyze_gpu(l.trace), std::move(l.trace), {}};
    r.stalls = chakra::host_stalls_of(r.trace);
    if (r.analysis.ops == 0) without.push_back(path + ": " + why_no_gpu_op(l));
    ranks.push_back(std::move(r));
  }
  if (without.size() == 1 && ranks.size() == 1) throw chakra::Error(without[0]);
  if (without.size() == ranks.size()) {
    std::string each;
    for (size_t i = 0; i < without.size() && i < 3; ++i) each += "\n  " + without[i];
    if (without.size() > 3) each += "\n  and " + std::to_string(without.size() - 3) + " more";
    throw chakra::Error("none of the " + std::to_string(ranks.size()) + " traces has a GPU op:" + each);
  }
  notes.insert(notes.end(), without.begin(), without.end());
  return ranks;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// Templated kernel names run to hundreds of characters: the text shows their start, --json all.
std::string shortened(const std::string& name, size_t width) {
  return name.size() > width ? name.substr(0, width - 3) + "..." : name;
}

std::string us(uint64_t v) { return chakra::format_number(static_cast<double>(v)); }

// Collectives of every rank, by type and size; bus bandwidths with the rank count as n.
std::vector<chakra::CollectiveBucket> collectives_of(const std::vector<Rank>& ranks) {
  std::vector<const chakra::Trace*> traces;
  for (const Rank& r : ranks) traces.push_back(&r.trace);
  return chakra::collective_buckets(traces);
}

chakra::Stragglers stragglers_of(const std::vector<Rank>& ranks) {
  std::vector<const chakra::Trace*> traces;
  for (const Rank& r : ranks) traces.push_back(&r.trace);
  return chakra::find_stragglers(traces);
}

void print_stragglers(const std::vector<Rank>& ranks, const chakra::Stragglers& s, size_t top) {
  if (ranks.size() < 2 || s.instances.empty()) return;
  std::cout
      << "\nstragglers: " << s.instances.size() << " collective instances (the k-th kernel of a name on every rank);"
      << " arrival = kernel start, as recorded\n  rank  arrived last   made others wait (Σ skew)   waited for others\n";
  for (const auto& r : s.ranks)
    std::cout << pad(std::to_string(ranks[r.rank].rank), 6) << pad(std::to_string(r.last), 14)
              << pad(us(r.caused) + " µs", 28) << pad(us(r.waited) + " µs", 20) << "\n";
  std::cout << "  largest skews:\n";
  for (size_t i = 0; i < s.instances.size() && i < top; ++i) {
    const auto& in = s.instances[i];
    std::cout << "    " << us(in.skew) << " µs, last rank " << ranks[in.last].rank << ": #" << in.index << " of "
              << shortened(in.name, 80) << "\n";
  }
  if (!s.unmatched.empty())
    std::cout << "  " << s.unmatched.size() << " kernel names left out: their count differs between ranks\n";
}

void print_text(const std::vector<Rank>& ranks, size_t top) {
  std::cout
      << "temporal breakdown (µs; over each rank's GPU span, as HTA)\n"
      << "  rank        span        idle            compute          non-compute      overlap of comm  exposed comm\n";
  for (const Rank& r : ranks) {
    const chakra::GpuAnalysis& a = r.analysis;
    std::cout << pad(std::to_string(r.rank), 6) << pad(us(a.span), 12) << pad(us(a.idle), 12)
              << pad(chakra::format_share(a.idle, a.span, 2), 8) << pad(us(a.compute), 10)
              << pad(chakra::format_share(a.compute, a.span, 2), 8) << pad(us(a.non_compute), 10)
              << pad(chakra::format_share(a.non_compute, a.span, 2), 8)
              << pad(chakra::format_share(a.comm_overlapped, a.communication, 2), 12)
              << pad(us(a.exposed_communication()), 14) << "\n";
  }
  std::vector<const chakra::Trace*> traces;
  std::vector<std::vector<chakra::HostStallEntry>> stalls;
  std::vector<uint32_t> ids;
  for (const Rank& r : ranks) traces.push_back(&r.trace), stalls.push_back(r.stalls), ids.push_back(r.rank);
  std::cout << chakra::host_stalls_text(traces, stalls, ids, top);
  uint64_t by_kinds[1 << chakra::kGpuKinds] = {}, all = 0;
  for (const Rank& r : ranks)
    for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set)
      by_kinds[set] += r.analysis.by_kinds[set], all += r.analysis.by_kinds[set];
  std::cout << "\ntime by kernel kind, all ranks (µs)\n";
  std::vector<unsigned> sets;
  for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set)
    if (by_kinds[set]) sets.push_back(set);
  std::sort(sets.begin(), sets.end(), [&](unsigned a, unsigned b) { return by_kinds[a] > by_kinds[b]; });
  for (unsigned set : sets)
    std::cout << "  " << chakra::gpu_kinds_label(set) << ": " << us(by_kinds[set]) << " ("
              << chakra::format_share(by_kinds[set], all, 2) << ")\n";
  for (const Rank& r : ranks) {
    std::cout << "\nrank " << r.rank << ": top " << std::min(top, r.analysis.names.size()) << " of "
              << r.analysis.names.size() << " GPU op names by time (µs)  [" << r.path << "]\n"
              << "        sum   count     mean      min      max   stddev  kind           name\n";
    for (size_t i = 0; i < r.analysis.names.size() && i < top; ++i) {
      const auto& n = r.analysis.names[i];
      char line[160];
      std::snprintf(line, sizeof line, "  %9s %7llu %8.1f %8s %8s %8.1f  %-14s ", us(n.sum).c_str(),
                    static_cast<unsigned long long>(n.count), n.mean, us(n.min).c_str(), us(n.max).c_str(), n.stddev,
                    chakra::gpu_kind_name(n.kind));
      std::cout << line << shortened(n.name, 120) << "\n";
    }
    const chakra::LaunchSummary l = chakra::summarize_launches(r.analysis);
    if (l.launches)
      std::cout << "  launches: " << l.launches << ", delay from the call's end median " << l.median << " µs, p90 "
                << l.p90 << ", max " << l.max << "; " << l.short_kernels
                << " kernels shorter than their launch call (≤ 50 µs), " << l.delayed << " delayed over 100 µs\n";
    if (!r.analysis.unknown_kernels.empty()) {
      std::cout << "  " << r.analysis.unknown_kernels.size() << " kernel names no pattern knows, counted as computation"
                << " (core/docs/analyses.md):";
      for (size_t i = 0; i < r.analysis.unknown_kernels.size() && i < top; ++i)
        std::cout << (i ? ", " : " ") << shortened(r.analysis.unknown_kernels[i], 60);
      std::cout << (r.analysis.unknown_kernels.size() > top ? ", ..." : "") << "\n";
    }
    std::cout << "  idle per stream (µs): host wait / kernel wait (gaps < " << chakra::GpuAnalysis::kKernelWaitMicros
              << " µs) / other\n";
    for (const auto& s : r.analysis.idle_by_stream)
      std::cout << "    stream " << s.stream << ": " << us(s.host_wait) << " / " << us(s.kernel_wait) << " / "
                << us(s.other) << "\n";
  }
}

std::vector<chakra::AnalyzedRank> analyzed(const std::vector<Rank>& ranks) {
  std::vector<chakra::AnalyzedRank> out;
  for (const Rank& r : ranks) out.push_back({r.rank, r.path, &r.trace, &r.analysis, &r.stalls});
  return out;
}

// The critical path across the ranks, on their measured times.
struct PathOfRanks {
  std::vector<chakra::RankTimes> times;
  std::vector<uint32_t> ids;
  chakra::CrossRankPath path;
};
PathOfRanks path_of(const std::vector<Rank>& ranks) {
  PathOfRanks p;
  for (const Rank& r : ranks) p.times.push_back(chakra::measured_times(r.trace)), p.ids.push_back(r.rank);
  p.path = chakra::critical_path_across_ranks(p.times);
  return p;
}

int run(const cli::Args& args) {
  std::vector<std::string> notes;
  const std::vector<Rank> ranks = load(args.values("PATH"), notes);
  std::optional<cli::WhatIf> what_if;
  if (args.has("--what-if")) what_if = cli::parse_what_if(args, args.get("--what-if"));
  if (args.has("--critical-path") || what_if) {
    const PathOfRanks p = path_of(ranks);
    if (args.has("--csv")) {  // the steps
      std::cout << "rank,node_id,name,kind,via,start_us,duration_us,share\n";
      static const char* via[] = {"end", "dependency", "lane", "peer", "sync"};
      for (const auto& s : p.path.steps) {
        const bool node = s.node != UINT32_MAX;
        std::cout << p.ids[s.rank] << "," << (node ? std::to_string(p.times[s.rank].trace->id(s.node)) : "") << ","
                  << (node ? chakra::csv_field(p.times[s.rank].trace->name(s.node)) : "") << ","
                  << chakra::path_kind_name(s.kind) << "," << via[static_cast<int>(s.via)] << "," << s.start << ","
                  << s.duration << ","
                  << chakra::format_number(
                         p.path.step() ? static_cast<double>(s.duration) / static_cast<double>(p.path.step()) : 0.0)
                  << "\n";
      }
      return cli::kOk;
    }
    if (args.has("--json")) {
      chakra::StringSink out;
      chakra::JsonWriter w(out, chakra::JsonStyle::python_indent(2, false));
      w.begin_object().key("unit").value("us").key("critical_path").begin_object();
      chakra::write_critical_path_json(p.path, p.times, p.ids, w);
      w.end_object();
      if (what_if) {
        w.key("what_if")
            .begin_object()
            .key("name_contains")
            .value(what_if->name_part)
            .key("speedup")
            .value_double(what_if->speedup);
        w.key("step").value_uint(p.path.step());
        w.key("estimated_step")
            .value_uint(chakra::path_step_if_faster(p.path, p.times, what_if->name_part, what_if->speedup));
        w.end_object();
      }
      w.end_object().raw("\n");
      w.flush();
      std::cout << out.out;
    } else {
      const size_t top = args.has("--top") ? args.get_uint("--top", 1000000) : 20;
      std::cout << chakra::critical_path_text(p.path, p.times, p.ids, top, "µs");
      if (what_if) {
        const uint64_t step = chakra::path_step_if_faster(p.path, p.times, what_if->name_part, what_if->speedup);
        std::cout << "\nwhat if ops named *" << what_if->name_part << "* ran "
                  << chakra::format_number(what_if->speedup) << "x faster: step " << us(p.path.step()) << " -> "
                  << us(step) << " µs (" << chakra::format_share(p.path.step() - step, p.path.step(), 2)
                  << " shorter), along this path only: other paths may"
                  << " become critical, so at most that; simulate the trace for the exact answer (chakra simulate "
                     "--what-if)\n";
      }
    }
    return cli::kOk;
  }
  if (args.has("--csv")) {  // the temporal breakdown per rank (HTA's temporal_breakdown table)
    std::cout << chakra::breakdown_csv(analyzed(ranks));
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
  } else if (args.has("--json")) {
    std::cout << chakra::analysis_json(analyzed(ranks), notes, args.has("--launches"));
  } else {
    const size_t top = args.has("--top") ? args.get_uint("--top", 1000000) : 10;
    print_text(ranks, top);
    print_stragglers(ranks, stragglers_of(ranks), std::min<size_t>(top, 5));
    const auto collectives = collectives_of(ranks);
    if (!collectives.empty()) {
      std::cout << "\ncollectives, all ranks (sizes from comm_size; bandwidths as nccl-tests, n = " << ranks.size()
                << ")\n"
                << "  type             size from    count        bytes     time      algbw       busbw\n";
      for (const auto& b : collectives) {
        char line[160];
        std::snprintf(line, sizeof line, "  %-16s %9s %8llu %12s %8s %7.2f GB/s %7.2f GB/s\n",
                      std::string(chakra::comm_type_name(b.comm_type)).c_str(),
                      chakra::format_bytes(uint64_t{1} << b.size_log2).c_str(),
                      static_cast<unsigned long long>(b.count), chakra::format_bytes(b.bytes).c_str(),
                      (us(b.micros) + " µs").c_str(), b.algorithm_gbps(),
                      b.bus_gbps(static_cast<uint32_t>(ranks.size())));
        std::cout << line;
      }
    }
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
  }
  return cli::kOk;
}

// ---- chakra diff ----

std::string signed_us(int64_t v) { return (v > 0 ? "+" : "") + chakra::format_number(static_cast<double>(v)); }

void print_diff(uint32_t rank, const std::string& a, const std::string& b, const chakra::TraceDiff& d, size_t top) {
  std::cout << "rank " << rank << ": A " << a << "\n        B " << b << "\n";
  auto line = [](const char* what, uint64_t x, uint64_t y) {
    const int64_t delta = static_cast<int64_t>(y) - static_cast<int64_t>(x);
    std::cout << "  " << what << ": " << us(x) << " -> " << us(y) << " µs (" << signed_us(delta);
    if (x) {
      char share[32];
      std::snprintf(share, sizeof share, ", %+.2f%%", 100.0 * static_cast<double>(delta) / static_cast<double>(x));
      std::cout << share;
    }
    std::cout << ")\n";
  };
  line("step (first start to last end)", d.step_a, d.step_b);
  if (d.gpu_a.ops && d.gpu_b.ops) {
    line("GPU span", d.gpu_a.span, d.gpu_b.span);
    line("  idle", d.gpu_a.idle, d.gpu_b.idle);
    line("  compute", d.gpu_a.compute, d.gpu_b.compute);
    line("  non-compute", d.gpu_a.non_compute, d.gpu_b.non_compute);
  }
  std::cout << "  " << d.changed() << " of " << d.names.size() << " names differ; the " << std::min(top, d.changed())
            << " that differ most (µs):\n      count A   count B     total A     total B           Δ       Δ%  name\n";
  size_t shown = 0;
  for (const auto& n : d.names) {
    if (n.same() || shown == top) continue;
    ++shown;
    char row[160];
    std::snprintf(row, sizeof row, "  %11llu %9llu %11s %11s %11s %8s  ", static_cast<unsigned long long>(n.count_a),
                  static_cast<unsigned long long>(n.count_b), us(n.total_a).c_str(), us(n.total_b).c_str(),
                  signed_us(n.delta()).c_str(),
                  n.added()     ? "new"
                  : n.removed() ? "gone"
                                : (std::string(n.delta() > 0 ? "+" : "") +
                                   chakra::format_number(std::round(n.delta_percent() * 10) / 10) + "%")
                                      .c_str());
    std::cout << row << shortened(n.name, 100) << "\n";
  }
}

void write_diff(chakra::JsonWriter& w, uint32_t rank, const std::string& a, const std::string& b,
                const chakra::TraceDiff& d) {
  w.begin_object();
  w.key("rank").value_uint(rank);
  w.key("a").value(a);
  w.key("b").value(b);
  chakra::write_trace_diff_json(d, w);
  w.end_object();
}

int run_diff(const cli::Args& args) {
  std::vector<std::string> notes;
  auto a = load_all({args.values("A")[0]}, notes), b = load_all({args.values("B")[0]}, notes);
  // Ranks present on both sides are compared; a rank on one side only is named.
  std::map<uint32_t, size_t> b_of;
  for (size_t i = 0; i < b.size(); ++i) b_of[b[i].second.rank] = i;
  std::vector<std::pair<size_t, size_t>> pairs;
  if (a.size() == 1 && b.size() == 1) {
    pairs.push_back({0, 0});  // two files: compared whatever ranks they state
  } else {
    for (size_t i = 0; i < a.size(); ++i) {
      auto it = b_of.find(a[i].second.rank);
      if (it == b_of.end())
        notes.push_back("rank " + std::to_string(a[i].second.rank) + " only in A (" + a[i].first + ")");
      else
        pairs.push_back({i, it->second}), b_of.erase(it);
    }
    for (const auto& [rank, i] : b_of)
      notes.push_back("rank " + std::to_string(rank) + " only in B (" + b[i].first + ")");
    if (pairs.empty()) throw chakra::Error("A and B have no rank in common");
  }
  const size_t top = args.has("--top") ? args.get_uint("--top", 1000000) : 20;
  chakra::StringSink out;
  chakra::JsonWriter w(out, chakra::JsonStyle::python_indent(2, false));
  const bool json = args.has("--json"), csv = args.has("--csv");
  if (json) w.begin_object().key("unit").value("us").key("ranks").begin_array();
  if (csv) std::cout << "rank,name,count_a,count_b,total_a_us,total_b_us,delta_us,delta_percent,status\n";
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto& [i, j] = pairs[k];
    const chakra::TraceDiff d = chakra::diff_traces(a[i].second.trace, b[j].second.trace);
    if (csv) {
      for (const auto& n : d.names)
        std::cout << a[i].second.rank << "," << chakra::csv_field(n.name) << "," << n.count_a << "," << n.count_b << ","
                  << n.total_a << "," << n.total_b << "," << n.delta() << ","
                  << chakra::format_number(n.delta_percent()) << ","
                  << (n.same()      ? "same"
                      : n.added()   ? "new"
                      : n.removed() ? "gone"
                                    : "changed")
                  << "\n";
    } else if (json) {
      write_diff(w, a[i].second.rank, a[i].first, b[j].first, d);
    } else {
      if (k) std::cout << "\n";
      print_diff(a[i].second.rank, a[i].first, b[j].first, d, top);
    }
  }
  if (json) {
    w.end_array().key("notes").begin_array();
    for (const std::string& n : notes) w.value(n);
    w.end_array().end_object();
    w.raw("\n");
    w.flush();
    std::cout << out.out;
  } else {
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
  }
  return cli::kOk;
}

}  // namespace

int cmd_analyze(int argc, char** argv) {
  cli::Args args("chakra analyze",
                 "Analyse measured GPU work per rank as HolisticTraceAnalysis does: temporal breakdown\n"
                 "(idle / compute / non-compute), communication overlapped by compute, time by kernel\n"
                 "kind and their overlaps, per-name statistics, idle time per stream. Reads Kineto\n"
                 "traces and Chakra .et (or JSON) traces whose GPU ops carry start times; ranks come from the\n"
                 "traces' metadata, else their file names.");
  args.flag("--json", "print the results as JSON");
  args.flag("--csv", "print the temporal breakdown per rank as CSV (with --critical-path: its steps)");
  args.flag("--launches", "with --json: list every kernel launch (HTA's get_cuda_kernel_launch_stats rows)");
  args.option("--top", "N", "names listed per rank (default 10; with --critical-path, steps listed: 20)");
  args.flag("--critical-path",
            "the critical path across the ranks instead: what the step's end waited for, rank by rank");
  args.option("--what-if", "NAME=K",
              "with the critical path: the step if ops whose name contains NAME ran K times faster");
  args.positional("PATH", "Kineto trace, .et trace, or a folder of them", true, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra analyze", run, args);
}

int cmd_diff(int argc, char** argv) {
  cli::Args args("chakra diff",
                 "Compare two traces op by op, as HTA's TraceDiff: per name, the count and total duration in\n"
                 "A and in B, the difference, new and gone names, sorted by the size of the difference; the\n"
                 "step and, where both have measured GPU work, the temporal breakdown of each. A and B are\n"
                 "Kineto or .et traces, or folders of them (ranks matched by rank).");
  args.flag("--json", "print the comparison as JSON (every name)");
  args.flag("--csv", "print the comparison as CSV: a row per rank and name");
  args.option("--top", "N", "names listed per rank (default 20)");
  args.positional("A", "trace or folder (the baseline)");
  args.positional("B", "trace or folder (compared with A)");
  args.parse(argc, argv);
  return cli::run_guarded("chakra diff", run_diff, args);
}

CHAKRA_COMMAND(90, "analyze", cmd_analyze,
               "HTA's analyses of measured GPU work: temporal breakdown, overlap, kernels, idle time");
CHAKRA_COMMAND(120, "diff", cmd_diff,
               "two traces op by op: count and time per name in each, the difference, new and gone names");
