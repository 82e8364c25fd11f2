// chakra_bench: load and jsonize speed and peak memory on a large trace.
//
// Builds a ≥250k-node trace by replicating a real one (the linked ResNet rank from the reference
// outputs, 16 copies with shifted ids, as the reference timings' "resnet_x16" input), then
//   1. decodes it in-process (best of N, CPU time) → MB/s of .et;
//   2. jsonizes it in-process (streaming decode + reference-format JSON) into a counting sink;
//   3. runs the real CLI (`chakra jsonize --format reference` to a file, `chakra validate`,
//      `chakra info`) as child processes, best of N, and reads their CPU time (user + system)
//      and peak RSS from the kernel.
// The reference jsonizer's CPU time on its resnet_x16 input is read from the reference timings
// table (another machine). `--side-by-side` instead runs the reference tools here, alternating
// with ours (side_by_side.cpp): the figures the README's comparison table comes from.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <nlohmann/json.hpp>
#include <iostream>

#include "chakra/app/sweep.h"
#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/sim/simulate.h"
#include "chakra/stablehlo/stablehlo.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/viz/timeline_model.h"
#include "bench_support.h"
#include "cli.h"
#include "side_by_side.h"

namespace {

using namespace bench;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

class CountingSink : public chakra::ByteSink {
 public:
  void write(const void*, size_t n) override { bytes += n; }
  using ByteSink::write;
  uint64_t bytes = 0;
};

template <class F>
double best_cpu_seconds(int repeat, F&& work) {
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    double t0 = cpu_seconds();
    work();
    best = std::min(best, cpu_seconds() - t0);
  }
  return best;
}

// The web app's timeline at 1M events: building the model (lanes, index) once, then the
// per-frame query over every track for a 2000-pixel-wide view, fully zoomed out, at 1/64 of the
// span, and while panning. The frame budget is 16 ms (60 fps); this is the CPU part of it that
// grows with the trace (ImGui and the instanced draw are bounded by the rectangles returned).
void timeline_frames() {
  const uint32_t tracks = 64, per_track = 1u << 14;  // 1,048,576 events
  std::vector<chakra::TimelineEvent> events;
  events.reserve(size_t{tracks} * per_track);
  uint64_t seed = 12345;
  auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 33; };
  uint64_t span = 0;
  for (uint32_t t = 0; t < tracks; ++t) {
    uint64_t at = 0;
    for (uint32_t i = 0; i < per_track; ++i) {
      at += next() % 200;
      uint64_t dur = 1 + next() % 400;
      events.push_back({t, 0, at, at + dur, i, static_cast<uint8_t>(i % 5)});
      at += dur;
    }
    span = std::max(span, at);
  }
  auto start = std::chrono::steady_clock::now();
  chakra::TimelineModel m = chakra::build_timeline(std::move(events), "ns");
  double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::vector<chakra::TimelineRect> rects;
  auto frame = [&](double t0, double t1) {
    rects.clear();
    for (const chakra::TimelineTrack& track : m.tracks) chakra::visible_rects(track, t0, t1, 2000.0 / (t1 - t0), rects);
  };
  auto per_frame_ms = [&](auto&& body, int frames) {
    auto s = std::chrono::steady_clock::now();
    for (int f = 0; f < frames; ++f) body(f);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count() / frames;
  };
  const double whole = static_cast<double>(span);
  double out_ms = per_frame_ms([&](int) { frame(0, whole); }, 20);
  size_t out_rects = rects.size();
  double zoom_ms = per_frame_ms([&](int) { frame(whole / 2, whole / 2 + whole / 64); }, 20);
  size_t zoom_rects = rects.size();
  double pan_ms = per_frame_ms(
      [&](int f) {
        double a = whole * f / 240.0;
        frame(a, a + whole / 8);
      },
      120);
  std::printf("\n== web timeline model, %llu events on %u tracks, 2000 px wide\n",
              static_cast<unsigned long long>(m.events), tracks);
  std::printf("build (lanes + index)   %.0f ms once\n", build_ms);
  std::printf("frame, zoomed out       %.2f ms, %zu rects (%.1f per track-pixel column)\n", out_ms, out_rects,
              static_cast<double>(out_rects) / (tracks * 2000.0));
  std::printf("frame, 1/64 of the span %.2f ms, %zu rects\n", zoom_ms, zoom_rects);
  std::printf("frame, panning at 1/8   %.2f ms per frame over 120 frames (budget 16.7 ms at 60 fps)\n", pan_ms);
}

// hespas' XLA-profiled per-device compute (ms -> s) from the table in llama3/README.md, per size
// and system in `sizes` x (A100, H100, H200, B200) order; a range "a–b" counts as its midpoint.
std::vector<double> hespas_profiled_compute(const std::string& readme, const char* const* sizes, size_t systems) {
  std::vector<double> out;
  const std::string text = chakra::read_file(readme);
  const size_t table = text.find("hespas' XLA-profiling estimator");
  if (table == std::string::npos) throw chakra::Error(readme + ": no table of hespas' XLA-profiled compute");
  for (size_t i = 0; i < 6; ++i) {
    const std::string row = std::string("| ") + sizes[i] + " |";
    const size_t at = text.find(row, table);
    if (at == std::string::npos) throw chakra::Error(readme + ": no row for " + sizes[i] + " in hespas' table");
    std::istringstream cells(text.substr(at + row.size(), text.find('\n', at) - at - row.size()));
    std::string cell;
    for (size_t k = 0; k < systems && std::getline(cells, cell, '|'); ++k) {
      double lo = 0, hi = 0;
      const int n = std::sscanf(cell.c_str(), " %lf–%lf", &lo, &hi);
      out.push_back((n == 2 ? (lo + hi) / 2 : lo) * 1e-3);
    }
  }
  if (out.size() != 6 * systems) throw chakra::Error(readme + ": hespas' table has missing cells");
  return out;
}

double max_of(const std::vector<double>& v) { return v.empty() ? std::nan("") : *std::max_element(v.begin(), v.end()); }

std::string model_line(const chakra::stablehlo::EfficiencyModel& m) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "GEMM %.3f of peak, bandwidth %.3f of HBM, %.2f us per kernel", m.gemm, m.bandwidth,
                m.kernel_overhead_s * 1e6);
  return buf;
}

// The paper's metric over workloads: `predicted` and `measured` hold `systems` consecutive entries
// per workload; the median over workloads of each workload's median trend error.
double trend_over_workloads(const std::vector<double>& predicted, const std::vector<double>& measured, size_t systems) {
  std::vector<double> per_workload;
  for (size_t w = 0; w + systems <= predicted.size(); w += systems)
    per_workload.push_back(
        chakra::stablehlo::median_trend_error({predicted.begin() + w, predicted.begin() + w + systems},
                                              {measured.begin() + w, measured.begin() + w + systems}));
  return median(per_workload);
}

