// chakra simulate and the drop-in AstraSim_Analytical_Congestion_Unaware / _Aware: replay
// per-NPU traces on ASTRA-sim's analytical model, print its per-NPU lines and a summary.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "chakra/format/chrome_trace.h"
#include "chakra/format/io.h"
#include "chakra/format/json_writer.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "cli.h"
#include "commands.h"

namespace {

using namespace chakra::sim;

struct Request {
  SimInputs in;
  SimOptions opt;
  std::string json_out, timeline_out;
  bool summary = true;
};

std::string ns_text(Tick t) {
  char buf[64];
  if (t >= 1000000000) std::snprintf(buf, sizeof buf, "%.3f s", double(t) / 1e9);
  else if (t >= 1000000) std::snprintf(buf, sizeof buf, "%.3f ms", double(t) / 1e6);
  else if (t >= 1000) std::snprintf(buf, sizeof buf, "%.3f us", double(t) / 1e3);
  else std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(t));
  return buf;
}

void print_npu_lines(const SimResult& r) {
  // ASTRA-sim prints NPUs in the order they finish (ties: rank order)
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < r.npus.size(); ++i)
    if (r.npus[i].finished) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return r.npus[a].finish < r.npus[b].finish; });
  std::string out;
  for (uint32_t i : order)
    out += "sys[" + std::to_string(i) + "] finished, " + std::to_string(r.npus[i].finish) +
           " cycles, exposed communication " + std::to_string(r.npus[i].exposed_comm) +
           " cycles.\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void print_summary(const SimResult& r) {
  Tick end = r.end();
  uint32_t slowest = 0;
  Tick compute = 0, comm = 0, overlap = 0, exposed = 0;
  uint32_t finished = 0;
  for (uint32_t i = 0; i < r.npus.size(); ++i) {
    const NpuResult& n = r.npus[i];
    if (!n.finished) continue;
    ++finished;
    if (n.finish >= r.npus[slowest].finish) slowest = i;
    compute += n.compute, comm += n.comm, overlap += n.overlap, exposed += n.exposed_comm;
  }
  std::printf("\nsummary: %u NPUs, %u finished, %llu messages, %llu events\n",
              static_cast<unsigned>(r.npus.size()), finished,
              static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.events));
  if (finished) {
    double k = 1.0 / finished;
    std::printf("  step time             %14s  (slowest: NPU %u)\n", ns_text(end).c_str(), slowest);
    std::printf("  mean compute busy     %14s\n", ns_text(Tick(compute * k)).c_str());
    std::printf("  mean comm busy        %14s\n", ns_text(Tick(comm * k)).c_str());
    std::printf("  mean overlap          %14s\n", ns_text(Tick(overlap * k)).c_str());
    std::printf("  mean exposed comm     %14s\n", ns_text(Tick(exposed * k)).c_str());
  }
  static const char* names[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                "broadcast"};
  bool header = false;
  for (int t = 0; t <= kCollectiveTypes; ++t) {
    const CollectiveTotals& c = r.collectives[t];
    if (!c.count) continue;
    if (!header) std::printf("  %-16s %10s %16s %16s\n", "collective", "count", "bytes", "mean time");
    header = true;
    std::printf("  %-16s %10llu %16llu %16s\n", names[t], static_cast<unsigned long long>(c.count),
                static_cast<unsigned long long>(c.bytes), ns_text(c.time / c.count).c_str());
  }
}

