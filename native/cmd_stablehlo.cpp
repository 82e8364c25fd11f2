// chakra import stablehlo (per-device traces from a StableHLO program) and chakra predict
// (modelled compute + simulated communication = step time).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chakra/format/io.h"
#include "chakra/stablehlo/stablehlo.h"
#include "chakra/support/error.h"
#include "chakra/trace/trace.h"
#include "cli.h"
#include "commands.h"

using namespace chakra::stablehlo;

namespace {

void add_common_options(cli::Args& a) {
  a.positional("PROGRAM", "StableHLO text (.mlir), a per-device (SPMD-partitioned) program", /*required=*/false);
  a.option("--device", "NAME", "device preset (--list-devices)", "h100");
  a.option("--devices", "N", "devices to run on; must equal mhlo.num_partitions x mhlo.num_replicas (default: that)");
  a.option("--module", "K", "which module of a `// -----` file (0-based)", "0");
  a.option("--trip-count", "N", "iterations of while loops whose trip count is not a constant", "1");
  a.flag("--no-fusion",
         "charge every elementwise op for all its operands and results (default: chains of\n"
         "elementwise and data-movement ops are fused, as XLA does)");
  a.flag("--roofline",
         "cost ops at peak FLOP/s and HBM bandwidth with no kernel overhead (default: the\n"
         "efficiency model of assets/stablehlo/devices.json, see core/docs/stablehlo.md)");
  a.flag("--list-devices", "print the device presets and exit");
}

DeviceSpec device(const cli::Args& a) {
  DeviceSpec d = device_preset(a.get("--device"));
  if (a.has("--roofline")) d.model = EfficiencyModel::roofline();
  return d;
}

int list_devices() {
  for (const std::string& k : device_presets()) {
    DeviceSpec d = device_preset(k);
    std::printf("%-16s %-48s bf16 %7.1f TFLOP/s  HBM %7.1f GB/s  %3u SMs  %s\n", k.c_str(), d.name.c_str(),
                d.peak_for("bf16", true) / 1e12, d.hbm_bytes_per_s / 1e9, d.sms, d.source.c_str());
  }
  const EfficiencyModel m = shipped_model();
  std::printf("\nefficiency model (every device): GEMM %.3g of peak, bandwidth %.3g of HBM, %.3g us per kernel\n",
              m.gemm, m.bandwidth, m.kernel_overhead_s * 1e6);
  return cli::kOk;
}

Analysis load(const cli::Args& a) {
  if (a.values("PROGRAM").empty()) a.fail("missing required argument: PROGRAM");  // optional only for --list-devices
  Program p = load_program(a.values("PROGRAM")[0]);
  AnalyzeOptions o;
  o.default_trip_count = a.get_uint("--trip-count");
  o.fuse_elementwise = !a.has("--no-fusion");
  const uint64_t module = a.get_uint("--module");
  if (module >= p.modules())
    a.fail("--module " + std::to_string(module) + ": " + p.file() + " has " + std::to_string(p.modules()) +
           " module(s)");
  Analysis an = analyze(p, module, o);
  if (a.has("--devices") && a.get_uint("--devices") != an.devices)
    throw chakra::Error(an.file + ": --devices " + a.get("--devices") + " but the program is partitioned for " +
                        std::to_string(an.devices) +
                        " devices (mhlo.num_partitions x mhlo.num_replicas); "
                        "export it for the device count you want");
  for (const std::string& w : an.warnings) std::cerr << "warning: " << w << "\n";
  return an;
}

std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int k = 0;
  while (std::fabs(v) >= 1000 && k < 6) v /= 1000, ++k;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[k], unit);
  return buf;
}

int run_import(const cli::Args& a) {
  if (a.has("--list-devices")) return list_devices();
  if (!a.has("--output")) a.fail("--output PREFIX is required");
  const DeviceSpec d = device(a);
  const Analysis an = load(a);
  const std::string prefix = a.get("--output");
  const std::string groups_path = prefix + ".comm_group.json";
  cli::write_rank_traces(
      prefix, an.devices,
      [&](size_t dev, chakra::Trace& trace) { device_trace(an, d, static_cast<uint32_t>(dev), trace); }, groups_path,
      comm_groups(an));
  double flops = 0;
  for (const OpTotals& c : an.by_class) flops += c.flops;
  std::cerr << "chakra import stablehlo: " << an.ops.size() << " ops executed (" << human(flops, "FLOP") << ", "
            << an.collectives.size() << " collectives) on " << an.devices << " device(s) -> " << prefix << ".{0.."
            << an.devices - 1 << "}.et, comm groups -> " << groups_path << "\n";
  return cli::kOk;
}

std::string prediction_json(const Analysis& an, const DeviceSpec& d, const Prediction& p) {
  nlohmann::json j = {{"program", an.file},
                      {"module", an.module},
                      {"device", d.key},
                      {"devices", an.devices},
                      {"step_s", p.step_s},
                      {"compute_s", p.compute_s},
                      {"exposed_comm_s", p.exposed_comm_s},
                      {"model",
                       {{"gemm_efficiency", d.model.gemm},
                        {"bandwidth_efficiency", d.model.bandwidth},
                        {"kernel_overhead_s", d.model.kernel_overhead_s}}},
                      {"warnings", an.warnings}};
  nlohmann::json& classes = j["classes"] = nlohmann::json::object();
  for (int c = 0; c < kOpClasses; ++c) {
    const ClassBreakdown& b = p.classes[c];
    if (b.totals.count)
      classes[op_class_name(OpClass(c))] = {{"ops", b.totals.count},     {"kernels", b.totals.kernels},
                                            {"flops", b.totals.flops},   {"bytes", b.totals.bytes},
                                            {"seconds", b.seconds},      {"compute_bound_s", b.compute_bound_s},
                                            {"overhead_s", b.overhead_s}};
  }
  nlohmann::json& colls = j["collectives"] = nlohmann::json::object();
  for (int k = 0; k < kCollectiveKinds; ++k)
    if (p.collective_count[k])
      colls[collective_kind_name(CollectiveKind(k))] = {{"count", p.collective_count[k]},
                                                        {"operand_bytes", p.collective_bytes[k]}};
  return j.dump(2) + "\n";
}

