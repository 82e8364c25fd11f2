// The linker's part: the Kineto (device) trace: reading its events, exclusive times, threads, launches (link_parts.h).
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

std::optional<SyncKind> sync_kind(std::string_view runtime_name) {
  for (std::string_view prefix : {"cuda", "hip", "cu"}) {
    if (runtime_name.rfind(prefix, 0) != 0) continue;
    std::string_view rest = runtime_name.substr(prefix.size());
    if (rest == "DeviceSynchronize"sv || rest == "CtxSynchronize"sv || rest == "ThreadSynchronize"sv)
      return SyncKind::Device;
    if (rest == "StreamSynchronize"sv) return SyncKind::Stream;
    if (rest == "EventSynchronize"sv) return SyncKind::Event;
    if (rest == "StreamWaitEvent"sv) return SyncKind::StreamWait;
  }
  return std::nullopt;
}

bool is_event_record(std::string_view runtime_name) {
  return runtime_name == "cudaEventRecord"sv || runtime_name == "cudaEventRecordWithFlags"sv ||
         runtime_name == "hipEventRecord"sv || runtime_name == "cuEventRecord"sv;
}

OpKind classify(std::string_view cat, std::string_view name) {
  if (cat == "cpu_op"sv || cat == "user_annotation"sv)
    return name.find("ProfilerStep") == std::string_view::npos ? OpKind::Cpu : OpKind::Other;
  if (cat == "cuda_runtime"sv || cat == "cuda_driver"sv) {
    static constexpr std::string_view kLaunches[] = {
        "cuLaunchKernel",        "cuLaunchKernelEx",    "cudaLaunchKernel",
        "cudaLaunchKernelExC",   "cudaMemcpy",          "cudaMemcpyAsync",
        "cudaMemcpyFromSymbol",  "cudaMemcpyToSymbol",  "cudaLaunchCooperativeKernel",
        "hipLaunchKernel",       "hipExtLaunchKernel",  "hipExtModuleLaunchKernel",
        "hipModuleLaunchKernel", "hipMemcpyWithStream", "hipMemcpyAsync"};
    for (std::string_view l : kLaunches)
      if (name == l) return OpKind::Launch;
    for (std::string_view l : {"cudaMemsetAsync", "cudaMemset", "hipMemsetAsync", "hipMemset"})
      if (name == l) return OpKind::MemsetLaunch;
    return OpKind::Other;
  }
  if (cat == "kernel"sv || cat == "gpu_memcpy"sv) return OpKind::Gpu;
  if (cat == "gpu_memset"sv) return OpKind::GpuMemset;
  return OpKind::Other;
}

// A scalar as json.dumps writes it, interned (id + 1); containers become null (0).
uint32_t read_value(JsonPull& p, Device& d, std::string& scratch) {
  std::string v;
  switch (p.peek()) {
    case JsonPull::Kind::String:
      p.read_string(scratch);
      append_json_string(v, scratch, /*ascii_only=*/true);
      break;
    case JsonPull::Kind::Number: {
      bool is_int;
      pyjson::append_number(v, pyjson::parse_number(p.read_number_text(is_int)));
      break;
    }
    case JsonPull::Kind::Bool: v = p.read_bool() ? "true" : "false"; break;
    default: p.skip(); return 0;
  }
  return d.strings.intern(v) + 1;
}

// An event's "ts" or "dur": a finite number, and for durations not negative (Python's json
// reads NaN and Infinity, which would make every time computed from them meaningless).
Number read_time(JsonPull& p, const char* field) {
  if (p.peek() != JsonPull::Kind::Number) p.fail(std::string("event field \"") + field + "\" is not a number");
  bool is_int;
  std::string_view text = p.read_number_text(is_int);
  Number n = pyjson::parse_number(text);
  if (!std::isfinite(n.as_double()))
    p.fail(std::string("event field \"") + field + "\" is " + std::string(text) + ", not a time");
  if (field == std::string_view("dur") && n.as_double() < 0)
    p.fail("event duration \"dur\" is negative (" + std::string(text) + ")");
  return n;
}

}  // namespace

