// Host stalls (core/docs/pytorch-replay.md, "Host stalls"): host ops one stretch of whose own
// time is far longer than what ops of their name take on the rank, each classed by the
// evidence the Kineto trace holds for what its thread was doing then. The linker
// (`chakra link --sync-deps`) and kineto_activity describe a trace to find_host_stalls in the
// neutral form below; times are µs on the profiler's clock.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chakra/trace/schema.h"

namespace chakra {

struct StallInputs {
  struct CpuOp {  // cpu_op and user_annotation events
    double ts = 0, end = 0;
    int64_t tid = 0;
    std::string_view name;
  };
  struct GpuOp {  // kernels, copies, memsets
    double ts = 0, end = 0;
    double launched = NAN;  // its launch call's start; NaN when unknown
  };
  struct Call {  // CUDA/HIP runtime and driver calls
    double ts = 0, end = 0;
    int64_t tid = 0;
    std::string_view name;
  };
  std::vector<CpuOp> cpu;
  std::vector<GpuOp> gpu;
  std::vector<Call> calls;
  // When a thread was blocked in a way the replay already models (synchronisation calls, waits
  // for work handed to another thread): such time is never a stall.
  std::vector<std::pair<int64_t, std::pair<double, double>>> blocked;
};

struct HostStall {
  uint32_t op = 0;  // index into StallInputs::cpu
  StallClass cls = StallClass::Unexplained;
  double begin = 0, end = 0;  // the stretch of own time
  double micros = 0;          // of it, not blocked
  // The GPU op whose end the stretch ended just after (index into StallInputs::gpu), or -1: the
  // wait replay has the thread wait for it instead of spending the stretch.
  int32_t gpu = -1;
  std::string evidence;  // what the trace shows, for people
};

// A stretch is a stall when it is at least this long and kStallFactor times what ops of its
// name take (their median own time; ops of a name seen fewer than kTypicalSamples times are
// compared with the rank's median op).
inline constexpr double kStallMinMicros = 1000;
inline constexpr double kStallFactor = 20;
inline constexpr size_t kTypicalSamples = 5;
// A wake-up this soon after GPU work ended counts as waiting for it (CUDA's blocking sync
// returns within tens of µs; an allocator's implicit sync and the interpreter take longer).
inline constexpr double kWakeMicros = 500;

// Every stall, in the order of `in.cpu`. O(n log n) in the events.
std::vector<HostStall> find_host_stalls(const StallInputs& in);

}  // namespace chakra
