// chakra convert {text,pytorch}, and the drop-in chakra_converter.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "chakra/astra/config.h"
#include "chakra/astra/text_workload.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/support/error.h"
#include "chakra/trace/schema.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

// Messages go to stderr and, for the drop-in tool, also to its log file (as the reference's
// logging does).
class Log {
 public:
  explicit Log(std::string prog) : prog_(std::move(prog)) {}
  void open(const std::string& path) {
    file_.open(path, std::ios::trunc);
    if (!file_) throw chakra::Error(path + ": cannot open the log file");
  }
  void warn(const std::string& m) { line("WARNING", m, true); }
  void info(const std::string& m) { line("INFO", m, false); }
  // Debug lines (--simulate) go to the log file, or to stdout when there is none.
  void debug(const std::string& m) {
    if (file_)
      file_ << "DEBUG " << m << "\n";
    else
      std::cout << m << "\n";
  }

 private:
  void line(const char* level, const std::string& m, bool to_stderr) {
    if (to_stderr) std::cerr << prog_ << ": warning: " << m << "\n";
    if (file_) file_ << level << " " << m << "\n" << std::flush;
  }
  std::string prog_;
  std::ofstream file_;
};

Log* g_log = nullptr;  // the log of the running command (one command per process)

// Writes PREFIX.{npu}.et for every NPU; the files appear only once all are complete.
int convert_text(const std::string& input, const std::string& prefix, uint32_t npus, uint32_t passes) {
  if (npus == 0) throw chakra::Error("--num-npus must be at least 1");
  if (passes == 0) throw chakra::Error("--num-passes must be at least 1");
  chakra::TextWorkload w = chakra::parse_text_workload(chakra::read_file(input), input);
  for (const std::string& m : w.warnings) g_log->warn(m);
  cli::TerminalProgress progress;
  cli::EtFileSet outputs;
  uint64_t first_id = 0;
  for (uint32_t npu = 0; npu < npus; ++npu) {
    if (!progress.report("writing traces", npu, npus)) throw chakra::Cancelled();
    chakra::Trace t = chakra::text_workload_trace(w, passes, first_id);
    first_id += t.size();
    outputs.add(prefix + "." + std::to_string(npu) + ".et", t);
  }
  outputs.commit();
  progress.clear();
  g_log->info("Conversion successful. Output files are available at " + prefix + ".{0.." + std::to_string(npus - 1) +
              "}.et");
  return cli::kOk;
}

int run_text(const cli::Args& a) {
  return convert_text(a.values("IN")[0], a.get("--output"), static_cast<uint32_t>(a.get_uint("--num-npus", UINT32_MAX)),
                      static_cast<uint32_t>(a.get_uint("--num-passes", UINT32_MAX)));
}

int run_reference_text(const cli::Args& a) {
  return convert_text(a.get("--input"), a.get("--output"), static_cast<uint32_t>(a.get_uint("--num-npus", UINT32_MAX)),
                      static_cast<uint32_t>(a.get_uint("--num-passes", UINT32_MAX)));
}

const char* kTextHelp =
    "Convert an ASTRA-sim 1.0 text workload (a layer table) into one Chakra trace per NPU,\n"
    "PREFIX.{npu}.et. For the types mlcommons/chakra's converter supports (MICRO, DATA, MODEL,\n"
    "HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM[_ENHANCED]) the files are byte-identical\n"
    "to its output; HYBRID_TRANSFORMER[_FWD_IN_BCKWD], HYBRID_CUSTOMIZED and\n"
    "DISTRIBUTED_INFERENCE, which it rejects, follow ASTRA-sim 1.0's training loops\n"
    "(core/docs/text-workloads.md). No file is written unless all are.";

int text_command(const std::string& prog, int argc, char** argv) {
  cli::Args args(prog, kTextHelp);
  args.positional("IN", "text workload");
  args.option("--num-npus", "N", "number of NPUs (one trace each)", "", true);
  args.option("--num-passes", "P", "training iterations in each trace", "1");
  args.option("--output", "PREFIX", "output prefix: writes PREFIX.{npu}.et", "", true);
  args.alias("-o", "--output");
  args.parse(argc, argv);
  return cli::run_guarded(prog, run_text, args);
}

// ---- PyTorch ----

struct PytorchJob {
  std::string input, output;
  std::optional<int64_t> rank;
};