std::string_view modern_category(std::string_view cat) {
  if (cat == "Operator"sv) return "cpu_op";
  if (cat == "Runtime"sv) return "cuda_runtime";
  if (cat == "Kernel"sv) return "kernel";
  if (cat == "Memcpy"sv) return "gpu_memcpy";
  if (cat == "Memset"sv) return "gpu_memset";
  return cat;
}

std::optional<int64_t> read_int_like(JsonPull& p, std::string& scratch) {
  switch (p.peek()) {
    case JsonPull::Kind::Number: {
      bool is_int;
      Number n = pyjson::parse_number(p.read_number_text(is_int));
      if (n.is_int) return n.i;
      // Beyond int64 (or not finite) it names no id; converting it would be undefined.
      if (!(n.f >= -9223372036854775808.0 && n.f < 9223372036854775808.0)) return std::nullopt;
      return static_cast<int64_t>(n.f);
    }
    case JsonPull::Kind::String: {
      p.read_string(scratch);
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(scratch.c_str(), &end, 10);
      if (scratch.empty() || *end || errno == ERANGE) return std::nullopt;
      return v;
    }
    default: p.skip(); return std::nullopt;
  }
}

int64_t parse_stream(const Device& d, uint32_t stream) {
  if (stream == 0) return -1;
  std::string_view text = d.strings.view(stream - 1);
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() ? v : -1;
}

