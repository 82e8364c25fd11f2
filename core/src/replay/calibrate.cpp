// The fit behind `chakra calibrate`. A collective's simulated time on a one-dimension network is
// linear in the link latency L, the inverse bandwidth 1/B and the inverse local memory bandwidth
// 1/M (reductions) — up to the simulator's rounding of each message to whole ns — so each
// candidate (topology, and per collective type an algorithm) gets its coefficients from four
// simulations per measurement, and the parameters from a non-negative least-squares fit of the
// relative errors. The best candidate is then run through the simulator itself for the residuals.
#include "chakra/replay/calibrate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/json_writer.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::replay {
namespace {

using astra::Algorithm;
using astra::Collective;
using astra::TopologyKind;

std::optional<Collective> simulated_collective(OpKind k) {
  switch (k) {
    case OpKind::AllReduce: return Collective::AllReduce;
    case OpKind::AllGather: return Collective::AllGather;
    case OpKind::ReduceScatter: return Collective::ReduceScatter;
    case OpKind::AllToAll: return Collective::AllToAll;
    default: return std::nullopt;
  }
}

CommType comm_type_of(Collective c) {
  switch (c) {
    case Collective::AllReduce: return CommType::AllReduce;
    case Collective::AllGather: return CommType::AllGather;
    case Collective::ReduceScatter: return CommType::ReduceScatter;
    case Collective::AllToAll: return CommType::AllToAll;
  }
  return CommType::AllReduce;
}

// Parameters: latency (ns), inverse bandwidth (ns per byte-ish unit: 1/GB/s), inverse local
// memory bandwidth. "Infinite" bandwidths are large finite ones.
struct Params {
  double latency = 0, inv_bw = 0, inv_mem = 0;
};
constexpr double kHuge = 1e12;

astra::SystemConfig system_of(const std::array<Algorithm, astra::kCollectiveTypes>& algorithms, double mem_bw) {
  astra::SystemConfig s;
  s.scheduling = astra::SchedulingPolicy::LIFO;
  s.optimization = astra::CollectiveOptimization::Baseline;
  s.endpoint_delay = 0;
  s.active_chunks_per_dimension = 1;
  s.preferred_dataset_splits = 1;
  for (int c = 0; c < astra::kCollectiveTypes; ++c) s.algorithms[c] = {astra::AlgorithmChoice{algorithms[c]}};
  s.local_mem_bw = mem_bw;
  return s;
}

astra::NetworkConfig network_of(TopologyKind t, uint32_t npus, const Params& p) {
  astra::NetworkConfig n;
  n.topology = {t};
  n.npus = {npus};
  n.bandwidth = {p.inv_bw > 0 ? 1 / p.inv_bw : kHuge};
  n.latency = {p.latency};
  return n;
}

// The simulated time of one collective of `bytes` over `npus` NPUs.
uint64_t simulated_ns(Collective c, uint64_t bytes, uint32_t npus, const astra::NetworkConfig& net,
                      const astra::SystemConfig& sys) {
  CollectiveOptions o;
  o.type = comm_type_of(c);
  o.size = bytes;
  o.npus = npus;
  std::vector<std::string> traces(npus);
  for (uint32_t i = 0; i < npus; ++i) traces[i] = encode_et(collective_trace(o, i));
  sim::SimInputs in;
  in.workload = "calibration";
  in.encoded_traces = &traces;
  in.network = net;
  in.system = sys;
  const sim::SimResult r = sim::simulate(in);
  if (r.deadlock) throw Error("calibration: a microbenchmark deadlocked in the simulator");
  return r.end();
}

// A measurement's coefficients: time ≈ c0 + a·L + b·(1/B) + c·(1/M).
struct Row {
  double c0, a, b, c, target;
};

std::optional<Row> coefficients(Collective col, Algorithm alg, TopologyKind topo, const Measurement& m) {
  std::array<Algorithm, astra::kCollectiveTypes> algs{};
  algs.fill(Algorithm::Ring);
  algs[int(col)] = alg;
  try {
    const double probe = 1e3;  // L = 1000 ns, 1/B = 1000 (B = 0.001 GB/s), 1/M = 1000
    auto run = [&](Params p) {
      return double(simulated_ns(col, m.bytes, m.ranks, network_of(topo, m.ranks, p),
                                 system_of(algs, p.inv_mem > 0 ? 1 / p.inv_mem : kHuge)));
    };
    const double c0 = run({});
    Row r{c0, (run({probe, 0, 0}) - c0) / probe, (run({0, probe, 0}) - c0) / probe, (run({0, 0, probe}) - c0) / probe,
          double(m.median_ns)};
    return r;
  } catch (const Error&) {
    return std::nullopt;  // the algorithm does not run here (halving-doubling on a non-power of two)
  }
}

// Non-negative least squares of relative errors over three parameters: every subset of free
// parameters solved by its normal equations, the best feasible kept.
struct Fit {
  Params p;
  double cost = INFINITY;
};
Fit fit(const std::vector<Row>& rows) {
  Fit best;
  for (int mask = 0; mask < 8; ++mask) {
    std::vector<int> free;
    for (int k = 0; k < 3; ++k)
      if (mask & (1 << k)) free.push_back(k);
    double x[3] = {0, 0, 0};
    if (!free.empty()) {
      const size_t n = free.size();
      double m[3][4] = {};
      for (const Row& r : rows) {
        const double w = 1 / (r.target * r.target);
        const double coef[3] = {r.a, r.b, r.c};
        for (size_t i = 0; i < n; ++i) {
          for (size_t j = 0; j < n; ++j) m[i][j] += w * coef[free[i]] * coef[free[j]];
          m[i][3] += w * coef[free[i]] * (r.target - r.c0);
        }
      }
      bool singular = false;
      for (size_t i = 0; i < n && !singular; ++i) {  // Gauss-Jordan with partial pivoting
        size_t piv = i;
        for (size_t k = i + 1; k < n; ++k)
          if (std::abs(m[k][i]) > std::abs(m[piv][i])) piv = k;
        if (std::abs(m[piv][i]) < 1e-300) {
          singular = true;
          break;
        }
        for (int j = 0; j < 4; ++j) std::swap(m[i][j], m[piv][j]);
        for (size_t k = 0; k < n; ++k) {
          if (k == i) continue;
          const double f = m[k][i] / m[i][i];
          for (int j = 0; j < 4; ++j) m[k][j] -= f * m[i][j];
        }
      }
      if (singular) continue;
      bool feasible = true;
      for (size_t i = 0; i < n; ++i) {
        x[free[i]] = m[i][3] / m[i][i];
        feasible &= x[free[i]] >= 0;
      }
      if (!feasible) continue;
    }
    double cost = 0;
    for (const Row& r : rows) {
      const double e = (r.c0 + r.a * x[0] + r.b * x[1] + r.c * x[2] - r.target) / r.target;
      cost += e * e;
    }
    if (cost < best.cost) best = {{x[0], x[1], x[2]}, cost};
  }
  return best;
}

// The algorithms that run each collective on one dimension.
std::vector<Algorithm> candidates(Collective c) {
  if (c == Collective::AllToAll) return {Algorithm::Ring, Algorithm::Direct};
  if (c == Collective::AllReduce)
    return {Algorithm::Ring, Algorithm::Direct, Algorithm::HalvingDoubling, Algorithm::DoubleBinaryTree};
  return {Algorithm::Ring, Algorithm::Direct, Algorithm::HalvingDoubling};
}

}  // namespace

