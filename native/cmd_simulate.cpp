// chakra simulate and the drop-in AstraSim_Analytical_Congestion_Unaware / _Aware: replay
// per-NPU traces on ASTRA-sim's analytical model, print its per-NPU lines and a summary.
#include <cstdio>
#include <optional>
#include <filesystem>
#include <iostream>
#include <span>
#include <utility>

#include "chakra/analysis/critical_path.h"
#include "chakra/analysis/sim_report.h"
#include "chakra/app/sim_presets.h"
#include "chakra/app/workspace.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"

namespace {

using namespace chakra;
using namespace chakra::astra;
using namespace chakra::sim;

struct Request {
  SimInputs in;
  SimOptions opt;
  std::string json_out, timeline_out, times_out;
  uint32_t folder_npus = 0;        // --workload FOLDER: the NPUs it has traces for
  std::vector<std::string> notes;  // what was inferred (a folder's prefix and groups)
  bool summary = true;
  size_t critical_path_steps = 0;  // > 0: print the critical path's longest steps
  std::optional<cli::WhatIf> what_if;
};

// The outputs' folders, checked before the run: a long simulation is not lost to a typo.
void check_outputs(const Request& q) {
  if (!q.json_out.empty()) cli::check_output_path(q.json_out, "--json");
  if (!q.timeline_out.empty()) cli::check_output_path(q.timeline_out, "--timeline");
  if (!q.times_out.empty()) cli::check_output_path(q.times_out, "--times-out", true);
}

// The NPUs' traces, read again (the simulator does not keep them), once for what needs them.
std::vector<chakra::Trace> npu_traces(const Request& q, size_t npus) {
  std::vector<chakra::Trace> traces;
  for (uint32_t i = 0; i < npus; ++i) traces.push_back(chakra::read_et(npu_trace_file(q.in.workload, i), q.in.read));
  return traces;
}

// The run's critical path across NPUs, on their traces with the simulated times.
void print_critical_path(const Request& q, const SimResult& r, const std::vector<chakra::Trace>& traces) {
  std::vector<chakra::RankTimes> times;
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < traces.size(); ++i)
    times.push_back(chakra::simulated_times(traces[i], r.spans, i)), ids.push_back(i);
  const chakra::CrossRankPath path = chakra::critical_path_across_ranks(times);
  std::cout << "\n" << chakra::critical_path_text(path, times, ids, q.critical_path_steps, "ns");
}

// Each NPU's trace with its simulated times, as PREFIX.<npu>.et: for chakra diff against the
// measured traces, chakra analyze, or any viewer. Replays of measured traces keep their clock
// (time 0 is the earliest rank's measured start). The traces are taken, not copied.
void write_simulated_traces(const Request& q, const SimResult& r, std::vector<chakra::Trace>& traces) {
  uint64_t origin = UINT64_MAX;
  for (const chakra::Trace& t : traces) {
    std::optional<uint64_t> start;
    for (uint32_t a = 0; a < t.metadata_attrs().size(); ++a)
      if (t.metadata_attr(a).name() == chakra::kReplayStartAttr) start = t.metadata_attr(a).as_uint64();
    origin = start && origin != 0 ? std::min(origin, *start) : 0;
  }
  if (origin == 0 || origin == UINT64_MAX) origin = 1;  // 0 would mean "no time recorded"
  cli::write_rank_traces(q.times_out, traces.size(),
                         [&](size_t i, chakra::Trace& t) {
                           t = std::move(traces[i]);
                           chakra::set_simulated_times(t, r.spans, static_cast<uint32_t>(i), origin);
                         },
                         "", {});
}

