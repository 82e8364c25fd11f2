// StableHLO importer: counts against the independent scan in
// ../shared/reference/stablehlo/golden_scan.jsonl, closed forms for the cost rules, collective
// groups and SEND/RECV pairing, traces that validate and simulate, prediction, bad input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>

#include "chakra/analysis/summary.h"
#include "chakra/analysis/validate.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/sim/simulate.h"
#include "chakra/stablehlo/stablehlo.h"
#include "chakra/support/error.h"
#include "chakra/trace/trace.h"
#include "test_support.h"

using namespace chakra;
using namespace chakra::stablehlo;

namespace {

std::string sample(const std::string& name) { return testing_support::shared("reference/stablehlo/" + name); }

Analysis run(const std::string& text, AnalyzeOptions o = {}) { return analyze(parse_program(text, "test.mlir"), 0, o); }

// A network whose NPU count matches `devices`.
astra::NetworkConfig switch_of(uint32_t devices) {
  return astra::parse_network(
      "topology: [ Switch ]\nnpus_count: [ " + std::to_string(devices) + " ]\nbandwidth: [ 100 ]\nlatency: [ 1000 ]\n",
      "net.yml");
}

}  // namespace

TEST(StableHlo, MatchesTheGoldenScanOfEverySample) {
  std::ifstream golden(sample("golden_scan.jsonl"));
  ASSERT_TRUE(golden) << "missing golden_scan.jsonl";
  std::string line;
  int files = 0;
  while (std::getline(golden, line)) {
    const nlohmann::json g = nlohmann::json::parse(line);
    const std::string file = g["file"];
    SCOPED_TRACE(file);
    Program p = load_program(sample(file));
    const StaticStats st = static_stats(p);
    EXPECT_EQ(st.modules, g["modules"].get<size_t>());
    double flops = 0;
    size_t collectives = 0;
    for (size_t m = 0; m < p.modules(); ++m) {
      const Analysis a = analyze(p, m);
      flops += a.matmul_conv_flops();
      collectives += a.collectives.size();
    }
    const double gflop = g["matmul_conv_GFLOP_inlined"];
    // The scan rounds to 1e-6 GFLOP; within 0.1% or that rounding.
    EXPECT_NEAR(flops / 1e9, gflop, std::max(gflop * 1e-3, 5e-7));
    EXPECT_EQ(collectives, g["collectives_inlined"].get<size_t>());
    std::map<std::string, uint64_t> kinds = g["collective_kinds_static"];
    EXPECT_EQ(st.collectives, kinds);
    const double mb = g["collective_operand_MB_static"];
    EXPECT_NEAR(st.collective_operand_bytes / 1e6, mb, std::max(mb * 1e-3, 5e-4));
    std::map<std::string, uint64_t> sizes = g["group_sizes"];
    EXPECT_EQ(st.group_sizes, sizes);
    ++files;
  }
  EXPECT_EQ(files, 8);
}

TEST(StableHlo, CostRulesInClosedForm) {
  // dot_general with a batch dim: 2 * |out| * K; elementwise |out|; reduce |in| - |out|.
  const Analysis a = run(R"(
module @m {
  func.func public @main(%a: tensor<4x8x16xbf16>, %b: tensor<4x16x32xbf16>) -> tensor<4x8xbf16> {
    %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8x16xbf16>, tensor<4x16x32xbf16>) -> tensor<4x8x32xbf16>
    %1 = stablehlo.tanh %0 : tensor<4x8x32xbf16>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<4x8x32xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
    return %2 : tensor<4x8xbf16>
  }
})",
                         AnalyzeOptions{.fuse_elementwise = false});
  EXPECT_EQ(a.by_class[int(OpClass::Matmul)].flops, 2.0 * 4 * 8 * 32 * 16);
  EXPECT_EQ(a.by_class[int(OpClass::Matmul)].bytes, (4 * 8 * 16 + 4 * 16 * 32 + 4 * 8 * 32) * 2.0);
  EXPECT_EQ(a.by_class[int(OpClass::Elementwise)].flops, 4 * 8 * 32);
  EXPECT_EQ(a.by_class[int(OpClass::Reduction)].flops, 4 * 8 * 32 - 4 * 8);
  EXPECT_EQ(a.by_name.at("stablehlo.constant").count, 1u);
  EXPECT_TRUE(a.warnings.empty());
}