double Calibration::Residual::error() const {
  return measured.median_ns ? (double(simulated_ns) - double(measured.median_ns)) / double(measured.median_ns) : 0;
}

std::vector<Measurement> summary_measurements(std::string_view text, const std::string& name) {
  std::vector<Measurement> out;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains("collectives") || !j["collectives"].is_array())
      throw Error(name + ": not a replay summary (chakra replay --summary-json): no \"collectives\" list");
    for (const auto& row : j["collectives"]) {
      const std::string type = row.at("type").get<std::string>();
      int kind = -1;
      for (int k = 0; k < kOpKinds; ++k)
        if (type == op_kind_name(static_cast<OpKind>(k))) kind = k;
      if (kind < 0) throw Error(name + ": unknown collective type '" + type + "'");
      out.push_back({static_cast<OpKind>(kind), row.at("ranks").get<uint32_t>(), row.at("bytes").get<uint64_t>(),
                     row.at("median_ns").get<uint64_t>()});
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(name + ": not a replay summary: " + e.what());
  }
  return out;
}

// Repeats of one kind, group and size as one measurement: the (upper) median of their times,
// which one disturbed run does not move.
std::vector<Measurement> merge_repeats(std::span<const Measurement> measurements) {
  std::map<std::tuple<OpKind, uint32_t, uint64_t>, std::vector<uint64_t>> times;
  for (const Measurement& m : measurements) times[{m.kind, m.ranks, m.bytes}].push_back(m.median_ns);
  std::vector<Measurement> out;
  for (auto& [key, ns] : times) {
    std::sort(ns.begin(), ns.end());
    out.push_back(
        {std::get<0>(key), std::get<1>(key), std::get<2>(key), ns[ns.size() / 2], static_cast<uint32_t>(ns.size())});
  }
  return out;
}

