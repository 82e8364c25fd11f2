// Host stalls: each class found on the evidence it needs and not without it, and the stretches
// that are not stalls (short, usual for their name, blocked, spread between children).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "chakra/app/sim_presets.h"
#include "chakra/format/et_io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/pytorch/trace_link.h"
#include "pytorch/host_stalls.h"  // private to the pytorch layer (core/src)
#include "test_support.h"

using chakra::HostStall;
using chakra::StallClass;
using chakra::StallInputs;

namespace {

// A thread (tid 1) running five usual aten::empty ops of 3 µs, then the op under test from
// 1000 to 21000 µs (20 ms), then aten::relu.
StallInputs base(const char* name = "aten::empty") {
  StallInputs in;
  for (int k = 0; k < 5; ++k) in.cpu.push_back({100.0 + 10 * k, 103.0 + 10 * k, 1, "aten::empty"});
  in.cpu.push_back({1000, 21000, 1, name});
  in.cpu.push_back({21100, 21110, 1, "aten::relu"});
  return in;
}
constexpr uint32_t kOp = 5;  // the op under test in base()

std::vector<HostStall> stalls_of(const StallInputs& in) { return chakra::find_host_stalls(in); }

const HostStall* stall_on(const std::vector<HostStall>& s, uint32_t op) {
  for (const HostStall& x : s)
    if (x.op == op) return &x;
  return nullptr;
}

}  // namespace

TEST(HostStalls, NoEvidenceIsUnexplained) {
  const auto s = stalls_of(base());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].op, kOp);
  EXPECT_EQ(s[0].cls, StallClass::Unexplained);
  EXPECT_EQ(s[0].gpu, -1);
  EXPECT_DOUBLE_EQ(s[0].micros, 20000);
  EXPECT_DOUBLE_EQ(s[0].begin, 1000);
  EXPECT_DOUBLE_EQ(s[0].end, 21000);
  EXPECT_NE(s[0].evidence.find("ops of its name usually take 3 us"), std::string::npos) << s[0].evidence;
}

// The device drains 120 µs before the op ends and stays idle: the op waited for the GPU.
TEST(HostStalls, GpuDrainedJustBeforeIsAGpuWait) {
  StallInputs in = base();
  in.gpu.push_back({500, 20880, 400});
  in.gpu.push_back({21130, 21140, 21105});  // launched after the op: not idle-breaking
  const auto s = stalls_of(in);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cls, StallClass::GpuWait);
  EXPECT_EQ(s[0].gpu, 0);
  EXPECT_NE(s[0].evidence.find("drained 120 us before it ended"), std::string::npos) << s[0].evidence;
  // A GPU end too long before the op's end (600 µs > kWakeMicros) is no evidence.
  in.gpu[0].end = 20400;
  EXPECT_EQ(stalls_of(in)[0].cls, StallClass::Unexplained);
  // Nor is one after which the device went on (another op running at the op's end) unless that
  // op itself ran through most of the stretch.
  in.gpu[0].end = 20880;
  in.gpu.push_back({20900, 21050, 300});
  const auto busy = stalls_of(in);
  EXPECT_EQ(busy[0].cls, StallClass::GpuWait);  // sm80_gemm ran through 19.9 of the 20 ms
  EXPECT_EQ(busy[0].gpu, 0);
  EXPECT_NE(busy[0].evidence.find("ran through"), std::string::npos) << busy[0].evidence;
  in.gpu[0].ts = 15000;  // now it covers only 5.9 ms of the stretch
  EXPECT_EQ(stalls_of(in)[0].cls, StallClass::Unexplained);
}

TEST(HostStalls, AllocatorAndLaunchCalls) {
  StallInputs in = base();
  in.calls.push_back({1010, 20990, 1, "cudaFree"});
  in.gpu.push_back({500, 20900, 400});
  auto s = stalls_of(in);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cls, StallClass::Allocator);
  EXPECT_EQ(s[0].gpu, 0);  // the GPU evidence is kept for the wait replay
  EXPECT_NE(s[0].evidence.find("cudaFree took"), std::string::npos) << s[0].evidence;

  in = base("aten::mm");
  in.calls.push_back({1010, 20990, 1, "cudaLaunchKernel"});
  s = stalls_of(in);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cls, StallClass::LaunchQueue);

  in = base();
  in.calls.push_back({1010, 20990, 1, "cudaGetDeviceProperties"});
  EXPECT_EQ(stalls_of(in)[0].cls, StallClass::RuntimeCall);
  // A call of another thread, or one covering less than half of the stretch, says nothing.
  in.calls[0] = {1010, 20990, 2, "cudaFree"};
  EXPECT_EQ(stalls_of(in)[0].cls, StallClass::Unexplained);
  in.calls[0] = {1010, 9000, 1, "cudaFree"};
  EXPECT_EQ(stalls_of(in)[0].cls, StallClass::Unexplained);
}