TEST(StableHlo, ConvolutionIsLayoutFree) {
  // The NCHW/OIHW sample: 2*36 outputs... each of 3x3 kernel taps over 4... in closed form:
  // 2 * |out| * (|kernel| / kernel[o]) with o = dimension 0 of the kernel.
  const Analysis a =
      analyze(load_program(sample("stablehlo__conv_general_dilated_float32_2_3_9_10_float32_3_3_4_5.mlir")));
  EXPECT_EQ(a.by_class[int(OpClass::Convolution)].flops, 2.0 * (2 * 3 * 3 * 2) * (3 * 4 * 5));
  // The same convolution written NHWC/HWIO gives the same count.
  const Analysis b = run(R"(
func.func @main(%x: tensor<2x9x10x3xf32>, %k: tensor<4x5x3x3xf32>) -> tensor<2x3x2x3xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x9x10x3xf32>, tensor<4x5x3x3xf32>) -> tensor<2x3x2x3xf32>
  return %0 : tensor<2x3x2x3xf32>
})");
  EXPECT_EQ(b.by_class[int(OpClass::Convolution)].flops, a.by_class[int(OpClass::Convolution)].flops);
}

TEST(StableHlo, CallsAreInlinedAndWhileLoopsUnrolled) {
  const std::string text = R"(
module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %x) : tensor<i64>, tensor<8x8xf32>
     cond {
      %c_1 = stablehlo.constant dense<5> : tensor<i64>
      %1 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<1> : tensor<i64>
      %1 = stablehlo.add %iterArg, %c_1 : tensor<i64>
      %2 = func.call @step(%iterArg_0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      stablehlo.return %1, %2 : tensor<i64>, tensor<8x8xf32>
    }
    return %0#1 : tensor<8x8xf32>
  }
  func.func private @step(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
})";
  const Analysis a = run(text);
  EXPECT_EQ(a.by_class[int(OpClass::Matmul)].count, 5u);
  EXPECT_EQ(a.matmul_conv_flops(), 5 * 2.0 * 8 * 8 * 8);
  // Each iteration's matmul reads the previous one's result.
  uint32_t chained = 0;
  for (size_t i = 0; i < a.ops.size(); ++i)
    if (a.ops[i].cls == OpClass::Matmul && a.ops[i].deps_end > a.ops[i].deps_begin) ++chained;
  EXPECT_EQ(chained, 4u);
  EXPECT_TRUE(a.warnings.empty());
  // Without a constant bound the loop runs --trip-count times, with a warning.
  std::string unknown = text;
  unknown.replace(unknown.find("%c_1 = stablehlo.constant dense<5>"), 34, "%c_1 = stablehlo.iota dim = 0     ");
  AnalyzeOptions o;
  o.default_trip_count = 3;
  const Analysis b = run(unknown, o);
  EXPECT_EQ(b.by_class[int(OpClass::Matmul)].count, 3u);
  ASSERT_FALSE(b.warnings.empty());
  EXPECT_NE(b.warnings[0].find("trip count"), std::string::npos);
}

TEST(StableHlo, FusionChargesOnlyBytesCrossingKernelBoundaries) {
  const std::string text = R"(
func.func @main(%a: tensor<1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<1024xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<1024xf32>
  %1 = stablehlo.exponential %0 : tensor<1024xf32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<1024xf32>) -> tensor<1x1024xf32>
  %3 = stablehlo.dot_general %2, %w, contracting_dims = [1] x [0] : (tensor<1x1024xf32>, tensor<1024x1024xf32>) -> tensor<1x1024xf32>
  %4 = stablehlo.reshape %3 : (tensor<1x1024xf32>) -> tensor<1024xf32>
  return %4 : tensor<1024xf32>
})";
  const double v = 1024 * 4;
  const Analysis fused = run(text);
  // multiply reads %a; exp and broadcast stay in registers; broadcast writes the dot's input;
  // reshape reads the dot's output and writes the program result.
  EXPECT_EQ(fused.by_class[int(OpClass::Elementwise)].bytes, v);
  EXPECT_EQ(fused.by_class[int(OpClass::DataMovement)].bytes, v + 2 * v);
  AnalyzeOptions o;
  o.fuse_elementwise = false;
  const Analysis plain = run(text, o);
  EXPECT_EQ(plain.by_class[int(OpClass::Elementwise)].bytes, 3 * v + 2 * v);
  EXPECT_EQ(plain.by_class[int(OpClass::Matmul)].bytes, fused.by_class[int(OpClass::Matmul)].bytes);
  // Kernels: fused, the multiply-exp-broadcast chain is one (at the broadcast, which writes the
  // dot's input), the dot one, the reshape one; unfused, every op that moves bytes is one.
  EXPECT_EQ(fused.by_class[int(OpClass::Elementwise)].kernels + fused.by_class[int(OpClass::DataMovement)].kernels, 2u);
  EXPECT_EQ(fused.by_class[int(OpClass::Matmul)].kernels, 1u);
  EXPECT_EQ(plain.by_class[int(OpClass::Elementwise)].kernels + plain.by_class[int(OpClass::DataMovement)].kernels, 4u);
  // The dot's GEMM: one 1x1024 row times 1024x1024.
  ASSERT_EQ(fused.gemms.size(), 1u);
  EXPECT_EQ(fused.gemms[0].m, 1);
  EXPECT_EQ(fused.gemms[0].n, 1024);
  EXPECT_EQ(fused.gemms[0].k, 1024);
  EXPECT_EQ(fused.gemms[0].batch, 1);
}