Calibration calibrate(std::span<const Measurement> measured) {
  Calibration cal;
  std::map<Collective, std::vector<Measurement>> by_type;
  uint32_t npus = 0;
  for (const Measurement& m : merge_repeats(measured)) {
    const auto c = simulated_collective(m.kind);
    if (!c || m.median_ns == 0 || m.bytes == 0) {
      cal.notes.push_back(std::string(op_kind_name(m.kind)) + " of " + format_bytes(m.bytes) +
                          ": not fitted (the simulator runs all-reduce, all-gather, reduce-scatter and all-to-all "
                          "of a size > 0)");
      continue;
    }
    if (npus && m.ranks != npus)
      throw Error("calibration: measurements over groups of " + std::to_string(npus) + " and " +
                  std::to_string(m.ranks) + " ranks; fit one group size at a time");
    npus = m.ranks;
    by_type[*c].push_back(m);
  }
  if (by_type.empty()) throw Error("calibration: no all-reduce, all-gather, reduce-scatter or all-to-all to fit");
  if (npus < 2) throw Error("calibration: collectives of one rank move nothing; replay on 2 or more ranks");

  struct Best {
    Fit fit;
    TopologyKind topology = TopologyKind::Ring;
    std::map<Collective, Algorithm> algorithms;
  } best;
  for (TopologyKind topo : {TopologyKind::Ring, TopologyKind::FullyConnected, TopologyKind::Switch}) {
    // Per collective type and algorithm, its rows; then every combination of algorithms.
    std::vector<std::pair<Collective, std::vector<std::pair<Algorithm, std::vector<Row>>>>> options;
    for (const auto& [c, ms] : by_type) {
      std::vector<std::pair<Algorithm, std::vector<Row>>> per_alg;
      for (Algorithm a : candidates(c)) {
        std::vector<Row> rows;
        for (const Measurement& m : ms)
          if (auto r = coefficients(c, a, topo, m)) rows.push_back(*r);
        if (rows.size() == ms.size()) per_alg.emplace_back(a, std::move(rows));
      }
      if (!per_alg.empty()) options.emplace_back(c, std::move(per_alg));
    }
    std::vector<size_t> pick(options.size(), 0);
    while (true) {
      std::vector<Row> rows;
      for (size_t i = 0; i < options.size(); ++i)
        rows.insert(rows.end(), options[i].second[pick[i]].second.begin(), options[i].second[pick[i]].second.end());
      const Fit f = fit(rows);
      if (f.cost < best.fit.cost) {
        best.fit = f;
        best.topology = topo;
        best.algorithms.clear();
        for (size_t i = 0; i < options.size(); ++i)
          best.algorithms[options[i].first] = options[i].second[pick[i]].first;
      }
      size_t i = 0;
      while (i < pick.size() && ++pick[i] == options[i].second.size()) pick[i++] = 0;
      if (i == pick.size()) break;
    }
  }
  if (!std::isfinite(best.fit.cost)) throw Error("calibration: no network fits the measurements");

  std::array<Algorithm, astra::kCollectiveTypes> algs{};
  algs.fill(Algorithm::Ring);
  for (const auto& [c, a] : best.algorithms) algs[int(c)] = a;
  const Params& p = best.fit.p;
  cal.network = network_of(best.topology, npus, p);
  cal.system = system_of(algs, p.inv_mem > 0 ? 1 / p.inv_mem : kHuge);
  double sum = 0;
  for (const auto& [c, ms] : by_type)
    for (const Measurement& m : ms) {
      Calibration::Residual r{m, simulated_ns(c, m.bytes, npus, cal.network, cal.system)};
      sum += r.error() * r.error();
      cal.residuals.push_back(r);
    }
  cal.rms_error = std::sqrt(sum / double(cal.residuals.size()));
  return cal;
}

