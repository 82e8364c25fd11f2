// chakra link, and the drop-in chakra_trace_link.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "chakra/format/io.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

enum class Verbosity { Quiet, Warnings, All };

std::string summary(const chakra::LinkReport& r, const std::string& output) {
  std::string s = output + ": linked " + std::to_string(r.host_ops_linked) + " of " + std::to_string(r.host_nodes) +
                  " host nodes by " + std::string(chakra::link_method_name(r.method)) + " (" +
                  std::to_string(r.names_agree) + " with the same name)";
  if (r.method == chakra::LinkMethod::ExternalId || r.method == chakra::LinkMethod::EvIdx)
    s += ", offset " + std::to_string(r.id_offset);
  if (!r.window.empty()) s += ", window " + r.window;
  s += "; " + std::to_string(r.gpu_ops_linked) + " of " + std::to_string(r.gpu_ops) + " GPU ops attached; " +
       std::to_string(r.output_nodes) + " nodes written";
  if (r.sync_calls) {
    s += "; " + std::to_string(r.sync_edges - r.sync_thread_waits) + " sync dependencies from " +
         std::to_string(r.sync_waits) + " of " + std::to_string(r.sync_calls) + " synchronisation calls";
    if (r.sync_thread_waits) s += ", " + std::to_string(r.sync_thread_waits) + " from waits for another thread's work";
  }
  uint64_t stalls = 0;
  std::string classes;
  for (int c = 0; c < chakra::kStallClassCount; ++c) {
    if (!r.stalls[c]) continue;
    stalls += r.stalls[c];
    classes += (classes.empty() ? "" : ", ") +
               std::string(chakra::stall_class_name(static_cast<chakra::StallClass>(c))) + " " +
               std::to_string(r.stalls[c]);
  }
  if (stalls)
    s += "; " + std::to_string(stalls) + " host stalls, " + chakra::format_number(r.stall_micros / 1000) +
         " ms of own time (" + classes + "; " + std::to_string(r.stall_waits) +
         " can replay as waits for the GPU: chakra simulate --stalls wait)";
  return s;
}

// The summary, and what says the two traces are one rank's (`pair`: which files, and where the
// rank came from, for a folder's pairs).
void print(const chakra::LinkReport& r, const std::string& output, Verbosity v, const std::string& pair = "") {
  if (v != Verbosity::Quiet)
    for (const std::string& w : r.warnings) std::cerr << "chakra link: warning: " << w << "\n";
  if (v != Verbosity::All) return;
  std::cerr << summary(r, output) << "\n";
  if (!pair.empty()) std::cerr << "  " << pair << "\n";
  std::cerr << "  pairing: " << r.pairing << "\n";
}

chakra::LinkOptions link_options(const cli::Args& a) {
  chakra::LinkOptions o;
  if (a.has("--method") && !chakra::parse_link_method(a.get("--method"), &o.method))
    a.fail("--method must be one of auto, rf-id, external-id, ev-idx, in-order");
  o.sync_deps = a.has("--sync-deps");
  o.force = a.has("--force");
  return o;
}

// Links one pair into `out` (not yet committed).
chakra::LinkReport link_one(const std::string& host, const std::string& device, chakra::OutputFile& out,
                            chakra::LinkOptions options) {
  chakra::LinkReport r = chakra::link_traces(chakra::open_input(host), chakra::open_input(device), out, options);
  out.finish();
  return r;
}

// `check_rank`: --rank, when given, is checked with the ranks the traces state (chakra
// link's; chakra_trace_link's is accepted unchecked, as the reference does).
int link_single(const cli::Args& a, const std::string& host, const std::string& device, const std::string& output,
                Verbosity v, bool check_rank) {
  cli::TerminalProgress progress;
  chakra::LinkOptions options = link_options(a);
  options.progress = &progress;
  if (check_rank) {
    options.rank = static_cast<uint32_t>(a.get_uint("--rank", 1u << 20));
    options.rank_source = "--rank";
  }
  chakra::OutputFile out(output);
  chakra::LinkReport r = link_one(host, device, out, options);
  out.commit();
  progress.clear();
  print(r, output, v);
  return cli::kOk;
}