TEST(StableHlo, BatchedDotsAndConvolutionsHaveTheirGemmShape) {
  const Analysis a = run(R"(
func.func @main(%q: tensor<2x8x64x16xbf16>, %k: tensor<2x8x64x16xbf16>, %x: tensor<4x10x10x3xf32>, %w: tensor<3x3x3x32xf32>) -> (tensor<2x8x64x64xbf16>, tensor<4x8x8x32xf32>) {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x8x64x16xbf16>, tensor<2x8x64x16xbf16>) -> tensor<2x8x64x64xbf16>
  %1 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<4x10x10x3xf32>, tensor<3x3x3x32xf32>) -> tensor<4x8x8x32xf32>
  return %0, %1 : tensor<2x8x64x64xbf16>, tensor<4x8x8x32xf32>
})");
  ASSERT_EQ(a.gemms.size(), 2u);
  EXPECT_EQ(a.gemms[0].batch, 16);
  EXPECT_EQ(a.gemms[0].m, 64);
  EXPECT_EQ(a.gemms[0].n, 64);
  EXPECT_EQ(a.gemms[0].k, 16);
  // The convolution as an implicit GEMM: output positions x output features, over the window.
  EXPECT_EQ(a.gemms[1].m, 4 * 8 * 8);
  EXPECT_EQ(a.gemms[1].n, 32);
  EXPECT_EQ(a.gemms[1].k, 3 * 3 * 3);
}

TEST(StableHlo, WaveEfficiencyCountsPaddedTilesWholeWavesAndSplitK) {
  DeviceSpec d;
  d.sms = 108, d.tile_m = 128, d.tile_n = 256;
  // 108 tiles of 128x256: one full wave.
  EXPECT_DOUBLE_EQ(wave_efficiency({1, 128 * 108, 256, 4096}, d), 1.0);
  // A 64x64 GEMM with K too short to split: one tile, a quarter used, on one SM of 108.
  EXPECT_DOUBLE_EQ(wave_efficiency({1, 64, 64, 64}, d), 0.25 / 108);
  // A weight gradient (576 x 64 over K = 802,816): 256x64 tiles, 3 of them (576 of 768 rows
  // used), K split 36 ways to fill the 108 SMs in one wave.
  EXPECT_DOUBLE_EQ(wave_efficiency({1, 576, 64, 802816}, d), 0.75);
  // No SM count or tile: no quantisation.
  EXPECT_DOUBLE_EQ(wave_efficiency({1, 1, 1, 1}, DeviceSpec{}), 1.0);
}

TEST(StableHlo, OpCostAppliesTheEfficiencyModel) {
  const Analysis a = run(R"(
func.func @main(%x: tensor<4096x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %1 = stablehlo.exponential %0 : tensor<4096x4096xbf16>
  return %1 : tensor<4096x4096xbf16>
})");
  DeviceSpec d = device_preset("h100");
  d.model = EfficiencyModel::roofline();
  const ExecOp& dot = a.ops[0];
  const ExecOp& exp = a.ops[1];
  const OpCost peak = op_cost(a, dot, d);
  EXPECT_DOUBLE_EQ(peak.compute_s, dot.flops / (989.5e12 * wave_efficiency(a.gemms[dot.gemm], d)));
  EXPECT_DOUBLE_EQ(peak.memory_s, dot.bytes / 3350e9);
  EXPECT_EQ(peak.overhead_s, 0);
  d.model = {0.5, 0.25, 10e-6};
  const OpCost modelled = op_cost(a, dot, d);
  EXPECT_DOUBLE_EQ(modelled.compute_s, 2 * peak.compute_s);
  EXPECT_DOUBLE_EQ(modelled.memory_s, 4 * peak.memory_s);
  EXPECT_DOUBLE_EQ(modelled.overhead_s, 10e-6);
  EXPECT_DOUBLE_EQ(modelled.seconds(), std::max(modelled.compute_s, modelled.memory_s) + 10e-6);
  // Elementwise ops are not GEMMs: their FLOPs are not scaled by the GEMM efficiency.
  EXPECT_DOUBLE_EQ(op_cost(a, exp, d).memory_s, exp.bytes / (3350e9 * 0.25));
  // Presets carry the shipped model; B200's peaks are dense (its datasheet's 4.5 PFLOP/s is sparse).
  EXPECT_EQ(device_preset("a100").model.gemm, shipped_model().gemm);
  EXPECT_GT(shipped_model().kernel_overhead_s, 0);
  EXPECT_EQ(device_preset("b200").peak_for("bf16", true), 2.25e15);
  EXPECT_EQ(device_preset("b200").sms, 148u);
}