void write_json(const SimResult& r, const std::string& path) {
  chakra::OutputFile out(path);
  chakra::JsonWriter w(out, chakra::JsonStyle{});
  w.begin_object();
  w.key("end_ns").value_uint(r.end());
  w.key("deadlock").value(r.deadlock);
  w.key("messages").value_uint(r.messages);
  w.key("events").value_uint(r.events);
  w.key("npus").begin_array();
  for (const NpuResult& n : r.npus) {
    w.begin_object();
    w.key("finished").value(n.finished);
    w.key("finish_ns").value_uint(n.finish);
    w.key("exposed_comm_ns").value_uint(n.exposed_comm);
    w.key("compute_ns").value_uint(n.compute);
    w.key("comm_ns").value_uint(n.comm);
    w.key("cpu_ns").value_uint(n.cpu);
    w.key("memory_ns").value_uint(n.memory);
    w.key("overlap_ns").value_uint(n.overlap);
    w.key("nodes").value_uint(n.nodes);
    if (!n.stuck.empty()) {
      w.key("stuck").begin_array();
      for (const std::string& s : n.stuck) w.value(s);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array();
  static const char* names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                "broadcast"};
  w.key("collectives").begin_object();
  for (int t = 0; t <= kCollectiveTypes; ++t) {
    w.key(names[t]).begin_object();
    w.key("count").value_uint(r.collectives[t].count);
    w.key("bytes").value_uint(r.collectives[t].bytes);
    w.key("time_ns").value_uint(r.collectives[t].time);
    w.end_object();
  }
  w.end_object();
  w.end_object();
  w.raw("\n");
  w.flush();
  out.commit();
}

void write_timeline(const SimResult& r, const std::string& path) {
  chakra::OutputFile out(path);
  chakra::ChromeTraceWriter w(out);
  static const char* tracks[] = {"compute", "cpu", "collectives", "sends", "receives", "memory",
                                 "other"};
  for (uint32_t n = 0; n < r.npus.size(); ++n) {
    w.process_name(n, "NPU " + std::to_string(n));
    w.process_sort_index(n, n);
    for (int t = 0; t < 7; ++t) w.thread_name(n, t, tracks[t]);
  }
  for (const Span& s : r.spans)
    w.complete(s.npu, int64_t(s.kind), double(s.start) / 1000.0, double(s.end - s.start) / 1000.0,
               s.name, tracks[int(s.kind)], [&](chakra::JsonWriter& a) {
                 a.key("node").value_uint(s.node);
               });
  w.finish();
  out.commit();
}

int run(const Request& q) {
  cli::TerminalProgress progress;
  SimOptions opt = q.opt;
  opt.progress = &progress;
  opt.record_spans = !q.timeline_out.empty();
  for (const std::string& note : q.in.system.notes) std::cerr << "note: " << note << "\n";
  SimResult r = simulate(q.in, opt);
  progress.clear();
  print_npu_lines(r);
  if (q.summary) print_summary(r);
  if (!q.json_out.empty()) write_json(r, q.json_out);
  if (!q.timeline_out.empty()) write_timeline(r, q.timeline_out);
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

void load_common(Request& q, const std::string& workload, const std::string& system,
                 const std::string& network, const std::string& memory, const std::string& groups) {
  q.in.workload = workload;
  q.in.network = load_network(network);
  q.in.system = load_system(system);
  q.in.system_source = system;
  if (!memory.empty()) q.in.memory = load_remote_memory(memory);
  // As the reference: a path containing "empty" means no groups.
  if (!groups.empty() && groups.find("empty") == std::string::npos) {
    q.in.groups = load_comm_groups(groups);
    q.in.groups_source = groups;
  }
}

int run_simulate(const cli::Args& a) {
  Request q;
  load_common(q, a.get("--workload"), a.get("--system"), a.get("--network"),
              a.get("--remote-memory"), a.get("--comm-group"));
  const std::string& backend = a.get("--backend");
  if (backend == "unaware") q.opt.backend = Backend::CongestionUnaware;
  else if (backend == "aware") q.opt.backend = Backend::CongestionAware;
  else a.fail("--backend must be unaware or aware");
  q.opt.queues_per_dim = static_cast<uint32_t>(a.get_uint("--num-queues-per-dim", 1024));
  q.opt.injection_scale = a.get_positive_double("--injection-scale");
  q.opt.rendezvous = a.has("--rendezvous");
  q.in.read = cli::read_options(a, nullptr);
  q.json_out = a.get("--json");
  q.timeline_out = a.get("--timeline");
  q.summary = !a.has("--no-summary");
  return run(q);
}

void add_common(cli::Args& args) {
  args.option("--num-queues-per-dim", "N", "scheduling queues per network dimension", "1");
  args.option("--injection-scale", "X", "multiplies the system's endpoint-delay", "1");
}

Backend g_alias_backend;

int run_reference(const cli::Args& a) {
  Request q;
  load_common(q, a.get("--workload-configuration"), a.get("--system-configuration"),
              a.get("--network-configuration"), a.get("--remote-memory-configuration"),
              a.get("--comm-group-configuration"));
  q.opt.backend = g_alias_backend;
  q.opt.queues_per_dim = static_cast<uint32_t>(a.get_uint("--num-queues-per-dim", 1024));
  q.opt.injection_scale = a.get_positive_double("--injection-scale");
  a.get_positive_double("--compute-scale");  // accepted and unused, as in the reference
  a.get_positive_double("--comm-scale");
  const std::string& rdv = a.get("--rendezvous-protocol");
  if (rdv == "true" || rdv == "1") q.opt.rendezvous = true;
  else if (rdv != "false" && rdv != "0") a.fail("--rendezvous-protocol must be true or false");
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
                 "Replay per-NPU Chakra traces (PREFIX.<npu>.et) on ASTRA-sim's analytical model,\n"
                 "with its configuration files, reproducing its per-NPU finish times to the\n"
                 "nanosecond. Prints ASTRA-sim's per-NPU lines (times in ns), then a summary.\n"
                 "Exit 1 with the stuck nodes per NPU when the traces deadlock.");
  args.option("--workload", "PREFIX", "per-NPU traces PREFIX.<npu>.et", "", true);
  args.option("--system", "FILE", "ASTRA-sim system JSON", "", true);
  args.option("--network", "FILE", "ASTRA-sim analytical network YAML", "", true);
  args.option("--remote-memory", "FILE", "remote-memory JSON (default: no memory expansion)", "");
  args.option("--comm-group", "FILE", "communicator groups JSON", "");
  args.option("--backend", "unaware|aware", "network model: congestion-unaware or -aware", "unaware");
  add_common(args);
  args.flag("--rendezvous", "8 KiB handshake before every send (--rendezvous-protocol)");
  args.option("--json", "OUT", "write per-NPU results and totals as JSON", "");
  args.option("--timeline", "OUT", "write a Chrome/Perfetto trace of every node on every NPU", "");
  args.flag("--no-summary", "print only ASTRA-sim's per-NPU lines");
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