// Links every rank in parallel; nothing is published unless all succeed.
int link_folder(const cli::Args& a, const std::string& dir, const std::string& prefix, Verbosity v) {
  // OUT may be "dir/name", "dir/name.json" or "dir/name.json.gz" (compressed outputs).
  std::string stem = prefix, suffix = ".json";
  if (chakra::ends_with(stem, ".gz")) stem.resize(stem.size() - 3), suffix = ".json.gz";
  if (chakra::ends_with(stem, ".json")) stem.resize(stem.size() - 5);
  std::vector<cli::RankPair> pairs = cli::find_rank_pairs(dir, stem);
  const size_t all_pairs = pairs.size();
  const auto shard = cli::shard_option(a);
  if (shard) std::erase_if(pairs, [&](const cli::RankPair& p) { return !shard->has(p.rank); });
  chakra::LinkOptions options = link_options(a);
  std::vector<chakra::LinkReport> reports(pairs.size());
  std::vector<std::unique_ptr<chakra::OutputFile>> files(pairs.size());
  cli::create_output_folder(stem);
  cli::run_jobs(pairs.size(), [&](size_t i) {
    files[i] = std::make_unique<chakra::OutputFile>(stem + "." + std::to_string(pairs[i].rank) + suffix);
    chakra::LinkOptions pair_options = options;
    pair_options.rank = pairs[i].folder_rank;
    pair_options.rank_source = "the folder's name";
    reports[i] = link_one(pairs[i].host, pairs[i].device, *files[i], pair_options);
  });
  for (size_t i = 0; i < pairs.size(); ++i) {
    files[i]->commit();
    print(reports[i], files[i]->path(), v,
          "rank " + std::to_string(pairs[i].rank) + " (from " + pairs[i].rank_from + "): " + pairs[i].host + " + " +
              pairs[i].device);
  }
  if (v == Verbosity::All)
    std::cerr << "linked " << pairs.size() << " ranks to " << stem << ".{rank}" << suffix
              << (shard ? " (shard " + a.get("--shard") + " of " + std::to_string(all_pairs) + " ranks)" : "") << "\n";
  return cli::kOk;
}

int run_link(const cli::Args& a) {
  Verbosity v = a.has("--quiet") ? Verbosity::Warnings : Verbosity::All;
  const std::vector<std::string>& folder = a.values("DIR");
  if (!folder.empty()) {
    if (a.has("--host") || a.has("--device")) a.fail("give either a folder of rank pairs or --host and --device");
    if (!fs::is_directory(folder[0])) throw chakra::Error(folder[0] + ": not a folder");
    return link_folder(a, folder[0], a.get("--output"), v);
  }
  if (a.has("--shard")) a.fail("--shard shares a folder of ranks; a single pair is not one");
  if (!a.has("--host") || !a.has("--device")) a.fail("--host and --device are required (or a folder of rank pairs)");
  return link_single(a, a.get("--host"), a.get("--device"), a.get("--output"), v, a.has("--rank"));
}

const char* kLinkHelp =
    "Link a PyTorch host execution trace with the Kineto (profiler) trace of the same run and rank:\n"
    "host ops get their duration, timestamp and inter-thread dependency, and every GPU kernel and\n"
    "memcpy becomes a node after the op that launched it. The output is the linked JSON of\n"
    "mlcommons/chakra's chakra_trace_link (byte-identical where it works), ready for\n"
    "`chakra convert pytorch`. Ops are paired by Record function id when the Kineto trace has it,\n"
    "else by External id / Ev Idx with a detected offset, else in order by name; the summary says\n"
    "which and how many ops were linked. Two traces stating different ranks (the Kineto trace's\n"
    "distributedInfo, numbers in the file or folder names, --rank) or process ids (the host ET's\n"
    "pid, the Kineto trace's CPU ops') are an error unless --force; the summary says what agreed,\n"
    "or that the pairing is unverified. Given a folder of rank pairs (one sub-folder per rank,\n"
    "or files whose names carry the rank), links every rank to OUT.{rank}.json in parallel and\n"
    "prints each rank's pair.";