int run(const Request& q) {
  cli::TerminalProgress progress;
  SimOptions opt = q.opt;
  opt.progress = &progress;
  opt.record_spans = !q.timeline_out.empty() || q.critical_path_steps > 0 || !q.times_out.empty();
  check_outputs(q);
  if (q.folder_npus && q.folder_npus != q.in.network.total_npus())
    throw chakra::Error(q.in.workload + ".<npu>.et: traces for " + std::to_string(q.folder_npus) +
                        " NPUs, the network has " + std::to_string(q.in.network.total_npus()) +
                        " (with --preset, --npus " + std::to_string(q.folder_npus) + " fits its network to them)");
  for (const std::string& note : q.notes) std::cerr << "note: " << note << "\n";
  for (const std::string& note : q.in.system.notes) std::cerr << "note: " << note << "\n";
  SimResult r = simulate(q.in, opt);
  progress.clear();
  std::string text = chakra::astra_finish_lines(r);
  if (q.summary) text += chakra::sim_summary_text(r);
  std::fwrite(text.data(), 1, text.size(), stdout);
  const bool path = q.critical_path_steps > 0 && !r.deadlock;
  std::vector<chakra::Trace> traces =
      path || !q.times_out.empty() ? npu_traces(q, r.npus.size()) : std::vector<chakra::Trace>{};
  if (path) print_critical_path(q, r, traces);
  if (!q.times_out.empty()) write_simulated_traces(q, r, traces);
  std::optional<SimResult> what_if_run;
  if (q.what_if && !r.deadlock) {
    SimOptions faster = opt;
    faster.record_spans = false;
    faster.compare_stall_modes = false;
    faster.speedups.push_back({q.what_if->name_part, q.what_if->speedup});
    const SimResult& w = what_if_run.emplace(simulate(q.in, faster));
    progress.clear();
    const double before = static_cast<double>(r.end()), after = static_cast<double>(w.end());
    char change[32];
    std::snprintf(change, sizeof change, "%+.2f%%", before > 0 ? 100.0 * (after - before) / before : 0.0);
    std::cout << "\nwhat if nodes named *" << q.what_if->name_part << "* ran "
              << chakra::format_number(q.what_if->speedup) << "x faster (simulated again): step " << r.end() << " -> "
              << w.end() << " ns (" << change << ")" << (w.deadlock ? "; that run deadlocked" : "") << "\n";
  }
  if (!q.json_out.empty()) {
    chakra::OutputFile out(q.json_out);
    chakra::write_sim_json(r, out, [&](chakra::JsonWriter& w) {
      if (!what_if_run) return;
      w.key("what_if").begin_object();
      w.key("name_contains").value(q.what_if->name_part).key("speedup").value_double(q.what_if->speedup);
      w.key("makespan_ns").value_uint(what_if_run->end()).key("deadlock").value(what_if_run->deadlock);
      w.end_object();
    });
    out.commit();
  }
  if (!q.timeline_out.empty()) {
    chakra::OutputFile out(q.timeline_out);
    chakra::write_sim_chrome_trace(r, out);
    out.commit();
  }
  if (r.deadlock) {
    std::cerr << "deadlock: some NPUs of " << q.in.workload << ".*.et could not finish\n";
    size_t shown = 0;
    for (uint32_t i = 0; i < r.npus.size() && shown < 20; ++i)
      for (const std::string& s : r.npus[i].stuck) {
        if (shown++ == 20) break;
        std::cerr << "  NPU " << i << ": " << s << "\n";
      }
    return cli::kFailed;
  }
  return cli::kOk;
}