chakra::PytorchConvertOptions pytorch_options(const cli::Args& a) {
  chakra::PytorchConvertOptions o;
  o.reference_bytes = a.has("--reference-bytes");
  o.replay_model = !a.has("--reference-graph");
  o.break_cycles = a.has("--break-cycles");
  if (a.has("--rank")) o.rank = static_cast<int64_t>(a.get_uint("--rank", INT64_MAX));
  return o;
}

// "OUT: N nodes from H (G GPU ops, P pruned), n TYPE, ..." for one converted trace.
std::string summary_line(const chakra::PytorchConvertResult& r, const std::string& output) {
  uint64_t counts[chakra::kNodeTypeCount] = {};
  for (uint32_t n = 0; n < r.trace.size(); ++n)
    if (r.trace.type(n) >= 0 && r.trace.type(n) < chakra::kNodeTypeCount) ++counts[r.trace.type(n)];
  std::string line = output + ": " + std::to_string(r.trace.size()) + " nodes from " + std::to_string(r.host_nodes) +
                     " (" + std::to_string(r.gpu_nodes) + " GPU ops, " + std::to_string(r.pruned) + " pruned)";
  for (int32_t ty = 0; ty < chakra::kNodeTypeCount; ++ty)
    if (counts[ty]) line += ", " + std::to_string(counts[ty]) + " " + std::string(chakra::node_type_name(ty));
  return line;
}

void report(const std::vector<std::string>& warnings, const std::string& line) {
  for (const std::string& m : warnings) g_log->warn(m);
  g_log->info(line);
  std::cerr << line << "\n";
}

void write_comm_groups(const std::map<std::string, std::vector<int64_t>>& groups, const std::string& path) {
  chakra::OutputFile f(path);
  f.write(chakra::astra::format_comm_groups(groups));
  f.commit();
  g_log->info("process groups written to " + path);
}

// --slurm: the folder's ranks converted as a Slurm array (a shard per task), then their process
// groups joined (merge-groups) once every task succeeded.
int convert_on_slurm(const cli::Args& a, const std::string& input, const std::string& output) {
  if (a.has("--shard")) a.fail("--slurm makes the shards itself; give no --shard");
  if (a.has("--comm-groups")) a.fail("--comm-groups with --slurm: the groups go to PREFIX.comm_group.json");
  size_t ranks = 0;
  for (const auto& entry : fs::directory_iterator(input)) {
    const std::string p = entry.path().string();
    ranks += entry.is_regular_file() && (chakra::ends_with(p, ".json") || chakra::ends_with(p, ".json.gz"));
  }
  if (ranks == 0) throw chakra::Error(input + ": no .json or .json.gz traces in this folder");
  const std::string chakra = cli::shell_quote(cli::self_path()), prefix = fs::absolute(output).string();
  cli::SlurmJobs jobs;
  jobs.name = "chakra-convert";
  jobs.dir = prefix + ".slurm";
  jobs.tasks = cli::slurm_tasks(a, ranks);
  std::string flags;
  for (const char* f : {"--reference-bytes", "--reference-graph", "--break-cycles"})
    if (a.has(f)) flags += std::string(" ") + f;
  jobs.array_command = chakra + " convert pytorch " + cli::shell_quote(fs::absolute(input).string()) + " -o " +
                       cli::shell_quote(prefix) + " --shard $SLURM_ARRAY_TASK_ID/" + std::to_string(jobs.tasks) + flags;
  jobs.gather_command = chakra + " convert merge-groups " + cli::shell_quote(prefix);
  jobs.result = "the traces will be " + prefix + ".{rank}.et (" + std::to_string(ranks) + " ranks)";
  cli::create_output_folder(output);
  return cli::submit_slurm(a, jobs);
}

std::string groups_part_path(const std::string& output, const chakra::sweep::Shard& s) {
  return output + ".comm_group.part-" + std::to_string(s.index) + "-of-" + std::to_string(s.count) + ".json";
}