void load_device(ByteSource& in, Device& d, Progress* progress) {
  d.name = in.name();
  JsonPull p(in);
  // Keys are views into the parser's window, valid until its next call: each is compared before
  // anything else is read.
  std::string_view key;
  std::string cat, name, scratch;
  Column<KinetoOp> kept;
  std::unordered_map<TidKey, ThreadSpan> threads;
  uint64_t order = 0;

  auto read_event = [&]() {
    if (p.peek() != JsonPull::Kind::Object) p.fail("a traceEvents entry is not an object");
    KinetoOp op;
    SyncDetail sync;
    std::optional<int64_t> pid;
    bool has_tid = true;
    cat.clear();
    name.clear();
    p.begin_object();
    while (p.next_key(key)) {
      if (is(key, "cat")) {
        if (p.peek() == JsonPull::Kind::String)
          p.read_string(cat);
        else
          p.skip();
      } else if (is(key, "name")) {
        if (p.peek() == JsonPull::Kind::String)
          p.read_string(name);
        else
          p.skip();
      } else if (is(key, "ph")) {
        op.ph = read_value(p, d, scratch);
      } else if (is(key, "ts")) {
        op.ts = read_time(p, "ts");
      } else if (is(key, "dur")) {
        op.dur = read_time(p, "dur");
      } else if (is(key, "pid")) {
        pid = read_int_like(p, scratch);
      } else if (is(key, "tid")) {
        JsonPull::Kind k = p.peek();
        if (k == JsonPull::Kind::Null) {
          p.read_null();
          has_tid = false;
        } else if (k == JsonPull::Kind::String) {
          p.read_string(scratch);
          op.tid = kStringTid + d.strings.intern(scratch);
        } else {
          std::optional<int64_t> v = read_int_like(p, scratch);
          if (!v) p.fail("event \"tid\" is neither a number nor a string");
          op.tid = *v;
        }
      } else if (is(key, "args")) {
        if (p.peek() != JsonPull::Kind::Object) {
          p.skip();
          continue;
        }
        p.begin_object();
        while (p.next_key(key)) {
          if (is(key, "External id"))
            op.external_id = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "Ev Idx"))
            op.ev_idx = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "correlation"))
            op.correlation = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "Record function id")) {
            std::optional<int64_t> v = read_int_like(p, scratch);
            op.has_rf = v.has_value();
            op.rf_id = v.value_or(0);
          } else if (is(key, "stream"))
            op.stream = read_value(p, d, scratch);
          else if (is(key, "Process Group Name"))
            op.pg_name = read_value(p, d, scratch);
          else if (is(key, "wait_on_stream"))
            sync.wait_stream = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "wait_on_cuda_event_record_corr_id"))
            sync.record_correlation = read_int_like(p, scratch).value_or(-1);
          else
            p.skip();
        }
      } else {
        p.skip();
      }
    }
    if (d.categories && !cat.empty()) {  // a handful of categories: a linear search
      auto it = std::find_if(d.categories->begin(), d.categories->end(), [&](const auto& c) { return c.first == cat; });
      if (it == d.categories->end())
        d.categories->emplace_back(cat, 1);
      else
        ++it->second;
    }
    std::string_view modern = modern_category(cat);
    op.kind = classify(modern, name);
    const bool runtime = modern == "cuda_runtime"sv || modern == "cuda_driver"sv;
    if (runtime) d.runtime_calls.push_back({op.tid, op.ts, pyjson::add(op.ts, op.dur), d.strings.intern(name)});
    if (modern == "cuda_sync"sv && op.correlation >= 0) {
      if (op.stream) sync.stream = parse_stream(d, op.stream);
      d.sync_detail[op.correlation] = sync;
    } else if (op.kind == OpKind::Other && runtime) {
      if (std::optional<SyncKind> k = sync_kind(name))
        d.sync_calls.push_back({*k, op.tid, op.ts, pyjson::add(op.ts, op.dur), op.correlation});
      else if (is_event_record(name))
        d.event_records[op.correlation] = op.ts;
    }
    if (has_tid) {  // every event (metadata too) widens its thread's span, as in the reference
      Number end = pyjson::add(op.ts, op.dur);
      auto [it, fresh] = threads.try_emplace(op.tid, ThreadSpan{op.ts, end, order});
      if (!fresh) {
        if (pyjson::less(op.ts, it->second.start)) it->second = {op.ts, it->second.end, order};
        if (pyjson::less(it->second.end, end)) it->second.end = end;
      }
    }
    if ((modern == "user_annotation"sv || modern == "cpu_op"sv) && name.rfind("ProfilerStep#", 0) == 0) {
      d.profiler_steps.push_back({d.strings.intern(name), op.ts, pyjson::add(op.ts, op.dur), op.tid});
    }
    if (op.kind == OpKind::Cpu && pid && d.cpu_pids.size() < 8 &&
        std::find(d.cpu_pids.begin(), d.cpu_pids.end(), *pid) == d.cpu_pids.end())
      d.cpu_pids.push_back(*pid);
    if (op.kind != OpKind::Other) {
      op.name = d.strings.intern(name);
      op.cat = d.strings.intern(modern);
      kept.push_back(op);
    }
    ++order;
    if ((order & 0xffff) == 0) report_progress(progress, "reading device trace", in.raw_position(), in.raw_size());
  };

  JsonPull::Kind top = p.peek();
  if (top == JsonPull::Kind::Array) {  // the bare-array form of the Chrome trace format
    p.begin_array();
    while (p.next_element()) read_event();
  } else if (top == JsonPull::Kind::Object) {
    bool found = false, host_nodes = false;
    p.begin_object();
    while (p.next_key(key)) {
      host_nodes |= is(key, "nodes");
      if (is(key, "traceEvents") && p.peek() == JsonPull::Kind::Array) {
        found = true;
        p.begin_array();
        while (p.next_element()) read_event();
      } else if (is(key, "distributedInfo") && p.peek() == JsonPull::Kind::Object) {
        p.begin_object();
        while (p.next_key(key)) {
          if (!is(key, "rank")) {
            p.skip();
            continue;
          }
          const std::optional<int64_t> rank = read_int_like(p, scratch);
          if (rank && *rank >= 0 && *rank < 1'000'000) d.stated_rank = static_cast<uint32_t>(*rank);
        }
      } else {
        p.skip();
      }
    }
    if (!found && host_nodes)
      throw Error(d.name +
                  ": this is a PyTorch host execution trace, not a Kineto trace (are the host and device "
                  "traces swapped?)");
    if (!found) throw Error(d.name + ": not a Kineto/Chrome trace (no \"traceEvents\" array)");
  } else {
    throw Error(d.name + ": not a Kineto/Chrome trace (expected a JSON object)");
  }
  if (!p.at_end()) p.fail("unexpected data after the JSON document");

  // Stable sort by ts, as Python's sorted() over the events.
  std::vector<int32_t> idx(kept.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return pyjson::less(kept[a].ts, kept[b].ts); });
  // Put in that order in place, cycle by cycle (ops[i] = kept[idx[i]]): a sorted copy would hold
  // the events twice, the largest part of reading a large trace.
  d.ops = std::move(kept);
  for (int32_t i = 0; i < static_cast<int32_t>(idx.size()); ++i) {
    if (idx[i] == i) continue;
    KinetoOp first = d.ops[i];
    int32_t j = i;
    while (idx[j] != i) {
      const int32_t from = idx[j];
      d.ops[j] = d.ops[from];
      idx[j] = j;
      j = from;
    }
    d.ops[j] = first;
    idx[j] = j;
  }
  std::vector<int32_t>().swap(idx);
  d.ops.reserve(d.ops.size() + threads.size() + 1);  // rarely grows: push_back left room

  for (int32_t i = 0; i < static_cast<int32_t>(d.ops.size()); ++i) {
    KinetoOp& op = d.ops[i];
    if (op.kind == OpKind::Cpu) {
      d.cpu.push_back(i);
      auto [it, fresh] = d.cpu_by_tid.try_emplace(op.tid);
      if (fresh) d.cpu_tids.push_back(op.tid);
      it->second.push_back(i);
      if (op.has_rf) {
        d.cpu_by_rf[op.rf_id] = i;
        d.any_rf = true;
      }
    } else if (op.kind == OpKind::Launch) {
      // The reference aborts on a duplicate; the first launch keeps the correlation here.
      if (!d.launch_by_correlation.emplace(op.correlation, i).second) ++d.duplicate_correlations;
    } else if (op.kind == OpKind::MemsetLaunch) {
      d.launch_by_correlation.emplace(op.correlation, i);  // looked up by memsets only
    } else if (op.kind == OpKind::Gpu) {
      d.gpu.push_back(i);
    }
  }
  for (const auto& [tid, ops] : d.cpu_by_tid) {
    std::vector<int32_t>& before = d.ends_no_sooner_before[tid];
    before.resize(ops.size());
    std::vector<int32_t> open;  // positions, their ops' ends not increasing upward
    for (int32_t i = 0; i < static_cast<int32_t>(ops.size()); ++i) {
      const Number end = pyjson::add(d.ops[ops[i]].ts, d.ops[ops[i]].dur);
      while (!open.empty() && pyjson::less(pyjson::add(d.ops[ops[open.back()]].ts, d.ops[ops[open.back()]].dur), end))
        open.pop_back();
      before[i] = open.empty() ? -1 : open.back();
      open.push_back(i);
    }
  }

  // Synthetic process and thread annotations (tid 0, dur 0) are candidates of find_closest_op,
  // inserted where the reference inserts them before it re-sorts.
  std::vector<int32_t> list = d.cpu;
  auto add_annotation = [&](std::string_view label, Number ts) {
    KinetoOp a;
    a.kind = OpKind::Annotation;
    a.name = d.strings.intern(label);
    a.ts = ts;
    d.ops.push_back(a);
    return static_cast<int32_t>(d.ops.size() - 1);
  };
  Number process_start = Number::of_int(INT64_MAX);
  for (const auto& [tid, span] : threads)
    if (pyjson::less(span.start, process_start)) process_start = span.start;
  list.insert(list.begin(), add_annotation(kProcessAnnotation, process_start));
  std::vector<std::pair<TidKey, ThreadSpan>> thread_order(threads.begin(), threads.end());
  std::sort(thread_order.begin(), thread_order.end(),
            [](const auto& a, const auto& b) { return a.second.first_order < b.second.first_order; });
  for (const auto& entry : thread_order) {
    const TidKey tid = entry.first;  // named copies: clang 14 lambdas cannot capture bindings
    const Number start = entry.second.start;
    int32_t a = add_annotation(kThreadAnnotation, start);
    auto at = std::find_if(list.begin(), list.end(),
                           [&](int32_t i) { return d.ops[i].tid == tid && !pyjson::less(d.ops[i].ts, start); });
    list.insert(at, a);
  }
  std::stable_sort(list.begin(), list.end(),
                   [&](int32_t a, int32_t b) { return pyjson::less(d.ops[a].ts, d.ops[b].ts); });
  d.candidates = std::move(list);
}