TEST(StableHlo, CalibrationRecoversTheConstantsThatMadeTheSteps) {
  std::vector<std::unique_ptr<Analysis>> programs;
  std::vector<CalibrationCase> cases;
  const EfficiencyModel truth{0.6, 0.7, 5e-6};
  for (const char* size : {"100m", "500m"}) {
    programs.push_back(
        std::make_unique<Analysis>(analyze(load_program(sample(std::string("llama3/llama3-") + size + ".spmd.mlir")))));
    for (const char* dev : {"a100", "h100", "b200"}) {
      CalibrationCase c{programs.back().get(), device_preset(dev), 0, 1e-4};
      c.measured_s = modelled_step(c, truth);
      cases.push_back(c);
    }
  }
  const EfficiencyModel m = calibrate(cases);
  EXPECT_NEAR(m.gemm, truth.gemm, 0.01);
  EXPECT_NEAR(m.bandwidth, truth.bandwidth, 0.01);
  EXPECT_NEAR(m.kernel_overhead_s, truth.kernel_overhead_s, 0.2e-6);
  for (const CalibrationCase& c : cases) EXPECT_NEAR(modelled_step(c, m) / c.measured_s, 1.0, 1e-3);
  EXPECT_THROW(calibrate({}), Error);
}

// The 24 Llama-3 cases: every program imports cleanly, its traces validate, and with the shipped
// model every prediction is within 30% of the measured step and their median within 15%, also
// with each GPU left out of the calibration
// (measured step times from hespas, ../shared/reference/stablehlo/hardware_and_step_time_anchors.json).
TEST(StableHlo, LlamaPredictionsAreWithinTheTargetOfTheMeasuredSteps) {
  std::ifstream in(sample("hardware_and_step_time_anchors.json"));
  ASSERT_TRUE(in) << "missing hardware_and_step_time_anchors.json";
  const nlohmann::json measured = nlohmann::json::parse(in).at("reference_step_times_s");
  const std::pair<const char*, const char*> systems[] = {
      {"a100", "A100_40GB_4GPU"}, {"h100", "H100_80GB_4GPU"}, {"h200", "H200_141GB_4GPU"}, {"b200", "B200_180GB_4GPU"}};
  std::vector<double> errors;
  std::vector<std::unique_ptr<Analysis>> programs;
  std::vector<CalibrationCase> cases;  // size-major, system-minor
  for (const char* size : {"100m", "200m", "500m", "1b", "2b", "3b"}) {
    programs.push_back(
        std::make_unique<Analysis>(analyze(load_program(sample(std::string("llama3/llama3-") + size + ".spmd.mlir")))));
    const Analysis& a = *programs.back();
    EXPECT_TRUE(a.warnings.empty()) << size << ": " << (a.warnings.empty() ? "" : a.warnings[0]);
    Trace t;
    device_trace(a, device_preset("h100"), 3, t);
    const ValidationReport v = validate(t);
    EXPECT_TRUE(v.ok() && v.warnings == 0) << size << ": " << (v.findings.empty() ? "" : v.findings[0].message);
    for (const auto& [dev, anchor] : systems) {
      const DeviceSpec d = device_preset(dev);
      const astra::NetworkConfig net = astra::load_network(
          testing_support::test_data("../../assets/stablehlo/networks/" + std::string(dev) + "_4gpu.yml"));
      const Prediction p = predict(a, d, net, default_system(net, d));
      const double m = measured.at(anchor).at(std::string("llama3-") + size).get<double>();
      errors.push_back(std::fabs(p.step_s / m - 1));
      EXPECT_LE(errors.back(), 0.30) << size << " on " << dev << ": " << p.step_s << " s predicted, " << m
                                     << " s measured";
      cases.push_back({&a, d, m, p.exposed_comm_s});
    }
  }
  ASSERT_EQ(errors.size(), 24u);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  EXPECT_LE(median(errors), 0.15);
  // Not overfitted: the shared constants fitted on three GPUs predict the fourth within the
  // same targets, for each choice of the fourth.
  std::vector<double> held_out;
  for (size_t k = 0; k < 4; ++k) {
    std::vector<CalibrationCase> train;
    for (size_t c = 0; c < cases.size(); ++c)
      if (c % 4 != k) train.push_back(cases[c]);
    const EfficiencyModel m = calibrate(train);
    for (size_t c = k; c < cases.size(); c += 4) {
      held_out.push_back(std::fabs(modelled_step(cases[c], m) / cases[c].measured_s - 1));
      EXPECT_LE(held_out.back(), 0.30) << "case " << c << " with " << systems[k].first << " left out";
    }
  }
  EXPECT_LE(median(held_out), 0.15);
  // The shipped constants are what calibrating on all 24 gives (to the digits shipped).
  const EfficiencyModel all = calibrate(cases);
  EXPECT_NEAR(all.gemm, shipped_model().gemm, 0.01);
  EXPECT_NEAR(all.bandwidth, shipped_model().bandwidth, 0.01);
  EXPECT_NEAR(all.kernel_overhead_s, shipped_model().kernel_overhead_s, 0.3e-6);
}

