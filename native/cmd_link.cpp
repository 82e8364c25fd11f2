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
    if (r.sync_thread_waits)
      s += ", " + std::to_string(r.sync_thread_waits) + " from waits for another thread's work";
  }
  uint64_t stalls = 0;
  std::string classes;
  for (int c = 0; c < chakra::kStallClassCount; ++c) {
    if (!r.stalls[c]) continue;
    stalls += r.stalls[c];
    classes += (classes.empty() ? "" : ", ") + std::string(chakra::stall_class_name(static_cast<chakra::StallClass>(c))) +
               " " + std::to_string(r.stalls[c]);
  }
  if (stalls)
    s += "; " + std::to_string(stalls) + " host stalls, " + chakra::format_number(r.stall_micros / 1000) + " ms of own time (" +
         classes + "; " + std::to_string(r.stall_waits) + " can replay as waits for the GPU: chakra simulate --stalls wait)";
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

// What a JSON file in a folder of rank pairs is, from its first bytes, and the rank a Kineto
// trace states in them.
enum class FileKind { Host, Device, Other };
FileKind sniff(const std::string& path, std::optional<uint32_t>* stated_rank) {
  const std::string head = cli::read_head(path);
  if (head.find("\"traceEvents\"") != std::string::npos || head.find("\"schemaVersion\"") != std::string::npos) {
    chakra::kineto_file_rank(head, path);  // a trace whose name says another rank is an error
    *stated_rank = chakra::kineto_rank(head);
    return FileKind::Device;
  }
  if (head.find("\"schema\"") != std::string::npos || head.find("\"nodes\"") != std::string::npos)
    return FileKind::Host;
  return FileKind::Other;
}

struct Pair {
  std::string host, device;
  int64_t rank = 0;
  std::string rank_from;             // what the rank was taken from
  std::optional<uint32_t> folder_rank;  // the number in a rank folder's name, checked when linking
  std::string folder;
};

// Rank pairs in a folder: a sub-folder per rank holding one host ET and one Kineto trace, or
// files in the folder itself. A pair's rank is the one its Kineto trace states, else the
// number in the sub-folder's or the files' names. Files named like this run's outputs
// (`output_stem`.N.json[.gz], from an earlier run into the same folder) are not inputs.
std::vector<Pair> find_pairs(const std::string& dir, const std::string& output_stem) {
  std::map<std::string, std::vector<std::string>> hosts, devices;  // folder → files
  std::map<std::string, uint32_t> stated;  // Kineto trace → the rank it states
  const fs::path stem = fs::absolute(output_stem).lexically_normal();
  auto is_output = [&](const fs::path& p) {
    if (p.parent_path() != stem.parent_path()) return false;
    std::string name = p.filename().string(), prefix = stem.filename().string() + ".";
    return name.rfind(prefix, 0) == 0 && chakra::rank_from_file_name(name).has_value();
  };
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string p = e.path().string();
    if (!e.is_regular_file() || !(chakra::ends_with(p, ".json") || chakra::ends_with(p, ".json.gz"))) continue;
    if (is_output(fs::absolute(e.path()).lexically_normal())) continue;
    std::optional<uint32_t> rank;
    FileKind k = sniff(p, &rank);
    std::string folder = e.path().parent_path().string();
    if (k == FileKind::Host) hosts[folder].push_back(p);
    if (k == FileKind::Device) devices[folder].push_back(p);
    if (rank) stated[p] = *rank;
  }
  auto stated_rank = [&](const std::string& d) -> std::optional<int64_t> {
    if (auto it = stated.find(d); it != stated.end()) return it->second;
    return std::nullopt;
  };
  std::vector<Pair> pairs;
  std::map<int64_t, std::string> seen;
  auto add = [&](Pair pair, std::optional<int64_t> rank) {
    if (!rank) throw chakra::Error(pair.host + ": cannot tell the rank from the folder or file name");
    if (seen.count(*rank))
      throw chakra::Error(dir + ": two pairs for rank " + std::to_string(*rank) + ": " + seen[*rank] + " and " +
                          pair.host);
    seen[*rank] = pair.host;
    pair.rank = *rank;
    pairs.push_back(std::move(pair));
  };
  for (auto& [folder, hs] : hosts) {
    std::vector<std::string>& ds = devices[folder];
    if (ds.empty()) continue;  // host ETs alone (e.g. outputs of an earlier link) are not pairs
    if (hs.size() == 1 && ds.size() == 1 && folder != fs::path(dir).lexically_normal().string()) {
      Pair pair{hs[0], ds[0], 0, "the Kineto trace's distributedInfo", chakra::rank_from_file_name(folder), folder};
      std::optional<int64_t> rank = stated_rank(ds[0]);
      if (!rank) rank = pair.folder_rank, pair.rank_from = "the folder's name";
      if (!rank) rank = chakra::rank_from_file_name(hs[0]), pair.rank_from = "the host ET's file name";
      add(std::move(pair), rank);
      continue;
    }
    std::map<int64_t, std::string> device_by_rank;
    for (const std::string& d : ds) {
      std::optional<int64_t> r = stated_rank(d);
      if (!r) r = chakra::rank_from_file_name(d);
      if (r) {
        if (device_by_rank.count(*r))
          throw chakra::Error(folder + ": two Kineto traces for rank " + std::to_string(*r) + ": " + device_by_rank[*r] +
                              " and " + d);
        device_by_rank[*r] = d;
      }
    }
    for (const std::string& h : hs) {
      std::optional<int64_t> r = chakra::rank_from_file_name(h);
      if (!r || !device_by_rank.count(*r))
        throw chakra::Error(h + ": no Kineto trace with the same rank number next to it (put each rank's pair in "
                                "its own folder, e.g. rank3/)");
      add({h, device_by_rank[*r], 0, "the host ET's file name, matched to the Kineto trace's rank", {}, ""}, r);
    }
  }
  if (pairs.empty()) throw chakra::Error(dir + ": no host ET + Kineto trace pairs found");
  std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.rank < b.rank; });
  return pairs;
}

// Links every rank in parallel; nothing is published unless all succeed.
int link_folder(const cli::Args& a, const std::string& dir, const std::string& prefix, Verbosity v) {
  // OUT may be "dir/name", "dir/name.json" or "dir/name.json.gz" (compressed outputs).
  std::string stem = prefix, suffix = ".json";
  if (chakra::ends_with(stem, ".gz")) stem.resize(stem.size() - 3), suffix = ".json.gz";
  if (chakra::ends_with(stem, ".json")) stem.resize(stem.size() - 5);
  std::vector<Pair> pairs = find_pairs(dir, stem);
  const size_t all_pairs = pairs.size();
  const auto shard = cli::shard_option(a);
  if (shard) std::erase_if(pairs, [&](const Pair& p) { return !shard->has(p.rank); });
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
  args.option("--output", "OUT", "linked JSON (.gz: compressed); for a folder, the prefix of OUT.{rank}.json", "", true);
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
  if (level == "DEBUG" || level == "INFO" || level == "NOTSET") v = Verbosity::All;
  else if (level == "WARNING" || level == "WARN") v = Verbosity::Warnings;
  else if (level == "ERROR" || level == "CRITICAL" || level == "FATAL") v = Verbosity::Quiet;
  else a.fail("--log-level: unknown level '" + a.get("--log-level") + "'");
  int rc = link_single(a, a.get("--chakra-host-trace"), a.get("--chakra-device-trace"), a.get("--output-file"), v,
                       false);
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