TEST(HostStalls, AnotherThreadRunningThrough) {
  StallInputs in = base();
  in.cpu.push_back({900, 15000, 2, "autograd::engine::evaluate_function: MmBackward0"});
  const auto s = stalls_of(in);
  const HostStall* x = stall_on(s, kOp);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->cls, StallClass::OtherThread);
  EXPECT_NE(x->evidence.find("thread 2 ran ops through 14.00 ms"), std::string::npos) << x->evidence;
}

TEST(HostStalls, LaunchQueueDepthIsReported) {
  StallInputs in = base();
  for (int k = 0; k < 40; ++k) in.gpu.push_back({2000.0 + 100 * k, 2050.0 + 100 * k, 900.0 + k});
  const auto s = stalls_of(in);
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s[0].evidence.find("launch queue 40 deep"), std::string::npos) << s[0].evidence;
}

TEST(HostStalls, WhatIsNotAStall) {
  // Shorter than kStallMinMicros.
  StallInputs in = base();
  in.cpu[kOp].end = 1900;
  EXPECT_TRUE(stalls_of(in).empty());
  // Usual for its name: five aten::mm of 5 ms, one of 20 ms (4x, under kStallFactor).
  in = StallInputs{};
  for (int k = 0; k < 5; ++k) in.cpu.push_back({10000.0 * k, 10000.0 * k + 5000, 1, "aten::mm"});
  in.cpu.push_back({60000, 80000, 1, "aten::mm"});
  EXPECT_TRUE(stalls_of(in).empty());
  // Blocked in a synchronisation call the replay already models.
  in = base();
  in.blocked.push_back({1, {1000, 20990}});
  EXPECT_TRUE(stalls_of(in).empty());
  // A parent whose own time is spread between its children: no one long stretch.
  in = base("nn.Module: Block");
  for (int k = 0; k < 40; ++k) in.cpu.push_back({1000.0 + 500 * k, 1000.0 + 500 * k + 400, 1, "aten::add"});
  EXPECT_EQ(stall_on(stalls_of(in), kOp), nullptr);
}

// The stretch is the op's own time: a long gap after its last child, not its whole span.
TEST(HostStalls, TheLongestOwnStretch) {
  StallInputs in = base("aten::index_put_");
  in.cpu.push_back({1001, 1005, 1, "aten::empty"});
  const auto s = stalls_of(in);
  const HostStall* x = stall_on(s, kOp);
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->begin, 1005);
  EXPECT_DOUBLE_EQ(x->end, 21000);
  EXPECT_DOUBLE_EQ(x->micros, 19995);
}