void add_common(cli::Args& args) {
  args.option("--method", "M", "how to pair host and Kineto ops: auto, rf-id, external-id, ev-idx, in-order", "auto");
  args.flag("--force",
            "link a host ET and a Kineto trace whose ranks or process ids disagree (a warning, not an error)");
  args.flag("--sync-deps",
            "add sync_dep: the op after each CUDA synchronisation waits for the GPU work it synchronised with");
}

}  // namespace

int cmd_link(int argc, char** argv) {
  cli::Args args("chakra link", kLinkHelp);
  args.positional("DIR", "a folder of rank pairs (instead of --host/--device)", false);
  cli::add_shard_option(args);
  args.option("--host", "HOST", "host execution trace JSON (plain or gzip)");
  args.option("--device", "KINETO", "Kineto trace JSON (plain or gzip)");
  args.option("--output", "OUT", "linked JSON (.gz: compressed); for a folder, the prefix of OUT.{rank}.json", "",
              true);
  args.alias("-o", "--output");
  args.option("--rank", "R", "the rank of this pair, checked with the ranks the traces state");
  add_common(args);
  args.flag("--quiet", "print warnings only, no summary");
  args.parse(argc, argv);
  return cli::run_guarded("chakra link", run_link, args);
}

namespace {

int run_reference_link(const cli::Args& a) {
  std::string level = a.get("--log-level");
  std::transform(level.begin(), level.end(), level.begin(), ::toupper);
  Verbosity v;
  if (level == "DEBUG" || level == "INFO" || level == "NOTSET")
    v = Verbosity::All;
  else if (level == "WARNING" || level == "WARN")
    v = Verbosity::Warnings;
  else if (level == "ERROR" || level == "CRITICAL" || level == "FATAL")
    v = Verbosity::Quiet;
  else
    a.fail("--log-level: unknown level '" + a.get("--log-level") + "'");
  int rc =
      link_single(a, a.get("--chakra-host-trace"), a.get("--chakra-device-trace"), a.get("--output-file"), v, false);
  if (v == Verbosity::All)
    std::cerr << "Linking process successful. Output file is available at " << a.get("--output-file") << ".\n";
  return rc;
}

}  // namespace

// chakra_trace_link --rank R --chakra-host-trace H --chakra-device-trace K --output-file O
int cmd_reference_trace_link(int argc, char** argv) {
  cli::Args args("chakra_trace_link",
                 "Drop-in replacement for mlcommons/chakra's chakra_trace_link (see `chakra link`): links a\n"
                 "host execution trace with its Kineto trace. Needs neither HTA nor PARAM, works without a\n"
                 "ProfilerStep and without Record function ids.");
  args.allow_abbreviations();
  args.option("--rank", "RANK", "rank for the input traces", "", true);
  args.option("--chakra-host-trace", "CHAKRA_HOST_TRACE", "host execution trace (PyTorch ET)", "", true);
  args.option("--chakra-device-trace", "CHAKRA_DEVICE_TRACE", "device trace (Kineto)", "", true);
  args.option("--output-file", "OUTPUT_FILE", "output linked JSON", "", true);
  args.option("--log-level", "LOG_LEVEL", "DEBUG, INFO, WARNING, ERROR or CRITICAL", "INFO");
  add_common(args);
  args.parse(argc, argv);
  if (args.has("--rank")) (void)args.get_uint("--rank");
  return cli::run_guarded("chakra_trace_link", run_reference_link, args);
}

CHAKRA_COMMAND(50, "link", cmd_link, "PyTorch host execution trace + Kineto trace -> linked JSON (ET+)");
CHAKRA_ALIAS("chakra_trace_link", cmd_reference_trace_link);