std::string preset_names() {
  std::string out;
  for (const ClusterPreset& p : cluster_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

// "unaware or aware", "unaware|aware": the backends' spellings joined.
std::string backend_spellings(const char* separator, const char* last) {
  std::string out;
  auto all = network_backends();
  for (size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? last : separator) + std::string(all[i].spelling);
  return out;
}

Backend backend_named(const cli::Args& a, const std::string& name) {
  for (const BackendInfo& b : network_backends())
    if (name == b.spelling) return b.backend;
  a.fail("--backend must be " + backend_spellings(", ", " or "));
}

// A configuration file given to `option`, which takes `wanted`: a file of another kind this tool
// knows (a system JSON given as --network...) is named as what it is, from what it has.
void expect_kind(const std::string& path, const std::string& option, chakra::InputKind wanted) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return;  // the loader names what is wrong
  const std::string head = cli::read_head(path);
  const auto bytes = std::span(reinterpret_cast<const uint8_t*>(head.data()), head.size());
  const auto [kind, evidence] = chakra::sniff_input(path, bytes);
  if (kind == wanted || kind == chakra::InputKind::Unknown) return;
  std::string what = path + " is " + chakra::with_article(chakra::input_kind_name(kind)) +
                     (evidence.empty() ? "" : " (it has " + evidence + ")") + ", given as " + option +
                     ", which takes " + chakra::with_article(chakra::input_kind_name(wanted));
  static const std::pair<chakra::InputKind, const char*> kOptionOf[] = {
      {chakra::InputKind::SystemJson, "--system"},
      {chakra::InputKind::NetworkYaml, "--network"},
      {chakra::InputKind::RemoteMemoryJson, "--remote-memory"},
      {chakra::InputKind::CommGroupJson, "--comm-group"}};
  for (const auto& [k, other] : kOptionOf)
    if (k == kind) what += std::string("; give it as ") + other;
  throw chakra::Error(what);
}

void load_common(Request& q, const std::string& workload, const std::string& system, const std::string& network,
                 const std::string& memory, const std::string& groups) {
  q.in.workload = workload;
  std::string groups_file = groups;
  std::error_code ec;
  if (std::filesystem::is_directory(workload, ec)) {
    // A folder of per-NPU traces: its prefix, and its comm groups unless some are given.
    const WorkloadFolder f = workload_folder(workload);
    q.in.workload = f.prefix;
    q.folder_npus = f.npus;
    std::string note = "workload " + workload + ": NPUs 0.." + std::to_string(f.npus - 1) + " read " +
                       npu_trace_file(f.prefix, 0) + (f.npus > 1 ? " to " + npu_trace_file(f.prefix, f.npus - 1) : "");
    if (groups.empty() && !f.comm_group.empty())
      groups_file = f.comm_group, note += "; communicator groups from " + f.comm_group + " (--comm-group empty: none)";
    q.notes.push_back(note);
  } else if (groups.empty()) {
    // A prefix: the groups file the converters write beside PREFIX.<npu>.et, said in a note (a
    // workload whose collectives name their groups is refused without one).
    const std::string beside = workload + ".comm_group.json";
    if (std::filesystem::is_regular_file(beside, ec)) {
      groups_file = beside;
      q.notes.push_back("communicator groups from " + beside +
                        ", beside the workload's traces (--comm-group empty: none)");
    }
  }
  expect_kind(network, "--network", chakra::InputKind::NetworkYaml);
  expect_kind(system, "--system", chakra::InputKind::SystemJson);
  expect_kind(memory, "--remote-memory", chakra::InputKind::RemoteMemoryJson);
  if (!network.empty()) q.in.network = load_network(network);
  if (!system.empty()) {
    q.in.system = load_system(system);
    q.in.system_source = system;
  }
  if (!memory.empty()) q.in.memory = load_remote_memory(memory);
  // As the reference: a path containing "empty" means no groups.
  if (!groups_file.empty() && groups_file.find("empty") == std::string::npos) {
    expect_kind(groups_file, "--comm-group", chakra::InputKind::CommGroupJson);
    q.in.groups = load_comm_groups(groups_file);
    q.in.groups_source = groups_file;
  }
}

int run_simulate(const cli::Args& a) {
  Request q;
  if (a.has("--preset")) {
    if (a.has("--system") || a.has("--network")) a.fail("give --preset or --system and --network, not both");
    const ClusterPreset& p = cluster_preset(a.get("--preset"));
    load_common(q, a.get("--workload"), "", "", a.get("--remote-memory"), a.get("--comm-group"));
    q.in.network = a.has("--npus") ? fit_network(p.network, a.get_uint("--npus", UINT32_MAX)) : p.network;
    q.in.system = p.system;
    fit_system(q.in.system, q.in.network.topology.size());
    q.in.system_source = "preset " + p.name;
  } else {
    if (!a.has("--system") || !a.has("--network")) a.fail("give --system and --network (or --preset)");
    if (a.has("--npus")) a.fail("--npus fits a --preset's network; edit the network file instead");
    load_common(q, a.get("--workload"), a.get("--system"), a.get("--network"), a.get("--remote-memory"),
                a.get("--comm-group"));
  }
  q.opt.backend = backend_named(a, a.get("--backend"));
  q.opt.queues_per_dim = static_cast<uint32_t>(a.get_uint("--num-queues-per-dim", 1024));
  q.opt.injection_scale = a.get_positive_double("--injection-scale");
  q.opt.rendezvous = a.has("--rendezvous");
  q.opt.every_npu = a.has("--every-npu");
  const std::string& stalls = a.get("--stalls");
  if (stalls == "wait")
    q.opt.stalls = StallMode::Wait;
  else if (stalls != "keep")
    a.fail("--stalls must be keep or wait");
  q.in.read = cli::read_options(a, nullptr);
  q.json_out = a.get("--json");
  q.timeline_out = a.get("--timeline");
  q.summary = !a.has("--no-summary");
  q.times_out = a.get("--times-out");
  if (a.has("--critical-path")) q.critical_path_steps = 20;
  if (a.has("--top")) q.critical_path_steps = a.get_uint("--top", 1000000);
  if (a.has("--what-if")) q.what_if = cli::parse_what_if(a, a.get("--what-if"));
  if (a.has("--slowdown")) {
    // A file of entries, or the entries themselves.
    const std::string& spec = a.get("--slowdown");
    std::error_code ec;
    q.opt.slowdown = std::filesystem::is_regular_file(spec, ec) ? parse_slowdowns(chakra::read_file(spec, {}), spec)
                                                                : parse_slowdowns(spec, "--slowdown");
  }
  return run(q);
}

void add_common(cli::Args& args) {
  args.option("--num-queues-per-dim", "N", "scheduling queues per network dimension", "1");
  args.option("--injection-scale", "X", "multiplies the system's endpoint-delay", "1");
}

Backend g_alias_backend;

int run_reference(const cli::Args& a) {
  Request q;
  load_common(q, a.get("--workload-configuration"), a.get("--system-configuration"), a.get("--network-configuration"),
              a.get("--remote-memory-configuration"), a.get("--comm-group-configuration"));
  q.opt.backend = g_alias_backend;
  q.opt.queues_per_dim = static_cast<uint32_t>(a.get_uint("--num-queues-per-dim", 1024));
  q.opt.injection_scale = a.get_positive_double("--injection-scale");
  a.get_positive_double("--compute-scale");  // accepted and unused, as in the reference
  a.get_positive_double("--comm-scale");
  const std::string& rdv = a.get("--rendezvous-protocol");
  if (rdv == "true" || rdv == "1")
    q.opt.rendezvous = true;
  else if (rdv != "false" && rdv != "0")
    a.fail("--rendezvous-protocol must be true or false");
  q.summary = false;
  return run(q);
}

int reference(int argc, char** argv, Backend backend, const char* prog) {
  g_alias_backend = backend;
  cli::Args args(prog,
                 "ASTRA-sim's analytical simulator, command-line compatible. Unlike the reference,\n"
                 "misspelt flags and bad configuration values are errors, a deadlock is reported\n"
                 "with the stuck nodes (exit 1), and the congestion-aware backend handles\n"
                 "multi-dimensional networks.");
  args.option("--workload-configuration", "PREFIX", "per-NPU traces PREFIX.<npu>.et", "", true);
  args.option("--system-configuration", "FILE", "system JSON", "", true);
  args.option("--network-configuration", "FILE", "network YAML", "", true);
  args.option("--remote-memory-configuration", "FILE", "remote-memory JSON", "");
  args.option("--comm-group-configuration", "FILE", "communicator groups JSON", "empty");
  args.option("--logging-configuration", "FILE", "accepted for compatibility (no log files)", "empty");
  args.option("--logging-folder", "DIR", "accepted for compatibility (no log files)", "log");
  add_common(args);
  args.option("--compute-scale", "X", "accepted, unused (as in the reference)", "1");
  args.option("--comm-scale", "X", "accepted, unused (as in the reference)", "1");
  args.option("--rendezvous-protocol", "BOOL", "8 KiB handshake before every send", "false");
  args.parse(argc, argv);
  return cli::run_guarded(prog, run_reference, args);
}

}  // namespace

