#include "pytorch/host_stalls.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace chakra {
namespace {

bool starts_with_any(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes)
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

// Calls of the caching allocators (PyTorch's, and the driver's virtual memory API its expandable
// segments use): cudaFree and cudaMalloc synchronise the device before they return.
bool is_allocator_call(std::string_view name) {
  return starts_with_any(
      name, {"cudaMalloc",   "cudaFree",     "cudaHostAlloc",  "cudaHostRegister", "cudaHostUnregister",
             "cuMemAlloc",   "cuMemFree",    "cuMemCreate",    "cuMemMap",         "cuMemUnmap",
             "cuMemRelease", "cuMemAddress", "cuMemSetAccess", "cuMemHostAlloc",   "cuMemHostRegister",
             "hipMalloc",    "hipFree",      "hipHostMalloc",  "hipHostFree",      "hipExtMallocWithFlags"});
}

// Asynchronous enqueues: they return at once unless the GPU's launch queue is full.
bool is_async_enqueue(std::string_view name) {
  static constexpr std::string_view kCalls[] = {"cudaLaunchKernel",
                                                "cudaLaunchKernelExC",
                                                "cuLaunchKernel",
                                                "cuLaunchKernelEx",
                                                "cudaLaunchCooperativeKernel",
                                                "cudaMemcpyAsync",
                                                "cudaMemsetAsync",
                                                "cudaGraphLaunch",
                                                "cuGraphLaunch",
                                                "hipLaunchKernel",
                                                "hipExtLaunchKernel",
                                                "hipModuleLaunchKernel",
                                                "hipExtModuleLaunchKernel",
                                                "hipMemcpyAsync",
                                                "hipMemcpyWithStream",
                                                "hipMemsetAsync",
                                                "hipGraphLaunch"};
  return std::find(std::begin(kCalls), std::end(kCalls), name) != std::end(kCalls);
}

using Span = std::pair<double, double>;

// Sorted, merged intervals with the running total of their lengths, for "how much of [b, e)
// do they cover" in O(log n).
class Coverage {
 public:
  explicit Coverage(std::vector<Span> spans) {
    std::sort(spans.begin(), spans.end());
    for (const Span& s : spans) {
      if (s.second <= s.first) continue;
      if (!merged_.empty() && s.first <= merged_.back().second)
        merged_.back().second = std::max(merged_.back().second, s.second);
      else
        merged_.push_back(s);
    }
    before_.resize(merged_.size() + 1, 0);
    for (size_t i = 0; i < merged_.size(); ++i) before_[i + 1] = before_[i] + merged_[i].second - merged_[i].first;
  }
  // Covered length of [b, e).
  double within(double b, double e) const { return e > b ? upto(e) - upto(b) : 0; }
  const std::vector<Span>& spans() const { return merged_; }

 private:
  double upto(double t) const {  // covered length of (-inf, t)
    auto it = std::partition_point(merged_.begin(), merged_.end(), [&](const Span& s) { return s.second <= t; });
    const size_t i = static_cast<size_t>(it - merged_.begin());
    return before_[i] + (it != merged_.end() && it->first < t ? t - it->first : 0);
  }
  std::vector<Span> merged_;
  std::vector<double> before_;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::string micros_text(double us) {
  char buf[32];
  if (us >= 1000)
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.0f us", us);
  return buf;
}

// Each op's own time (not in a nested op of its thread): its total not blocked, and its longest
// stretch with the unblocked part of it.
struct Own {
  double total = 0;
  Span longest{0, 0};
  double longest_unblocked = 0;
};

std::vector<Own> own_times(const StallInputs& in, const std::unordered_map<int64_t, Coverage>& blocked) {
  std::vector<Own> own(in.cpu.size());
  std::map<int64_t, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < in.cpu.size(); ++i) by_thread[in.cpu[i].tid].push_back(i);
  for (auto& [tid, ops] : by_thread) {
    std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
      return in.cpu[a].ts != in.cpu[b].ts ? in.cpu[a].ts < in.cpu[b].ts : in.cpu[a].end > in.cpu[b].end;
    });
    auto it = blocked.find(tid);
    const Coverage* thread_blocked = it == blocked.end() ? nullptr : &it->second;
    auto add_stretch = [&](uint32_t op, double b, double e) {
      if (e <= b) return;
      const double unblocked = (e - b) - (thread_blocked ? thread_blocked->within(b, e) : 0);
      Own& o = own[op];
      o.total += unblocked;
      if (unblocked > o.longest_unblocked) o.longest_unblocked = unblocked, o.longest = {b, e};
    };
    // Open ops, outermost first, each with where its current stretch began.
    std::vector<std::pair<uint32_t, double>> open;
    auto close_until = [&](double t) {  // closes the open ops that end by t
      while (!open.empty() && in.cpu[open.back().first].end <= t) {
        const uint32_t op = open.back().first;
        add_stretch(op, open.back().second, in.cpu[op].end);
        open.pop_back();
        if (!open.empty()) open.back().second = std::max(open.back().second, in.cpu[op].end);
      }
    };
    for (uint32_t op : ops) {
      close_until(in.cpu[op].ts);
      // An op that outlasts the open one (clocks of nested events disagree) is not nested in it.
      while (!open.empty() && in.cpu[op].end > in.cpu[open.back().first].end)
        close_until(in.cpu[open.back().first].end);
      if (!open.empty()) {
        add_stretch(open.back().first, open.back().second, in.cpu[op].ts);
        open.back().second = in.cpu[op].end;
      }
      open.emplace_back(op, in.cpu[op].ts);
    }
    close_until(INFINITY);
  }
  return own;
}

}  // namespace