TEST(StableHlo, ReplicaGroupsBecomeCommGroupsAndPgNames) {
  const Analysis a = analyze(load_program(sample("hespas__test_split_replica_groups.mlir")));
  ASSERT_EQ(a.devices, 4u);
  const auto groups = comm_groups(a);
  const std::map<std::string, std::vector<int64_t>> expected = {{"1", {0, 1}}, {"2", {2, 3}}, {"3", {0, 1, 2, 3}}};
  EXPECT_EQ(groups, expected);
  const DeviceSpec d = device_preset("h100");
  for (uint32_t dev = 0; dev < 4; ++dev) {
    Trace t;
    device_trace(a, d, dev, t);
    std::vector<std::string> pgs;
    for (uint32_t n = 0; n < t.size(); ++n)
      if (t.type(n) == int32_t(NodeType::CommColl)) {
        pgs.emplace_back(*t.find_attr(n, "pg_name")->as_string());
        EXPECT_EQ(*t.find_attr(n, "comm_size")->as_int64(), int64_t(*t.find_attr(n, "comm_size")->as_int64()));
      }
    EXPECT_EQ(pgs, (std::vector<std::string>{dev < 2 ? "1" : "2", "3"})) << "device " << dev;
  }
}

TEST(StableHlo, CollectivesAreIssuedOneComputeStretchAhead) {
  // FSDP-like: each weight is gathered just before the dot that uses it. A gather whose input is
  // an argument could start at once; it starts when the stretch before the previous one ends,
  // so it overlaps the stretch before its use and the gathers run in the order they are needed.
  const Analysis a = run(R"(
module @m attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<256x256xbf16>, %w0: tensor<256x256xbf16>, %w1: tensor<128x256xbf16>, %w2: tensor<128x256xbf16>) -> tensor<256x256xbf16> {
    %0 = stablehlo.dot_general %x, %w0, contracting_dims = [1] x [0] : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
    %g1 = "stablehlo.all_gather"(%w1) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<128x256xbf16>) -> tensor<256x256xbf16>
    %1 = stablehlo.dot_general %0, %g1, contracting_dims = [1] x [0] : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
    %g2 = "stablehlo.all_gather"(%w2) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, use_global_device_ids} : (tensor<128x256xbf16>) -> tensor<256x256xbf16>
    %2 = stablehlo.dot_general %1, %g2, contracting_dims = [1] x [0] : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
    return %2 : tensor<256x256xbf16>
  }
})");
  Trace t;
  device_trace(a, device_preset("a100"), 0, t);
  std::vector<uint32_t> comp, coll;
  for (uint32_t n = 0; n < t.size(); ++n) (t.type(n) == int32_t(NodeType::CommColl) ? coll : comp).push_back(n);
  ASSERT_EQ(comp.size(), 3u);
  ASSERT_EQ(coll.size(), 2u);
  EXPECT_TRUE(t.data_deps(coll[0]).empty());  // nothing before the first stretch
  ASSERT_EQ(t.data_deps(coll[1]).size(), 1u);
  EXPECT_EQ(t.data_deps(coll[1])[0], t.id(comp[0]));  // the second gather waits for the first dot, not the second
  const std::span<const uint64_t> last = t.data_deps(comp[2]);
  EXPECT_NE(std::find(last.begin(), last.end(), t.id(coll[1])), last.end());
}

TEST(StableHlo, CommSizeIsOperandBytes) {
  // FSDP+TP sample: all-gathers of 98x128 f32 shards, reduce-scatters of 16x128 f32 inputs.
  const Analysis a = analyze(load_program(sample("ttmlir__e2e_fsdp_tp_shardy.mlir")));
  ASSERT_EQ(a.devices, 8u);
  Trace t;
  device_trace(a, device_preset("a100"), 5, t);
  bool saw_first_gather = false, saw_scatter = false;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (t.type(n) != int32_t(NodeType::CommColl)) continue;
    const int64_t type = *t.find_attr(n, "comm_type")->as_int64(), size = *t.find_attr(n, "comm_size")->as_int64();
    if (type == int64_t(CommType::AllGather) && !saw_first_gather) {
      EXPECT_EQ(size, 98 * 128 * 4);                            // the operand, not the 196x128 result
      EXPECT_EQ(*t.find_attr(n, "pg_name")->as_string(), "2");  // device 5 is in [1, 5]
      saw_first_gather = true;
    }
    if (type == int64_t(CommType::ReduceScatter) && !saw_scatter) {
      EXPECT_EQ(size, 16 * 128 * 4);                            // the operand, not the 16x32 result
      EXPECT_EQ(*t.find_attr(n, "pg_name")->as_string(), "6");  // [4, 5, 6, 7]
      saw_scatter = true;
    }
  }
  EXPECT_TRUE(saw_first_gather && saw_scatter);
}