void compute_exclusive(Device& d, std::vector<std::string>& warnings) {
  d.exclusive.resize(d.ops.size());
  for (size_t i = 0; i < d.ops.size(); ++i) d.exclusive[i] = d.ops[i].dur;
  std::vector<int32_t> ops;
  std::vector<std::pair<Number, Number>> regions, merged;
  for (TidKey tid : d.cpu_tids) {
    ops = d.cpu_by_tid[tid];
    std::stable_sort(ops.begin(), ops.end(), [&](int32_t a, int32_t b) {
      const KinetoOp &x = d.ops[a], &y = d.ops[b];
      if (pyjson::less(x.ts, y.ts)) return true;
      if (pyjson::less(y.ts, x.ts)) return false;
      return pyjson::less(x.dur, y.dur);
    });
    for (size_t i = 0; i < ops.size(); ++i) {
      KinetoOp& op = d.ops[ops[i]];
      Number end = pyjson::add(op.ts, op.dur);
      regions.clear();
      for (size_t j = i + 1; j < ops.size(); ++j) {
        const KinetoOp& c = d.ops[ops[j]];
        Number c_end = pyjson::add(c.ts, c.dur);
        if (!pyjson::less(c.ts, op.ts) && !pyjson::less(end, c_end)) regions.emplace_back(c.ts, c_end);
        if (pyjson::less(end, c.ts)) break;
      }
      Number exclusive = op.dur;
      if (!regions.empty()) {
        merged.assign(1, regions[0]);
        for (const auto& r : regions) {
          auto& prev = merged.back();
          if (!pyjson::less(prev.second, r.first)) {
            if (pyjson::less(prev.second, r.second)) prev.second = r.second;
          } else {
            merged.push_back(r);
          }
        }
        for (const auto& [s, e] : merged) exclusive = pyjson::sub(exclusive, pyjson::sub(e, s));
      }
      if (pyjson::less(exclusive, Number::of_int(0))) {
        // The reference aborts here; overlapping children (clock skew) are a warning for us.
        warnings.push_back(d.name + ": CPU op '" + std::string(d.strings.view(op.name)) +
                           "' has children longer than itself; its exclusive duration is set to 0");
        exclusive = exclusive.is_int ? Number::of_int(0) : Number::of_float(0);
      }
      d.exclusive[ops[i]] = exclusive;
    }
  }
}

