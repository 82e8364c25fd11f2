// chakra analyze: HTA's analyses of measured GPU work (core/docs/analyses.md), per rank.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "chakra/analysis/gpu_analysis.h"
#include "chakra/app/workspace.h"
#include "chakra/format/et_io.h"
#include "chakra/format/json_writer.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

struct Rank {
  uint32_t rank = 0;
  std::string path;
  chakra::GpuAnalysis analysis;
};

// The files named, folders searched recursively (in name order).
std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (!fs::is_directory(p)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::recursive_directory_iterator(p))
      if (e.is_regular_file()) found.push_back(e.path().string());
    std::sort(found.begin(), found.end());
    if (found.empty()) throw chakra::Error(p + ": the folder has no files");
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

std::string head_of(const std::string& path) {
  auto in = chakra::open_input(path);
  std::string head(64 * 1024, '\0');
  size_t got = 0;
  while (got < head.size()) {
    const size_t n = in->read(reinterpret_cast<uint8_t*>(head.data() + got), head.size() - got);
    if (n == 0) break;
    got += n;
  }
  head.resize(got);
  return head;
}

// Kineto traces are analysed as recorded; Chakra traces need start times on their GPU ops.
// Host ETs and configs in a folder are skipped with a note; named on the command line they are
// errors.
std::vector<Rank> load(const std::vector<std::string>& paths, cli::TerminalProgress& progress, std::vector<std::string>& notes) {
  std::vector<Rank> ranks;
  std::map<uint32_t, std::string> owner;
  const std::vector<std::string> files = expand(paths);
  const bool from_folder = files.size() != paths.size() || (paths.size() == 1 && fs::is_directory(paths[0]));
  for (const std::string& path : files) {
    const std::string head = head_of(path);
    const auto kind = chakra::detect_input_kind(path, std::span(reinterpret_cast<const uint8_t*>(head.data()), head.size()));
    Rank r;
    r.path = path;
    std::optional<uint32_t> rank;
    if (kind == chakra::InputKind::KinetoTrace) {
      rank = chakra::kineto_file_rank(head, path);
      r.analysis = chakra::analyze_gpu(chakra::kineto_activity(chakra::open_input(path)));
    } else if (kind == chakra::InputKind::ChakraEt) {
      rank = chakra::rank_from_file_name(path);
      r.analysis = chakra::analyze_gpu(chakra::read_et(path));
    } else {
      const std::string what = std::string(chakra::input_kind_name(kind));
      if (!from_folder)
        throw chakra::Error(path + ": a " + what + ", not a trace analyze reads (Kineto traces, Chakra .et traces" +
                            (kind == chakra::InputKind::PytorchHostEt ? "; a host ET's GPU work is in its Kineto trace)" : ")"));
      notes.push_back(path + ": skipped (a " + what + ")");
      continue;
    }
    progress.clear();
    r.rank = rank.value_or(static_cast<uint32_t>(ranks.size()));
    if (auto [it, fresh] = owner.emplace(r.rank, path); !fresh)
      throw chakra::Error("rank " + std::to_string(r.rank) + " twice: " + it->second + " and " + path);
    if (r.analysis.ops == 0) notes.push_back(path + ": no GPU ops with times (is_cpu_op false and a \"stream\")");
    ranks.push_back(std::move(r));
  }
  if (ranks.empty()) throw chakra::Error("no trace to analyze among the " + std::to_string(files.size()) + " files given");
  if (std::all_of(ranks.begin(), ranks.end(), [](const Rank& r) { return r.analysis.ops == 0; }))
    throw chakra::Error(std::string(ranks.size() == 1 ? ranks[0].path + ": no GPU op" : "no trace has a GPU op") +
                        " with a measured start time; analyze reads Kineto traces, and .et traces converted with their "
                        "times (chakra convert pytorch without --reference-bytes)");
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  return ranks;
}

