// chakra analyze and chakra diff: HTA's analyses of measured GPU work and its trace diff
// (core/docs/analyses.md), per rank.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

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
#include "analyze_inputs.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

using chakra::RankDigest;

// Every rank read in turn within the memory budget and reduced to its digest; the traces do not
// outlive their reading.
std::vector<RankDigest> digests_of(const std::vector<cli::TraceInput>& inputs, const cli::MemoryBudget& budget,
                                   bool every_launch) {
  std::vector<RankDigest> out(inputs.size());
  std::vector<uint64_t> memory, bytes;
  for (const cli::TraceInput& in : inputs) memory.push_back(in.memory), bytes.push_back(in.bytes);
  cli::for_each_within(
      memory, bytes, budget, "analysing",
      [&](size_t i) { return "rank " + std::to_string(inputs[i].rank) + " (" + inputs[i].path + ")"; },
      [&](size_t i, std::atomic<uint64_t>& read) {
        cli::LoadedTrace l = cli::load_trace(inputs[i], &read);
        out[i] = chakra::digest_rank(l.trace, inputs[i].rank, inputs[i].path, every_launch);
        if (out[i].analysis.ops == 0) out[i].no_gpu_op = cli::why_no_gpu_op(l);
      });
  return out;
}

// The traces without GPU ops as notes; an error when no trace has any.
void check_gpu_ops(const std::vector<RankDigest>& ranks, std::vector<std::string>& notes) {
  std::vector<std::string> without;  // "FILE: why", per trace without GPU ops
  for (const RankDigest& r : ranks)
    if (r.analysis.ops == 0) without.push_back(r.file + ": " + r.no_gpu_op);
  if (without.size() == 1 && ranks.size() == 1) throw chakra::Error(without[0]);
  if (without.size() == ranks.size()) {
    std::string each;
    for (size_t i = 0; i < without.size() && i < 3; ++i) each += "\n  " + without[i];
    if (without.size() > 3) each += "\n  and " + std::to_string(without.size() - 3) + " more";
    throw chakra::Error("none of the " + std::to_string(ranks.size()) + " traces has a GPU op:" + each);
  }
  notes.insert(notes.end(), without.begin(), without.end());
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

void print_stragglers(const std::vector<RankDigest>& ranks, const chakra::Stragglers& s, size_t top) {
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

void print_text(const std::vector<RankDigest>& ranks, size_t top) {
  std::cout
      << "temporal breakdown (µs; over each rank's GPU span, as HTA)\n"
      << "  rank        span        idle            compute          non-compute      overlap of comm  exposed comm\n";
  for (const RankDigest& r : ranks) {
    const chakra::GpuAnalysis& a = r.analysis;
    std::cout << pad(std::to_string(r.rank), 6) << pad(us(a.span), 12) << pad(us(a.idle), 12)
              << pad(chakra::format_share(a.idle, a.span, 2), 8) << pad(us(a.compute), 10)
              << pad(chakra::format_share(a.compute, a.span, 2), 8) << pad(us(a.non_compute), 10)
              << pad(chakra::format_share(a.non_compute, a.span, 2), 8)
              << pad(chakra::format_share(a.comm_overlapped, a.communication, 2), 12)
              << pad(us(a.exposed_communication()), 14) << "\n";
  }
  std::cout << chakra::host_stalls_text(ranks, top);
  uint64_t by_kinds[1 << chakra::kGpuKinds] = {}, all = 0;
  for (const RankDigest& r : ranks)
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
  for (const RankDigest& r : ranks) {
    std::cout << "\nrank " << r.rank << ": top " << std::min(top, r.analysis.names.size()) << " of "
              << r.analysis.names.size() << " GPU op names by time (µs)  [" << r.file << "]\n"
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

// The critical path across the ranks, on their measured times.
struct PathOfRanks {
  std::vector<chakra::RankTimes> times;
  std::vector<uint32_t> ids;
  chakra::CrossRankPath path;
};
PathOfRanks path_of(const std::vector<chakra::Trace>& traces, const std::vector<cli::TraceInput>& inputs) {
  PathOfRanks p;
  for (size_t i = 0; i < traces.size(); ++i)
    p.times.push_back(chakra::measured_times(traces[i])), p.ids.push_back(inputs[i].rank);
  p.path = chakra::critical_path_across_ranks(p.times);
  return p;
}

// The critical path needs every rank's whole trace at once: read within the limit or refused.
// What the traces keep once read is set aside first; reads take turns in what remains, each
// needing what it takes beyond what its trace keeps.
std::vector<chakra::Trace> whole_traces(const std::vector<cli::TraceInput>& inputs, cli::MemoryBudget budget) {
  uint64_t held = 0, largest_read = 0;
  std::vector<uint64_t> memory, bytes;
  for (const cli::TraceInput& in : inputs) {
    held += in.held, memory.push_back(in.memory - in.held), bytes.push_back(in.bytes);
    largest_read = std::max(largest_read, memory.back());
  }
  if (held + largest_read > budget.limit)
    throw chakra::Error("the critical path needs every rank's trace in memory at once: about " +
                        chakra::format_bytes(held + largest_read) + " for these " + std::to_string(inputs.size()) +
                        " traces, over --memory-limit " + chakra::format_bytes(budget.limit) +
                        " (raise the limit, or give fewer ranks)");
  budget.limit -= held;
  std::vector<chakra::Trace> traces(inputs.size());
  std::vector<RankDigest> counts(inputs.size());  // only ops and the reason, for the GPU-op check
  cli::for_each_within(
      memory, bytes, budget, "reading", [&](size_t i) { return inputs[i].path; },
      [&](size_t i, std::atomic<uint64_t>& read) {
        cli::LoadedTrace l = cli::load_trace(inputs[i], &read);
        counts[i].file = inputs[i].path;
        counts[i].analysis.ops = chakra::gpu_ops_of(l.trace).size();
        if (counts[i].analysis.ops == 0) counts[i].no_gpu_op = cli::why_no_gpu_op(l);
        traces[i] = std::move(l.trace);
      });
  std::vector<std::string> ignored;
  check_gpu_ops(counts, ignored);
  return traces;
}

int print_critical_path(const cli::Args& args, const std::vector<cli::TraceInput>& inputs) {
  const std::vector<chakra::Trace> traces = whole_traces(inputs, cli::memory_budget(args));
  const PathOfRanks p = path_of(traces, inputs);
  std::optional<cli::WhatIf> what_if;
  if (args.has("--what-if")) what_if = cli::parse_what_if(args, args.get("--what-if"));
  {
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
}

// What an unsharded run prints, from its ranks' digests (chakra analyze merge prints the same).
void print_report(const cli::Args& args, std::vector<RankDigest>& ranks, std::vector<std::string> notes) {
  check_gpu_ops(ranks, notes);
  if (args.has("--csv")) {  // the temporal breakdown per rank (HTA's temporal_breakdown table)
    std::cout << chakra::breakdown_csv(ranks);
    for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
  } else if (args.has("--json")) {
    std::cout << chakra::analysis_json(ranks, notes, args.has("--launches"));
  } else {
    const size_t top = args.has("--top") ? args.get_uint("--top", 1000000) : 10;
    print_text(ranks, top);
    std::vector<const chakra::CommStarts*> starts;
    std::vector<std::vector<chakra::CollectiveBucket>> buckets;
    for (const RankDigest& r : ranks) starts.push_back(&r.comm_starts), buckets.push_back(r.collectives);
    print_stragglers(ranks, chakra::find_stragglers(starts), std::min<size_t>(top, 5));
    const auto collectives = chakra::sum_buckets(buckets);
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
}

// A shard's part: a header line (the shard, the options that shape the digests, the notes of
// the files' scan), then a rank's digest per line.
constexpr std::string_view kPartTag = "chakra_analyze_part";

void write_part(const cli::Args& args, const chakra::sweep::Shard& shard, const std::vector<RankDigest>& ranks,
                const std::vector<std::string>& notes) {
  chakra::StringSink out;
  chakra::JsonWriter w(out);
  w.begin_object().key(kPartTag).value_uint(1);
  w.key("shard").begin_array().value_uint(shard.index).value_uint(shard.count).end_array();
  w.key("launches").value(args.has("--launches"));
  w.key("notes").begin_array();
  for (const std::string& n : notes) w.value(n);
  w.end_array().end_object().raw("\n");
  for (const RankDigest& r : ranks) chakra::write_digest_json(r, w), w.raw("\n");
  w.flush();
  std::cout << out.out;
}

// --slurm: the ranks in shards as an array job, merged by a gather job into --output.
int submit_to_slurm(const cli::Args& args, size_t ranks) {
  if (!args.has("--output")) args.fail("--slurm needs -o FILE: where the gather job writes the result");
  if (args.has("--shard")) args.fail("--slurm makes the shards itself; drop --shard");
  if (args.has("--critical-path") || args.has("--what-if"))
    args.fail("--slurm: the critical path crosses every rank, so it is not sharded");
  const std::string chakra = cli::shell_quote(cli::self_path()), result = fs::absolute(args.get("--output")).string();
  cli::SlurmJobs jobs;
  jobs.name = "chakra-analyze";
  jobs.dir = result + ".slurm";
  jobs.tasks = cli::slurm_tasks(args, ranks);
  std::string paths, report;
  for (const std::string& p : args.values("PATH")) paths += " " + cli::shell_quote(fs::absolute(p).string());
  for (const char* flag : {"--json", "--csv", "--launches"})
    if (args.has(flag)) report += std::string(" ") + flag;
  if (args.has("--top")) report += " --top " + cli::shell_quote(args.get("--top"));
  jobs.array_command =
      chakra + " analyze" + paths + (args.has("--launches") ? " --launches" : "") +
      (args.has("--memory-limit") ? " --memory-limit " + cli::shell_quote(args.get("--memory-limit")) : "") +
      " --jobs ${SLURM_CPUS_PER_TASK:-1} -o " + cli::shell_quote(jobs.dir) +
      "/part-$SLURM_ARRAY_TASK_ID.txt --shard $SLURM_ARRAY_TASK_ID/" + std::to_string(jobs.tasks);
  jobs.gather_command = chakra + " analyze merge" + report + " -o " + cli::shell_quote(result);
  for (uint32_t t = 0; t < jobs.tasks; ++t)
    jobs.gather_command += " " + cli::shell_quote(jobs.dir + "/part-" + std::to_string(t) + ".txt");
  jobs.result = "the result will be " + result + " (" + std::to_string(ranks) + " ranks)";
  return cli::submit_slurm(args, jobs);
}

int run(const cli::Args& args) {
  std::vector<std::string> notes;
  std::vector<cli::TraceInput> inputs = cli::scan_traces(args.values("PATH"), notes);
  if (args.has("--slurm")) return submit_to_slurm(args, inputs.size());
  std::optional<cli::WhatIf> what_if;
  if (args.has("--what-if")) what_if = cli::parse_what_if(args, args.get("--what-if"));
  const std::optional<chakra::sweep::Shard> shard = cli::shard_option(args);
  cli::StdoutTo out(args.has("--output") ? args.get("--output") : "");
  if (args.has("--critical-path") || what_if) {
    if (shard) args.fail("--shard: the critical path crosses every rank, so it is not sharded");
    const int rc = print_critical_path(args, inputs);
    out.commit();
    return rc;
  }
  if (shard) std::erase_if(inputs, [&](const cli::TraceInput& in) { return in.rank % shard->count != shard->index; });
  std::vector<RankDigest> ranks = digests_of(inputs, cli::memory_budget(args), args.has("--launches"));
  if (shard)
    write_part(args, *shard, ranks, notes);
  else
    print_report(args, ranks, notes);
  out.commit();
  return cli::kOk;
}

// chakra analyze merge: the parts of every shard, checked to make one run, printed as it.
int run_merge(const cli::Args& args) {
  std::vector<RankDigest> ranks;
  std::vector<std::string> notes;
  std::optional<uint32_t> count;
  std::optional<bool> launches;
  std::map<uint32_t, std::string> shard_part, rank_part;
  for (const std::string& part : args.values("PART")) {
    const std::string text = chakra::read_file(part, {});
    size_t at = text.find('\n');
    if (at == std::string::npos || text.back() != '\n')
      throw chakra::Error(part + ": not a part of chakra analyze --shard (or cut short: no final newline)");
    uint32_t index = 0, k = 0;
    bool with_launches = false;
    std::vector<std::string> part_notes;
    try {
      const nlohmann::json head = nlohmann::json::parse(text.substr(0, at));
      if (head.at(std::string(kPartTag)).get<int>() != 1) throw chakra::Error("version");
      index = head.at("shard").at(0).get<uint32_t>(), k = head.at("shard").at(1).get<uint32_t>();
      with_launches = head.at("launches").get<bool>();
      part_notes = head.at("notes").get<std::vector<std::string>>();
    } catch (const std::exception&) {
      throw chakra::Error(part + ": not a part of chakra analyze --shard (its first line is no part header)");
    }
    if (k == 0 || index >= k) throw chakra::Error(part + ": shard " + std::to_string(index) + "/" + std::to_string(k));
    if (count && *count != k)
      throw chakra::Error(part + ": a shard of " + std::to_string(k) + ", the others of " + std::to_string(*count));
    count = k;
    if (auto [it, fresh] = shard_part.emplace(index, part); !fresh)
      throw chakra::Error(part + ": shard " + std::to_string(index) + "/" + std::to_string(k) + " again (also " +
                          it->second + ")");
    if (launches && *launches != with_launches)
      throw chakra::Error(part + ": run " + (with_launches ? "with" : "without") +
                          " --launches, the others not so (run every shard with the same options)");
    launches = with_launches;
    if (shard_part.size() == 1) notes = std::move(part_notes);
    for (size_t next; (next = text.find('\n', at + 1)) != std::string::npos; at = next) {
      RankDigest d = chakra::read_digest_json(std::string_view(text).substr(at + 1, next - at - 1), part);
      if (d.rank % k != index)
        throw chakra::Error(part + ": rank " + std::to_string(d.rank) + " is not in shard " + std::to_string(index) +
                            "/" + std::to_string(k));
      if (auto [it, fresh] = rank_part.emplace(d.rank, part); !fresh)
        throw chakra::Error(part + ": rank " + std::to_string(d.rank) + " is also in " + it->second);
      ranks.push_back(std::move(d));
    }
  }
  for (uint32_t i = 0; i < *count; ++i)
    if (!shard_part.count(i))
      throw chakra::Error("shard " + std::to_string(i) + "/" + std::to_string(*count) + " is missing");
  if (args.has("--launches") && !*launches)
    throw chakra::Error("--launches: the shards were run without it, so their launches were not kept");
  std::sort(ranks.begin(), ranks.end(), [](const RankDigest& a, const RankDigest& b) { return a.rank < b.rank; });
  cli::StdoutTo out(args.has("--output") ? args.get("--output") : "");
  if (ranks.empty()) throw chakra::Error("no rank in any part");
  print_report(args, ranks, notes);
  out.commit();
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
  std::vector<std::string> notes, b_notes;
  const auto a = cli::scan_traces({args.values("A")[0]}, notes), b = cli::scan_traces({args.values("B")[0]}, b_notes);
  // A file both scans skipped (A and B the same folder, or one inside the other) is noted once.
  for (std::string& n : b_notes)
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(std::move(n));
  // Ranks present on both sides are compared; a rank on one side only is named.
  std::map<uint32_t, size_t> b_of;
  for (size_t i = 0; i < b.size(); ++i) b_of[b[i].rank] = i;
  std::vector<std::pair<size_t, size_t>> pairs;
  if (a.size() == 1 && b.size() == 1) {
    pairs.push_back({0, 0});  // two files: compared whatever ranks they state
  } else {
    for (size_t i = 0; i < a.size(); ++i) {
      auto it = b_of.find(a[i].rank);
      if (it == b_of.end())
        notes.push_back("rank " + std::to_string(a[i].rank) + " only in A (" + a[i].path + ")");
      else
        pairs.push_back({i, it->second}), b_of.erase(it);
    }
    for (const auto& [rank, i] : b_of)
      notes.push_back("rank " + std::to_string(rank) + " only in B (" + b[i].path + ")");
    if (pairs.empty()) throw chakra::Error("A and B have no rank in common");
  }
  // Each pair read, compared and dropped, within the memory budget.
  std::vector<chakra::TraceDiff> diffs(pairs.size());
  std::vector<uint64_t> memory, bytes;
  for (const auto& [i, j] : pairs)
    memory.push_back(a[i].memory + b[j].memory), bytes.push_back(a[i].bytes + b[j].bytes);
  cli::for_each_within(
      memory, bytes, cli::memory_budget(args), "comparing",
      [&](size_t k) { return "rank " + std::to_string(a[pairs[k].first].rank) + " of A and B"; },
      [&](size_t k, std::atomic<uint64_t>& read) {
        const chakra::Trace ta = cli::load_trace(a[pairs[k].first], &read).trace;
        const chakra::Trace tb = cli::load_trace(b[pairs[k].second], &read).trace;
        diffs[k] = chakra::diff_traces(ta, tb);
      });
  cli::StdoutTo output(args.has("--output") ? args.get("--output") : "");
  const size_t top = args.has("--top") ? args.get_uint("--top", 1000000) : 20;
  chakra::StringSink out;
  chakra::JsonWriter w(out, chakra::JsonStyle::python_indent(2, false));
  const bool json = args.has("--json"), csv = args.has("--csv");
  if (json) w.begin_object().key("unit").value("us").key("ranks").begin_array();
  if (csv) std::cout << "rank,name,count_a,count_b,total_a_us,total_b_us,delta_us,delta_percent,status\n";
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto& [i, j] = pairs[k];
    const chakra::TraceDiff& d = diffs[k];
    if (csv) {
      for (const auto& n : d.names)
        std::cout << a[i].rank << "," << chakra::csv_field(n.name) << "," << n.count_a << "," << n.count_b << ","
                  << n.total_a << "," << n.total_b << "," << n.delta() << ","
                  << chakra::format_number(n.delta_percent()) << ","
                  << (n.same()      ? "same"
                      : n.added()   ? "new"
                      : n.removed() ? "gone"
                                    : "changed")
                  << "\n";
    } else if (json) {
      write_diff(w, a[i].rank, a[i].path, b[j].path, d);
    } else {
      if (k) std::cout << "\n";
      print_diff(a[i].rank, a[i].path, b[j].path, d, top);
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
  output.commit();
  return cli::kOk;
}

}  // namespace

// The options that shape the report, shared by analyze and analyze merge.
void add_report_options(cli::Args& args) {
  args.flag("--json", "print the results as JSON");
  args.flag("--csv", "print the temporal breakdown per rank as CSV (with --critical-path: its steps)");
  args.flag("--launches", "with --json: list every kernel launch (HTA's get_cuda_kernel_launch_stats rows)");
  args.option("--top", "N", "names listed per rank (default 10; with --critical-path, steps listed: 20)");
  args.option("--output", "FILE", "write the result to FILE (whole, or not at all) instead of standard output");
  args.alias("-o", "--output");
}

int cmd_analyze(int argc, char** argv) {
  if (argc > 0 && std::string(argv[0]) == "merge") {
    cli::Args args("chakra analyze merge",
                   "Join the parts that shards of `chakra analyze PATH... --shard i/K -o PART` wrote into what one\n"
                   "unsharded run prints, byte for byte (stragglers and collectives across every rank included).\n"
                   "Every shard 0..K-1 once; give --launches here only if the shards had it.");
    add_report_options(args);
    args.positional("PART", "a shard's part", true, true);
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra analyze merge", run_merge, args);
  }
  cli::Args args("chakra analyze",
                 "Analyse measured GPU work per rank as HolisticTraceAnalysis does: temporal breakdown\n"
                 "(idle / compute / non-compute), communication overlapped by compute, time by kernel\n"
                 "kind and their overlaps, per-name statistics, idle time per stream. Reads Kineto\n"
                 "traces and Chakra .et (or JSON) traces whose GPU ops carry start times; ranks come from the\n"
                 "traces' metadata, else their file names. Each rank is read, reduced to what the report needs\n"
                 "and dropped, several at once as --jobs and --memory-limit allow, so runs far larger than\n"
                 "memory are analysed; --shard i/K and `chakra analyze merge` split a run across machines.");
  add_report_options(args);
  args.flag("--critical-path",
            "the critical path across the ranks instead: what the step's end waited for, rank by rank");
  args.option("--what-if", "NAME=K",
              "with the critical path: the step if ops whose name contains NAME ran K times faster");
  cli::add_memory_options(args, "ranks");
  cli::add_shard_option(args);
  cli::add_slurm_options(args, "ranks");
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
  args.option("--output", "FILE", "write the result to FILE (whole, or not at all) instead of standard output");
  args.alias("-o", "--output");
  cli::add_memory_options(args, "rank pairs");
  args.positional("A", "trace or folder (the baseline)");
  args.positional("B", "trace or folder (compared with A)");
  args.parse(argc, argv);
  return cli::run_guarded("chakra diff", run_diff, args);
}

CHAKRA_COMMAND(90, "analyze", cmd_analyze,
               "HTA's analyses of measured GPU work: temporal breakdown, overlap, kernels, idle time");
CHAKRA_COMMAND(120, "diff", cmd_diff,
               "two traces op by op: count and time per name in each, the difference, new and gone names");
