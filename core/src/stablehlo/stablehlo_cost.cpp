// Devices (assets/stablehlo/devices.json) and the cost model: an op's time on a device.
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

extern const char* const kDevicesJson;  // stablehlo_devices.cpp, from assets/stablehlo/devices.json

// ---- devices ----------------------------------------------------------------------------------

double DeviceSpec::peak_for(std::string_view dtype, bool matmul) const {
  if (matmul && dtype == "f32") {
    if (auto it = peak_flops.find("tf32"); it != peak_flops.end()) return it->second;
  }
  if (auto it = peak_flops.find(std::string(dtype)); it != peak_flops.end()) return it->second;
  if (dtype == "si8" || dtype == "ui8") return peak_for("i8", matmul);
  return fallback_flops;
}

namespace {
const nlohmann::json& devices_json() {
  static const nlohmann::json j = nlohmann::json::parse(kDevicesJson);
  return j.at("devices");
}
}  // namespace

EfficiencyModel shipped_model() {
  static const EfficiencyModel m = [] {
    const nlohmann::json j = nlohmann::json::parse(kDevicesJson).at("model");
    EfficiencyModel e;
    e.gemm = j.at("gemm_efficiency").get<double>();
    e.bandwidth = j.at("bandwidth_efficiency").get<double>();
    e.kernel_overhead_s = j.at("kernel_overhead_us").get<double>() * 1e-6;
    return e;
  }();
  return m;
}

std::vector<std::string> device_presets() {
  std::vector<std::string> out;
  for (auto it = devices_json().begin(); it != devices_json().end(); ++it) out.push_back(it.key());
  return out;
}

DeviceSpec device_preset(std::string_view key) {
  std::string k(key);
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
  const nlohmann::json& all = devices_json();
  auto it = all.find(k);
  if (it == all.end()) {
    std::string known;
    for (const std::string& n : device_presets()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown device '" + std::string(key) + "' (known: " + known + ")");
  }
  DeviceSpec d;
  d.key = k;
  d.name = it->at("name").get<std::string>();
  d.source = it->at("source").get<std::string>();
  const nlohmann::json& peaks = it->at("peak_flops");
  for (auto p = peaks.begin(); p != peaks.end(); ++p) d.peak_flops[p.key()] = p.value().get<double>();
  d.fallback_flops = it->at("fallback_flops").get<double>();
  d.hbm_bytes_per_s = it->at("hbm_bytes_per_s").get<double>();
  d.sms = it->value("sms", 0u);
  if (it->contains("gemm_tile")) {
    d.tile_m = it->at("gemm_tile").at(0).get<uint32_t>();
    d.tile_n = it->at("gemm_tile").at(1).get<uint32_t>();
  }
  d.model = shipped_model();
  return d;
}

double wave_efficiency(const GemmShape& g, const DeviceSpec& d) {
  if (!d.sms || !d.tile_m || !d.tile_n) return 1;
  // A GEMM library picks its tile per problem; tiles below half the generation's largest lose
  // operand reuse, so the candidates are 64..256 a side with at least half its area.
  const double area = static_cast<double>(d.tile_m) * d.tile_n;
  double best = 0;
  for (double tm : {64.0, 128.0, 256.0})
    for (double tn : {64.0, 128.0, 256.0}) {
      if (tm * tn < area / 2 || tm * tn > area) continue;
      const double tiles_m = std::ceil(g.m / tm), tiles_n = std::ceil(g.n / tn);
      // Too few tiles for the SMs: split K (split-K / stream-K), in slices of at least 256.
      const double split =
          std::max(1.0, std::min(std::floor(d.sms / (g.batch * tiles_m * tiles_n)), std::floor(g.k / 256)));
      const double tiles = g.batch * tiles_m * tiles_n * split;
      const double waves = std::ceil(tiles / d.sms);
      const double filled = (g.m * g.n) / (tiles_m * tm * tiles_n * tn);  // edge tiles are padded
      best = std::max(best, filled * tiles / (waves * d.sms));
    }
  return best > 0 ? best : 1;
}

PeakCost peak_cost(const Analysis& a, const ExecOp& op, const DeviceSpec& d) {
  PeakCost c;
  if (op.cls == OpClass::Collective) return c;
  c.gemm = op.cls == OpClass::Matmul || op.cls == OpClass::Convolution;
  c.kernels = op.kernels;
  double peak = d.peak_for(a.dtypes.empty() ? "" : a.dtypes[op.dtype], c.gemm);
  if (c.gemm && op.gemm >= 0) peak *= wave_efficiency(a.gemms[op.gemm], d);
  c.flop_s = op.flops > 0 && peak > 0 ? op.flops / peak : 0;
  c.byte_s = op.bytes > 0 && d.hbm_bytes_per_s > 0 ? op.bytes / d.hbm_bytes_per_s : 0;
  return c;
}

// The one place the efficiency model acts (op_cost and calibrate's loss).
OpCost under_model(const PeakCost& p, const EfficiencyModel& m) {
  OpCost c;
  c.compute_s = p.gemm ? (m.gemm > 0 ? p.flop_s / m.gemm : 0) : p.flop_s;
  c.memory_s = m.bandwidth > 0 ? p.byte_s / m.bandwidth : 0;
  c.overhead_s = p.kernels * m.kernel_overhead_s;
  return c;
}

OpCost op_cost(const Analysis& a, const ExecOp& op, const DeviceSpec& d) {
  return under_model(peak_cost(a, op, d), d.model);
}

}  // namespace chakra::stablehlo