int run_predict(const cli::Args& a) {
  if (a.has("--list-devices")) return list_devices();
  if (!a.has("--network")) a.fail("--network NET.yml is required");
  const DeviceSpec d = device(a);
  const Analysis an = load(a);
  const chakra::astra::NetworkConfig net = chakra::astra::load_network(a.get("--network"));
  const chakra::astra::SystemConfig system =
      a.has("--system") ? chakra::astra::load_system(a.get("--system")) : default_system(net, d);
  const Prediction p = predict(an, d, net, system);
  if (a.has("--json")) {
    const std::string text = prediction_json(an, d, p);
    if (a.get("--json") == "-") {
      std::cout << text;
      return cli::kOk;
    }
    chakra::OutputFile out(a.get("--json"));
    out.write(text);
    out.commit();
  }
  std::printf("%s%s on %u x %s\n", an.file.c_str(), an.module.empty() ? "" : (" @" + an.module).c_str(), an.devices,
              d.name.c_str());
  std::printf("  predicted step time  %10.3f ms\n", p.step_s * 1e3);
  std::printf("  compute (%s) %10.3f ms\n", a.has("--roofline") ? "roofline" : "modelled", p.compute_s * 1e3);
  std::printf("  exposed comm         %10.3f ms (%.1f%%)\n", p.exposed_comm_s * 1e3,
              p.step_s > 0 ? 100 * p.exposed_comm_s / p.step_s : 0);
  std::printf("\n  %-14s %9s %8s %12s %12s %12s %9s\n", "op class", "ops", "kernels", "FLOP", "bytes", "time ms",
              "bound");
  for (int c = 0; c < kOpClasses; ++c) {
    const ClassBreakdown& b = p.classes[c];
    if (!b.totals.count) continue;
    const char* bound = b.seconds <= 0 ? "-" : b.compute_bound_s >= b.seconds / 2 ? "compute" : "memory";
    std::printf("  %-14s %9llu %8llu %12s %12s %12.3f %9s\n", op_class_name(OpClass(c)),
                static_cast<unsigned long long>(b.totals.count), static_cast<unsigned long long>(b.totals.kernels),
                human(b.totals.flops, "").c_str(), human(b.totals.bytes, "B").c_str(), b.seconds * 1e3, bound);
  }
  bool any = false;
  for (int k = 0; k < kCollectiveKinds; ++k) {
    if (!p.collective_count[k]) continue;
    if (!any) std::printf("\n  %-22s %9s %14s\n", "collective", "count", "operand bytes"), any = true;
    std::printf("  %-22s %9llu %14s\n", collective_kind_name(CollectiveKind(k)),
                static_cast<unsigned long long>(p.collective_count[k]), human(p.collective_bytes[k], "B").c_str());
  }
  return cli::kOk;
}

}  // namespace

int cmd_import(int argc, char** argv) {
  if (argc < 1 || std::string(argv[0]) != "stablehlo") {
    std::cerr << "usage: chakra import stablehlo PROGRAM.mlir -o PREFIX [options]\n";
    return argc >= 1 && (std::string(argv[0]) == "--help" || std::string(argv[0]) == "-h") ? cli::kOk : cli::kUsage;
  }
  cli::Args args("chakra import stablehlo",
                 "Per-device Chakra traces from a StableHLO program: runs of compute between collectives\n"
                 "become COMP nodes (duration_micros from the device's cost model, num_ops = FLOPs,\n"
                 "tensor_size = bytes), collectives COMM_COLL nodes (comm_size = operand bytes, as ASTRA-sim\n"
                 "reads it; pg_name = the device's replica group), collective_permute SEND/RECV pairs.\n"
                 "Writes PREFIX.{device}.et and PREFIX.comm_group.json.");
  add_common_options(args);
  args.option("--output", "PREFIX", "write PREFIX.{device}.et");
  args.alias("-o", "--output");
  args.parse(argc - 1, argv + 1);
  return cli::run_guarded("chakra import stablehlo", run_import, args);
}

int cmd_predict(int argc, char** argv) {
  cli::Args args("chakra predict",
                 "Predicted step time of a StableHLO program on a device and network: each op's time is\n"
                 "max(FLOPs / sustained peak for its element type and GEMM shape, bytes / sustained HBM\n"
                 "bandwidth) + a per-kernel overhead (--roofline: peaks, no overhead); communication simulated\n"
                 "on ASTRA-sim's analytical model, overlap from the program's dependencies.");
  add_common_options(args);
  args.option("--network", "NET.yml", "ASTRA-sim analytical network config (NPU count = devices)");
  args.option("--system", "SYS.json",
              "ASTRA-sim system config (default: hespas' settings, see core/docs/stablehlo.md)");
  args.option("--json", "FILE", "also write the prediction as JSON (- for stdout only)");
  args.parse(argc, argv);
  return cli::run_guarded("chakra predict", run_predict, args);
}

CHAKRA_COMMAND(160, "import", cmd_import,
               "per-device traces from a StableHLO program (compute regions, collectives, groups)");
CHAKRA_COMMAND(170, "predict", cmd_predict,
               "step time of a StableHLO program on a device and network (roofline + simulation)");