TEST(StableHlo, CollectivePermuteIsMatchedSendRecvPairs) {
  const std::string text = R"(
module @ring attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<256xf32>) -> tensor<256xf32> {
    %0 = stablehlo.exponential %x : tensor<256xf32>
    %1 = "stablehlo.collective_permute"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>}> : (tensor<256xf32>) -> tensor<256xf32>
    %2 = stablehlo.tanh %1 : tensor<256xf32>
    return %2 : tensor<256xf32>
  }
})";
  const Analysis a = run(text);
  std::map<std::pair<int, int>, int> sends, recvs;
  const std::string dir = testing_support::temp_dir();
  std::vector<std::string> encoded;
  for (uint32_t dev = 0; dev < 4; ++dev) {
    Trace t;
    device_trace(a, device_preset("h100"), dev, t);
    ValidationReport v = validate(t);
    EXPECT_TRUE(v.ok() && v.warnings == 0) << (v.findings.empty() ? "" : v.findings[0].message);
    for (uint32_t n = 0; n < t.size(); ++n) {
      if (t.type(n) != int32_t(NodeType::CommSend) && t.type(n) != int32_t(NodeType::CommRecv)) continue;
      const int src = int(*t.find_attr(n, "comm_src")->as_int64()), dst = int(*t.find_attr(n, "comm_dst")->as_int64());
      EXPECT_EQ(*t.find_attr(n, "comm_size")->as_int64(), 1024);
      (t.type(n) == int32_t(NodeType::CommSend) ? sends : recvs)[{src, dst}]++;
      if (t.type(n) == int32_t(NodeType::CommRecv)) {
        // The tanh after the permute waits for the data.
        bool waited = false;
        for (uint32_t m = 0; m < t.size(); ++m)
          for (uint64_t d : t.data_deps(m)) waited |= d == t.id(n);
        EXPECT_TRUE(waited);
      }
    }
    write_et(t, dir + "/ring." + std::to_string(dev) + ".et");
  }
  const std::map<std::pair<int, int>, int> expected = {{{0, 1}, 1}, {{1, 2}, 1}, {{2, 3}, 1}, {{3, 0}, 1}};
  EXPECT_EQ(sends, expected);
  EXPECT_EQ(recvs, expected);
  const Prediction p =
      predict(a, device_preset("h100"), switch_of(4), default_system(switch_of(4), device_preset("h100")));
  EXPECT_FALSE(p.sim.deadlock);
  EXPECT_GT(p.step_s, p.compute_s);  // the permute sits between the two kernels
}

TEST(StableHlo, EverySampleImportsValidatesAndSimulates) {
  const DeviceSpec d = device_preset("a100");
  for (const std::string& file :
       testing_support::find_files(testing_support::shared("reference/stablehlo"), {".mlir"})) {
    Program p = load_program(file);
    for (size_t m = 0; m < p.modules(); ++m) {
      SCOPED_TRACE(file + " module " + std::to_string(m));
      const Analysis a = analyze(p, m);
      for (uint32_t dev = 0; dev < a.devices; ++dev) {
        Trace t;
        device_trace(a, d, dev, t);
        ValidationReport v = validate(t);
        EXPECT_TRUE(v.ok()) << (v.findings.empty() ? "" : v.findings[0].message);
        // A device whose collectives are all local and that computes nothing has an empty trace.
        if (t.size() > 0) {
          EXPECT_EQ(v.warnings, 0u) << (v.findings.empty() ? "" : v.findings[0].message);
        }
      }
      if (a.devices < 2) continue;  // a network needs two NPUs
      const Prediction pr = predict(a, d, switch_of(a.devices), default_system(switch_of(a.devices), d));
      EXPECT_FALSE(pr.sim.deadlock);
      EXPECT_GE(pr.step_s + 1e-6, pr.compute_s);
      for (const sim::NpuResult& n : pr.sim.npus) EXPECT_TRUE(n.finished);
    }
  }
}