int cmd_simulate(int argc, char** argv) {
  cli::Args args("chakra simulate",
                 "Replay per-NPU Chakra traces (PREFIX.<npu>.et, or a folder of them) on ASTRA-sim's\n"
                 "analytical model, with its configuration files, reproducing its per-NPU finish times\n"
                 "to the nanosecond. Prints ASTRA-sim's per-NPU lines (times in ns), then a summary.\n"
                 "Exit 1 with the stuck nodes per NPU when the traces deadlock.");
  args.option("--workload", "PREFIX|DIR",
              "per-NPU traces PREFIX.<npu>.et (or .et.gz), or a folder of them (with its comm_group.json)", "", true);
  args.option("--system", "FILE", "ASTRA-sim system JSON (or --preset)", "");
  args.option("--network", "FILE", "ASTRA-sim analytical network YAML (or --preset)", "");
  args.option("--preset", "NAME",
              "a cluster of assets/simulation/presets.json instead of --system and --network: " + preset_names(), "");
  args.option("--npus", "N", "with --preset: fit its network to N NPUs (default: the preset's count)", "");
  args.option("--remote-memory", "FILE", "remote-memory JSON (default: no memory expansion)", "");
  args.option("--comm-group", "FILE", "communicator groups JSON (default: PREFIX.comm_group.json when it exists)", "");
  args.option("--backend", backend_spellings("|", "|"), "network model: congestion-unaware or -aware", "unaware");
  add_common(args);
  args.flag("--rendezvous", "8 KiB handshake before every send (--rendezvous-protocol)");
  args.option("--stalls", "keep|wait",
              "host stalls of replayed PyTorch traces (chakra link --sync-deps finds them): replayed as the CPU time\n"
              "they were measured as (keep), or as waits for the GPU work they ended just after (wait); the\n"
              "summary gives the other's figures too (core/docs/pytorch-replay.md)",
              "keep");
  args.flag("--every-npu",
            "simulate each NPU even when they fall into classes of alike ones, or congestion-aware into orbits of the "
            "network's symmetries (by default one NPU of each then runs for it; same results)");
  args.option("--json", "OUT", "write per-NPU results and totals as JSON", "");
  args.option("--timeline", "OUT", "write a Chrome/Perfetto trace of every node on every NPU", "");
  args.flag("--no-summary", "print only ASTRA-sim's per-NPU lines");
  args.option("--times-out", "PREFIX",
              "write each NPU's trace with its simulated times as PREFIX.<npu>.et (for chakra diff and analyze)", "");
  args.flag("--critical-path", "print the run's critical path across NPUs (core/docs/analyses.md)");
  args.option("--top", "N", "with --critical-path: steps listed (default 20)", "");
  args.option("--what-if", "NAME=K",
              "simulate again with nodes whose name contains NAME K times faster (durations; sizes of collectives and "
              "messages) and print the new step",
              "");
  args.option("--slowdown", "SPEC|FILE",
              "slower NPUs and links: entries like npu=3:compute=1.5, npu=0-7:comm=2, npu=5:delay=20us,\n"
              "dim=1:bandwidth=0.5, separated by ';' (or one per line in a FILE; core/docs/simulator.md)",
              "");
  cli::add_read_options(args);
  args.parse(argc, argv);
  return cli::run_guarded("chakra simulate", run_simulate, args);
}

int cmd_reference_unaware(int argc, char** argv) {
  return reference(argc, argv, Backend::CongestionUnaware, "AstraSim_Analytical_Congestion_Unaware");
}
int cmd_reference_aware(int argc, char** argv) {
  return reference(argc, argv, Backend::CongestionAware, "AstraSim_Analytical_Congestion_Aware");
}

CHAKRA_COMMAND(130, "simulate", cmd_simulate,
               "replay per-NPU traces on ASTRA-sim's analytical network model (same numbers)");
CHAKRA_ALIAS("AstraSim_Analytical_Congestion_Unaware", cmd_reference_unaware);
CHAKRA_ALIAS("AstraSim_Analytical_Congestion_Aware", cmd_reference_aware);