void compute_inter_thread(Device& d) {
  const Number threshold = Number::of_int(1000);
  for (TidKey tid : d.cpu_tids) {
    const std::vector<int32_t>& ops = d.cpu_by_tid[tid];
    int32_t current = kNone;
    for (size_t i = 0; i < ops.size(); ++i) {
      KinetoOp& op = d.ops[ops[i]];
      bool starts_group = i == 0;
      if (!starts_group) {
        const KinetoOp& prev = d.ops[ops[i - 1]];
        starts_group = pyjson::less(threshold, pyjson::sub(pyjson::sub(op.ts, prev.ts), prev.dur));
      }
      if (starts_group) {
        current = kNone;
        Number best = Number::of_int(0);
        for (TidKey other : d.cpu_tids) {
          if (other == tid) continue;
          const std::vector<int32_t>& cand = d.cpu_by_tid[other];
          auto it = std::partition_point(cand.begin(), cand.end(),
                                         [&](int32_t c) { return pyjson::less(d.ops[c].ts, op.ts); });
          if (it == cand.begin()) continue;
          Number t = d.ops[*(it - 1)].ts;
          if (!pyjson::less(best, t)) continue;
          auto first = std::partition_point(cand.begin(), it, [&](int32_t c) { return pyjson::less(d.ops[c].ts, t); });
          best = t;
          current = *first;
        }
      }
      op.other_thread = current;
    }
  }
}