// chakra convert merge-groups PREFIX: the shards' parts of the process groups joined into
// PREFIX.comm_group.json, as one unsharded conversion writes it.
int run_merge_groups(const cli::Args& a) {
  const std::string prefix = a.values("PREFIX")[0];
  const fs::path dir = fs::path(prefix).parent_path().empty() ? fs::path(".") : fs::path(prefix).parent_path();
  const std::string stem = fs::path(prefix).filename().string() + ".comm_group.part-";
  uint32_t count = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const size_t of = name.rfind("-of-");
    if (name.rfind(stem, 0) == 0 && of != std::string::npos && chakra::ends_with(name, ".json")) {
      const std::string k = name.substr(of + 4, name.size() - of - 4 - 5);
      if (!k.empty() && k.size() < 7 && k.find_first_not_of("0123456789") == std::string::npos)
        count = static_cast<uint32_t>(std::stoul(k));
    }
  }
  if (count == 0)
    throw chakra::Error(prefix + ": no " + stem +
                        "I-of-K.json parts (chakra convert pytorch DIR -o PREFIX --shard i/K writes them)");
  std::map<std::string, std::vector<int64_t>> groups;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string part = groups_part_path(prefix, {i, count});
    if (!fs::exists(part))
      throw chakra::Error(part + ": missing (shard " + std::to_string(i) + "/" + std::to_string(count) +
                          " has not run)");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(chakra::read_file(part, {}));
    } catch (const nlohmann::json::exception& e) {
      throw chakra::Error(part + ": " + e.what());
    }
    if (!j.is_object()) throw chakra::Error(part + ": not a comm-group JSON object");
    for (const auto& [name, ranks] : j.items()) {
      std::vector<int64_t> r;
      for (const auto& x : ranks) {
        if (!x.is_number_integer())
          throw chakra::Error(part + ": group " + name + " has a rank that is not an integer");
        r.push_back(x.get<int64_t>());
      }
      auto [it, fresh] = groups.emplace(name, r);
      if (!fresh && it->second != r) g_log->warn("process group " + name + " lists different ranks in " + part);
    }
  }
  const std::string groups_path = prefix + ".comm_group.json";
  if (groups.empty()) {
    std::cerr << "no process groups in these traces, so no " << groups_path << "\n";
    return cli::kOk;
  }
  write_comm_groups(groups, groups_path);
  std::cerr << count << " parts -> " << groups_path << "\n";
  return cli::kOk;
}

int convert_one(const std::string& input, const std::string& output, chakra::PytorchConvertOptions options,
                const cli::Args& a) {
  cli::TerminalProgress progress;
  options.progress = &progress;
  chakra::PytorchConvertResult r = chakra::convert_pytorch(chakra::open_input(input), options);
  cli::create_output_folder(output);
  chakra::write_et(r.trace, output);
  progress.clear();
  report(r.warnings, summary_line(r, output));
  if (a.has("--comm-groups")) write_comm_groups(r.process_groups, a.get("--comm-groups"));
  if (a.has("--simulate"))
    for (const std::string& line : chakra::simulate_conversion(r.trace, &progress)) g_log->debug(line);
  progress.clear();
  return cli::kOk;
}