// How low the trend error can go at all on the Llama-3 measurements, i.e. why its 5% target is
// not met by constants taken from public sources (core/docs/stablehlo.md). `cases` in workload x
// system order, `predicted` and `measured` their shipped predictions and measured steps.
void trend_bounds(const std::vector<chakra::stablehlo::CalibrationCase>& cases, const std::vector<double>& predicted,
                  const std::vector<double>& measured, const char* const* devices, size_t systems, size_t reference) {
  namespace stablehlo = chakra::stablehlo;
  std::printf("bounds on the trend error with these measurements:\n");

  // A perfect predictor scored against figures rounded to 10 ms: true times drawn uniformly within
  // 5 ms of each (fixed seed, so the figures repeat).
  std::mt19937_64 rng(20261127);
  std::vector<double> floors, truth(measured.size());
  for (int draw = 0; draw < 2000; ++draw) {
    for (size_t i = 0; i < measured.size(); ++i)
      truth[i] = measured[i] + (static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.5) * 0.01;
    floors.push_back(trend_over_workloads(truth, measured, systems));
  }
  std::sort(floors.begin(), floors.end());
  std::printf(
      "  exact step times, scored against the 10 ms rounding: median %.1f%% (10th-90th percentile %.1f-%.1f%%)\n",
      floors[floors.size() / 2] * 100, floors[floors.size() / 10] * 100, floors[floors.size() * 9 / 10] * 100);

  // One free factor per GPU (the reference GPU's fixed: the metric ignores a common factor),
  // fitted to the measurements on a 0.01 grid: the most that one per-generation efficiency could
  // add to our predictions where a single kind of time dominates.
  std::vector<double> factor(systems, 1.0), best_factor = factor, scaled(predicted.size());
  double best = trend_over_workloads(predicted, measured, systems);
  std::vector<size_t> free;
  for (size_t k = 0; k < systems; ++k)
    if (k != reference) free.push_back(k);
  const int grid_points = 51;  // 0.80 .. 1.30
  std::vector<int> at(free.size(), 0);
  for (bool more = true; more;) {
    for (size_t j = 0; j < free.size(); ++j) factor[free[j]] = 0.80 + 0.01 * at[j];
    for (size_t i = 0; i < predicted.size(); ++i) scaled[i] = predicted[i] * factor[i % systems];
    const double e = trend_over_workloads(scaled, measured, systems);
    if (e < best) best = e, best_factor = factor;
    more = false;
    for (size_t j = 0; j < at.size() && !more; ++j)
      if (++at[j] < grid_points)
        more = true;
      else
        at[j] = 0;
  }
  std::printf("  one factor per GPU fitted to the measurements:");
  for (size_t k = 0; k < systems; ++k) std::printf(" %s x%.2f", devices[k], best_factor[k]);
  std::printf(" -> trend error %.2f%%\n", best * 100);

  // The one public per-generation GEMM figure found: the maximum achievable BF16 matmul FLOP/s
  // of the ml-engineering book's MAMF table (A100 SXM 86.9%, H100 SXM 80.3%, no H200 row: the same
  // die as the H100, B200 SXM 77.6%) scaling each GPU's peaks, the shared constants recalibrated.
  const std::map<std::string, double> mamf = {{"a100", 0.869}, {"h100", 0.803}, {"h200", 0.803}, {"b200", 0.776}};
  if (std::all_of(devices, devices + systems, [&](const char* d) { return mamf.count(d) > 0; })) {
    std::vector<stablehlo::CalibrationCase> scaled_cases = cases;
    for (size_t c = 0; c < cases.size(); ++c) {
      stablehlo::DeviceSpec& d = scaled_cases[c].device;
      const double efficiency = mamf.at(devices[c % systems]);
      for (auto& [dtype, flops] : d.peak_flops) flops *= efficiency;
      d.fallback_flops *= efficiency;
    }
    const stablehlo::EfficiencyModel m = stablehlo::calibrate(scaled_cases);
    std::vector<double> steps, errors;
    for (const stablehlo::CalibrationCase& c : scaled_cases) {
      steps.push_back(stablehlo::modelled_step(c, m));
      errors.push_back(std::fabs(steps.back() / c.measured_s - 1));
    }
    std::printf(
        "  peaks scaled by the public MAMF efficiencies, shared constants recalibrated (%s): median %.1f%%, trend "
        "error %.1f%%\n",
        model_line(m).c_str(), median(errors) * 100, trend_over_workloads(steps, measured, systems) * 100);
  }

  // Every constant per GPU, each GPU's three fitted on its own six measurements (12 constants for
  // 24 figures), to be set against the public figures (core/docs/stablehlo.md does).
  std::vector<double> own(cases.size()), own_errors;
  for (size_t k = 0; k < systems; ++k) {
    std::vector<stablehlo::CalibrationCase> mine;
    for (size_t c = k; c < cases.size(); c += systems) mine.push_back(cases[c]);
    const stablehlo::EfficiencyModel m = stablehlo::calibrate(mine);
    for (size_t c = k; c < cases.size(); c += systems) {
      own[c] = stablehlo::modelled_step(cases[c], m);
      own_errors.push_back(std::fabs(own[c] / cases[c].measured_s - 1));
    }
    std::printf("  %-5s constants fitted on its own cases: %s\n", devices[k], model_line(m).c_str());
  }
  std::printf("  -> median %.1f%%, trend error %.1f%%\n", median(own_errors) * 100,
              trend_over_workloads(own, measured, systems) * 100);
}

// StableHLO prediction against the measured step times of
// reference/stablehlo/hardware_and_step_time_anchors.json: hespas' ResNet-50 train step (A100 only)
// and the six Llama-3 FSDP-4 programs on 4x A100/H100/H200/B200 (24 cases). Prints the error table,
// the paper's trend metric (median over system pairs, then over workloads) for our predictions and
// for hespas' published XLA-profiled compute, a leave-one-GPU-out calibration of the shared
// constants (fitted on three GPUs' 18 cases, the error on the fourth's 6) and trend_bounds.
bool stablehlo_prediction(int repeat) {
  namespace stablehlo = chakra::stablehlo;
  const std::string dir = std::string(CHAKRA_SHARED_DIR) + "/reference/stablehlo/";
  const std::string nets = std::string(CHAKRA_SOURCE_DIR) + "/assets/stablehlo/networks/";
  const nlohmann::json anchors = nlohmann::json::parse(chakra::read_file(dir + "hardware_and_step_time_anchors.json"));
  const nlohmann::json& measured_table = anchors.at("reference_step_times_s");
  struct System {
    const char* anchor;  // key in reference_step_times_s
    const char* device;
    const char* network;
  };
  const System systems[] = {{"A100_40GB_4GPU", "a100", "a100_4gpu.yml"},
                            {"H100_80GB_4GPU", "h100", "h100_4gpu.yml"},
                            {"H200_141GB_4GPU", "h200", "h200_4gpu.yml"},
                            {"B200_180GB_4GPU", "b200", "b200_4gpu.yml"}};
  constexpr size_t kSystems = std::size(systems);
  struct Workload {
    std::string name;  // key in the measured tables
    std::string file;
  };
  std::vector<Workload> workloads = {{"resnet50", "hespas__resnet_50_train_step_4_devices_1024_batch.mlir"}};
  const char* sizes[] = {"100m", "200m", "500m", "1b", "2b", "3b"};
  for (const char* s : sizes)
    workloads.push_back({std::string("llama3-") + s, std::string("llama3/llama3-") + s + ".spmd.mlir"});
  const std::vector<double> hespas = hespas_profiled_compute(dir + "llama3/README.md", sizes, kSystems);

  std::vector<std::unique_ptr<stablehlo::Analysis>> analyses;
  std::vector<stablehlo::CalibrationCase> cases;  // Llama cases, with their prediction's exposed communication
  // Per Llama case, in the order of `cases`: our step, the measured one, hespas' compute.
  std::vector<double> errors, hespas_errors, llama_steps, llama_measured, hespas_steps;
  std::printf("\n== StableHLO step-time prediction (model: %s)\n", model_line(stablehlo::shipped_model()).c_str());
  std::printf("%-12s %-5s %10s %10s %10s %10s %7s %12s %7s\n", "workload", "GPU", "compute ms", "exposed ms", "step ms",
              "measured", "error", "hespas XLA", "error");
  for (const Workload& w : workloads) {
    const std::string text = chakra::read_file(dir + w.file);
    auto a = std::make_unique<stablehlo::Analysis>();
    const double parse_s =
        best_cpu_seconds(repeat, [&] { *a = stablehlo::analyze(stablehlo::parse_program(text, w.file)); });
    for (size_t k = 0; k < kSystems; ++k) {
      const System& s = systems[k];
      const stablehlo::DeviceSpec d = stablehlo::device_preset(s.device);
      const chakra::astra::NetworkConfig net = chakra::astra::load_network(nets + s.network);
      stablehlo::Prediction p;
      const double predict_s =
          best_cpu_seconds(repeat, [&] { p = stablehlo::predict(*a, d, net, stablehlo::default_system(net, d)); });
      const nlohmann::json& table = measured_table.at(s.anchor);
      std::printf("%-12s %-5s %10.2f %10.2f %10.2f", w.name.c_str(), s.device, p.compute_s * 1e3,
                  p.exposed_comm_s * 1e3, p.step_s * 1e3);
      if (table.contains(w.name)) {
        const double m = table[w.name].get<double>();
        std::printf(" %10.0f %+6.0f%%", m * 1e3, (p.step_s / m - 1) * 100);
        const size_t size =
            static_cast<size_t>(std::find(std::begin(sizes), std::end(sizes), w.name.substr(7)) - std::begin(sizes));
        if (w.name.rfind("llama3-", 0) == 0) {
          errors.push_back(std::fabs(p.step_s / m - 1));
          cases.push_back({a.get(), d, m, p.exposed_comm_s});
          llama_steps.push_back(p.step_s);
          llama_measured.push_back(m);
          const double h = hespas[size * kSystems + k];
          hespas_steps.push_back(h);
          hespas_errors.push_back(std::fabs(h / m - 1));
          std::printf(" %12.1f %+6.0f%%", h * 1e3, (h / m - 1) * 100);
        }
      }
      std::printf("\n");
      if (w.name == "llama3-3b" && k == 0)
        std::printf("  (3b: %.2f s CPU to parse and cost, %.2f s to predict on one system)\n", parse_s, predict_s);
    }
    analyses.push_back(std::move(a));
  }
  std::printf(
      "Llama-3, 24 cases: median |predicted/measured - 1| %.1f%%, max %.1f%%; trend error %.1f%% "
      "(hespas' XLA-profiled compute: %.1f%%, max %.1f%%; trend %.1f%%)\n",
      median(errors) * 100, max_of(errors) * 100, trend_over_workloads(llama_steps, llama_measured, kSystems) * 100,
      median(hespas_errors) * 100, max_of(hespas_errors) * 100,
      trend_over_workloads(hespas_steps, llama_measured, kSystems) * 100);
  std::printf(
      "hespas on 100m, 4x A100 (measured 73-87 ms, 90 ms in the table): roofline + ASTRA-sim %.2f ms, XLA-profiled + "
      "ASTRA-sim %.2f ms\n",
      anchors["tutorial_llama3_100m_4xA100"]["roofline_plus_astrasim_ms"].get<double>(),
      anchors["tutorial_llama3_100m_4xA100"]["xla_profiled_plus_astrasim_ms"].get<double>());

  // Leave one GPU out: the shared constants fitted on the other three, errors on the fourth.
  const stablehlo::EfficiencyModel all = stablehlo::calibrate(cases);
  std::printf("calibrated on all 24 cases: %s\n", model_line(all).c_str());
  std::vector<double> loo_errors, loo_step(cases.size());
  for (size_t k = 0; k < kSystems; ++k) {
    std::vector<stablehlo::CalibrationCase> train;
    for (size_t c = 0; c < cases.size(); ++c)
      if (c % kSystems != k) train.push_back(cases[c]);
    const stablehlo::EfficiencyModel m = stablehlo::calibrate(train);
    std::vector<double> held;
    for (size_t c = k; c < cases.size(); c += kSystems) {
      loo_step[c] = stablehlo::modelled_step(cases[c], m);
      held.push_back(std::fabs(loo_step[c] / cases[c].measured_s - 1));
      loo_errors.push_back(held.back());
    }
    std::printf("  held out %-5s fitted on the others: %s -> its 6 cases: median %.1f%%, max %.1f%%\n",
                systems[k].device, model_line(m).c_str(), median(held) * 100, max_of(held) * 100);
  }
  std::printf("leave-one-GPU-out, 24 cases: median %.1f%%, max %.1f%%, trend error %.1f%%\n", median(loo_errors) * 100,
              max_of(loo_errors) * 100, trend_over_workloads(loo_step, llama_measured, kSystems) * 100);
  const char* devices[kSystems];
  for (size_t k = 0; k < kSystems; ++k) devices[k] = systems[k].device;
  trend_bounds(cases, llama_steps, llama_measured, devices, kSystems, 1);
  return true;
}