TEST(StableHlo, PredictionAddsComputeAndExposedCommunication) {
  const Analysis a = analyze(load_program(sample("hespas__resnet_50_train_step_4_devices_1024_batch.mlir")));
  const DeviceSpec d = device_preset("a100");
  const astra::NetworkConfig net = astra::parse_network(
      "topology: [ FullyConnected ]\nnpus_count: [ 4 ]\nbandwidth: [ 100 ]\nlatency: [ 1000 ]\n", "net.yml");
  const Prediction p = predict(a, d, net, default_system(net, d));
  double sum = 0;
  for (const ExecOp& e : a.ops) sum += op_seconds(a, e, d);
  EXPECT_DOUBLE_EQ(p.compute_s, sum);
  double by_class = 0;
  for (const ClassBreakdown& c : p.classes) by_class += c.seconds;
  EXPECT_NEAR(by_class, p.compute_s, 1e-12);
  // Durations are rounded to microseconds with the remainder carried, so the simulated compute
  // is the roofline sum to within a microsecond.
  EXPECT_NEAR(static_cast<double>(p.sim.npus[0].compute) * 1e-9, p.compute_s, 1e-6);
  EXPECT_GE(p.step_s, p.compute_s - 1e-6);
  EXPECT_EQ(p.collective_count[int(CollectiveKind::AllReduce)], 375u);
  // A faster device predicts a shorter step; most convolution time is compute bound.
  const DeviceSpec h = device_preset("h100");
  const Prediction q = predict(a, h, net, default_system(net, h));
  EXPECT_LT(q.step_s, p.step_s);
  EXPECT_GT(p.classes[int(OpClass::Convolution)].compute_bound_s, 0.5 * p.classes[int(OpClass::Convolution)].seconds);
}

TEST(StableHlo, RooflineUsesPerTypePeaksAndTf32ForF32Matmuls) {
  const DeviceSpec d = device_preset("a100");
  EXPECT_EQ(d.peak_for("bf16", true), 312e12);
  EXPECT_EQ(d.peak_for("f32", true), 156e12);  // tf32 tensor cores
  EXPECT_EQ(d.peak_for("f32", false), 19.5e12);
  EXPECT_EQ(d.peak_for("f8E4M3FN", true), 9.7e12);  // no fp8 on A100: the fallback
  EXPECT_EQ(device_preset("TPUv3").peak_for("f32", true), 63.3e12);
  EXPECT_THROW(device_preset("z80"), Error);
  for (const std::string& k : device_presets()) {
    const DeviceSpec s = device_preset(k);
    EXPECT_GT(s.hbm_bytes_per_s, 0) << k;
    EXPECT_GT(s.fallback_flops, 0) << k;
    EXPECT_FALSE(s.source.empty()) << k;
  }
}

TEST(StableHlo, TrendErrorIsTheMedianOverSystemPairs) {
  // Predicted 2x faster on B than on A where measurement says 4x: |2 / 4 - 1|.
  EXPECT_DOUBLE_EQ(median_trend_error({1.0, 0.5}, {1.0, 0.25}), 0.5);
  EXPECT_DOUBLE_EQ(median_trend_error({2.0, 1.0, 0.5}, {4.0, 2.0, 1.0}), 0.0);  // scale does not matter
  // Three pairs with errors 0 (A, B), 0.5 (A, C) and 0.5 (B, C): the median is 0.5.
  EXPECT_DOUBLE_EQ(median_trend_error({1, 1, 1}, {1, 1, 0.5}), 0.5);
  EXPECT_TRUE(std::isnan(median_trend_error({1}, {1})));
}