std::string calibration_text(const Calibration& c) {
  std::string out;
  appendf(out, "network: %s of %u NPUs, latency %.1f ns, bandwidth %.3f GB/s; ",
          astra::topology_name(c.network.topology[0]), c.network.npus[0], c.network.latency[0], c.network.bandwidth[0]);
  if (c.system.local_mem_bw >= kHuge)
    out += "local memory bandwidth not limiting (the fit gave it no cost)\n";
  else
    appendf(out, "local memory bandwidth %.3f GB/s\n", c.system.local_mem_bw);
  out += "algorithms:";
  for (int k = 0; k < astra::kCollectiveTypes; ++k)
    out += std::string(" ") + astra::collective_name(static_cast<Collective>(k)) + " " +
           astra::algorithm_name(c.system.algorithms[k][0]) + (k + 1 < astra::kCollectiveTypes ? "," : "\n");
  appendf(out, "\n%-15s %12s %5s %16s %16s %9s\n", "collective", "size", "runs", "replayed (us)", "simulated (us)",
          "error");
  for (const Calibration::Residual& r : c.residuals)
    appendf(out, "%-15s %12s %5u %16.2f %16.2f %+8.1f%%\n", op_kind_name(r.measured.kind),
            format_bytes(r.measured.bytes).c_str(), r.measured.runs, double(r.measured.median_ns) / 1e3,
            double(r.simulated_ns) / 1e3, 100 * r.error());
  appendf(out, "rms error %.1f%% over %zu measurements\n", 100 * c.rms_error, c.residuals.size());
  for (const std::string& n : c.notes) out += "note: " + n + "\n";
  return out;
}

std::string calibration_json(const Calibration& c) {
  StringSink sink;
  JsonWriter w(sink, JsonStyle{});
  w.begin_object();
  w.key("topology").value(astra::topology_name(c.network.topology[0]));
  w.key("npus").value_uint(c.network.npus[0]);
  w.key("latency_ns").value_double(c.network.latency[0]);
  w.key("bandwidth_gbs").value_double(c.network.bandwidth[0]);
  w.key("local_mem_bw_gbs").value_double(c.system.local_mem_bw);
  w.key("rms_error").value_double(c.rms_error);
  w.key("residuals").begin_array();
  for (const Calibration::Residual& r : c.residuals) {
    w.begin_object();
    w.key("type").value(op_kind_name(r.measured.kind));
    w.key("bytes").value_uint(r.measured.bytes);
    w.key("replayed_ns").value_uint(r.measured.median_ns);
    w.key("runs").value_uint(r.measured.runs);
    w.key("simulated_ns").value_uint(r.simulated_ns);
    w.key("error").value_double(r.error());
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.raw("\n");
  w.flush();
  return sink.out;
}

}  // namespace chakra::replay