// chakra sweep: `points` points of a 64-NPU all-reduce (sizes x link bandwidths x the four
// algorithms), on every core; and once on one core, where the wall time less the simulations'
// own (the table's sim_ms) is what the sweep adds per point.
bool sweep_speed(const std::string& chakra, const std::string& work, uint64_t points) {
  const uint64_t sizes = 10, algorithms = 4, bandwidths = std::max<uint64_t>(1, points / (sizes * algorithms));
  std::string bw;
  for (uint64_t i = 0; i < bandwidths; ++i) bw += (i ? ", " : "") + std::to_string(10 + 10 * i);
  const std::string spec = work + "/sweep.yaml";
  {
    chakra::OutputFile f(spec);
    f.write(
        "workload:\n  collective: {type: all_reduce, size: 1MiB, npus: 64}\n"
        "network: {topology: [Ring], npus: [64], bandwidth: [50], latency: [500]}\n"
        "system: {preset: astra-sim-ring-8}\naxes:\n"
        "  workload.collective.size: [64KiB, 128KiB, 256KiB, 512KiB, 1MiB, 2MiB, 4MiB, 8MiB, 16MiB, 32MiB]\n"
        "  network.bandwidth: [" +
        bw +
        "]\n"
        "  system.all-reduce-implementation: [[ring], [direct], [halvingDoubling], [doubleBinaryTree]]\n");
    f.commit();
  }
  const uint64_t n = sizes * algorithms * bandwidths;
  const ChildRun all = run_child({chakra, "sweep", spec, "-o", work + "/sweep_all", "--quiet"});
  const ChildRun one = run_child({chakra, "sweep", spec, "-o", work + "/sweep_one", "--quiet", "--jobs", "1"});
  double sim_ms = 0;
  uint64_t failed = 0;
  for (const auto& r : chakra::sweep::read_rows(chakra::read_file(work + "/sweep_one.jsonl"), "sweep_one.jsonl").rows) {
    if (r["sim_ms"].is_number()) sim_ms += r["sim_ms"].get<double>();
    failed += !r["error"].get<std::string>().empty();
  }
  const double overhead_ms = (one.wall_s * 1000 - sim_ms) / static_cast<double>(n);
  std::printf(
      "%-15s %llu points (64-NPU all-reduce: sizes x bandwidths x algorithms): %.2f s wall on %u cores, %.2f s CPU, "
      "peak RSS %s;"
      " on one core %.2f s, of it the simulations %.2f s: %.3f ms per point added by the sweep; %llu failed, exit "
      "%d/%d\n",
      "sweep", static_cast<unsigned long long>(n), all.wall_s, std::max(1u, std::thread::hardware_concurrency()),
      all.cpu_s, chakra::format_bytes(all.max_rss_bytes).c_str(), one.wall_s, sim_ms / 1000, overhead_ms,
      static_cast<unsigned long long>(failed), all.exit_code, one.exit_code);
  for (const char* f : {"/sweep.yaml", "/sweep_all.csv", "/sweep_all.jsonl", "/sweep_one.csv", "/sweep_one.jsonl"})
    std::filesystem::remove(work + f);
  return all.exit_code == 0 && one.exit_code == 0 && failed == 0;
}

// chakra project: a synthesized 8-rank data-parallel Llama-2-7B step (4 layers) projected to
// `ranks` ranks, written as traces (the target: 1,024 ranks in 5 s or less).
bool project_speed(const std::string& chakra, const std::string& work, uint64_t ranks) {
  const std::string dir = work + "/project";
  std::filesystem::remove_all(dir);
  const ChildRun synth = run_child(
      {chakra, "synth", "--preset", "llama2-7b", "--layers", "4", "--dp", "8", "--batch", "32", "-o", dir + "/dp8"});
  const ChildRun projected =
      run_child({chakra, "project", dir + "/dp8", "--to", std::to_string(ranks), "-o", dir + "/big/x"});
  uint64_t bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/big")) bytes += e.file_size();
  std::printf(
      "%-15s 8 -> %llu ranks (Llama-2-7B, 4 layers, data parallel): %.2f s wall, %.2f s CPU, peak RSS %s, %s written; "
      "exit %d\n",
      "project", static_cast<unsigned long long>(ranks), projected.wall_s, projected.cpu_s,
      chakra::format_bytes(projected.max_rss_bytes).c_str(), chakra::format_bytes(bytes).c_str(), projected.exit_code);
  std::filesystem::remove_all(dir);
  return synth.exit_code == 0 && projected.exit_code == 0;
}