std::string pct(uint64_t part, uint64_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return text;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

std::string us(uint64_t v) { return chakra::format_number(static_cast<double>(v)); }

void print_text(const std::vector<Rank>& ranks, size_t top) {
  std::cout << "temporal breakdown (µs; over each rank's GPU span, as HTA)\n"
            << "  rank        span        idle            compute          non-compute      overlap of comm\n";
  for (const Rank& r : ranks) {
    const chakra::GpuAnalysis& a = r.analysis;
    std::cout << pad(std::to_string(r.rank), 6) << pad(us(a.span), 12) << pad(us(a.idle), 12) << pad(pct(a.idle, a.span), 8)
              << pad(us(a.compute), 10) << pad(pct(a.compute, a.span), 8) << pad(us(a.non_compute), 10)
              << pad(pct(a.non_compute, a.span), 8) << pad(pct(a.comm_overlapped, a.communication), 12) << "\n";
  }
  uint64_t by_kinds[1 << chakra::kGpuKinds] = {}, all = 0;
  for (const Rank& r : ranks)
    for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set) by_kinds[set] += r.analysis.by_kinds[set], all += r.analysis.by_kinds[set];
  std::cout << "\ntime by kernel kind, all ranks (µs)\n";
  std::vector<unsigned> sets;
  for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set)
    if (by_kinds[set]) sets.push_back(set);
  std::sort(sets.begin(), sets.end(), [&](unsigned a, unsigned b) { return by_kinds[a] > by_kinds[b]; });
  for (unsigned set : sets)
    std::cout << "  " << chakra::gpu_kinds_label(set) << ": " << us(by_kinds[set]) << " (" << pct(by_kinds[set], all) << ")\n";
  for (const Rank& r : ranks) {
    std::cout << "\nrank " << r.rank << ": top " << std::min(top, r.analysis.names.size()) << " of " << r.analysis.names.size()
              << " GPU op names by time (µs)  [" << r.path << "]\n"
              << "        sum   count     mean      min      max   stddev  kind           name\n";
    for (size_t i = 0; i < r.analysis.names.size() && i < top; ++i) {
      const auto& n = r.analysis.names[i];
      char line[160];
      std::snprintf(line, sizeof line, "  %9s %7llu %8.1f %8s %8s %8.1f  %-14s ", us(n.sum).c_str(), static_cast<unsigned long long>(n.count),
                    n.mean, us(n.min).c_str(), us(n.max).c_str(), n.stddev, chakra::gpu_kind_name(n.kind));
      // Templated kernel names run to hundreds of characters: the text shows their start, --json all.
      std::cout << line << (n.name.size() > 120 ? n.name.substr(0, 117) + "..." : n.name) << "\n";
    }
    std::cout << "  idle per stream (µs): host wait / kernel wait (gaps < " << chakra::GpuAnalysis::kKernelWaitMicros << " µs) / other\n";
    for (const auto& s : r.analysis.idle_by_stream)
      std::cout << "    stream " << s.stream << ": " << us(s.host_wait) << " / " << us(s.kernel_wait) << " / " << us(s.other) << "\n";
  }
}

void write_json(const std::vector<Rank>& ranks, const std::vector<std::string>& notes) {
  chakra::StringSink out;
  chakra::JsonWriter w(out, chakra::JsonStyle::python_indent(2, false));
  w.begin_object();
  w.key("unit").value("us");
  w.key("ranks").begin_array();
  for (const Rank& r : ranks) {
    const chakra::GpuAnalysis& a = r.analysis;
    w.begin_object();
    w.key("rank").value_uint(r.rank);
    w.key("file").value(r.path);
    w.key("gpu_ops").value_uint(a.ops);
    w.key("span").value_uint(a.span);
    w.key("idle").value_uint(a.idle);
    w.key("compute").value_uint(a.compute);
    w.key("non_compute").value_uint(a.non_compute);
    w.key("communication").value_uint(a.communication);
    w.key("communication_overlapped").value_uint(a.comm_overlapped);
    w.key("overlap_percent").value_double(a.overlap_percent());
    w.key("by_kinds").begin_object();
    for (unsigned set = 1; set < (1u << chakra::kGpuKinds); ++set)
      if (a.by_kinds[set]) w.key(chakra::gpu_kinds_label(set)).value_uint(a.by_kinds[set]);
    w.end_object();
    w.key("names").begin_array();
    for (const auto& n : a.names) {
      w.begin_object();
      w.key("name").value(n.name);
      w.key("kind").value(chakra::gpu_kind_name(n.kind));
      w.key("count").value_uint(n.count);
      w.key("sum").value_uint(n.sum);
      w.key("min").value_uint(n.min);
      w.key("max").value_uint(n.max);
      w.key("mean").value_double(n.mean);
      w.key("stddev").value_double(n.stddev);
      w.end_object();
    }
    w.end_array();
    w.key("idle_by_stream").begin_array();
    for (const auto& s : a.idle_by_stream) {
      w.begin_object();
      w.key("stream").value_int(s.stream);
      w.key("host_wait").value_uint(s.host_wait);
      w.key("kernel_wait").value_uint(s.kernel_wait);
      w.key("other").value_uint(s.other);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("notes").begin_array();
  for (const std::string& n : notes) w.value(n);
  w.end_array();
  w.end_object();
  w.raw("\n");
  w.flush();
  std::cout << out.out;
}

int run(const cli::Args& args) {
  cli::TerminalProgress progress;
  std::vector<std::string> notes;
  const std::vector<Rank> ranks = load(args.values("PATH"), progress, notes);
  if (args.has("--json")) {
    write_json(ranks, notes);
  } else {
    print_text(ranks, args.has("--top") ? args.get_uint("--top", 1000000) : 10);
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
                 "traces and Chakra .et traces whose GPU ops carry start times; ranks come from the\n"
                 "traces' metadata, else their file names.");
  args.flag("--json", "print the results as JSON");
  args.option("--top", "N", "names listed per rank (default 10)");
  args.positional("PATH", "Kineto trace, .et trace, or a folder of them", true, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra analyze", run, args);
}