std::vector<int32_t> find_launchers(Device& d, bool innermost, uint64_t* orphans) {
  std::vector<Number> ts;
  ts.reserve(d.candidates.size());
  for (int32_t c : d.candidates) ts.push_back(d.ops[c].ts);
  std::unordered_map<TidKey, std::vector<int32_t>> by_tid;  // candidate positions
  struct PairHash {
    size_t operator()(const std::pair<TidKey, int64_t>& k) const {
      // Unsigned: hostile tids are any 64-bit value, and signed overflow is undefined.
      return std::hash<uint64_t>()(static_cast<uint64_t>(k.first) * 1000003u ^ static_cast<uint64_t>(k.second));
    }
  };
  std::unordered_map<std::pair<TidKey, int64_t>, std::vector<int32_t>, PairHash> by_tid_ext;
  for (int32_t pos = 0; pos < static_cast<int32_t>(d.candidates.size()); ++pos) {
    const KinetoOp& c = d.ops[d.candidates[pos]];
    by_tid[c.tid].push_back(pos);
    by_tid_ext[{c.tid, c.external_id}].push_back(pos);
  }
  StrId coalesced = 0;
  bool has_coalesced = d.strings.find("nccl:coalesced", &coalesced);

  std::vector<int32_t> launcher(d.ops.size(), kNone);
  for (int32_t g : d.gpu) {
    KinetoOp& op = d.ops[g];
    auto rt = d.launch_by_correlation.find(op.correlation);
    if (rt == d.launch_by_correlation.end()) {
      ++*orphans;
      continue;
    }
    const KinetoOp& runtime = d.ops[rt->second];
    op.tid = runtime.tid;
    bool skip_coalesced = false;
    if (has_coalesced) {  // lower-casing every kernel's (long) name only matters then
      std::string lower(d.strings.view(op.name));
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      skip_coalesced = lower.find("nccl") != std::string::npos;
    }
    int32_t limit = static_cast<int32_t>(
        std::partition_point(ts.begin(), ts.end(), [&](const Number& t) { return pyjson::less(t, runtime.ts); }) -
        ts.begin());
    auto latest_before = [&](const std::vector<int32_t>* positions) -> int32_t {
      if (!positions) return kNone;
      auto it = std::lower_bound(positions->begin(), positions->end(), limit);
      while (it != positions->begin()) {
        --it;
        int32_t c = d.candidates[*it];
        if (!(skip_coalesced && d.ops[c].name == coalesced)) return c;
      }
      return kNone;
    };
    auto ext = by_tid_ext.find({op.tid, op.external_id});
    int32_t parent = latest_before(ext == by_tid_ext.end() ? nullptr : &ext->second);
    if (parent == kNone) {
      auto tid = by_tid.find(op.tid);
      parent = latest_before(tid == by_tid.end() ? nullptr : &tid->second);
      if (innermost && parent != kNone) {
        const std::vector<int32_t>& positions = tid->second;
        auto it = std::lower_bound(positions.begin(), positions.end(), limit);
        for (int steps = 0; it != positions.begin() && steps < 100000; ++steps) {
          const KinetoOp& c = d.ops[d.candidates[*--it]];
          if (c.kind == OpKind::Cpu && !pyjson::less(pyjson::add(c.ts, c.dur), runtime.ts)) {
            parent = d.candidates[*it];
            break;
          }
        }
      }
    }
    if (parent == kNone) ++*orphans;
    launcher[g] = parent;
  }
  return launcher;
}

}  // namespace chakra::link
