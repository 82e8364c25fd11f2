// The linker's part: sync dependencies, blocked time and host stalls (link_parts.h).
#include "pytorch/link/link_parts.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>

#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::link {

namespace {

ThreadOps thread_ops_before(const Device& d, TidKey tid, Number t, bool or_at = false) {
  auto it = d.cpu_by_tid.find(tid);
  if (it == d.cpu_by_tid.end()) return {};
  const std::vector<int32_t>& ops = it->second;
  auto at = std::partition_point(ops.begin(), ops.end(), [&](int32_t k) {
    return or_at ? !pyjson::less(t, d.ops[k].ts) : pyjson::less(d.ops[k].ts, t);
  });
  return {ops, static_cast<size_t>(at - ops.begin())};
}

// The host-linked CPU op of thread `tid` that starts last among those over by `end`, or kNone:
// on a replay lane, where a thread's ops run in start order, it finishes after all the others.
int32_t last_linked_cpu_op_over_by(const Device& d, TidKey tid, Number end) {
  const ThreadOps t = thread_ops_before(d, tid, end);
  for (size_t i = t.split, steps = 0; i > 0 && steps < 4096; --i, ++steps) {
    const int32_t k = t.ops[i - 1];
    if (d.ops[k].host != kNone && !pyjson::less(end, pyjson::add(d.ops[k].ts, d.ops[k].dur))) return k;
  }
  return kNone;
}

}  // namespace

int32_t innermost_cpu_op(const Device& d, TidKey tid, Number ts, Number end) {
  const ThreadOps t = thread_ops_before(d, tid, ts, true);
  if (t.split == 0) return kNone;
  // Later-starting ops nest inside earlier ones: walking back, the first that holds the span is
  // the innermost. An op that ends before `end` is not it, nor is any op between it and the
  // nearest earlier one that ends no sooner (they end before it): the walk jumps there.
  const std::vector<int32_t>& before = d.ends_no_sooner_before.at(tid);
  for (int32_t i = static_cast<int32_t>(t.split) - 1; i >= 0; i = before[i]) {
    const int32_t k = t.ops[i];
    if (!pyjson::less(pyjson::add(d.ops[k].ts, d.ops[k].dur), end)) return k;
  }
  return kNone;
}

int32_t first_linked_cpu_op_after(const Device& d, TidKey tid, Number end) {
  const ThreadOps t = thread_ops_before(d, tid, end);
  for (size_t i = t.split; i < t.ops.size(); ++i)
    if (d.ops[t.ops[i]].host != kNone) return t.ops[i];
  return kNone;
}

void add_cross_thread_blocked(const Device& d, const std::vector<std::pair<int32_t, int32_t>>& deps,
                              const HostOut& host_out, SyncDeps& r) {
  std::unordered_map<int32_t, std::vector<std::pair<double, double>>> spans;  // waiting op → spans
  std::unordered_map<int32_t, std::vector<TidKey>> workers;                   // waiting op → threads
  for (auto [op, on] : deps) {
    const KinetoOp& y = d.ops[op];
    if (y.tid == d.ops[on].tid) continue;
    const int32_t waiting = innermost_cpu_op(d, d.ops[on].tid, y.ts, pyjson::add(y.ts, y.dur));
    if (waiting == kNone || d.ops[waiting].host == kNone) continue;
    spans[waiting].emplace_back(y.ts.as_double(), y.ts.as_double() + y.dur.as_double());
    std::vector<TidKey>& threads = workers[waiting];
    if (std::find(threads.begin(), threads.end(), y.tid) == threads.end()) threads.push_back(y.tid);
  }
  for (auto& [waiting, threads] : workers) {
    const KinetoOp& w = d.ops[waiting];
    const Number end = pyjson::add(w.ts, w.dur);
    const int32_t waiter = first_linked_cpu_op_after(d, w.tid, end);
    if (waiter == kNone) continue;
    for (TidKey tid : threads) {
      const int32_t last = last_linked_cpu_op_over_by(d, tid, end);
      if (last == kNone) continue;
      if (r.add(host_out(d.ops[waiter].host), host_out(d.ops[last].host))) ++r.thread_waits;
    }
  }
  for (auto& [waiting, list] : spans) {
    // From the first to the last op of the handed-over work: the gaps between those ops are the
    // other thread's (the engine picking its next task), the waiting thread sleeps throughout.
    double begin = list[0].first, end = list[0].second;
    for (auto [b, e] : list) {
      begin = std::min(begin, b);
      end = std::max(end, e);
    }
    if (const double blocked = std::min(end - begin, d.exclusive_of(waiting).as_double()); blocked > 0) {
      const int64_t host = host_out(d.ops[waiting].host);
      r.blocked[host] += blocked;
      r.blocked_spans[host].emplace_back(begin, end);
      r.thread_blocked.push_back({d.ops[waiting].tid, {begin, end}});
    }
  }
}