TEST(StableHloErrors, MalformedInputNamesLineAndColumn) {
  auto message = [](const std::string& text) {
    try {
      analyze(parse_program(text, "bad.mlir"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = stablehlo.add %a, "
                    "%b : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n")
                .find("bad.mlir:3:5: '%b' is used but never defined"),
            std::string::npos);
  EXPECT_NE(
      message("module @m {\n  func.func @main(%a: tensor<4xf32>) {\n    %0 = stablehlo.add %a, %a : tensor<4xf32>\n")
          .find("bad.mlir:"),
      std::string::npos);
  EXPECT_NE(message("module @m {\n  func.func @main(%a: tensor<4xf32 {\n").find("unterminated type"),
            std::string::npos);
  EXPECT_NE(message("hello world").find("expected 'module'"), std::string::npos);
  EXPECT_NE(message("").find("no module"), std::string::npos);
  EXPECT_NE(message(std::string("ML\xef"
                                "R\x00\x01",
                                6))
                .find("MLIR bytecode"),
            std::string::npos);
  EXPECT_NE(message("func.func @main() {\n  %0 = call @nowhere() : () -> tensor<f32>\n  return\n}\n")
                .find("undefined function @nowhere"),
            std::string::npos);
  EXPECT_NE(message("func.func @main() {\n  func.call @main() : () -> ()\n  return\n}\n").find("nested more than 256"),
            std::string::npos);
  std::string deep = "func.func @main() {\n";
  for (int i = 0; i < 300; ++i) deep += "\"x.op\"() ({\n";
  EXPECT_NE(message(deep).find("nested more than"), std::string::npos);
  EXPECT_NE(message("module @m attributes {mhlo.num_partitions = 2 : i32} {\n func.func @main(%a: tensor<4xf32>) -> "
                    "tensor<4xf32> {\n"
                    "  %0 = \"stablehlo.all_reduce\"(%a) <{replica_groups = dense<[[0, 5]]> : tensor<1x2xi64>}> ({\n"
                    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    %s = stablehlo.add %x, %y : tensor<f32>\n    "
                    "stablehlo.return %s : tensor<f32>\n"
                    "  }) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n }\n}\n")
                .find("replica id 5 out of range"),
            std::string::npos);
}

TEST(StableHloErrors, TruncatedSamplesFailCleanly) {
  // Every prefix cut of a real file either parses (a cut between ops) or names what is wrong.
  const std::string text = testing_support::read_raw(sample("ttmlir__e2e_fsdp_tp_shardy.mlir"));
  for (size_t cut = 0; cut < text.size(); cut += 97) {
    try {
      Program p = parse_program(text.substr(0, cut), "cut.mlir");
      analyze(p);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.mlir"), std::string::npos) << e.what();
    }
  }
}

TEST(StableHloErrors, UnknownOpsAreCountedNotFatal) {
  const Analysis a = run(R"(
func.func @main(%a: tensor<16xf32>) -> tensor<16xf32> {
  %0 = stablehlo.custom_call @cudnn_magic(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %1 = "mydialect.frobnicate"(%0) {level = 3 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  return %1 : tensor<16xf32>
})");
  EXPECT_EQ(a.by_class[int(OpClass::Unmodelled)].count, 2u);
  ASSERT_EQ(a.warnings.size(), 2u);
  EXPECT_NE(a.warnings[0].find("cudnn_magic"), std::string::npos);
  EXPECT_NE(a.warnings[1].find("mydialect.frobnicate"), std::string::npos);
}

TEST(StableHlo, CaseCountsTheCostliestBranchAndFusionsTheirOperandsOnly) {
  const Analysis a = run(R"(
func.func @main(%i: tensor<i32>, %x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = "stablehlo.case"(%i) ({
    %1 = stablehlo.add %x, %x : tensor<16x16xf32>
    stablehlo.return %1 : tensor<16x16xf32>
  }, {
    %1 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    stablehlo.return %1 : tensor<16x16xf32>
  }) : (tensor<i32>) -> tensor<16x16xf32>
  %2 = "mhlo.fusion"(%0, %x) ({
  ^bb0(%p: tensor<16x16xf32>, %q: tensor<16x16xf32>):
    %3 = stablehlo.multiply %p, %q : tensor<16x16xf32>
    %4 = stablehlo.exponential %3 : tensor<16x16xf32>
    stablehlo.return %4 : tensor<16x16xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %2 : tensor<16x16xf32>
})");
  EXPECT_EQ(a.by_class[int(OpClass::Matmul)].count, 1u);  // the dot branch, not the add
  EXPECT_EQ(a.matmul_conv_flops(), 2.0 * 16 * 16 * 16);
  ASSERT_EQ(a.by_name.count("mhlo.fusion"), 1u);
  EXPECT_EQ(a.by_name.at("mhlo.fusion").flops, 2.0 * 16 * 16);      // multiply + exponential
  EXPECT_EQ(a.by_name.at("mhlo.fusion").bytes, 3.0 * 16 * 16 * 4);  // two operands and the result
  EXPECT_EQ(a.by_name.count("stablehlo.multiply"), 0u);
}

TEST(StableHlo, BroadcastIsAnAllGatherOfItsShare) {
  const Analysis a = run(R"(
module @b attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %0 = "stablehlo.collective_broadcast"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> : (tensor<1024xf32>) -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
  }
})");
  Trace t;
  device_trace(a, device_preset("h100"), 2, t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(*t.find_attr(0, "comm_type")->as_int64(), int64_t(CommType::AllGather));
  EXPECT_EQ(*t.find_attr(0, "comm_size")->as_int64(), 1024);  // 4096 bytes over 4 devices
}

TEST(StableHlo, ModulesWithoutADeviceCountAreSizedByTheirGroups) {
  const Analysis a = run(R"(
module @SyncTensorsGraph {
  func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
})");
  EXPECT_EQ(a.devices, 6u);
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_NE(a.warnings[0].find("6 devices inferred"), std::string::npos);
}
