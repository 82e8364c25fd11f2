// Step-time prediction (per-op cost + the simulated communication) and the calibration of the
// efficiency model on measured steps.
#include "chakra/stablehlo/stablehlo.h"
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <numeric>
#include <unordered_map>
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"
#include "stablehlo_ir.h"
#include "stablehlo_parts.h"

namespace chakra::stablehlo {

// ---- prediction -------------------------------------------------------------------------------

astra::SystemConfig default_system(const astra::NetworkConfig& net, const DeviceSpec& d) {
  std::string algos;
  for (size_t k = 0; k < net.topology.size(); ++k)
    algos += std::string(k ? ", " : "") +
             (net.topology[k] == astra::TopologyKind::FullyConnected ? "\"direct\"" : "\"ring\"");
  char bw[64];
  std::snprintf(bw, sizeof bw, "%.1f", d.hbm_bytes_per_s / 1e9);
  const std::string json =
      std::string(R"({"scheduling-policy": "LIFO", "endpoint-delay": 1, "active-chunks-per-dimension": 1,
      "preferred-dataset-splits": 1, "collective-optimization": "localBWAware", "boost-mode": 0, "local-mem-bw": )") +
      bw + R"(, "all-reduce-implementation": [)" + algos + R"(], "all-gather-implementation": [)" + algos +
      R"(], "reduce-scatter-implementation": [)" + algos + R"(], "all-to-all-implementation": [)" + algos + "]}";
  return astra::parse_system(json, "default system (hespas settings)");
}

Prediction predict(const Analysis& a, const DeviceSpec& d, const astra::NetworkConfig& net,
                   const astra::SystemConfig& system) {
  if (net.total_npus() != a.devices)
    throw Error("the network has " + std::to_string(net.total_npus()) + " NPUs but " + a.file + " runs on " +
                std::to_string(a.devices) + " devices (mhlo.num_partitions x mhlo.num_replicas)");
  Prediction p;
  for (const ExecOp& e : a.ops) {
    ClassBreakdown& c = p.classes[int(e.cls)];
    ++c.totals.count;
    c.totals.flops += e.flops;
    c.totals.bytes += e.bytes;
    const OpCost cost = op_cost(a, e, d);
    const double t = cost.seconds();
    c.totals.kernels += e.kernels;
    c.seconds += t;
    c.overhead_s += cost.overhead_s;
    p.compute_s += t;
    if (cost.compute_s >= cost.memory_s) c.compute_bound_s += t;
    if (e.collective >= 0) {
      const CollectiveOp& col = a.collectives[e.collective];
      ++p.collective_count[int(col.kind)];
      p.collective_bytes[int(col.kind)] += col.operand_bytes;
    }
  }
  std::vector<std::string> encoded(a.devices);
  Trace t;
  for (uint32_t dev = 0; dev < a.devices; ++dev) {
    device_trace(a, d, dev, t);
    encoded[dev] = encode_et(t);
  }
  sim::SimInputs in;
  in.workload = a.file;
  in.encoded_traces = &encoded;
  in.network = net;
  in.system = system;
  for (const auto& [id, members] : comm_groups(a))
    in.groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
  p.sim = sim::simulate(in);
  if (p.sim.deadlock) throw Error(a.file + ": the simulation deadlocked (a collective not every group member runs?)");
  p.step_s = static_cast<double>(p.sim.end()) * 1e-9;
  p.exposed_comm_s = std::max(0.0, p.step_s - p.compute_s);
  return p;
}

double modelled_step(const CalibrationCase& c, const EfficiencyModel& m) {
  DeviceSpec d = c.device;
  d.model = m;
  double t = c.exposed_comm_s;
  for (const ExecOp& e : c.analysis->ops) t += op_seconds(*c.analysis, e, d);
  return t;
}

EfficiencyModel calibrate(const std::vector<CalibrationCase>& cases, EfficiencyModel start) {
  if (cases.empty()) throw Error("calibrate: no measured cases");
  for (const CalibrationCase& c : cases)
    if (!c.analysis || !(c.measured_s > 0)) throw Error("calibrate: a case has no program or no measured step");
  // Each case reduced to its ops at the device's peaks, which the constants then divide.
  struct Reduced {
    std::vector<PeakCost> ops;
    double measured = 0, exposed = 0;
  };
  std::vector<Reduced> reduced;
  for (const CalibrationCase& c : cases) {
    Reduced r;
    r.measured = c.measured_s, r.exposed = c.exposed_comm_s;
    for (const ExecOp& e : c.analysis->ops) {
      const PeakCost p = peak_cost(*c.analysis, e, c.device);
      if (p.flop_s > 0 || p.byte_s > 0 || p.kernels > 0) r.ops.push_back(p);
    }
    reduced.push_back(std::move(r));
  }
  auto loss = [&](const double x[3]) {
    const EfficiencyModel m{std::exp(x[0]), std::exp(x[1]), x[2]};
    double sum = 0;
    for (const Reduced& r : reduced) {
      double t = r.exposed;
      for (const PeakCost& p : r.ops) t += under_model(p, m).seconds();
      const double l = std::log(t / r.measured);
      sum += l * l;
    }
    return sum;
  };
  const double lo[3] = {std::log(0.01), std::log(0.01), 0}, hi[3] = {0, 0, 1e-3};
  double x[3] = {std::log(std::clamp(start.gemm, 0.01, 1.0)), std::log(std::clamp(start.bandwidth, 0.01, 1.0)),
                 std::clamp(start.kernel_overhead_s, 0.0, 1e-3)};
  double step[3] = {0.5, 0.5, 4e-6};
  double best = loss(x);
  for (int round = 0; round < 400 && step[0] > 1e-5; ++round) {
    bool moved = false;
    for (int k = 0; k < 3; ++k)
      for (double sign : {1.0, -1.0}) {
        double y[3] = {x[0], x[1], x[2]};
        y[k] = std::clamp(y[k] + sign * step[k], lo[k], hi[k]);
        const double l = loss(y);
        if (l < best) best = l, x[0] = y[0], x[1] = y[1], x[2] = y[2], moved = true;
      }
    if (!moved)
      for (double& s : step) s /= 2;
  }
  return {std::exp(x[0]), std::exp(x[1]), x[2]};
}

double median_trend_error(const std::vector<double>& predicted, const std::vector<double>& measured) {
  if (predicted.size() != measured.size()) throw Error("trend error: predicted and measured lists differ in length");
  std::vector<double> errors;
  for (size_t i = 0; i < predicted.size(); ++i)
    for (size_t j = i + 1; j < predicted.size(); ++j)
      if (predicted[j] > 0 && measured[j] > 0 && measured[i] > 0)
        errors.push_back(std::fabs((predicted[i] / predicted[j]) / (measured[i] / measured[j]) - 1));
  if (errors.empty()) return std::nan("");
  std::sort(errors.begin(), errors.end());
  const size_t m = errors.size() / 2;
  return errors.size() % 2 ? errors[m] : (errors[m - 1] + errors[m]) / 2;
}

}  // namespace chakra::stablehlo