// chakra suite run: the benchmark suite on the reference preset (itself and the reference), with
// every core and with one; the two results must be the same bytes (the target: <= 60 s of CPU).
// `which`: "builtin" (chakra-suite-v1) or "small" (two small synthesized workloads, a smoke run).
bool suite_speed(const std::string& chakra, const std::string& work, const std::string& which) {
  std::vector<std::string> suite;
  if (which == "small") {
    chakra::OutputFile f(work + "/suite.yaml");
    f.write(
        "suite: bench-small\nreference: {preset: h100-ib-2x8}\nworkloads:\n  - name: tiny\n    class: dense-llm\n"
        "    workload: {synth: {model: llama, layers: 2, hidden: 512, ffn: 1024, heads: 8, seq: 256, vocab: 1000}}\n"
        "    scales: {16: {synth: {dp: 8, tp: 2, batch: 16}}, 32: {synth: {dp: 16, tp: 2, batch: 32}}}\n");
    f.commit();
    suite = {"--suite", work + "/suite.yaml"};
  } else if (which != "builtin") {
    throw chakra::Error("--suite: builtin or small, not " + which);
  }
  auto run = [&](const std::string& out, const char* jobs) {
    std::vector<std::string> argv = {chakra, "suite", "run", "--preset", "h100-ib-2x8", "-o", work + out};
    argv.insert(argv.end(), suite.begin(), suite.end());
    if (jobs) argv.insert(argv.end(), {"--jobs", jobs});
    return run_child(argv);
  };
  const ChildRun one = run("/suite_one.json", "1"), all = run("/suite_all.json", nullptr);
  const bool same = one.exit_code == 0 && all.exit_code == 0 &&
                    chakra::read_file(work + "/suite_one.json") == chakra::read_file(work + "/suite_all.json");
  std::printf(
      "%-15s %s suite on h100-ib-2x8 and its reference: one core %.2f s CPU (%.2f s wall, peak RSS %s); every core "
      "(%u) %.2f s wall, %.2f s CPU, peak RSS %s; results %s; exit %d/%d\n",
      "suite", which.c_str(), one.cpu_s, one.wall_s, chakra::format_bytes(one.max_rss_bytes).c_str(),
      std::max(1u, std::thread::hardware_concurrency()), all.wall_s, all.cpu_s,
      chakra::format_bytes(all.max_rss_bytes).c_str(), same ? "byte-identical" : "DIFFER", one.exit_code,
      all.exit_code);
  for (const char* f : {"/suite.yaml", "/suite_one.json", "/suite_all.json"}) std::filesystem::remove(work + f);
  return same;
}

// chakra analyze over a run larger than memory: `ranks` Kineto traces of `mb` MB each (the shared
// 8-rank DLRM run's traces replicated, rank r from rank r mod 8), analysed with --jobs `jobs`.
// Reports throughput per core of CPU and peak RSS, and checks that each of the first and last
// ranks has the figures it has when analysed alone.
bool analyze_speed(const std::string& chakra, const std::string& work, uint32_t ranks, uint64_t mb,
                   const std::string& jobs) {
  const std::string dir = work + "/kineto_" + std::to_string(ranks) + "x" + std::to_string(mb) + "MB";
  std::filesystem::create_directories(dir);
  uint64_t total = 0;
  const auto made = std::chrono::steady_clock::now();
  for (uint32_t r = 0; r < ranks; ++r) {
    const std::string path = dir + "/rank" + std::to_string(r) + ".pt.trace.json";
    if (std::filesystem::exists(path) && std::filesystem::file_size(path) >= mb << 20) {
      total += std::filesystem::file_size(path);
      continue;
    }
    std::string source;
    for (const auto& e : std::filesystem::directory_iterator(
             std::string(CHAKRA_SHARED_DIR) + "/data/pairs/dlrm_8rank_v100/rank" + std::to_string(r % 8)))
      if (chakra::ends_with(e.path().string(), ".pt.trace.json")) source = e.path().string();
    total += write_replicated_kineto(source, mb << 20, r, path);
  }
  const double make_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - made).count();
  const std::string all = work + "/analyze_all.json", alone = work + "/analyze_alone.json";
  const ChildRun run = run_child({chakra, "analyze", dir, "--json", "--jobs", jobs, "-o", all});
  bool same = run.exit_code == 0;
  for (uint32_t r : {0u, ranks - 1}) {
    const std::string path = dir + "/rank" + std::to_string(r) + ".pt.trace.json";
    same = same && run_child({chakra, "analyze", path, "--json", "-o", alone}).exit_code == 0 &&
           nlohmann::json::parse(chakra::read_file(all))["ranks"][r] ==
               nlohmann::json::parse(chakra::read_file(alone))["ranks"][0];
  }
  std::printf(
      "%-15s %u ranks x %s of Kineto JSON (%s; made in %.1f s): --jobs %s %.2f s wall, %.2f s CPU, %.0f MB/s of JSON "
      "per core, peak RSS %s (%.3fx one rank's file); ranks 0 and %u as alone: %s; exit %d\n",
      "analyze", ranks, chakra::format_bytes(total / ranks).c_str(), chakra::format_bytes(total).c_str(), make_s,
      jobs.c_str(), run.wall_s, run.cpu_s, static_cast<double>(total) / 1e6 / run.cpu_s,
      chakra::format_bytes(run.max_rss_bytes).c_str(),
      static_cast<double>(run.max_rss_bytes) / static_cast<double>(total / ranks), ranks - 1,
      same ? "identical" : "DIFFER", run.exit_code);
  for (const std::string& f : {all, alone}) std::filesystem::remove(f);
  return same;
}