SyncDeps compute_sync_deps(const Device& d, const std::vector<int64_t>& gpu_out, const HostOut& host_out) {
  struct Launched {
    Number ts;
    int32_t op;
    int64_t stream;
  };
  std::unordered_map<int64_t, std::vector<Launched>> by_stream;  // written GPU ops per stream
  std::unordered_map<TidKey, std::vector<Launched>> by_thread;   // every launch, per CPU thread
  for (int32_t g : d.gpu) {
    auto l = d.launch_by_correlation.find(d.ops[g].correlation);
    if (l == d.launch_by_correlation.end()) continue;
    const KinetoOp& launch = d.ops[l->second];
    Launched x{launch.ts, g, parse_stream(d, d.ops[g].stream)};
    by_thread[launch.tid].push_back(x);
    if (gpu_out[g] >= 0) by_stream[x.stream].push_back(x);
  }
  auto by_ts = [](const Launched& a, const Launched& b) { return pyjson::less(a.ts, b.ts); };
  for (auto& entry : by_stream) std::stable_sort(entry.second.begin(), entry.second.end(), by_ts);
  for (auto& entry : by_thread) std::stable_sort(entry.second.begin(), entry.second.end(), by_ts);
  // The last of `list` launched before `cutoff`, or null.
  auto last_before = [](const std::vector<Launched>& list, Number cutoff) -> const Launched* {
    auto it =
        std::partition_point(list.begin(), list.end(), [&](const Launched& x) { return pyjson::less(x.ts, cutoff); });
    return it == list.begin() ? nullptr : &*(it - 1);
  };
  // The first host-linked op thread `tid` starts at or after `end`: its output id, or -1.
  auto cpu_after = [&](TidKey tid, Number end) -> int64_t {
    const int32_t op = first_linked_cpu_op_after(d, tid, end);
    return op == kNone ? -1 : host_out(d.ops[op].host);
  };

  SyncDeps r;
  // The call [ts, end) of thread `tid` was blocked for `micros` ending at `blocked_end`.
  auto add_blocked = [&](TidKey tid, Number ts, Number end, double micros, double blocked_end) {
    int32_t op = innermost_cpu_op(d, tid, ts, end);
    // A call between host ops (torch.cuda.synchronize() in Python): the thread's op before it
    // takes the span, so that the replay does not charge the wait as the thread's own time.
    if (op == kNone || d.ops[op].host == kNone) op = last_linked_cpu_op_over_by(d, tid, ts);
    if (op == kNone || micros <= 0) return;
    const int64_t host = host_out(d.ops[op].host);
    r.blocked[host] += micros;
    r.blocked_spans[host].emplace_back(blocked_end - micros, blocked_end);
    r.thread_blocked.push_back({tid, {blocked_end - micros, blocked_end}});
  };
  std::vector<int64_t> targets;  // GPU node ids the current call waits for
  double targets_end = 0;        // when the last of them ended (µs)
  auto add_target = [&](int32_t op) {
    targets.push_back(gpu_out[op]);
    targets_end = std::max(targets_end, pyjson::add(d.ops[op].ts, d.ops[op].dur).as_double());
  };
  // A blocking call is blocked from its start until the work it waits for ends; the rest of it
  // (the wake-up after that work, or all of it when that work had ended already) is the
  // thread's own time, spent after the wait. Without known targets, the whole call.
  auto block_call = [&](const SyncCall& c) {
    if (c.kind == SyncKind::StreamWait) return;
    const double begin = c.ts.as_double(), end = c.end.as_double();
    const double until = targets.empty() ? end : std::min(end, targets_end);
    add_blocked(c.tid, c.ts, c.end, until - begin, until);
  };
  // Older Kineto names neither the event nor the streams of a stream wait. PyTorch waits on a
  // stream right before launching there (a collective after its inputs' kernels, the kernels
  // after a collective's wait()), so: the thread's next launch waits for the last op launched
  // before the call on every other stream that ended before it started (a real dependency
  // always did), a superset of the real dependency. Returns the waiter, or -1.
  auto infer_stream_wait = [&](const SyncCall& c) -> int64_t {
    auto t = by_thread.find(c.tid);
    if (t == by_thread.end()) return -1;
    auto next = std::partition_point(t->second.begin(), t->second.end(),
                                     [&](const Launched& x) { return pyjson::less(x.ts, c.end); });
    if (next == t->second.end() || gpu_out[next->op] < 0) return -1;
    const KinetoOp& waiting = d.ops[next->op];
    for (const auto& [stream, list] : by_stream) {
      if (stream == next->stream) continue;
      const Launched* x = last_before(list, c.ts);
      if (x && !pyjson::less(waiting.ts, pyjson::add(d.ops[x->op].ts, d.ops[x->op].dur))) add_target(x->op);
    }
    return gpu_out[next->op];
  };
  auto stream_before = [&](int64_t stream, Number cutoff) {
    auto s = by_stream.find(stream);
    if (s == by_stream.end()) return;
    if (const Launched* x = last_before(s->second, cutoff)) add_target(x->op);
  };
  for (const SyncCall& c : d.sync_calls) {
    ++r.calls;
    auto found = d.sync_detail.find(c.correlation);
    const SyncDetail* detail = found == d.sync_detail.end() ? nullptr : &found->second;
    targets.clear();
    targets_end = 0;
    int64_t waiter = -1;
    if (c.kind == SyncKind::Device) {
      for (const auto& entry : by_stream)
        if (const Launched* x = last_before(entry.second, c.ts)) add_target(x->op);
      waiter = cpu_after(c.tid, c.end);
    } else if (c.kind == SyncKind::Stream) {
      // Older Kineto has no cuda_sync event naming the stream: take the stream of the thread's
      // last launch, the copy a stream sync nearly always follows.
      int64_t stream = detail ? detail->stream : -1;
      if (stream < 0) {
        auto t = by_thread.find(c.tid);
        const Launched* x = t == by_thread.end() ? nullptr : last_before(t->second, c.ts);
        if (x) stream = x->stream;
      }
      stream_before(stream, c.ts);
      waiter = cpu_after(c.tid, c.end);
    } else if (auto record = detail ? d.event_records.find(detail->record_correlation) : d.event_records.end();
               record != d.event_records.end()) {  // an event sync or wait, its event named by cuda_sync
      stream_before(detail->wait_stream, record->second);
      if (c.kind == SyncKind::Event) {
        waiter = cpu_after(c.tid, c.end);
      } else if (auto s = by_stream.find(detail->stream); s != by_stream.end()) {
        auto next = std::partition_point(s->second.begin(), s->second.end(),
                                         [&](const Launched& x) { return pyjson::less(x.ts, c.end); });
        if (next != s->second.end()) waiter = gpu_out[next->op];
      }
    } else if (c.kind == SyncKind::StreamWait && (waiter = infer_stream_wait(c)) >= 0) {
      ++r.inferred;
    } else {
      ++r.unidentified;
    }
    block_call(c);
    if (targets.empty()) continue;  // unidentified, or nothing launched before it: nothing to wait for
    if (waiter < 0) {
      ++r.no_waiter;
      continue;
    }
    ++r.resolved;
    for (int64_t t : targets) r.add(waiter, t);
  }
  // A copy to pageable host memory returns only once the copy ran, after everything queued
  // before it on its stream: the launch call's time beyond the copy's own is blocked time, and
  // the thread's next op waits for the copy.
  for (int32_t g : d.gpu) {
    const std::string_view name = d.strings.view(d.ops[g].name);
    if (name.find("DtoH") == std::string_view::npos || name.find("Pageable") == std::string_view::npos) continue;
    auto l = d.launch_by_correlation.find(d.ops[g].correlation);
    if (l == d.launch_by_correlation.end()) continue;
    const KinetoOp& launch = d.ops[l->second];
    const Number end = pyjson::add(launch.ts, launch.dur);
    add_blocked(launch.tid, launch.ts, end, launch.dur.as_double() - d.ops[g].dur.as_double(),
                end.as_double());  // the call's last µs
    if (gpu_out[g] < 0) continue;
    if (const int64_t waiter = cpu_after(launch.tid, end); waiter >= 0) r.add(waiter, gpu_out[g]);
  }
  return r;
}