int run_pytorch(const cli::Args& a) {
  const std::string input = a.values("IN")[0];
  const std::string output = a.get("--output");
  chakra::PytorchConvertOptions options = pytorch_options(a);
  if (!std::filesystem::is_directory(input)) {
    if (a.has("--shard") || a.has("--slurm"))
      a.fail("--shard and --slurm share a folder of ranks; a single trace is not one");
    return convert_one(input, output, options, a);
  }
  if (a.has("--simulate")) a.fail("--simulate takes a single trace, not a folder");
  if (a.has("--slurm")) return convert_on_slurm(a, input, output);
  // A folder of per-rank traces: PREFIX.{rank}.et for each, plus the merged process groups.
  std::vector<PytorchJob> jobs;
  std::map<int64_t, std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(input)) {
    std::string p = entry.path().string();
    if (!entry.is_regular_file() || !(chakra::ends_with(p, ".json") || chakra::ends_with(p, ".json.gz"))) continue;
    std::optional<int64_t> rank = chakra::rank_from_file_name(p);
    if (!rank) throw chakra::Error(p + ": cannot tell the rank from the file name (expected a number in it)");
    if (seen.count(*rank))
      throw chakra::Error(input + ": two files for rank " + std::to_string(*rank) + ": " + seen[*rank] + " and " + p);
    seen[*rank] = p;
    jobs.push_back({p, output + "." + std::to_string(*rank) + ".et", rank});
  }
  if (jobs.empty()) throw chakra::Error(input + ": no .json or .json.gz traces in this folder");
  const size_t all_ranks = jobs.size();
  const auto shard = cli::shard_option(a);
  if (shard) {
    if (a.has("--comm-groups"))
      a.fail("--comm-groups with --shard: each shard writes its part, merged by chakra convert merge-groups");
    std::erase_if(jobs, [&](const PytorchJob& j) { return !shard->has(static_cast<uint64_t>(*j.rank)); });
  }
  // Ranks in order: where ranks disagree on a group, the first rank's is kept, sharded or not.
  std::sort(jobs.begin(), jobs.end(), [](const PytorchJob& x, const PytorchJob& y) { return *x.rank < *y.rank; });
  std::vector<chakra::PytorchConvertResult> results(jobs.size());
  std::vector<std::string> lines(jobs.size());
  std::vector<std::unique_ptr<chakra::OutputFile>> files(jobs.size());
  cli::create_output_folder(output);
  cli::run_jobs(jobs.size(), [&](size_t i) {  // no file is published unless all ranks convert
    chakra::PytorchConvertOptions o = options;
    o.rank = jobs[i].rank;
    results[i] = chakra::convert_pytorch(chakra::open_input(jobs[i].input), o);
    files[i] = std::make_unique<chakra::OutputFile>(jobs[i].output);
    chakra::write_et(results[i].trace, *files[i]);
    files[i]->finish();
    lines[i] = summary_line(results[i], jobs[i].output);
    results[i].trace = chakra::Trace();  // release memory early
  });
  std::map<std::string, std::vector<int64_t>> groups;
  for (size_t i = 0; i < jobs.size(); ++i) {
    files[i]->commit();
    report(results[i].warnings, lines[i]);
    for (const auto& [name, ranks] : results[i].process_groups) {
      auto [it, fresh] = groups.emplace(name, ranks);
      if (!fresh && it->second != ranks)
        g_log->warn("process group " + name + " lists different ranks in " + jobs[i].input);
    }
  }
  g_log->info("converted " + std::to_string(jobs.size()) + " ranks to " + output + ".{rank}.et");
  std::cerr << "converted " << jobs.size() << " ranks to " << output << ".{rank}.et"
            << (shard ? " (shard " + a.get("--shard") + " of " + std::to_string(all_ranks) + " ranks)" : "") << "\n";
  if (shard) {
    // The shard's part of the process groups, even when empty, so that the merge sees it ran.
    const std::string part = groups_part_path(output, *shard);
    write_comm_groups(groups, part);
    std::cerr << "process groups of these ranks: " << part << " (chakra convert merge-groups " << output
              << " joins the parts)\n";
    return cli::kOk;
  }
  std::string groups_path = a.has("--comm-groups") ? a.get("--comm-groups") : output + ".comm_group.json";
  if (!groups.empty() || a.has("--comm-groups")) {
    write_comm_groups(groups, groups_path);
  } else {
    const std::string why = "no process groups in these traces, so no " + groups_path +
                            " (their collectives span all ranks; simulate them without --comm-group)";
    g_log->info(why);
    std::cerr << why << "\n";
  }
  return cli::kOk;
}

void add_pytorch_options(cli::Args& args) {
  args.flag("--reference-bytes",
            "reproduce the reference's output exactly, defects included (dangling ctrl_deps on pruned nodes, SEND/RECV "
            "without comm_src/comm_dst/comm_tag)");
  args.flag("--reference-graph",
            "for linked traces: the reference's dependencies and durations (defects fixed) instead of the replay model "
            "(GPU ops in stream order, CPU ops at their own time, a lane per thread and stream in chakra simulate; "
            "core/docs/pytorch-replay.md)");
  args.flag("--simulate",
            "after writing, run the reference's toy scheduler (1 µs ticks, a CPU and one GPU op per stream) and log "
            "when each node is issued and completes");
  args.flag("--break-cycles", "drop the closing edge of dependency cycles instead of failing");
  args.option(
      "--rank", "R",
      "this trace's global rank (comm_src of SEND, comm_dst of RECV nodes); a folder takes ranks from file names");
  args.option("--comm-groups", "FILE",
              "write the process groups as ASTRA-sim comm-group JSON (folder input: default PREFIX.comm_group.json)");
}

const char* kPytorchHelp =
    "Convert a PyTorch execution trace (host ET JSON, or one linked with Kineto by `chakra link`)\n"
    "into a Chakra .et trace, as mlcommons/chakra's chakra_converter does, with its defects fixed:\n"
    "unknown NCCL collectives are converted with a warning instead of aborting, pruned nodes leave\n"
    "no dangling ctrl_deps, SEND/RECV nodes get comm_src/comm_dst/comm_tag, cycles are reported\n"
    "with the nodes on them. A linked trace (best linked with --sync-deps) becomes a replay of what\n"
    "ran: measured start times, GPU ops in stream order, CPU ops at their own time without the time\n"
    "they were blocked, which `chakra simulate` compares with its result.\n"
    "IN may be a folder of per-rank traces: each becomes PREFIX.{rank}.et.";