int run_bench(const cli::Args& args) {
  if (args.has("--side-by-side"))
    return side_by_side({args.get("--work"), args.get("--chakra"), static_cast<int>(args.get_uint("--copies")),
                         static_cast<int>(std::max<uint64_t>(1, args.get_uint("--runs")))})
               ? cli::kOk
               : cli::kFailed;
  const int copies = static_cast<int>(args.get_uint("--copies"));
  const int repeat = static_cast<int>(std::max<uint64_t>(1, args.get_uint("--repeat")));
  if (args.has("--stablehlo")) return stablehlo_prediction(repeat) ? cli::kOk : cli::kFailed;
  if (args.has("--analyze-ranks"))
    return analyze_speed(args.get("--chakra"), args.get("--work"),
                         static_cast<uint32_t>(std::max<uint64_t>(1, args.get_uint("--analyze-ranks", 4096))),
                         args.get_uint("--analyze-mb", 1 << 20), args.get("--analyze-jobs"))
               ? cli::kOk
               : cli::kFailed;
  const std::string work = args.get("--work");
  const std::string chakra = args.get("--chakra");
  std::filesystem::create_directories(work);
  const std::string trace_path = work + "/resnet_x" + std::to_string(copies) + ".et";

  {
    chakra::Trace big = replicate(args.get("--input"), copies);
    chakra::write_et(big, trace_path);
  }
  if (args.has("--make-input")) {
    std::printf("%s\n", trace_path.c_str());
    return cli::kOk;
  }
  // The CLI runs come first, while this process is small: a forked child starts with its
  // parent's resident pages counted in its peak RSS.
  const std::string json_path = work + "/resnet_x" + std::to_string(copies) + ".json";
  auto best_run = [&](const std::vector<std::string>& argv) {
    ChildRun best;
    for (int i = 0; i < repeat; ++i) {
      ChildRun r = run_child(argv);
      if (i == 0 || r.cpu_s < best.cpu_s) best = r;
    }
    return best;
  };
  ChildRun cli_jsonize = best_run({chakra, "jsonize", "--format", "reference", trace_path, json_path});
  ChildRun cli_validate = best_run({chakra, "validate", trace_path});
  ChildRun cli_info = best_run({chakra, "info", trace_path});

  // chakra convert pytorch on the linked ResNet rank (x1) and its replica (x copies).
  const std::string linked = args.get("--linked");
  const std::string linked_x1 = work + "/linked_x1.json",
                    linked_xn = work + "/linked_x" + std::to_string(copies) + ".json";
  write_replicated_linked_json(linked, 1, linked_x1);
  if (copies > 1) write_replicated_linked_json(linked, copies, linked_xn);
  const uint64_t linked_x1_bytes = std::filesystem::file_size(linked_x1);
  const uint64_t linked_xn_bytes = std::filesystem::file_size(copies > 1 ? linked_xn : linked_x1);
  // The graph picture of the first 5,000 nodes of one rank (Graphviz never finishes at 262).
  ChildRun svg_5k =
      best_run({chakra, "visualize", args.get("--input"), "-o", work + "/graph_5k.svg", "--range", "0:4999"});
  // chakra simulate: a 1 MiB ring all-reduce on a 1-D ring of --sim-npus NPUs (the issue's
  // scale target), and STAGE's 8-NPU LLM trace from the ASTRA-sim reference cases.
  const std::string astra = std::string(CHAKRA_SHARED_DIR) + "/reference/astra-sim/inputs";
  const uint64_t sim_npus = args.get_uint("--sim-npus", 1u << 20);
  const std::string sim_dir = work + "/sim_ar" + std::to_string(sim_npus);
  std::filesystem::create_directories(sim_dir);
  {
    chakra::OutputFile net(sim_dir + "/ring.yml");
    net.write("topology: [ Ring ]\nnpus_count: [ " + std::to_string(sim_npus) +
              " ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
    net.commit();
  }
  ChildRun sim_gen =
      run_child({chakra, "generate", "collective", "--npus", std::to_string(sim_npus), "-o", sim_dir + "/ar"});
  ChildRun sim_ar = best_run({chakra, "simulate", "--workload", sim_dir + "/ar", "--system",
                              astra + "/sys/ring_s4_c1.json", "--network", sim_dir + "/ring.yml", "--no-summary"});
  // The same with every NPU simulated (the traces are alike: by default NPU 0 runs for all).
  ChildRun sim_ar_each =
      best_run({chakra, "simulate", "--workload", sim_dir + "/ar", "--system", astra + "/sys/ring_s4_c1.json",
                "--network", sim_dir + "/ring.yml", "--no-summary", "--every-npu"});
  // Trace-driven at cluster scale: ASTRA-sim 1.0's data-parallel ResNet-50 converted for
  // --resnet-npus NPUs on [Switch 8, Ring N/8], 50 GB/s and 500 ns per dimension, ring2_s4_c1;
  // with every NPU simulated too up to 8192 NPUs (above, minutes and gigabytes: core/docs/performance.md).
  const uint64_t resnet_npus = args.get_uint("--resnet-npus", 1u << 24);
  if (resnet_npus % 8 || resnet_npus < 16) throw chakra::Error("--resnet-npus must be a multiple of 8, at least 16");
  const std::string resnet_dir = work + "/resnet" + std::to_string(resnet_npus);
  std::filesystem::create_directories(resnet_dir);
  {
    chakra::OutputFile net(resnet_dir + "/net.yml");
    net.write("topology: [ Switch, Ring ]\nnpus_count: [ 8, " + std::to_string(resnet_npus / 8) +
              " ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500, 500 ]\n");
    net.commit();
  }
  ChildRun resnet_convert =
      run_child({chakra, "convert", "text",
                 std::string(CHAKRA_SHARED_DIR) + "/data/text_workloads/astra-sim-1.0__Resnet50_DataParallel.txt",
                 "--num-npus", std::to_string(resnet_npus), "--output", resnet_dir + "/r"});
  const std::vector<std::string> resnet_sim = {chakra,        "simulate",
                                               "--workload",  resnet_dir + "/r",
                                               "--system",    astra + "/sys/ring2_s4_c1.json",
                                               "--network",   resnet_dir + "/net.yml",
                                               "--no-summary"};
  ChildRun sim_resnet = best_run(resnet_sim);
  ChildRun sim_resnet_each;
  if (resnet_npus <= 8192) {
    std::vector<std::string> each = resnet_sim;
    each.push_back("--every-npu");
    sim_resnet_each = best_run(each);
  }
  // The same all-reduce on a switch of --sim-npus NPUs, congestion-aware (ASTRA-sim's 1024-NPU
  // figure: 8,331,352 ns on every NPU, astra-sim-analytical-model.md c.5).
  {
    chakra::OutputFile net(sim_dir + "/switch.yml");
    net.write("topology: [ Switch ]\nnpus_count: [ " + std::to_string(sim_npus) +
              " ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
    net.commit();
  }
  ChildRun sim_ar_aware = best_run({chakra, "simulate", "--workload", sim_dir + "/ar", "--system",
                                    astra + "/sys/ring_s4_c1.json", "--network", sim_dir + "/switch.yml", "--backend",
                                    "aware", "--json", sim_dir + "/aware.json", "--no-summary"});
  const std::string aware_finishes = [&] {
    std::set<uint64_t> finishes;
    const nlohmann::json result = nlohmann::json::parse(chakra::read_file(sim_dir + "/aware.json"));
    for (const auto& n : result["npus"]) finishes.insert(n["finish_ns"].get<uint64_t>());
    std::string out;
    for (uint64_t f : finishes) out += (out.empty() ? "" : ", ") + std::to_string(f);
    return out;
  }();
  // The direct algorithm: ASTRA-sim's 1 MiB all-to-all case on a
  // 64-NPU switch, both backends, with its recorded CPU time in cases.jsonl.
  ChildRun sim_direct[2];
  for (int aware = 0; aware < 2; ++aware)
    sim_direct[aware] = best_run({chakra, "simulate", "--workload", astra + "/wl/A2A1MB_64/x", "--system",
                                  astra + "/sys/direct_s4_c1.json", "--network", astra + "/net/switch_64.yml",
                                  "--backend", aware ? "aware" : "unaware", "--no-summary"});
  // The same algorithm on a 256-NPU switch, 1 MiB all-reduce and all-to-all (issue 31's scale;
  // ASTRA-sim has no recorded figure there): alike NPUs run as one where every peer's message
  // takes the same time (congestion-unaware), and each phase is solved for one member whose
  // links stand for all (congestion-aware switch); `--every-npu` beside the unaware runs.
  const std::string direct_dir = work + "/direct256";
  std::filesystem::create_directories(direct_dir);
  {
    chakra::OutputFile net(direct_dir + "/switch.yml");
    net.write("topology: [ Switch ]\nnpus_count: [ 256 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
    net.commit();
  }
  const char* const kDirectTypes[2] = {"all_reduce", "all_to_all"};
  ChildRun sim_direct256[2][3];  // [type][unaware, aware, unaware --every-npu]
  for (int t = 0; t < 2; ++t) {
    run_child({chakra, "generate", "collective", "--type", kDirectTypes[t], "--npus", "256", "-o",
               direct_dir + "/" + kDirectTypes[t]});
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<std::string> argv{chakra,        "simulate",
                                    "--workload",  direct_dir + "/" + kDirectTypes[t],
                                    "--system",    astra + "/sys/direct_s4_c1.json",
                                    "--network",   direct_dir + "/switch.yml",
                                    "--backend",   mode == 1 ? "aware" : "unaware",
                                    "--no-summary"};
      if (mode == 2) argv.push_back("--every-npu");
      sim_direct256[t][mode] = best_run(argv);
    }
  }
  ChildRun sim_stage = best_run({chakra, "simulate", "--workload", astra + "/stage/llm_dp2_tp2_pp2/workload",
                                 "--system", astra + "/sys/h100_roofline.json", "--network", astra + "/net/hgx8.yml",
                                 "--comm-group", astra + "/stage/llm_dp2_tp2_pp2/workload.json", "--no-summary"});
  // chakra synth: STAGE's Llama-70B-like defaults at --synth-ranks ranks (tp 8, pp 16, the rest
  // dp; STAGE's 8192-rank figure), and a 512-NPU step (dp16 tp8 pp4) simulated with roofline
  // compute on a two-level [8, 64] switch network.
  const uint64_t synth_ranks = args.get_uint("--synth-ranks", 1u << 24);
  if (synth_ranks % 128) throw chakra::Error("--synth-ranks must be a multiple of 128 (tp 8 × pp 16)");
  const std::string synth_dir = work + "/synth";
  ChildRun synth = best_run({chakra, "synth", "--preset", "stage-70b", "--dp", std::to_string(synth_ranks / 128),
                             "--tp", "8", "--pp", "16", "--stage-compat", "-o", synth_dir + "/big/w"});
  const uint64_t synth_bytes = [&] {
    uint64_t n = 0;
    for (const auto& f : std::filesystem::directory_iterator(synth_dir + "/big")) n += f.file_size();
    return n;
  }();
  ChildRun synth512 = run_child({chakra, "synth", "--preset", "stage-70b", "--dp", "16", "--tp", "8", "--pp", "4",
                                 "--stage-compat", "-o", synth_dir + "/512/w"});
  {
    chakra::OutputFile net(synth_dir + "/512/net.yml");
    net.write("topology: [ Switch, Switch ]\nnpus_count: [ 8, 64 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 500, 2000 ]\n");
    net.commit();
  }
  ChildRun sim512 = best_run({chakra, "simulate", "--workload", synth_dir + "/512/w", "--system",
                              astra + "/sys/h100_roofline.json", "--network", synth_dir + "/512/net.yml",
                              "--comm-group", synth_dir + "/512/w.comm_group.json", "--no-summary"});
  ChildRun sim512_aware =
      best_run({chakra, "simulate", "--workload", synth_dir + "/512/w", "--system", astra + "/sys/h100_roofline.json",
                "--network", synth_dir + "/512/net.yml", "--comm-group", synth_dir + "/512/w.comm_group.json",
                "--backend", "aware", "--no-summary"});
  // dp4 tp8 pp4 (128 NPUs) on [8, 16] switches, both backends (issue 31's STAGE-style target).
  ChildRun synth128 = run_child({chakra, "synth", "--preset", "stage-70b", "--dp", "4", "--tp", "8", "--pp", "4",
                                 "--stage-compat", "-o", synth_dir + "/128/w"});
  {
    chakra::OutputFile net(synth_dir + "/128/net.yml");
    net.write("topology: [ Switch, Switch ]\nnpus_count: [ 8, 16 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 500, 2000 ]\n");
    net.commit();
  }
  // [0], [1]: unaware, aware; [2], [3]: the same with --every-npu, beside the runs where one NPU of
  // each pipeline stage (unaware) or of each orbit of the network's symmetries (aware) runs.
  ChildRun sim128[4];
  for (int run = 0; run < 4; ++run) {
    std::vector<std::string> argv{chakra,         "simulate",
                                  "--workload",   synth_dir + "/128/w",
                                  "--system",     astra + "/sys/h100_roofline.json",
                                  "--network",    synth_dir + "/128/net.yml",
                                  "--comm-group", synth_dir + "/128/w.comm_group.json",
                                  "--backend",    run % 2 ? "aware" : "unaware",
                                  "--no-summary"};
    if (run >= 2) argv.push_back("--every-npu");
    sim128[run] = best_run(argv);
  }
  ChildRun convert_x1 =
      best_run({chakra, "convert", "pytorch", linked_x1, "-o", work + "/converted_x1.et", "--reference-bytes"});
  ChildRun convert_xn =
      copies > 1
          ? best_run({chakra, "convert", "pytorch", linked_xn, "-o", work + "/converted_xn.et", "--reference-bytes"})
          : convert_x1;

  // chakra link on the ResNet rank-1 pair (x1) and its replica.
  const std::string host_x1 = work + "/host_x1.json", kineto_x1 = work + "/kineto_x1.json";
  const std::string host_xn = work + "/host_xn.json", kineto_xn = work + "/kineto_xn.json";
  const uint64_t events_x1 =
      write_replicated_link_inputs(args.get("--link-host"), args.get("--link-kineto"), 1, host_x1, kineto_x1);
  const uint64_t events_xn =
      copies > 1
          ? write_replicated_link_inputs(args.get("--link-host"), args.get("--link-kineto"), copies, host_xn, kineto_xn)
          : events_x1;
  const uint64_t link_x1_bytes = std::filesystem::file_size(host_x1) + std::filesystem::file_size(kineto_x1);
  const uint64_t link_xn_bytes =
      copies > 1 ? std::filesystem::file_size(host_xn) + std::filesystem::file_size(kineto_xn) : link_x1_bytes;
  ChildRun link_x1 =
      best_run({chakra, "link", "--host", host_x1, "--device", kineto_x1, "-o", work + "/linked_out_x1.json"});
  ChildRun link_xn =
      copies > 1
          ? best_run({chakra, "link", "--host", host_xn, "--device", kineto_xn, "-o", work + "/linked_out_xn.json"})
          : link_x1;

  const std::string bytes = chakra::read_file(trace_path);
  const double mb = static_cast<double>(bytes.size()) / 1e6;

  uint32_t nodes = 0;
  const std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const double decode_s =
      best_cpu_seconds(repeat, [&] { nodes = chakra::read_et(chakra::memory_input(view, trace_path)).size(); });
  CountingSink json_sink;
  const double jsonize_s = best_cpu_seconds(repeat, [&] {
    json_sink.bytes = 0;
    chakra::jsonize_et(chakra::memory_input(view, trace_path), json_sink, {.format = chakra::JsonFormat::Reference});
  });

  const double reference_s = reference_cpu_seconds("jsonize_resnet_x16");

  std::printf("input           %s x %d → %s\n", args.get("--input").c_str(), copies, trace_path.c_str());
  std::printf("trace           %u nodes, %.1f MB (.et, uncompressed)\n", nodes, mb);
  std::printf("decode          %.3f s CPU  = %.0f MB/s, %.2f M nodes/s (best of %d, in memory)\n", decode_s,
              mb / decode_s, nodes / decode_s / 1e6, repeat);
  std::printf("jsonize         %.3f s CPU  (decode + reference-format JSON, %.1f MB, in memory)\n", jsonize_s,
              json_sink.bytes / 1e6);
  auto child = [&](const char* label, const ChildRun& r) {
    std::printf("%-15s %.3f s CPU (%.3f user), %.3f s wall, peak RSS %s = %.2f x the .et file, exit %d\n", label,
                r.cpu_s, r.user_s, r.wall_s, chakra::format_bytes(r.max_rss_bytes).c_str(),
                static_cast<double>(r.max_rss_bytes) / static_cast<double>(bytes.size()), r.exit_code);
  };
  child("chakra jsonize", cli_jsonize);
  child("chakra validate", cli_validate);
  child("chakra info", cli_info);
  auto tool_line = [&](const char* label, const ChildRun& r, uint64_t json_bytes, double ref_cpu, double ref_rss_kb) {
    std::printf("%-15s %.3f s CPU, %.0f MB/s of JSON, peak RSS %s", label, r.cpu_s, json_bytes / 1e6 / r.cpu_s,
                chakra::format_bytes(r.max_rss_bytes).c_str());
    if (ref_cpu > 0)
      std::printf(
          "; reference (recorded elsewhere; --side-by-side measures it here) %.2f s CPU, %.0f MB → %.0fx, %.2fx its "
          "memory",
          ref_cpu, ref_rss_kb / 1024, ref_cpu / r.cpu_s, static_cast<double>(r.max_rss_bytes) / (ref_rss_kb * 1024));
    std::printf(", exit %d\n", r.exit_code);
  };
  std::printf("%-15s %.3f s CPU, %.3f s wall, peak RSS %s (SVG of 5,000 nodes, layered layout), exit %d\n",
              "visualize 5k", svg_5k.cpu_s, svg_5k.wall_s, chakra::format_bytes(svg_5k.max_rss_bytes).c_str(),
              svg_5k.exit_code);
  // ASTRA-sim's figures for the same runs (astra-sim-analytical-model.md c.6, cases.jsonl)
  const double astra_ar_cpu = sim_npus == 1024 ? 10.6 : sim_npus == 4096 ? 213 : 0;
  const double astra_ar_mb = sim_npus == 1024 ? 356 : sim_npus == 4096 ? 5500 : 0;
  std::printf("%-15s %.3f s CPU, %.3f s wall, peak RSS %s (1 MiB ring all-reduce, %llu NPUs, 1-D ring)", "simulate AR",
              sim_ar.cpu_s, sim_ar.wall_s, chakra::format_bytes(sim_ar.max_rss_bytes).c_str(),
              static_cast<unsigned long long>(sim_npus));
  if (astra_ar_cpu > 0)
    std::printf("; ASTRA-sim %.1f s, %.0f MB → %.1fx faster, %.2fx its memory", astra_ar_cpu, astra_ar_mb,
                astra_ar_cpu / sim_ar.cpu_s, static_cast<double>(sim_ar.max_rss_bytes) / (astra_ar_mb * 1e6));
  std::printf(", exit %d\n", sim_ar.exit_code);
  std::printf(
      "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (the same, --every-npu: each NPU simulated; %.1fx the time), exit "
      "%d\n",
      "simulate AR each", sim_ar_each.cpu_s, sim_ar_each.wall_s,
      chakra::format_bytes(sim_ar_each.max_rss_bytes).c_str(), sim_ar_each.cpu_s / std::max(sim_ar.cpu_s, 1e-3),
      sim_ar_each.exit_code);
  std::printf(
      "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (ASTRA-sim 1.0's ResNet-50 data-parallel, %llu NPUs, [Switch 8, Ring "
      "%llu],"
      " ring2_s4_c1; converted in %.2f s CPU)",
      "simulate ResNet", sim_resnet.cpu_s, sim_resnet.wall_s, chakra::format_bytes(sim_resnet.max_rss_bytes).c_str(),
      static_cast<unsigned long long>(resnet_npus), static_cast<unsigned long long>(resnet_npus / 8),
      resnet_convert.cpu_s);
  if (resnet_npus <= 8192)
    std::printf("; --every-npu %.3f s CPU, peak RSS %s (%.1fx the time)", sim_resnet_each.cpu_s,
                chakra::format_bytes(sim_resnet_each.max_rss_bytes).c_str(),
                sim_resnet_each.cpu_s / std::max(sim_resnet.cpu_s, 1e-3));
  std::printf(", exit %d\n", std::max(sim_resnet.exit_code, resnet_convert.exit_code));
  std::printf(
      "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (1 MiB ring all-reduce, %llu NPUs, switch, congestion-aware; NPUs "
      "finish at %s ns)",
      "simulate AR CA", sim_ar_aware.cpu_s, sim_ar_aware.wall_s,
      chakra::format_bytes(sim_ar_aware.max_rss_bytes).c_str(), static_cast<unsigned long long>(sim_npus),
      aware_finishes.c_str());
  if (sim_npus == 1024) std::printf("; ASTRA-sim 14.5 s, 8331352 ns → %.0fx faster", 14.5 / sim_ar_aware.cpu_s);
  std::printf(", exit %d\n", sim_ar_aware.exit_code);
  for (int aware = 0; aware < 2; ++aware) {
    const double astra_cpu = aware ? 0.11 : 0.10;  // a2a_A2A1MB_64_switch_direct_{aware,unaware}
    std::printf(
        "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (1 MiB direct all-to-all, 64-NPU switch, congestion-%s);"
        " ASTRA-sim %.2f s → %.1fx faster, exit %d\n",
        aware ? "simulate A2A CA" : "simulate A2A", sim_direct[aware].cpu_s, sim_direct[aware].wall_s,
        chakra::format_bytes(sim_direct[aware].max_rss_bytes).c_str(), aware ? "aware" : "unaware", astra_cpu,
        astra_cpu / std::max(sim_direct[aware].cpu_s, 1e-3), sim_direct[aware].exit_code);
  }
  // ASTRA-sim has no recorded figure at 256 NPUs. Its cost grows with the messages it simulates
  // (astra-sim-analytical-model.md c.6), so its recorded 64-NPU all-to-all (0.11 s aware, 0.10 s
  // unaware, for 64 * 63 * 4 = 16,128 messages) scaled by messages gives an estimate; one that
  // leaves out its start-up, which grows faster than that.
  for (int t = 0; t < 2; ++t) {
    const double messages = 256.0 * 255 * 4 * (t ? 1 : 2), per_64 = 64.0 * 63 * 4;
    const double est_unaware = 0.10 * messages / per_64, est_aware = 0.11 * messages / per_64;
    std::printf(
        "%-15s %.3f s CPU unaware (--every-npu %.3f s), %.3f s aware, peak RSS %s / %s / %s (1 MiB direct %s, "
        "256-NPU switch, 50 GB/s, 500 ns, %.0f messages); ASTRA-sim estimated from its 64-NPU all-to-all per message "
        "%.2f / %.2f s → %.0fx / %.0fx faster, exit %d %d %d\n",
        t ? "simulate A2A256" : "simulate AR256", sim_direct256[t][0].cpu_s, sim_direct256[t][2].cpu_s,
        sim_direct256[t][1].cpu_s, chakra::format_bytes(sim_direct256[t][0].max_rss_bytes).c_str(),
        chakra::format_bytes(sim_direct256[t][2].max_rss_bytes).c_str(),
        chakra::format_bytes(sim_direct256[t][1].max_rss_bytes).c_str(), kDirectTypes[t], messages, est_unaware,
        est_aware, est_unaware / std::max(sim_direct256[t][0].cpu_s, 1e-3),
        est_aware / std::max(sim_direct256[t][1].cpu_s, 1e-3), sim_direct256[t][0].exit_code,
        sim_direct256[t][2].exit_code, sim_direct256[t][1].exit_code);
  }
  std::printf(
      "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (STAGE llm dp2 tp2 pp2, 8 NPUs, roofline); ASTRA-sim 0.14 s,"
      " exit %d\n",
      "simulate stage", sim_stage.cpu_s, sim_stage.wall_s, chakra::format_bytes(sim_stage.max_rss_bytes).c_str(),
      sim_stage.exit_code);
  // STAGE's figures (reference/stage/README.md) and ASTRA-sim's for STAGE's 512-NPU trace (issue 6).
  std::printf("%-15s %.3f s CPU, %.3f s wall, peak RSS %s, %s written (%llu ranks of STAGE's 70B defaults, tp8 pp16)",
              "synth", synth.cpu_s, synth.wall_s, chakra::format_bytes(synth.max_rss_bytes).c_str(),
              chakra::format_bytes(synth_bytes).c_str(), static_cast<unsigned long long>(synth_ranks));
  if (synth_ranks == 8192)
    std::printf("; STAGE 385.7 s CPU, 152 MB → %.0fx faster, %.2fx its memory", 385.7 / synth.cpu_s,
                static_cast<double>(synth.max_rss_bytes) / 152e6);
  std::printf(", exit %d\n", synth.exit_code);
  std::printf(
      "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (synth dp16 tp8 pp4 = 512 NPUs, roofline, [8, 64] switches);"
      " ASTRA-sim on STAGE's version 145 s, 1.8 GB → %.0fx faster, exit %d\n",
      "simulate 512", sim512.cpu_s, sim512.wall_s, chakra::format_bytes(sim512.max_rss_bytes).c_str(),
      145 / sim512.cpu_s, sim512.exit_code);
  std::printf("%-15s %.3f s CPU, %.3f s wall, peak RSS %s (the same, congestion-aware), exit %d\n", "simulate 512 CA",
              sim512_aware.cpu_s, sim512_aware.wall_s, chakra::format_bytes(sim512_aware.max_rss_bytes).c_str(),
              sim512_aware.exit_code);
  for (int aware = 0; aware < 2; ++aware)
    std::printf(
        "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (synth dp4 tp8 pp4 = 128 NPUs, roofline, [8, 16] switches, %s), "
        "exit %d\n",
        aware ? "simulate 128 CA" : "simulate 128", sim128[aware].cpu_s, sim128[aware].wall_s,
        chakra::format_bytes(sim128[aware].max_rss_bytes).c_str(), aware ? "congestion-aware" : "congestion-unaware",
        sim128[aware].exit_code);
  for (int aware = 0; aware < 2; ++aware)
    std::printf(
        "%-15s %.3f s CPU, %.3f s wall, peak RSS %s (the same, %s, --every-npu: each NPU simulated;"
        " the %s run %.1fx faster), exit %d\n",
        aware ? "sim 128 CA each" : "simulate 128 each", sim128[2 + aware].cpu_s, sim128[2 + aware].wall_s,
        chakra::format_bytes(sim128[2 + aware].max_rss_bytes).c_str(),
        aware ? "congestion-aware" : "congestion-unaware", aware ? "orbits" : "classes",
        sim128[2 + aware].cpu_s / sim128[aware].cpu_s, sim128[2 + aware].exit_code);
  tool_line("convert x1", convert_x1, linked_x1_bytes, reference_cpu_seconds("convert_resnet_2gpu_rank1_linked"),
            reference_rss_kb("convert_resnet_2gpu_rank1_linked"));
  if (copies > 1) {
    std::string label = "convert_resnet_x" + std::to_string(copies) + "_linked";
    tool_line(("convert x" + std::to_string(copies)).c_str(), convert_xn, linked_xn_bytes, reference_cpu_seconds(label),
              reference_rss_kb(label));
  }
  tool_line("link x1", link_x1, link_x1_bytes, reference_cpu_seconds("link_resnet_2gpu_rank1"),
            reference_rss_kb("link_resnet_2gpu_rank1"));
  if (copies > 1) {
    std::string label = "link_resnet_x" + std::to_string(copies) + "_scaling";
    tool_line(("link x" + std::to_string(copies)).c_str(), link_xn, link_xn_bytes, reference_cpu_seconds(label),
              reference_rss_kb(label));
    std::printf(
        "%-15s %llu Kineto events x1, %llu x%d; the copies hang under one process root, as the reference links"
        " them (its recorded x16 figure is from an input with a root per copy, where it linked copy 0 alone)\n",
        "link inputs", static_cast<unsigned long long>(events_x1), static_cast<unsigned long long>(events_xn), copies);
  }
  if (reference_s > 0 && copies == 16)
    std::printf(
        "vs reference    chakra_jsonizer on resnet_x16, recorded elsewhere (--side-by-side measures it here): %.2f s"
        " CPU → %.0fx (%.0fx in memory)\n",
        reference_s, reference_s / cli_jsonize.cpu_s, reference_s / jsonize_s);
  std::filesystem::remove(json_path);
  // validate exits 1 when it finds errors (the converted ResNet trace has some); 2+ is a failure.
  const bool ok =
      cli_jsonize.exit_code == 0 && cli_info.exit_code == 0 && cli_validate.exit_code <= 1 &&
      convert_x1.exit_code == 0 && convert_xn.exit_code == 0 && link_x1.exit_code == 0 && link_xn.exit_code == 0 &&
      svg_5k.exit_code == 0 && sim_gen.exit_code == 0 && sim_ar.exit_code == 0 && sim_stage.exit_code == 0 &&
      synth.exit_code == 0 && synth512.exit_code == 0 && sim512.exit_code == 0 && sim512_aware.exit_code == 0 &&
      sim_ar_aware.exit_code == 0 && synth128.exit_code == 0 && sim128[0].exit_code == 0 && sim128[1].exit_code == 0 &&
      sim128[2].exit_code == 0 && sim128[3].exit_code == 0 && sim_direct[0].exit_code == 0 &&
      sim_direct[1].exit_code == 0 && sim_direct256[0][0].exit_code == 0 && sim_direct256[0][1].exit_code == 0 &&
      sim_direct256[0][2].exit_code == 0 && sim_direct256[1][0].exit_code == 0 && sim_direct256[1][1].exit_code == 0 &&
      sim_direct256[1][2].exit_code == 0 && sim_ar_each.exit_code == 0 && resnet_convert.exit_code == 0 &&
      sim_resnet.exit_code == 0 && (resnet_npus > 8192 || sim_resnet_each.exit_code == 0);
  std::filesystem::remove_all(sim_dir);
  std::filesystem::remove_all(synth_dir);
  std::filesystem::remove_all(resnet_dir);
  for (const std::string& f :
       {linked_x1, linked_xn, work + "/converted_x1.et", work + "/converted_xn.et", host_x1, kineto_x1, host_xn,
        kineto_xn, work + "/linked_out_x1.json", work + "/linked_out_xn.json", work + "/graph_5k.svg"})
    std::filesystem::remove(f);
  timeline_frames();
  const bool predicted = stablehlo_prediction(repeat);
  const bool swept = sweep_speed(chakra, work, args.get_uint("--sweep-points", 100000));
  const bool projected = project_speed(chakra, work, args.get_uint("--project-ranks", 1u << 20));
  const bool suite_ran = suite_speed(chakra, work, args.get("--suite"));
  return ok && predicted && swept && projected && suite_ran ? cli::kOk : cli::kFailed;
}

}  // namespace

int main(int argc, char** argv) {
  bench::start_spawner();
  const std::string self_dir = std::filesystem::path(argv[0]).parent_path().string();
  cli::Args args("chakra_bench",
                 "Speed and peak memory of chakra (decode, jsonize, validate, info, visualize, simulate, synth, "
                 "convert, link) on replicated real traces.");
  args.option("--input", "ET", "trace to replicate",
              std::string(CHAKRA_SHARED_DIR) + "/reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz")
      .option("--linked", "JSON", "linked PyTorch trace to replicate for the converter benchmark",
              std::string(CHAKRA_SHARED_DIR) + "/reference/chakra/outputs/trace_link/resnet_2gpu_rank1.linked.json.gz")
      .option("--link-host", "JSON", "host ET of the linker benchmark",
              std::string(CHAKRA_SHARED_DIR) + "/reference/chakra/inputs/link/resnet_2gpu_rank1_host_et.json.gz")
      .option(
          "--link-kineto", "JSON", "Kineto trace of the linker benchmark",
          std::string(CHAKRA_SHARED_DIR) + "/reference/chakra/inputs/link/resnet_2gpu_rank1_kineto.synthetic.json.gz")
      .option("--copies", "N", "copies of the input in the benchmark trace", "16")
      .option("--repeat", "N", "in-process runs; the best is reported", "3")
      .option("--sim-npus", "N", "NPUs of the simulated all-reduce (ASTRA-sim's figures: 1024, 4096)", "1024")
      .option("--resnet-npus", "N", "NPUs of the trace-driven ResNet-50 simulation (a multiple of 8)", "65536")
      .option("--synth-ranks", "N", "ranks of the synthesized 70B model, a multiple of 128 (STAGE's figure: 8192)",
              "8192")
      .option("--sweep-points", "N", "points of the sweep benchmark (a multiple of 40)", "1000")
      .option("--project-ranks", "N", "ranks the projection benchmark projects 8 to (a multiple of 8)", "1024")
      .option("--suite", "builtin|small", "the suite the suite benchmark runs (small: a smoke run)", "builtin")
      .option("--work", "DIR", "where the benchmark trace is written", "build/bench")
      .flag("--side-by-side",
            "run the reference Python tools (../shared/reference/chakra/runnable) and our drop-ins "
            "on the same inputs, alternating, and print the comparison (this mode only)")
      .flag("--stablehlo", "only the StableHLO prediction table and its leave-one-GPU-out calibration")
      .option("--analyze-ranks", "N",
              "only the chakra analyze benchmark: N Kineto traces (the DLRM run's replicated; kept in WORK)")
      .option("--analyze-mb", "MB", "size of each of those traces", "1500")
      .option("--analyze-jobs", "N", "chakra analyze --jobs", "2")
      .flag("--make-input", "only write the benchmark trace, WORK/resnet_xN.et (for bench/python_bench.py)")
      .option("--runs", "N", "--side-by-side: runs of each tool per row", "3")
      .option("--chakra", "BIN", "the chakra binary to time",
              (self_dir.empty() ? "." : self_dir) + "/../native/chakra");
  args.parse(argc - 1, argv + 1);
  return cli::run_guarded("chakra_bench", run_bench, args);
}