// The crafted run end to end: the linker finds the stall and what the wait replay needs, the
// converter carries it, and the simulator replays it either way. The GEMM made twice as fast
// shortens the step only when the stall is a wait for it.
TEST(HostStalls, LinkConvertAndSimulateEitherWay) {
  using json = nlohmann::json;
  const testing_support::StalledRank run = testing_support::stalled_rank();
  chakra::LinkOptions o;
  o.sync_deps = true;
  chakra::StringSink linked;
  const chakra::LinkReport report =
      chakra::link_traces(chakra::memory_input(testing_support::as_bytes(run.host), "host.json"),
                          chakra::memory_input(testing_support::as_bytes(run.kineto), "kineto.json"), linked, o);
  EXPECT_EQ(report.stalls[int(StallClass::GpuWait)], 1u);
  EXPECT_EQ(report.stall_waits, 1u);
  EXPECT_DOUBLE_EQ(report.stall_micros, 19950);
  const json doc = json::parse(linked.out);
  EXPECT_EQ(doc["profiler_steps"], json::parse(R"([{"name": "ProfilerStep#1", "ts": 50.0, "dur": 20300.0}])"));
  int64_t gemm = -1, stalled = -1, relu = -1;
  for (const json& n : doc["nodes"]) {
    if (n["name"] == "sm80_xmma_gemm_f16f16_f32") gemm = n["id"];
    if (n.contains("stall_class")) {
      stalled = n["id"];
      EXPECT_EQ(n["name"], "aten::empty");
      EXPECT_EQ(n["stall_class"], "gpu_wait");
      EXPECT_EQ(n["stall_dur"], 19950.0);
      EXPECT_EQ(n["stall_spans"], json::parse("[[300.0, 20130.0]]"));  // until the GEMM's end
    }
    if (n["name"] == "aten::relu") {
      relu = n["id"];
      EXPECT_EQ(n["stall_dep"], json::array({gemm}));
    }
  }
  ASSERT_GE(gemm, 0);
  ASSERT_GE(stalled, 0);
  ASSERT_GE(relu, 0);
  // Without --sync-deps the linker writes the reference's fields only.
  chakra::StringSink plain;
  chakra::link_traces(chakra::memory_input(testing_support::as_bytes(run.host), "host.json"),
                      chakra::memory_input(testing_support::as_bytes(run.kineto), "kineto.json"), plain);
  EXPECT_EQ(plain.out.find("stall"), std::string::npos);
  EXPECT_EQ(plain.out.find("profiler_steps"), std::string::npos);

  chakra::PytorchConvertResult c =
      chakra::convert_pytorch(chakra::memory_input(testing_support::as_bytes(linked.out), "linked.json"));
  const chakra::Trace& t = c.trace;
  std::optional<uint64_t> stalls_meta;
  for (uint32_t a = 0; a < t.metadata_attrs().size(); ++a)
    if (t.metadata_attr(a).name() == chakra::kHostStallsAttr) stalls_meta = t.metadata_attr(a).as_uint64();
  EXPECT_EQ(stalls_meta, 1u);
  uint64_t keep_duration = 0, wait_duration = 0;
  for (uint32_t n = 0; n < t.size(); ++n) {
    if (int64_t(t.id(n)) == stalled) {
      EXPECT_EQ(t.find_attr(n, chakra::kStallClassAttr)->as_string(), "gpu_wait");
      EXPECT_EQ(t.find_attr(n, chakra::kStallMicrosAttr)->as_uint64(), 19950u);
      keep_duration = t.duration_micros(n);
      wait_duration = t.find_attr(n, chakra::kStallWaitDurationAttr)->as_uint64().value_or(0);
    }
    if (int64_t(t.id(n)) == relu) {
      EXPECT_EQ(t.duration_micros(n), 10u);
      EXPECT_EQ(t.find_attr(n, chakra::kStallWaitDurationAttr)->as_uint64(),
                180u);  // and the stall's 170 after the wait
      const auto deps = t.find_attr(n, chakra::kStallWaitDepsAttr);
      ASSERT_TRUE(deps.has_value());
      EXPECT_EQ(std::vector<uint64_t>(deps->list().begin(), deps->list().end()), std::vector<uint64_t>{uint64_t(gemm)});
    }
  }
  EXPECT_EQ(keep_duration, 20000u);  // 300 until aten::relu's start at 20300
  EXPECT_EQ(wait_duration, 0u);      // blocked from its start: its 170 µs after the GEMM's end go to aten::relu

  const std::string dir = testing_support::temp_dir();
  for (int r = 0; r < 2; ++r) chakra::write_et(t, dir + "/run." + std::to_string(r) + ".et");
  chakra::sim::SimInputs in;
  in.workload = dir + "/run";
  const chakra::ClusterPreset& preset = chakra::cluster_preset("v100-dgx1-8");
  in.network = chakra::fit_network(preset.network, 2);
  in.system = preset.system;
  chakra::fit_system(in.system, in.network.topology.size());
  auto step = [&](chakra::sim::StallMode mode, double gemm_speedup) {
    chakra::sim::SimOptions opt;
    opt.stalls = mode;
    if (gemm_speedup != 1) opt.speedups.push_back({"gemm", gemm_speedup});
    const chakra::sim::SimResult r = chakra::sim::simulate(in, opt);
    EXPECT_FALSE(r.deadlock);
    EXPECT_EQ(r.stall_mode, mode);
    EXPECT_EQ(r.npus[0].stalls[int(StallClass::GpuWait)], 19950000u);
    EXPECT_EQ(r.npus[0].stall_waits, 1u);
    EXPECT_TRUE(r.other_stall_mode.ran);
    return std::pair{r.npus[0].step(), r.other_stall_mode.steps.at(0)};
  };
  const auto [keep, wait_from_keep] = step(chakra::sim::StallMode::Keep, 1);
  const auto [wait, keep_from_wait] = step(chakra::sim::StallMode::Wait, 1);
  EXPECT_EQ(keep, keep_from_wait);
  EXPECT_EQ(wait, wait_from_keep);
  EXPECT_NEAR(double(keep), 20.23e6, 0.02e6);       // the measured span: aten::mm at 100 to relu_kernel's end at 20330
  EXPECT_NEAR(double(wait), double(keep), 0.01e6);  // the GPU bounds this step either way
  const auto [keep_fast, x] = step(chakra::sim::StallMode::Keep, 2);
  const auto [wait_fast, y] = step(chakra::sim::StallMode::Wait, 2);
  EXPECT_GE(double(keep_fast), 0.99 * double(keep));  // the CPU time the stall is charged as bounds it
  EXPECT_LE(double(wait_fast), 0.55 * double(keep));  // the thread waits for the GEMM, now 10 ms
}