int pytorch_command(const std::string& prog, int argc, char** argv) {
  cli::Args args(prog, kPytorchHelp);
  args.positional("IN", "host ET or linked JSON (plain or gzip), or a folder of them");
  args.option("--output", "OUT", "output .et (a folder: output prefix)", "", true);
  args.alias("-o", "--output");
  add_pytorch_options(args);
  cli::add_shard_option(args);
  cli::add_slurm_options(args, "ranks");
  args.parse(argc, argv);
  return cli::run_guarded(prog, run_pytorch, args);
}

}  // namespace

int cmd_convert(int argc, char** argv) {
  Log log("chakra convert");
  g_log = &log;
  std::string kind = argc > 0 ? argv[0] : "";
  if (kind == "text") return text_command("chakra convert text", argc - 1, argv + 1);
  if (kind == "pytorch") return pytorch_command("chakra convert pytorch", argc - 1, argv + 1);
  if (kind == "merge-groups") {
    cli::Args args("chakra convert merge-groups",
                   "Join the process-group parts that `chakra convert pytorch DIR -o PREFIX --shard i/K` wrote\n"
                   "(PREFIX.comm_group.part-I-of-K.json) into PREFIX.comm_group.json, as one unsharded run writes it.");
    args.positional("PREFIX", "the -o PREFIX the shards converted to");
    args.parse(argc - 1, argv + 1);
    return cli::run_guarded("chakra convert merge-groups", run_merge_groups, args);
  }
  bool help = kind == "-h" || kind == "--help";
  (help ? std::cout : std::cerr)
      << "usage: chakra convert {text,pytorch} ...\n\n"
         "  text      ASTRA-sim 1.0 text workload -> PREFIX.{npu}.et (see 'chakra convert text -h')\n"
         "  pytorch   PyTorch execution trace (plain or linked) -> .et (see 'chakra convert pytorch -h')\n"
         "  merge-groups  join the process groups of sharded conversions (--shard i/K)\n";
  return help ? cli::kOk : cli::kUsage;
}

namespace {

int run_reference_pytorch(const cli::Args& a) {
  convert_one(a.get("--input"), a.get("--output"), pytorch_options(a), a);
  g_log->info("Conversion successful. Output file is available at " + a.get("--output") + ".");
  return cli::kOk;
}

}  // namespace

// chakra_converter [--log-filename F] {PyTorch,Text} ...: the reference's command line.
int cmd_reference_converter(int argc, char** argv) {
  Log log("chakra_converter");
  g_log = &log;
  std::string log_file = "debug.log";
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--log-filename" && i + 1 < argc) {
      log_file = argv[++i];
    } else if (a.rfind("--log-filename=", 0) == 0) {
      log_file = a.substr(15);
    } else {
      break;
    }
  }
  std::string sub = i < argc ? argv[i] : "";
  if (sub != "PyTorch" && sub != "Text") {
    bool help = sub.empty() || sub == "-h" || sub == "--help";
    (help ? std::cout : std::cerr)
        << "usage: chakra_converter [-h] [--log-filename LOG_FILENAME] {Text,PyTorch} ...\n\n"
           "Drop-in replacement for mlcommons/chakra's chakra_converter (see `chakra convert`).\n"
           "  Text      ASTRA-sim 1.0 text workload -> PREFIX.{npu}.et\n"
           "  PyTorch   PyTorch execution trace (plain or linked) -> .et\n";
    if (!help) std::cerr << "chakra_converter: error: unknown subcommand '" << sub << "'\n";
    return help ? cli::kOk : cli::kUsage;
  }
  cli::Args args("chakra_converter " + sub, sub == "Text" ? kTextHelp : kPytorchHelp);
  args.allow_abbreviations();
  args.option("--input", "INPUT", "input file", "", true);
  args.option("--output", "OUTPUT", sub == "Text" ? "output prefix" : "output .et file", "", true);
  if (sub == "Text") {
    args.option("--num-npus", "NUM_NPUS", "number of NPUs", "", true);
    args.option("--num-passes", "NUM_PASSES", "number of training passes", "", true);
  } else {
    add_pytorch_options(args);
  }
  args.parse(argc - i - 1, argv + i + 1);
  try {
    log.open(log_file);
  } catch (const chakra::Error& e) {
    std::cerr << "chakra_converter: error: " << e.what() << "\n";
    return cli::kFailed;
  }
  return cli::run_guarded("chakra_converter", sub == "Text" ? run_reference_text : run_reference_pytorch, args);
}

CHAKRA_COMMAND(60, "convert", cmd_convert, "PyTorch execution traces or ASTRA-sim 1.0 text workloads -> .et");
CHAKRA_ALIAS("chakra_converter", cmd_reference_converter);