std::vector<HostStall> find_host_stalls(const StallInputs& in) {
  std::vector<HostStall> stalls;
  if (in.cpu.empty()) return stalls;
  std::unordered_map<int64_t, std::vector<Span>> blocked_spans;
  for (const auto& [tid, span] : in.blocked) blocked_spans[tid].push_back(span);
  std::unordered_map<int64_t, Coverage> blocked;
  for (auto& [tid, spans] : blocked_spans) blocked.emplace(tid, Coverage(std::move(spans)));
  const std::vector<Own> own = own_times(in, blocked);

  // What an op of each name usually takes.
  std::unordered_map<std::string_view, std::vector<double>> by_name;
  std::vector<double> all;
  all.reserve(in.cpu.size());
  for (uint32_t i = 0; i < in.cpu.size(); ++i) {
    by_name[in.cpu[i].name].push_back(own[i].total);
    all.push_back(own[i].total);
  }
  const double rank_typical = median(all);
  std::unordered_map<std::string_view, double> typical;
  for (auto& [name, times] : by_name)
    typical[name] = times.size() >= kTypicalSamples ? median(std::move(times)) : rank_typical;

  // The device: when it was busy (any GPU op running), which op ended each busy stretch, ops by
  // end, launches and starts for the launch queue's depth.
  std::vector<uint32_t> gpu_by_ts(in.gpu.size());
  for (uint32_t g = 0; g < in.gpu.size(); ++g) gpu_by_ts[g] = g;
  std::sort(gpu_by_ts.begin(), gpu_by_ts.end(), [&](uint32_t a, uint32_t b) { return in.gpu[a].ts < in.gpu[b].ts; });
  struct Busy {
    double begin, end;
    uint32_t last;  // the op that ends it
  };
  std::vector<Busy> busy;
  std::vector<Span> gpu_spans;
  for (uint32_t g : gpu_by_ts) {
    const auto& op = in.gpu[g];
    gpu_spans.emplace_back(op.ts, op.end);
    if (!busy.empty() && op.ts <= busy.back().end) {
      if (op.end > busy.back().end) busy.back().end = op.end, busy.back().last = g;
    } else {
      busy.push_back({op.ts, op.end, g});
    }
  }
  const Coverage gpu_coverage(std::move(gpu_spans));
  std::vector<uint32_t> gpu_by_end = gpu_by_ts;
  std::sort(gpu_by_end.begin(), gpu_by_end.end(),
            [&](uint32_t a, uint32_t b) { return in.gpu[a].end < in.gpu[b].end; });
  std::vector<double> launches, starts;
  for (const auto& op : in.gpu)
    if (!std::isnan(op.launched)) launches.push_back(op.launched), starts.push_back(op.ts);
  std::sort(launches.begin(), launches.end());
  std::sort(starts.begin(), starts.end());
  auto queue_depth = [&](double t) {  // launched before t, not started by t
    const auto launched = std::lower_bound(launches.begin(), launches.end(), t) - launches.begin();
    const auto started = std::upper_bound(starts.begin(), starts.end(), t) - starts.begin();
    return launched > started ? static_cast<long>(launched - started) : 0L;
  };

  // Threads' activity and calls.
  std::unordered_map<int64_t, std::vector<Span>> activity_spans;
  for (const auto& op : in.cpu) activity_spans[op.tid].emplace_back(op.ts, op.end);
  std::vector<std::pair<int64_t, Coverage>> activity;
  for (auto& [tid, spans] : activity_spans) activity.emplace_back(tid, Coverage(std::move(spans)));
  std::sort(activity.begin(), activity.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::unordered_map<int64_t, std::vector<uint32_t>> calls_by_thread;
  for (uint32_t c = 0; c < in.calls.size(); ++c) calls_by_thread[in.calls[c].tid].push_back(c);
  for (auto& [tid, calls] : calls_by_thread)
    std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) { return in.calls[a].ts < in.calls[b].ts; });

  for (uint32_t i = 0; i < in.cpu.size(); ++i) {
    const StallInputs::CpuOp& op = in.cpu[i];
    const Own& o = own[i];
    const double usual = typical[op.name];
    if (o.longest_unblocked < std::max(kStallMinMicros, kStallFactor * usual)) continue;
    HostStall s;
    s.op = i;
    s.begin = o.longest.first;
    s.end = o.longest.second;
    s.micros = o.longest_unblocked;
    const double length = s.end - s.begin;
    std::string& why = s.evidence;
    // No names in the evidence: it travels with the node, whose name anonymization replaces.
    why = "own stretch " + micros_text(s.micros) + " (ops of its name usually take " + micros_text(usual) + ")";

    // The runtime call of the thread that overlaps the stretch most.
    const StallInputs::Call* call = nullptr;
    double call_overlap = 0;
    if (auto c = calls_by_thread.find(op.tid); c != calls_by_thread.end()) {
      const std::vector<uint32_t>& calls = c->second;
      auto it = std::partition_point(calls.begin(), calls.end(), [&](uint32_t k) { return in.calls[k].ts < s.end; });
      // A thread's calls follow one another (a driver call may nest in a runtime call): the
      // last few that start before the stretch ends are the ones that can overlap it.
      for (size_t steps = 0; it != calls.begin() && steps < 64; ++steps) {
        const StallInputs::Call& k = in.calls[*--it];
        const double overlap = std::min(s.end, k.end) - std::max(s.begin, k.ts);
        if (overlap > call_overlap) call = &k, call_overlap = overlap;
      }
    }
    const bool call_explains = call && call_overlap >= 0.5 * length;
    if (call_explains) why += "; " + std::string(call->name) + " took " + micros_text(call_overlap) + " of it";

    // GPU work that ended just before the stretch did. Strong: the device drained then and
    // stayed idle until the thread went on. Weaker: an op that ran through most of the stretch.
    auto last_busy = std::partition_point(busy.begin(), busy.end(), [&](const Busy& b) { return b.end <= s.end; });
    if (last_busy != busy.begin()) {
      const Busy& b = *(last_busy - 1);
      const bool idle_after = last_busy == busy.end() || last_busy->begin >= s.end;
      if (b.end >= s.begin && s.end - b.end <= kWakeMicros && idle_after) {
        s.gpu = static_cast<int32_t>(b.last);
        why += "; the GPU's work drained " + micros_text(s.end - b.end) + " before it ended (busy " +
               micros_text(gpu_coverage.within(s.begin, b.end)) + " of it)";
      }
    }
    if (s.gpu < 0) {
      auto first = std::partition_point(gpu_by_end.begin(), gpu_by_end.end(),
                                        [&](uint32_t g) { return in.gpu[g].end < s.end - kWakeMicros; });
      double best = 0;
      for (auto it = first; it != gpu_by_end.end() && in.gpu[*it].end <= s.end; ++it) {
        const auto& g = in.gpu[*it];
        const double covered = std::min(s.end, g.end) - std::max(s.begin, g.ts);
        if (covered >= 0.5 * length && covered > best) best = covered, s.gpu = static_cast<int32_t>(*it);
      }
      if (s.gpu >= 0)
        why += "; a GPU op ran through " + micros_text(best) + " of it and ended " +
               micros_text(s.end - in.gpu[s.gpu].end) + " before it (other GPU work went on)";
    }
    why += "; launch queue " + std::to_string(queue_depth(s.begin)) + " deep at its start";
    double other = 0;
    int64_t other_tid = 0;
    for (const auto& [tid, cover] : activity)
      if (tid != op.tid)
        if (const double c = cover.within(s.begin, s.end); c > other) other = c, other_tid = tid;
    if (other > 0) why += "; thread " + std::to_string(other_tid) + " ran ops through " + micros_text(other) + " of it";

    if (call_explains && is_allocator_call(call->name))
      s.cls = StallClass::Allocator;
    else if (call_explains && is_async_enqueue(call->name))
      s.cls = StallClass::LaunchQueue;
    else if (s.gpu >= 0)
      s.cls = StallClass::GpuWait;
    else if (call_explains)
      s.cls = StallClass::RuntimeCall;
    else if (other >= 0.5 * length)
      s.cls = StallClass::OtherThread;
    else
      s.cls = StallClass::Unexplained;
    stalls.push_back(std::move(s));
  }
  return stalls;
}

}  // namespace chakra