void sort_sync_deps(SyncDeps& r) {
  r.edges = 0;
  for (auto& entry : r.of) {
    std::sort(entry.second.begin(), entry.second.end());
    r.edges += entry.second.size();
  }
}

StallInputs stall_inputs(const Device& d, const SyncDeps& sync) {
  StallInputs in;
  in.cpu.reserve(d.cpu.size());
  in.gpu.reserve(d.gpu.size());
  in.calls.reserve(d.runtime_calls.size());
  auto us = [](Number n) { return n.as_double(); };
  for (int32_t k : d.cpu) {
    const KinetoOp& op = d.ops[k];
    in.cpu.push_back({us(op.ts), us(pyjson::add(op.ts, op.dur)), op.tid, d.strings.view(op.name)});
  }
  for (int32_t g : d.gpu) {
    const KinetoOp& op = d.ops[g];
    auto l = d.launch_by_correlation.find(op.correlation);
    in.gpu.push_back({us(op.ts), us(pyjson::add(op.ts, op.dur)),
                      l == d.launch_by_correlation.end() ? NAN : us(d.ops[l->second].ts)});
  }
  for (const Device::RuntimeCall& c : d.runtime_calls)
    in.calls.push_back({us(c.ts), us(c.end), c.tid, d.strings.view(c.name)});
  in.blocked = sync.thread_blocked;
  return in;
}

}  // namespace chakra::link
