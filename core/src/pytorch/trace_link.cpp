#include "chakra/pytorch/trace_link.h"


#include <algorithm>
#include <span>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "chakra/format/json_pull.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/string_pool.h"
#include "host_stalls.h"
#include "python_json.h"

namespace chakra {

using pyjson::Number;
// Keys and names are compared as views ("cat"sv): std::string == const char* measures the literal
// and compares out of line, 8% of a link's instructions.
using namespace std::string_view_literals;

// A parsed key against a literal, inline: in the readers' long per-event loops `key == "x"sv`
// compared out of line, 4% of a link's instructions.
template <size_t N>
inline bool is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

std::string_view link_method_name(LinkMethod m) {
  switch (m) {
    case LinkMethod::Auto: return "auto";
    case LinkMethod::RecordFunctionId: return "rf-id";
    case LinkMethod::ExternalId: return "external-id";
    case LinkMethod::EvIdx: return "ev-idx";
    case LinkMethod::InOrder: return "in-order";
  }
  return "?";
}

bool parse_link_method(std::string_view text, LinkMethod* out) {
  for (LinkMethod m : {LinkMethod::Auto, LinkMethod::RecordFunctionId, LinkMethod::ExternalId,
                       LinkMethod::EvIdx, LinkMethod::InOrder})
    if (link_method_name(m) == text) {
      *out = m;
      return true;
    }
  return false;
}

std::optional<uint32_t> kineto_rank(std::string_view head) {
  size_t at = head.find("\"distributedInfo\"");
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = head.find_first_not_of(" \t\r\n", at + 17);
  if (i == std::string_view::npos || head[i] != ':') return std::nullopt;
  i = head.find_first_not_of(" \t\r\n", i + 1);
  if (i == std::string_view::npos || head[i] != '{') return std::nullopt;
  // Walk the object, strings skipped, and read the "rank" member at its own level (pg_config
  // lists nested "ranks").
  int depth = 0;
  for (; i < head.size(); ++i) {
    char c = head[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return std::nullopt;
    } else if (c == '"') {
      size_t end = i + 1;
      while (end < head.size() && head[end] != '"') end += head[end] == '\\' ? 2 : 1;
      if (end >= head.size()) return std::nullopt;
      std::string_view key = head.substr(i + 1, end - i - 1);
      i = end;
      if (depth != 1 || key != "rank"sv) continue;
      size_t v = head.find_first_not_of(" \t\r\n", end + 1);
      if (v == std::string_view::npos || head[v] != ':') continue;
      v = head.find_first_not_of(" \t\r\n", v + 1);
      size_t digits = v;
      while (digits < head.size() && digits - v < 7 && std::isdigit(static_cast<unsigned char>(head[digits]))) ++digits;
      if (digits == v || digits - v > 6 || digits >= head.size() || std::isdigit(static_cast<unsigned char>(head[digits])))
        return std::nullopt;
      return static_cast<uint32_t>(std::stoul(std::string(head.substr(v, digits - v))));
    }
  }
  return std::nullopt;
}

std::optional<uint32_t> kineto_file_rank(std::string_view head, const std::string& file_name) {
  std::optional<uint32_t> stated = kineto_rank(head), named = rank_from_file_name(file_name);
  if (stated && named && *stated != *named)
    throw Error(file_name + ": the trace says it is rank " + std::to_string(*stated) + " (distributedInfo) but its name "
                "says rank " + std::to_string(*named) + "; rename the file or fix the trace");
  return stated ? stated : named;
}

namespace {

constexpr int32_t kNone = -1;
constexpr std::string_view kProcessAnnotation = "[pytorch|profiler|execution_trace|process]";
constexpr std::string_view kThreadAnnotation = "[pytorch|profiler|execution_trace|thread]";

// ---------------------------------------------------------------- the Kineto (device) trace

// GpuMemset and MemsetLaunch (the runtime call that enqueued it) are kept for kineto_activity
// only; the linker, like the reference, links kernels and memcpys and leaves memsets out.
enum class OpKind : uint8_t { Other, Cpu, Launch, Gpu, GpuMemset, MemsetLaunch, Annotation };

// Kineto "tid"s are ints, or strings in some vintages; strings get keys of their own.
using TidKey = int64_t;
constexpr TidKey kStringTid = int64_t{1} << 62;

struct KinetoOp {
  Number ts, dur, exclusive;
  TidKey tid = 0;
  int64_t external_id = -1, ev_idx = -1, correlation = -1, rf_id = 0;
  bool has_rf = false;
  OpKind kind = OpKind::Other;
  StrId name = 0, cat = 0;
  // ph, args.stream and args["Process Group Name"] rendered as JSON and interned, as id + 1;
  // 0 = absent (null).
  uint32_t ph = 0, stream = 0, pg_name = 0;
  int32_t host = kNone;            // host node linked to this op so far
  int32_t other_thread = kNone;    // latest CPU op of another thread before this op's group
};

struct ThreadSpan {
  Number start, end;
  uint64_t first_order = 0;  // file position of the event that set `start` (dict order)
};

// CUDA/HIP calls that make a CPU thread (or a stream) wait for GPU work: the sync dependencies.
enum class SyncKind : uint8_t { Device, Stream, Event, StreamWait };

struct SyncCall {
  SyncKind kind;
  TidKey tid;
  Number ts, end;
  int64_t correlation;
};

// What a newer Kineto's cuda_sync event adds to its runtime call (joined by correlation).
struct SyncDetail {
  int64_t stream = -1;              // the stream synchronised, or the one that waits (Stream Wait Event)
  int64_t wait_stream = -1;         // Event Sync / Stream Wait Event: the stream the event was recorded on
  int64_t record_correlation = -1;  // ... and the cudaEventRecord call that recorded it
};

struct Device {
  std::string name;
  StringPool strings;
  std::vector<KinetoOp> ops;             // Cpu, Launch and Gpu events, sorted by ts (stable)
  std::vector<int32_t> cpu;              // Cpu ops in ts order
  std::vector<int32_t> gpu;              // Gpu ops in ts order
  std::unordered_map<int64_t, int32_t> launch_by_correlation;
  std::unordered_map<int64_t, int32_t> cpu_by_rf;  // the reference's rf map: last op wins
  std::vector<TidKey> cpu_tids;                    // in order of first appearance
  std::unordered_map<TidKey, std::vector<int32_t>> cpu_by_tid;
  // Per thread, parallel to cpu_by_tid: the position of the nearest earlier op that ends no
  // sooner than this one (-1: none), so innermost_cpu_op's walk back skips, in one jump, the ops
  // that end before the one it leaves (a monotonic stack; the walk was linear, a third of a
  // link's time on a 24k-event trace).
  std::unordered_map<TidKey, std::vector<int32_t>> ends_no_sooner_before;
  std::vector<int32_t> candidates;  // Cpu ops + synthetic annotations, ts order (find_closest_op)
  struct Step {
    StrId name;
    Number begin, end;
    TidKey tid = 0;
  };
  std::vector<Step> profiler_steps;  // ProfilerStep#N annotations
  bool any_rf = false;
  uint64_t duplicate_correlations = 0;
  std::vector<SyncCall> sync_calls;
  // Every CUDA/HIP runtime and driver call (launches and syncs too): what a host stall's thread
  // was doing (host_stalls.h).
  struct RuntimeCall {
    TidKey tid;
    Number ts, end;
    StrId name;
  };
  std::vector<RuntimeCall> runtime_calls;
  std::unordered_map<int64_t, SyncDetail> sync_detail;  // by correlation
  std::unordered_map<int64_t, Number> event_records;    // cudaEventRecord ts by correlation
  // Who recorded it: the rank its distributedInfo states, the process ids of its CPU ops.
  std::optional<uint32_t> stated_rank;
  std::vector<int64_t> cpu_pids;
  KinetoCategories* categories = nullptr;               // when set: events counted per category
};

std::optional<SyncKind> sync_kind(std::string_view runtime_name) {
  for (std::string_view prefix : {"cuda", "hip", "cu"}) {
    if (runtime_name.rfind(prefix, 0) != 0) continue;
    std::string_view rest = runtime_name.substr(prefix.size());
    if (rest == "DeviceSynchronize"sv || rest == "CtxSynchronize"sv || rest == "ThreadSynchronize"sv) return SyncKind::Device;
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
        "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpy",
        "cudaMemcpyAsync", "cudaMemcpyFromSymbol", "cudaMemcpyToSymbol", "cudaLaunchCooperativeKernel",
        "hipLaunchKernel", "hipExtLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel",
        "hipMemcpyWithStream", "hipMemcpyAsync"};
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

// Kineto before PyTorch 1.9 used other category names for the same events.
std::string_view modern_category(std::string_view cat) {
  if (cat == "Operator"sv) return "cpu_op";
  if (cat == "Runtime"sv) return "cuda_runtime";
  if (cat == "Kernel"sv) return "kernel";
  if (cat == "Memcpy"sv) return "gpu_memcpy";
  if (cat == "Memset"sv) return "gpu_memset";
  return cat;
}

// Python's int(x) of an args value (ints, floats, numeric strings); nullopt otherwise.
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
    default:
      p.skip();
      return std::nullopt;
  }
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
    case JsonPull::Kind::Bool:
      v = p.read_bool() ? "true" : "false";
      break;
    default:
      p.skip();
      return 0;
  }
  return d.strings.intern(v) + 1;
}

// An interned args.stream value as a number; -1 if it is not an integer.
int64_t parse_stream(const Device& d, uint32_t stream) {
  if (stream == 0) return -1;
  std::string_view text = d.strings.view(stream - 1);
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() ? v : -1;
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

void load_device(ByteSource& in, Device& d, Progress* progress) {
  d.name = in.name();
  JsonPull p(in);
  // Keys are views into the parser's window, valid until its next call: each is compared before
  // anything else is read.
  std::string_view key;
  std::string cat, name, scratch;
  std::vector<KinetoOp> kept;
  std::vector<uint64_t> kept_order;
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
        if (p.peek() == JsonPull::Kind::String) p.read_string(cat);
        else p.skip();
      } else if (is(key, "name")) {
        if (p.peek() == JsonPull::Kind::String) p.read_string(name);
        else p.skip();
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
          if (is(key, "External id")) op.external_id = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "Ev Idx")) op.ev_idx = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "correlation")) op.correlation = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "Record function id")) {
            std::optional<int64_t> v = read_int_like(p, scratch);
            op.has_rf = v.has_value();
            op.rf_id = v.value_or(0);
          } else if (is(key, "stream")) op.stream = read_value(p, d, scratch);
          else if (is(key, "Process Group Name")) op.pg_name = read_value(p, d, scratch);
          else if (is(key, "wait_on_stream")) sync.wait_stream = read_int_like(p, scratch).value_or(-1);
          else if (is(key, "wait_on_cuda_event_record_corr_id"))
            sync.record_correlation = read_int_like(p, scratch).value_or(-1);
          else p.skip();
        }
      } else {
        p.skip();
      }
    }
    if (d.categories && !cat.empty()) {  // a handful of categories: a linear search
      auto it = std::find_if(d.categories->begin(), d.categories->end(), [&](const auto& c) { return c.first == cat; });
      if (it == d.categories->end()) d.categories->emplace_back(cat, 1);
      else ++it->second;
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
      op.exclusive = op.dur;
      kept.push_back(op);
      kept_order.push_back(order);
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
      throw Error(d.name + ": this is a PyTorch host execution trace, not a Kineto trace (are the host and device "
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
  d.ops.reserve(kept.size() + threads.size() + 1);
  for (int32_t i : idx) d.ops.push_back(kept[i]);
  std::vector<KinetoOp>().swap(kept);

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
    auto at = std::find_if(list.begin(), list.end(), [&](int32_t i) {
      return d.ops[i].tid == tid && !pyjson::less(d.ops[i].ts, start);
    });
    list.insert(at, a);
  }
  std::stable_sort(list.begin(), list.end(), [&](int32_t a, int32_t b) { return pyjson::less(d.ops[a].ts, d.ops[b].ts); });
  d.candidates = std::move(list);
}

// Exclusive duration of each CPU op: its duration minus the merged spans of the ops it fully
// contains on its thread, with the reference's scan order and Python arithmetic.
void compute_exclusive(Device& d, std::vector<std::string>& warnings) {
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
      op.exclusive = exclusive;
    }
  }
}

// For the first op of each group of a thread (a gap of more than 1 ms after the previous op),
// the latest CPU op of any other thread that started before it; later ops of the group inherit
// it. Ties go to the first thread in order of appearance and the first op at that time.
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

// The CPU op that launched each GPU op: the launch call with the same correlation gives the
// thread and time; then the latest CPU op of that thread before the call, preferring one with
// the GPU op's External id (NCCL kernels skip "nccl:coalesced" wrappers). Without a shared
// External id the reference falls back to the latest op started before the call, often a
// sibling that already ended; `innermost` takes the innermost op still running at the call
// instead (Kineto before PyTorch 2.0 gave kernels their correlation as External id).
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

// ---------------------------------------------------------------- sync dependencies

// For every synchronising call: the GPU nodes it waits for, and the node that waits. The waiter
// is the first host-linked CPU op its thread starts after the call returns, or for
// cudaStreamWaitEvent the next GPU op launched on the waiting stream. What a stream has to finish
// is its last GPU op launched before the call (before the event's record call for event waits):
// a stream runs in launch order, so that op ends after all earlier ones.
struct SyncDeps {
  // Waiting node id → node ids: GPU ops, or another thread's last op (add_cross_thread_blocked).
  std::unordered_map<int64_t, std::vector<int64_t>> of;
  // Host node id → µs of its own time spent inside calls that block the CPU thread until GPU
  // work finishes (device/stream/event syncs, copies to pageable host memory).
  std::unordered_map<int64_t, double> blocked;
  // Host node id → when it was blocked: [begin, end) in µs on the profiler's clock (sorted when
  // written).
  std::unordered_map<int64_t, std::vector<std::pair<double, double>>> blocked_spans;
  // The same spans by thread, for finding host stalls (time blocked so is never one).
  std::vector<std::pair<TidKey, std::pair<double, double>>> thread_blocked;
  uint64_t calls = 0, resolved = 0, edges = 0;
  uint64_t unidentified = 0;  // event waits whose event is unknown (no cuda_sync event)
  uint64_t inferred = 0;      // stream waits without one, resolved by the launch-order rule
  uint64_t no_waiter = 0;     // no linked op after the call on its thread (or stream)
  uint64_t thread_waits = 0;  // dependencies on the end of work handed to another thread

  // `waiter` waits for node `on`: a sync_dep entry, once. False when it was there already.
  bool add(int64_t waiter, int64_t on) {
    std::vector<int64_t>& list = of[waiter];
    if (std::find(list.begin(), list.end(), on) != list.end()) return false;
    list.push_back(on);
    return true;
  }
};

// Thread `tid`'s CPU ops (by start) and where those starting before `t` end (`or_at`: also
// those starting at `t`); empty for an unknown thread.
struct ThreadOps {
  std::span<const int32_t> ops;
  size_t split = 0;
};
ThreadOps thread_ops_before(const Device& d, TidKey tid, Number t, bool or_at = false) {
  auto it = d.cpu_by_tid.find(tid);
  if (it == d.cpu_by_tid.end()) return {};
  const std::vector<int32_t>& ops = it->second;
  auto at = std::partition_point(ops.begin(), ops.end(), [&](int32_t k) {
    return or_at ? !pyjson::less(t, d.ops[k].ts) : pyjson::less(d.ops[k].ts, t);
  });
  return {ops, static_cast<size_t>(at - ops.begin())};
}

// The innermost CPU op of thread `tid` whose span holds [ts, end), or kNone.
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

// The first host-linked CPU op thread `tid` starts at or after `end` (a Kineto index), or kNone.
int32_t first_linked_cpu_op_after(const Device& d, TidKey tid, Number end) {
  const ThreadOps t = thread_ops_before(d, tid, end);
  for (size_t i = t.split; i < t.ops.size(); ++i)
    if (d.ops[t.ops[i]].host != kNone) return t.ops[i];
  return kNone;
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

// Time a thread spends blocked while another thread runs work it handed over (autograd: the
// main thread waits inside one op while the engine's thread runs the backward pass). `deps`
// pairs each op that has an inter-thread dependency with the op it depends on (Kineto
// indices); its span is waiting time of the innermost op of the depended-on thread around it.
// Per waiting op: from the first such span's start to the last one's end, at most its
// exclusive time.
// The wait ends when the handed-over work does, so the waiting thread's next op depends on the
// last op each working thread finished before the wait ended (a `sync_dep`). Without it the
// replay lets the main thread run on after the backward pass's first ops: the reference's
// inter_thread_dep points at the other thread's op before a group's start, not at its end.
template <class HostOut>
void add_cross_thread_blocked(const Device& d, const std::vector<std::pair<int32_t, int32_t>>& deps, HostOut host_out,
                              SyncDeps& r) {
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
    if (const double blocked = std::min(end - begin, d.ops[waiting].exclusive.as_double()); blocked > 0) {
      const int64_t host = host_out(d.ops[waiting].host);
      r.blocked[host] += blocked;
      r.blocked_spans[host].emplace_back(begin, end);
      r.thread_blocked.push_back({d.ops[waiting].tid, {begin, end}});
    }
  }
}

// `gpu_out[op]`: output id of a GPU op's node (-1: not written); `host_out(i)`: host node i's.
template <class HostOut>
SyncDeps compute_sync_deps(const Device& d, const std::vector<int64_t>& gpu_out, HostOut host_out) {
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
    auto it = std::partition_point(list.begin(), list.end(),
                                   [&](const Launched& x) { return pyjson::less(x.ts, cutoff); });
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
    add_blocked(launch.tid, launch.ts, end, launch.dur.as_double() - d.ops[g].dur.as_double(), end.as_double());  // the call's last µs
    if (gpu_out[g] < 0) continue;
    if (const int64_t waiter = cpu_after(launch.tid, end); waiter >= 0) r.add(waiter, gpu_out[g]);
  }
  return r;
}

// Each waiter's dependencies in ascending order, and their count.
void sort_sync_deps(SyncDeps& r) {
  r.edges = 0;
  for (auto& entry : r.of) {
    std::sort(entry.second.begin(), entry.second.end());
    r.edges += entry.second.size();
  }
}

// The host stalls of a Kineto trace (host_stalls.h), whose sync dependencies `sync` found when
// its threads were blocked. HostStall::op indexes d.cpu, HostStall::gpu d.gpu.
std::vector<HostStall> find_stalls(const Device& d, const SyncDeps& sync) {
  StallInputs in;
  auto us = [](Number n) { return n.as_double(); };
  for (int32_t k : d.cpu) {
    const KinetoOp& op = d.ops[k];
    in.cpu.push_back({us(op.ts), us(pyjson::add(op.ts, op.dur)), op.tid, d.strings.view(op.name)});
  }
  for (int32_t g : d.gpu) {
    const KinetoOp& op = d.ops[g];
    auto l = d.launch_by_correlation.find(op.correlation);
    in.gpu.push_back({us(op.ts), us(pyjson::add(op.ts, op.dur)), l == d.launch_by_correlation.end() ? NAN : us(d.ops[l->second].ts)});
  }
  for (const Device::RuntimeCall& c : d.runtime_calls) in.calls.push_back({us(c.ts), us(c.end), c.tid, d.strings.view(c.name)});
  in.blocked = sync.thread_blocked;
  return find_host_stalls(in);
}

// ---------------------------------------------------------------- the host execution trace

struct HostNode {
  int64_t id = 0;
  int64_t parent = 0;  // ctrl_deps (or 1.0.1's parent)
  int64_t rf_id = 0, tid = 0;
  bool has_parent = false, has_ctrl_deps = false, parent_is_null = false, has_rf = false;
  StrId name = 0;
  uint64_t begin = 0, end = 0;  // the node's JSON text
};

// The nodes the reference never links: those not reachable from node 1 through parents that
// are in the trace (it attaches a node to its parent only then, and starts from node 1).
LinkReport::OutsideRoot count_outside_root(const std::vector<HostNode>& nodes,
                                           const std::unordered_map<int64_t, int32_t>& index_of_id) {
  LinkReport::OutsideRoot out;
  std::vector<int8_t> under(nodes.size(), -1);  // -1 unknown, 0 no, 1 yes
  std::vector<int32_t> chain;
  for (size_t start = 0; start < nodes.size(); ++start) {
    // Up the parents until a node whose answer is known, node 1 or a missing parent; then the
    // whole chain walked has that answer.
    chain.clear();
    int32_t i = static_cast<int32_t>(start);
    int8_t answer = 0;
    while (true) {
      if (under[i] >= 0) {
        answer = under[i];
        break;
      }
      if (nodes[i].id == 1) {
        answer = under[i] = 1;
        break;
      }
      under[i] = 0;  // provisional, so that a parent cycle ends the walk (it never reaches node 1)
      chain.push_back(i);
      auto parent = nodes[i].has_parent ? index_of_id.find(nodes[i].parent) : index_of_id.end();
      if (parent == index_of_id.end()) break;
      i = parent->second;
    }
    for (int32_t c : chain) under[c] = answer;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const HostNode& n = nodes[i];
    if (under[i] == 1 || n.id == 1) continue;
    ++out.nodes;
    if (n.has_parent && !index_of_id.count(n.parent)) ++out.missing_parent;
  }
  return out;
}

// The whole (decompressed) input: a regular file (or bytes in memory) shown in place, with no
// copy and no fresh pages; anything else read into one buffer without zero-filling it first.
struct WholeInput {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<ByteSource> source;  // kept open while its bytes are mapped
  std::unique_ptr<char, Free> bytes;
  std::string_view text;

  explicit WholeInput(std::unique_ptr<ByteSource> in) {
    const uint64_t left = in->compressed() ? 0 : in->raw_size() - in->raw_position();
    if (left > 0 && in->map(0, left, text) && text.size() == left) {
      source = std::move(in);
      return;
    }
    size_t capacity = std::max<size_t>(left + 1, size_t{1} << 20), size = 0;
    for (;;) {
      if (!bytes || size == capacity) {
        if (bytes) capacity *= 2;
        char* grown = allocate_input_buffer(capacity);
        if (size) std::memcpy(grown, bytes.get(), size);
        bytes.reset(grown);
      }
      size_t got = in->read(reinterpret_cast<uint8_t*>(bytes.get() + size), capacity - size);
      if (got == 0) break;
      size += got;
    }
    text = {bytes.get(), size};
    source = std::move(in);
  }
  std::string_view view() const { return text; }
};

struct Host {
  std::string name;
  std::unique_ptr<WholeInput> input;
  std::string_view text;  // the whole (decompressed) host ET
  StringPool strings;
  std::vector<HostNode> nodes;
  std::string schema;
  std::optional<int64_t> pid;  // the process that recorded it
  // Where each top-level "nodes" array lies in `text`, [begin, end): the writer need not skip
  // them again to find the members after them (a whole pass over the file).
  std::vector<std::pair<size_t, size_t>> node_arrays;
};

void load_host(std::unique_ptr<ByteSource> in, Host& h, Progress* progress) {
  h.name = in->name();
  h.input = std::make_unique<WholeInput>(std::move(in));
  h.text = h.input->view();
  JsonPull p(*h.input->source, h.text);
  if (p.peek() != JsonPull::Kind::Object) throw Error(h.name + ": not a PyTorch execution trace (expected a JSON object)");
  // Keys are views, valid until the parser's next call: each is compared before anything else is
  // read.
  std::string_view key;
  std::string attr_name, scratch;
  bool found = false, trace_events = false;
  p.begin_object();
  while (p.next_key(key)) {
    trace_events |= is(key, "traceEvents");
    if (is(key, "schema")) {
      if (p.peek() == JsonPull::Kind::String) p.read_string(h.schema);
      else p.skip();
    } else if (is(key, "pid")) {
      h.pid = read_int_like(p, scratch);
    } else if (is(key, "nodes")) {
      if (p.peek() != JsonPull::Kind::Array) p.fail("\"nodes\" is not an array");
      found = true;
      const size_t array_begin = p.offset();
      p.begin_array();
      while (p.next_element()) {
        if (p.peek() != JsonPull::Kind::Object) p.fail("a node is not a JSON object");
        HostNode n;
        n.begin = p.offset();
        bool has_id = false;
        p.begin_object();
        while (p.next_key(key)) {
          if (is(key, "id")) {
            if (p.peek() != JsonPull::Kind::Number) p.fail("node \"id\" is not a number");
            n.id = p.read_int64();
            has_id = true;
          } else if (is(key, "name")) {
            if (p.peek() == JsonPull::Kind::String) {
              p.read_string(scratch);
              n.name = h.strings.intern(scratch);
            } else {
              p.skip();
            }
          } else if (is(key, "ctrl_deps") || (is(key, "parent") && !n.has_ctrl_deps)) {
            const bool ctrl = is(key, "ctrl_deps");
            JsonPull::Kind k = p.peek();
            if (k == JsonPull::Kind::Number) {
              n.parent = p.read_int64();
              n.has_parent = true;
              n.parent_is_null = false;
            } else if (k == JsonPull::Kind::Null && ctrl) {
              p.read_null();
              n.parent_is_null = true;
            } else if (ctrl) {
              p.fail("node \"ctrl_deps\" is not a node id");
            } else {
              p.skip();
            }
            n.has_ctrl_deps |= ctrl;
          } else if (is(key, "rf_id") || is(key, "tid")) {
            const bool tid = is(key, "tid");
            if (p.peek() != JsonPull::Kind::Number) {
              p.skip();
            } else if (tid) {
              n.tid = p.read_int64();
            } else {
              n.rf_id = p.read_int64();
              n.has_rf = true;
            }
          } else if (is(key, "attrs")) {
            if (p.peek() != JsonPull::Kind::Array) {
              p.skip();
              continue;
            }
            p.begin_array();
            while (p.next_element()) {
              if (p.peek() != JsonPull::Kind::Object) { p.skip(); continue; }
              p.begin_object();
              attr_name.clear();
              std::optional<int64_t> value;
              while (p.next_key(key)) {
                if (is(key, "name")) {
                  if (p.peek() == JsonPull::Kind::String) p.read_string(attr_name);
                  else p.skip();
                } else if (is(key, "value")) {
                  if (p.peek() == JsonPull::Kind::Number) value = p.read_int64();
                  else p.skip();
                } else {
                  p.skip();
                }
              }
              if (value && attr_name == "rf_id"sv) { n.rf_id = *value; n.has_rf = true; }
              if (value && attr_name == "tid"sv) n.tid = *value;
            }
          } else {
            p.skip();
          }
        }
        n.end = p.offset();
        if (!has_id) p.fail("a node has no \"id\"");
        h.nodes.push_back(n);
        if ((h.nodes.size() & 0xfff) == 0) report_progress(progress, "reading host trace", n.end, h.text.size());
      }
      h.node_arrays.push_back({array_begin, p.offset()});
    } else {
      p.skip();
    }
  }
  if (!p.at_end()) p.fail("unexpected data after the JSON document");
  if (!found && trace_events)
    throw Error(h.name + ": this is a Kineto (profiler) trace, not a host execution trace (are the host and device "
                "traces swapped?)");
  if (!found) throw Error(h.name + ": not a PyTorch execution trace (no \"nodes\" array)");
}

bool is_et_annotation(std::string_view name) { return name.rfind("[pytorch|profiler|execution_", 0) == 0; }

// ---------------------------------------------------------------- pairing host ↔ Kineto ops

// host node index → Kineto op index (kNone when unlinked).
using Pairing = std::vector<int32_t>;

Pairing pair_by_rf(const Host& h, const Device& d) {
  Pairing pair(h.nodes.size(), kNone);
  for (size_t i = 0; i < h.nodes.size(); ++i) {
    if (!h.nodes[i].has_rf) continue;
    auto it = d.cpu_by_rf.find(h.nodes[i].rf_id);
    if (it != d.cpu_by_rf.end()) pair[i] = it->second;
  }
  return pair;
}

bool same_name(const Host& h, const HostNode& n, const Device& d, const KinetoOp& k) {
  return h.strings.view(n.name) == d.strings.view(k.name);
}

// Kineto id (External id or Ev Idx) = host rf_id + offset for one offset, checked by names.
// Returns the pairing for the best offset and its number of agreeing names.
Pairing pair_by_offset(const Host& h, const Device& d, const std::vector<int32_t>& window, bool ev_idx,
                       int64_t* offset, uint64_t* agreeing) {
  auto id_of = [&](const KinetoOp& k) { return ev_idx ? k.ev_idx : k.external_id; };
  std::unordered_map<int64_t, int32_t> host_by_rf;
  std::unordered_map<std::string_view, std::vector<int64_t>> rfs_by_name;
  for (size_t i = 0; i < h.nodes.size(); ++i) {
    const HostNode& n = h.nodes[i];
    if (!n.has_rf || is_et_annotation(h.strings.view(n.name))) continue;
    host_by_rf.emplace(n.rf_id, static_cast<int32_t>(i));
    auto& v = rfs_by_name[h.strings.view(n.name)];
    if (v.size() < 8) v.push_back(n.rf_id);
  }
  // Candidate offsets from ops whose name is rare on the host side, then an exact count.
  std::unordered_map<int64_t, uint32_t> votes;
  for (size_t s = 0; s < window.size() && s < 4096; ++s) {
    const KinetoOp& k = d.ops[window[s]];
    if (id_of(k) < 0) continue;
    auto it = rfs_by_name.find(d.strings.view(k.name));
    if (it == rfs_by_name.end()) continue;
    for (int64_t rf : it->second) ++votes[id_of(k) - rf];
  }
  std::vector<std::pair<uint32_t, int64_t>> ranked;
  for (const auto& [off, n] : votes) ranked.emplace_back(n, off);
  std::sort(ranked.rbegin(), ranked.rend());
  if (ranked.size() > 16) ranked.resize(16);

  Pairing best(h.nodes.size(), kNone);
  *agreeing = 0;
  for (const auto& [votes_n, off] : ranked) {
    Pairing pair(h.nodes.size(), kNone);
    uint64_t n = 0;
    for (int32_t ki : window) {
      const KinetoOp& k = d.ops[ki];
      if (id_of(k) < 0) continue;
      auto it = host_by_rf.find(id_of(k) - off);
      if (it == host_by_rf.end() || !same_name(h, h.nodes[it->second], d, k)) continue;
      if (pair[it->second] == kNone) ++n;
      pair[it->second] = ki;
    }
    if (n > *agreeing || (n == *agreeing && n > 0 && std::abs(off) < std::abs(*offset))) {
      *agreeing = n;
      *offset = off;
      best = std::move(pair);
    }
  }
  return best;
}

// Per thread, host ops in id order against Kineto CPU ops in time order, aligned by name with a
// bounded look-ahead; Kineto threads are assigned to host threads by best agreement. Where the
// Kineto trace holds several iterations, the earliest best-aligned start is taken.
Pairing pair_in_order(const Host& h, const std::vector<int32_t>& by_id, const Device& d,
                      const std::vector<int32_t>& window, uint64_t* matched, Number* window_start) {
  constexpr size_t kLookAhead = 48;
  std::vector<int64_t> host_tids;
  std::unordered_map<int64_t, std::vector<int32_t>> host_by_tid;
  for (int32_t i : by_id) {
    const HostNode& n = h.nodes[i];
    if (is_et_annotation(h.strings.view(n.name))) continue;
    auto [it, fresh] = host_by_tid.try_emplace(n.tid);
    if (fresh) host_tids.push_back(n.tid);
    it->second.push_back(i);
  }
  std::sort(host_tids.begin(), host_tids.end(),
            [&](int64_t a, int64_t b) { return host_by_tid[a].size() > host_by_tid[b].size(); });
  std::vector<TidKey> kineto_tids;
  std::unordered_map<TidKey, std::vector<int32_t>> kineto_by_tid;
  for (int32_t k : window) {
    auto [it, fresh] = kineto_by_tid.try_emplace(d.ops[k].tid);
    if (fresh) kineto_tids.push_back(d.ops[k].tid);
    it->second.push_back(k);
  }

  // Host names as Kineto string ids (names the device trace never has cannot match anyway).
  auto kname = [&](int32_t host_index) -> int64_t {
    StrId id;
    return d.strings.find(h.strings.view(h.nodes[host_index].name), &id) ? id : -1;
  };
  // Greedy alignment from Kineto position `start`; fills `out` when non-null.
  auto align = [&](const std::vector<int32_t>& hs, const std::vector<int64_t>& hn, const std::vector<int32_t>& ks,
                   size_t start, Pairing* out) {
    uint64_t n = 0;
    size_t i = 0, j = start;
    while (i < hs.size() && j < ks.size()) {
      if (hn[i] == d.ops[ks[j]].name) {
        if (out) (*out)[hs[i]] = ks[j];
        ++n, ++i, ++j;
        continue;
      }
      size_t skip_k = 0, skip_h = 0;
      for (size_t s = 1; s <= kLookAhead && !skip_k && j + s < ks.size(); ++s)
        if (d.ops[ks[j + s]].name == hn[i]) skip_k = s;
      for (size_t s = 1; s <= kLookAhead && !skip_h && i + s < hs.size(); ++s)
        if (hn[i + s] == d.ops[ks[j]].name) skip_h = s;
      if (skip_k && (!skip_h || skip_k <= skip_h)) j += skip_k;
      else if (skip_h) i += skip_h;
      else ++i, ++j;
    }
    return n;
  };

  Pairing pair(h.nodes.size(), kNone);
  *matched = 0;
  std::vector<bool> used(kineto_tids.size(), false);
  bool first_thread = true;
  for (int64_t ht : host_tids) {
    const std::vector<int32_t>& hs = host_by_tid[ht];
    std::vector<int64_t> hn;
    for (int32_t i : hs) hn.push_back(kname(i));
    uint64_t best = 0;
    size_t best_thread = 0, best_start = 0;
    for (size_t t = 0; t < kineto_tids.size(); ++t) {
      if (used[t]) continue;
      const std::vector<int32_t>& ks = kineto_by_tid[kineto_tids[t]];
      size_t tried = 0;
      for (size_t s = 0; s < ks.size() && tried < 256; ++s) {
        if (d.ops[ks[s]].name != hn[0]) continue;
        ++tried;
        uint64_t n = align(hs, hn, ks, s, nullptr);
        if (n > best) best = n, best_thread = t, best_start = s;
        if (n == hs.size()) break;
      }
    }
    if (best == 0) continue;
    used[best_thread] = true;
    const std::vector<int32_t>& ks = kineto_by_tid[kineto_tids[best_thread]];
    align(hs, hn, ks, best_start, &pair);
    if (first_thread) *window_start = d.ops[ks[best_start]].ts;
    first_thread = false;
    *matched += best;
  }
  return pair;
}

// ---------------------------------------------------------------- output

struct Member {
  std::string_view key;  // raw key token, quotes included
  size_t value = 0;      // offset of the value in the host text
  size_t rendered_begin = 0, rendered_end = 0;  // its rendered text, where object_members rendered it
};

// Top-level members of the JSON object at `p`; a repeated key keeps its first position and its
// last value, as a Python dict does. With `rendered`, each value is also rendered there (in the
// reference's layout at `depth`) as it is walked: one pass over a node's text instead of a skip
// and a render, and a host node's GPU copies reuse the text.
// `walked` lists values whose extent [begin, end) is known already (they are not skipped again).
void object_members(std::string_view t, size_t p, std::vector<Member>& out, pyjson::OutBuffer* rendered = nullptr,
                    int depth = 0, std::span<const std::pair<size_t, size_t>> walked = {}) {
  out.clear();
  if (rendered) rendered->clear();
  p = pyjson::skip_space(t, p) + 1;
  p = pyjson::skip_space(t, p);
  if (t[p] == '}') return;
  for (;;) {
    size_t key_end = pyjson::skip_value(t, p);
    std::string_view key = t.substr(p, key_end - p);
    Member m{key, pyjson::skip_space(t, pyjson::skip_space(t, key_end) + 1)};
    size_t value_end;
    if (rendered) {
      m.rendered_begin = rendered->size();
      value_end = pyjson::render_value(t, m.value, depth, *rendered);
      m.rendered_end = rendered->size();
    } else {
      auto known = std::find_if(walked.begin(), walked.end(), [&](const auto& w) { return w.first == m.value; });
      value_end = known != walked.end() ? known->second : pyjson::skip_value(t, m.value);
    }
    auto same = std::find_if(out.begin(), out.end(), [&](const Member& x) { return x.key == key; });
    if (same != out.end()) *same = m;
    else out.push_back(m);
    p = pyjson::skip_space(t, value_end);
    if (t[p] != ',') return;
    p = pyjson::skip_space(t, p + 1);
  }
}

// A computed member: replaces the member of the same key in place, or is appended.
struct Override {
  std::string_view key;  // with quotes
  std::string value;
};

class NodeWriter {
 public:
  explicit NodeWriter(ByteSink& sink) : sink_(sink) {}

  // `members` as object_members gave them with their values rendered into `rendered`.
  void write_node(const std::vector<Member>& members, const pyjson::OutBuffer& rendered,
                  const std::vector<Override>& overrides) {
    out_ += first_ ? "\n        {" : ",\n        {";
    first_ = false;
    bool any = false;
    used_.assign(overrides.size(), false);
    for (const Member& m : members) {
      out_ += any ? ",\n            " : "\n            ";
      any = true;
      pyjson::render_string(m.key, 0, out_);
      out_ += ": ";
      auto o = std::find_if(overrides.begin(), overrides.end(), [&](const Override& x) { return x.key == m.key; });
      if (o != overrides.end()) {
        out_ += o->value;
        used_[o - overrides.begin()] = true;
      } else {
        out_ += rendered.view().substr(m.rendered_begin, m.rendered_end - m.rendered_begin);
      }
    }
    for (size_t i = 0; i < overrides.size(); ++i) {
      if (used_[i]) continue;
      out_ += any ? ",\n            " : "\n            ";
      any = true;
      out_ += overrides[i].key;
      out_ += ": ";
      out_ += overrides[i].value;
    }
    out_ += any ? "\n        }" : "}";
    if (out_.size() > (1u << 20)) flush();
  }
  pyjson::OutBuffer& buffer() { return out_; }
  void flush() {
    sink_.write(out_.view());
    out_.clear();
  }
  bool wrote_any() const { return !first_; }

 private:
  ByteSink& sink_;
  pyjson::OutBuffer out_;
  std::vector<bool> used_;  // per override: replaced a member in place
  bool first_ = true;
};

// Whether the host ET and the Kineto trace are one rank's recording, from what they state: ranks
// (the Kineto trace's distributedInfo, the numbers in both files' names, the caller's) and
// process ids (the host ET's "pid", the Kineto trace's CPU ops'). Any disagreement is an error
// naming both files and values, or with `force` a warning; report.pairing says what agreed.
void check_pairing(const Host& h, const Device& d, const LinkOptions& o, LinkReport& report) {
  struct Claim {
    uint32_t rank;
    std::string source;
    int side;  // 0 host, 1 Kineto, 2 the caller
  };
  std::vector<Claim> claims;
  if (std::optional<uint32_t> r = rank_from_file_name(h.name)) claims.push_back({*r, "the host ET's file name", 0});
  if (d.stated_rank) claims.push_back({*d.stated_rank, "the Kineto trace's distributedInfo", 1});
  if (std::optional<uint32_t> r = rank_from_file_name(d.name))
    claims.push_back({*r, "the Kineto trace's file name", 1});
  if (o.rank) claims.push_back({*o.rank, o.rank_source.empty() ? "the rank given" : o.rank_source, 2});
  // "rank 3 by A and B; rank 5 by C": the claims grouped by the rank they state.
  std::map<uint32_t, std::vector<std::string>> by_rank;
  for (const Claim& c : claims) by_rank[c.rank].push_back(c.source);
  std::string ranks;
  for (const auto& [rank, sources] : by_rank) {
    ranks += (ranks.empty() ? "rank " : "; rank ") + std::to_string(rank) + " by ";
    for (size_t i = 0; i < sources.size(); ++i)
      ranks += (i == 0 ? "" : i + 1 == sources.size() ? " and " : ", ") + sources[i];
  }
  std::string kineto_pids;
  for (int64_t pid : d.cpu_pids) kineto_pids += (kineto_pids.empty() ? "" : ", ") + std::to_string(pid);
  const bool both_pids = h.pid && !d.cpu_pids.empty();
  const bool pids_differ = both_pids && std::find(d.cpu_pids.begin(), d.cpu_pids.end(), *h.pid) == d.cpu_pids.end();
  if (by_rank.size() > 1 || pids_differ) {
    std::string what = by_rank.size() > 1 ? ranks : "";
    if (pids_differ)
      what += (what.empty() ? "" : "; ") + std::string("process ") + std::to_string(*h.pid) +
              " by the host ET's \"pid\", " + kineto_pids + " by the Kineto trace's CPU ops";
    const std::string message = h.name + " and " + d.name + " are not one rank's recording: " + what;
    if (!o.force)
      throw Error(message + ". Pair each host ET with the Kineto trace recorded with it (--force links them anyway)");
    report.warnings.push_back(message + "; linked anyway (--force)");
    report.pairing = "contradicted (" + what + "), linked anyway (--force)";
    return;
  }
  const bool host_rank = std::any_of(claims.begin(), claims.end(), [](const Claim& c) { return c.side == 0; });
  const bool device_rank = std::any_of(claims.begin(), claims.end(), [](const Claim& c) { return c.side == 1; });
  report.pairing_verified = (host_rank && device_rank) || both_pids;
  std::string process;
  if (both_pids) process = std::to_string(*h.pid) + " in both";
  else if (h.pid) process = std::to_string(*h.pid) + " by the host ET only";
  else if (!d.cpu_pids.empty()) process = kineto_pids + " by the Kineto trace only";
  const std::string said = ranks + (process.empty() ? "" : (ranks.empty() ? "process " : "; process ") + process);
  if (report.pairing_verified) report.pairing = said;
  else if (said.empty()) report.pairing = "unverified: neither trace states a rank or a process id";
  else report.pairing = "unverified: " + said + ", which the other trace does not confirm";
}

}  // namespace

LinkReport link_traces(std::unique_ptr<ByteSource> host_in, std::unique_ptr<ByteSource> device_in, ByteSink& out,
                       const LinkOptions& options) {
  LinkReport report;
  Host h;
  load_host(std::move(host_in), h, options.progress);
  Device d;
  load_device(*device_in, d, options.progress);
  check_pairing(h, d, options, report);
  report.host_nodes = h.nodes.size();
  report.kineto_cpu_ops = d.cpu.size();
  report.gpu_ops = d.gpu.size();
  if (d.duplicate_correlations)
    report.warnings.push_back(d.name + ": " + std::to_string(d.duplicate_correlations) +
                              " launch calls repeat a correlation id; the first of each is used");

  // Host nodes in id order (the reference processes them so); ids must be unique.
  std::vector<int32_t> by_id(h.nodes.size());
  std::iota(by_id.begin(), by_id.end(), 0);
  std::stable_sort(by_id.begin(), by_id.end(), [&](int32_t a, int32_t b) { return h.nodes[a].id < h.nodes[b].id; });
  std::unordered_map<int64_t, int32_t> index_of_id;
  index_of_id.reserve(h.nodes.size());
  for (int32_t i : by_id)
    if (!index_of_id.emplace(h.nodes[i].id, i).second)
      throw Error(h.name + ": node id " + std::to_string(h.nodes[i].id) + " appears twice");
  report.outside_root = count_outside_root(h.nodes, index_of_id);
  if (report.outside_root.nodes)
    report.warnings.push_back(h.name + ": " + std::to_string(report.outside_root.nodes) + " of " +
                              std::to_string(h.nodes.size()) + " nodes are not under node 1, the process root (" +
                              std::to_string(report.outside_root.missing_parent) +
                              " name a parent that is not in the trace); the reference links only the tree under "
                              "node 1 and leaves them out of its output, chakra link and chakra_trace_link link them too");

  compute_exclusive(d, report.warnings);
  compute_inter_thread(d);
  report_progress(options.progress, "linking", 0, 0);

  // The Kineto ops a fallback may pair with: the host ET's profiler step if the device trace
  // has the same one, else everything.
  std::vector<int32_t> window = d.cpu;
  for (const HostNode& n : h.nodes) {
    std::string_view name = h.strings.view(n.name);
    if (name.rfind("ProfilerStep#", 0) != 0) continue;
    for (const Device::Step& step : d.profiler_steps) {
      if (d.strings.view(step.name) != name) continue;
      std::vector<int32_t> inside;
      for (int32_t k : d.cpu)
        if (!pyjson::less(d.ops[k].ts, step.begin) && !pyjson::less(step.end, d.ops[k].ts)) inside.push_back(k);
      window = std::move(inside);
      report.window = std::string(name);
    }
    break;
  }

  // Choose how to pair host ops with Kineto ops.
  Pairing pair;
  LinkMethod method = options.method;
  uint64_t host_ops = 0;
  for (const HostNode& n : h.nodes) host_ops += !is_et_annotation(h.strings.view(n.name));
  auto good_enough = [&](uint64_t agreeing) {
    return agreeing > 0 && agreeing * 10 >= std::min<uint64_t>(host_ops, window.size()) * 9;
  };
  if (method == LinkMethod::RecordFunctionId && !d.any_rf)
    throw Error(d.name + ": --method rf-id needs Kineto CPU ops with a \"Record function id\", and this trace has "
                "none (older PyTorch profilers do not write it); --method auto pairs by External id instead");
  if (method == LinkMethod::Auto || method == LinkMethod::RecordFunctionId) {
    if (d.any_rf || method == LinkMethod::RecordFunctionId) {
      pair = pair_by_rf(h, d);
      method = LinkMethod::RecordFunctionId;
    }
  }
  for (LinkMethod m : {LinkMethod::ExternalId, LinkMethod::EvIdx}) {
    if (method != LinkMethod::Auto && method != m) continue;
    uint64_t agreeing = 0;
    int64_t offset = 0;
    Pairing p = pair_by_offset(h, d, window, m == LinkMethod::EvIdx, &offset, &agreeing);
    if (method == m || good_enough(agreeing)) {
      pair = std::move(p);
      method = m;
      report.id_offset = offset;
      break;
    }
  }
  if (method == LinkMethod::Auto || method == LinkMethod::InOrder) {
    uint64_t matched = 0;
    Number start;
    pair = pair_in_order(h, by_id, d, window, &matched, &start);
    method = LinkMethod::InOrder;
    if (report.window.empty() && matched > 0 && window.size() > matched * 2) {
      std::string s;
      pyjson::append_number(s, start);
      report.window = "from ts " + s;
      report.warnings.push_back(d.name + ": the device trace holds more CPU ops (" + std::to_string(window.size()) +
                                ") than the host trace (" + std::to_string(host_ops) +
                                "); the earliest window that matches the host ops by name is used");
    }
  }
  report.method = method;
  const bool by_rf = method == LinkMethod::RecordFunctionId;
  if (by_rf) report.window.clear();  // rf ids are unique in a process: no window is needed
  uint64_t orphan_gpu = 0;
  std::vector<int32_t> launcher = find_launchers(d, /*innermost=*/!by_rf, &orphan_gpu);

  // GPU ops grouped under their launcher: by the launcher's External id (the reference's key,
  // under which ops sharing an External id share their kernels) or by the launcher itself.
  auto group_key = [&](int32_t kineto_op) -> int64_t { return by_rf ? d.ops[kineto_op].external_id : kineto_op; };
  std::unordered_map<int64_t, std::pair<uint32_t, uint32_t>> group;  // key → [begin, end) in grouped
  std::vector<int32_t> grouped;
  {
    std::vector<std::pair<int64_t, int32_t>> keyed;  // (key, position in ts order)
    for (size_t gi = 0; gi < d.gpu.size(); ++gi)
      if (launcher[d.gpu[gi]] != kNone) keyed.emplace_back(group_key(launcher[d.gpu[gi]]), static_cast<int32_t>(gi));
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keyed.size(); ++i) {
      auto& range = group[keyed[i].first];
      if (range.second == 0) range.first = static_cast<uint32_t>(grouped.size());
      grouped.push_back(d.gpu[keyed[i].second]);
      range.second = static_cast<uint32_t>(grouped.size());
    }
  }

  // Link host ops in id order: durations, ts, inter-thread dependency, GPU ops.
  struct Linked {
    int32_t kineto = kNone;
    int32_t dep = kNone;  // host node index of the inter-thread dependency
    uint32_t gpu_begin = 0, gpu_end = 0;
  };
  std::vector<Linked> linked(h.nodes.size());
  std::vector<bool> gpu_used(d.ops.size(), false);
  for (int32_t i : by_id) {
    int32_t k = pair[i];
    if (k == kNone) continue;
    KinetoOp& op = d.ops[k];
    op.host = i;
    Linked& l = linked[i];
    l.kineto = k;
    ++report.host_ops_linked;
    int32_t other = op.other_thread;
    if (other != kNone && by_rf) {  // the reference goes through the rf_id of that op
      const KinetoOp& o = d.ops[other];
      auto it = o.has_rf && o.rf_id != 0 ? d.cpu_by_rf.find(o.rf_id) : d.cpu_by_rf.end();
      other = it == d.cpu_by_rf.end() ? kNone : it->second;
    }
    if (other != kNone) l.dep = d.ops[other].host;
    auto g = group.find(group_key(k));
    if (g != group.end()) {
      l.gpu_begin = g->second.first;
      l.gpu_end = g->second.second;
      report.gpu_nodes += l.gpu_end - l.gpu_begin;
      for (uint32_t x = l.gpu_begin; x < l.gpu_end; ++x) {
        report.gpu_ops_linked += !gpu_used[grouped[x]];
        gpu_used[grouped[x]] = true;
      }
    }
  }
  // Pairs must mostly agree on names, or the two files do not belong together.
  for (size_t i = 0; i < h.nodes.size(); ++i)
    if (pair[i] != kNone && !is_et_annotation(h.strings.view(h.nodes[i].name)))
      report.names_agree += same_name(h, h.nodes[i], d, d.ops[pair[i]]);
  if (report.names_agree * 2 < host_ops || report.host_ops_linked == 0)
    throw Error(h.name + " + " + d.name + ": only " + std::to_string(report.names_agree) + " of " +
                std::to_string(host_ops) + " host ops found a Kineto CPU op of the same name (method " +
                std::string(link_method_name(method)) + "); are the traces from the same run and rank?");
  if (orphan_gpu)
    report.warnings.push_back(d.name + ": " + std::to_string(orphan_gpu) +
                              " GPU ops have no launch call or launching CPU op and are left out");
  if (report.gpu_ops_linked < report.gpu_ops - orphan_gpu)
    report.warnings.push_back(std::to_string(report.gpu_ops - orphan_gpu - report.gpu_ops_linked) +
                              " GPU ops were launched by CPU ops that no host op matched and are left out");

  // New ids: dense, in id order, each host op followed by copies of its GPU ops.
  std::vector<int64_t> new_id(h.nodes.size());
  int64_t next = 0;
  for (int32_t i : by_id) {
    new_id[i] = next;
    next += 1 + (linked[i].gpu_end - linked[i].gpu_begin);
  }
  report.output_nodes = static_cast<uint64_t>(next);
  std::unordered_map<int64_t, int64_t> dangling;  // parent ids not in the trace get fresh ids
  int64_t null_parent = -1;
  auto remap_parent = [&](const HostNode& n) -> int64_t {
    if (n.parent_is_null) {
      if (null_parent < 0) null_parent = next++;
      return null_parent;
    }
    auto it = index_of_id.find(n.parent);
    if (it != index_of_id.end()) return new_id[it->second];
    auto [d_it, fresh] = dangling.try_emplace(n.parent, next);
    if (fresh) ++next;
    return d_it->second;
  };

  SyncDeps sync;
  struct LinkedStall {
    HostStall stall;
    std::pair<double, double> wait_span{0, 0};  // blocked in the wait replay; empty: none
  };
  std::unordered_map<int64_t, LinkedStall> stalls;                 // by host node id
  std::unordered_map<int64_t, std::vector<int64_t>> stall_deps;   // waiter id → GPU node ids
  if (options.sync_deps) {
    std::vector<int64_t> gpu_out(d.ops.size(), -1);  // an op copied under several host ops: its first node
    for (int32_t i : by_id)
      for (uint32_t x = linked[i].gpu_begin; x < linked[i].gpu_end; ++x)
        if (gpu_out[grouped[x]] < 0) gpu_out[grouped[x]] = new_id[i] + 1 + (x - linked[i].gpu_begin);
    sync = compute_sync_deps(d, gpu_out, [&](int32_t host) { return new_id[host]; });
    std::vector<std::pair<int32_t, int32_t>> thread_deps;
    for (int32_t i : by_id)
      if (linked[i].kineto != kNone && linked[i].dep != kNone && linked[linked[i].dep].kineto != kNone)
        thread_deps.emplace_back(linked[i].kineto, linked[linked[i].dep].kineto);
    add_cross_thread_blocked(d, thread_deps, [&](int32_t host) { return new_id[host]; }, sync);
    sort_sync_deps(sync);
    report.sync_calls = sync.calls;
    report.sync_waits = sync.resolved;
    report.sync_edges = sync.edges;
    report.sync_thread_waits = sync.thread_waits;
    if (sync.inferred)
      report.warnings.push_back(d.name + ": " + std::to_string(sync.inferred) +
                                " stream waits (cudaStreamWaitEvent) name no event (no cuda_sync events in this "
                                "Kineto trace): each makes the thread's next GPU op wait for the last op launched "
                                "before it on every other stream");
    if (sync.unidentified)
      report.warnings.push_back(d.name + ": " + std::to_string(sync.unidentified) +
                                " event waits (cudaStreamWaitEvent/cudaEventSynchronize) give no sync dependency: "
                                "without Kineto's cuda_sync events the event they wait for is unknown");
    if (sync.no_waiter)
      report.warnings.push_back(d.name + ": " + std::to_string(sync.no_waiter) +
                                " synchronisation calls give no sync dependency: no linked op follows them");
    // Host stalls on linked ops; those that ended just after GPU work get what the wait
    // replay needs: the stretch up to that work's end, blocked, and the thread's next op
    // waiting for it (as for a synchronisation call).
    for (const HostStall& st : find_stalls(d, sync)) {
      const KinetoOp& op = d.ops[d.cpu[st.op]];
      if (op.host == kNone) continue;
      LinkedStall& out = stalls[new_id[op.host]];
      out.stall = st;
      ++report.stalls[static_cast<int>(st.cls)];
      report.stall_micros += st.micros;
      if (st.gpu < 0 || gpu_out[d.gpu[st.gpu]] < 0) continue;
      const KinetoOp& g = d.ops[d.gpu[st.gpu]];
      const double gpu_end = pyjson::add(g.ts, g.dur).as_double();
      const int32_t waiter = first_linked_cpu_op_after(d, op.tid, Number::of_float(st.end));
      if (waiter == kNone) continue;
      out.wait_span = {st.begin, std::max(st.begin, gpu_end)};
      stall_deps[new_id[d.ops[waiter].host]].push_back(gpu_out[d.gpu[st.gpu]]);
      ++report.stall_waits;
    }
    for (auto& [waiter, deps] : stall_deps) {
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    }
  }
  auto sync_list = [&](int64_t node_id) -> const std::vector<int64_t>* {
    auto it = sync.of.find(node_id);
    return it == sync.of.end() ? nullptr : &it->second;
  };
  auto render_ids = [](const std::vector<int64_t>& ids) {
    std::string list = "[";
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k) list += ", ";
      append_int(list, ids[k]);
    }
    list += ']';
    std::string out;
    pyjson::render_value(list, 0, 3, out);
    return out;
  };

  auto json_string = [](std::string_view text) {
    std::string out;
    append_json_string(out, text, /*ascii_only=*/true);
    return out;
  };
  auto render_spans = [](std::vector<std::pair<double, double>>& spans) {
    std::sort(spans.begin(), spans.end());
    std::string list = "[";
    for (size_t k = 0; k < spans.size(); ++k) {
      list += k ? ", [" : "[";
      pyjson::append_number(list, Number::of_float(spans[k].first));
      list += ", ";
      pyjson::append_number(list, Number::of_float(spans[k].second));
      list += ']';
    }
    list += ']';
    std::string out;
    pyjson::render_value(list, 0, 3, out);
    return out;
  };

  // Write: the host ET's top-level members in order, "nodes" replaced.
  std::string_view text = h.text;
  std::vector<Member> top, members;
  pyjson::OutBuffer rendered;  // the current host node's member values
  object_members(text, 0, top, nullptr, 0, h.node_arrays);
  NodeWriter writer(out);
  pyjson::OutBuffer& buf = writer.buffer();
  buf += '{';
  auto num = [](int64_t v) {
    std::string s;
    append_int(s, v);
    return s;
  };
  auto py = [](Number v) {
    std::string s;
    pyjson::append_number(s, v);
    return s;
  };
  std::vector<Override> host_over, gpu_over;
  uint64_t written = 0;
  for (size_t t = 0; t < top.size(); ++t) {
    buf += t ? ",\n    " : "\n    ";
    pyjson::render_string(top[t].key, 0, buf);
    buf += ": ";
    if (top[t].key != "\"nodes\""sv) {
      pyjson::render_value(text, top[t].value, 1, buf);
      continue;
    }
    buf += '[';
    for (int32_t i : by_id) {
      const HostNode& n = h.nodes[i];
      const Linked& l = linked[i];
      object_members(text, n.begin, members, &rendered, 3);
      host_over.clear();
      host_over.push_back({"\"id\"", num(new_id[i])});
      // Schema 1.0.1 names the parent "parent"; the reference leaves it in the old id space,
      // which breaks every later reader, so it is renumbered like ctrl_deps.
      if (n.has_ctrl_deps || n.has_parent)
        host_over.push_back({n.has_ctrl_deps ? "\"ctrl_deps\"" : "\"parent\"", num(remap_parent(n))});
      if (l.kineto != kNone) {
        const KinetoOp& k = d.ops[l.kineto];
        host_over.push_back({"\"inclusive_dur\"", py(k.dur)});
        host_over.push_back({"\"exclusive_dur\"", py(k.exclusive)});
        host_over.push_back({"\"ts\"", py(k.ts)});
        host_over.push_back({"\"inter_thread_dep\"", l.dep != kNone ? num(new_id[l.dep]) : "null"});
      }
      // Only on the host node: the GPU copies below are made from host_over without it, as the
      // reference adds sync_dep after copying.
      const std::vector<int64_t>* waits = sync_list(new_id[i]);
      if (waits) host_over.push_back({"\"sync_dep\"", render_ids(*waits)});
      auto blocked = sync.blocked.find(new_id[i]);
      const bool has_blocked = blocked != sync.blocked.end();
      if (has_blocked) {
        host_over.push_back({"\"blocked_dur\"", py(Number::of_float(blocked->second))});
        host_over.push_back({"\"blocked_spans\"", render_spans(sync.blocked_spans[new_id[i]])});
      }
      const size_t before_stall = host_over.size();
      if (auto st = stalls.find(new_id[i]); st != stalls.end()) {
        const HostStall& x = st->second.stall;
        host_over.push_back({"\"stall_class\"", json_string(stall_class_name(x.cls))});
        host_over.push_back({"\"stall_dur\"", py(Number::of_float(x.micros))});
        host_over.push_back({"\"stall_evidence\"", json_string(x.evidence)});
        if (auto span = st->second.wait_span; span.second > span.first) {
          std::vector<std::pair<double, double>> spans{span};
          host_over.push_back({"\"stall_spans\"", render_spans(spans)});
        }
      }
      if (auto deps = stall_deps.find(new_id[i]); deps != stall_deps.end())
        host_over.push_back({"\"stall_dep\"", render_ids(deps->second)});
      writer.write_node(members, rendered, host_over);
      host_over.resize(before_stall);
      if (has_blocked) host_over.resize(host_over.size() - 2);
      if (waits) host_over.pop_back();
      ++written;
      int64_t gpu_id = new_id[i];
      for (uint32_t x = l.gpu_begin; x < l.gpu_end; ++x) {
        const KinetoOp& g = d.ops[grouped[x]];
        gpu_over = host_over;  // a copy of the updated host node, then the GPU op's fields
        gpu_over[0].value = num(++gpu_id);
        auto set = [&](std::string_view key, std::string value) {
          auto it = std::find_if(gpu_over.begin(), gpu_over.end(), [&](const Override& o) { return o.key == key; });
          if (it != gpu_over.end()) it->value = std::move(value);
          else gpu_over.push_back({key, std::move(value)});
        };
        set("\"ctrl_deps\"", num(new_id[i]));
        std::string s;
        append_json_string(s, d.strings.view(g.cat), true);
        set("\"cat\"", s);
        s.clear();
        append_json_string(s, d.strings.view(g.name), true);
        set("\"name\"", s);
        auto value = [&](uint32_t v) { return v ? std::string(d.strings.view(v - 1)) : std::string("null"); };
        set("\"ph\"", value(g.ph));
        set("\"inclusive_dur\"", py(g.dur));
        set("\"exclusive_dur\"", py(g.dur));
        set("\"ts\"", py(g.ts));
        set("\"stream\"", value(g.stream));
        if (g.pg_name && d.strings.view(g.name).find("ncclDevKernel") != std::string_view::npos)
          set("\"pg_name\"", value(g.pg_name));
        if (const std::vector<int64_t>* waits = sync_list(gpu_id)) set("\"sync_dep\"", render_ids(*waits));
        writer.write_node(members, rendered, gpu_over);
        ++written;
      }
      if ((written & 0xfff) == 0) report_progress(options.progress, "writing", written, report.output_nodes);
    }
    buf += writer.wrote_any() ? "\n    ]" : "]";
  }
  // The iterations the profiler marked, for chakra convert and simulate (the host ET has none).
  if (options.sync_deps && !d.profiler_steps.empty()) {
    buf += top.empty() ? "\n    \"profiler_steps\": [" : ",\n    \"profiler_steps\": [";
    for (size_t k = 0; k < d.profiler_steps.size(); ++k) {
      const Device::Step& step = d.profiler_steps[k];
      buf += k ? ", {\"name\": " : "{\"name\": ";
      buf += json_string(d.strings.view(step.name));
      buf += ", \"ts\": " + py(step.begin) + ", \"dur\": " + py(pyjson::sub(step.end, step.begin)) + "}";
    }
    buf += "]";
  }
  buf += top.empty() && !(options.sync_deps && !d.profiler_steps.empty()) ? "}" : "\n}";
  writer.flush();
  return report;
}

Trace kineto_activity(std::unique_ptr<ByteSource> device_in, KinetoCategories* categories) {
  Device d;
  if (categories) categories->clear();
  d.categories = categories;
  load_device(*device_in, d, nullptr);
  // Host stalls as the linker finds them, every CPU op standing for its own host node: blocked
  // in synchronisation calls and in waits for work handed to another thread.
  compute_inter_thread(d);
  for (int32_t k : d.cpu) d.ops[k].host = k;
  std::vector<int64_t> gpu_out(d.ops.size(), -1);
  for (int32_t g : d.gpu) gpu_out[g] = g;
  SyncDeps sync = compute_sync_deps(d, gpu_out, [](int32_t host) { return int64_t{host}; });
  std::vector<std::pair<int32_t, int32_t>> thread_deps;
  for (int32_t k : d.cpu)
    if (d.ops[k].other_thread != kNone) thread_deps.emplace_back(k, d.ops[k].other_thread);
  add_cross_thread_blocked(d, thread_deps, [](int32_t host) { return int64_t{host}; }, sync);
  std::unordered_map<int32_t, HostStall> stall_of;  // by Kineto op
  for (HostStall& st : find_stalls(d, sync)) stall_of.emplace(d.cpu[st.op], std::move(st));

  if (categories)
    std::stable_sort(categories->begin(), categories->end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  Trace t;
  const StrId is_cpu_op = t.intern("is_cpu_op"), tid = t.intern("tid"), stream = t.intern("stream"),
              comm_type = t.intern("comm_type"), comm_size = t.intern("comm_size"),
              stall_class = t.intern(kStallClassAttr), stall_micros = t.intern(kStallMicrosAttr),
              stall_evidence = t.intern("stall_evidence");
  if (!stall_of.empty()) {
    AttrDrafts meta;
    meta.add_uint64(t.intern(kHostStallsAttr), stall_of.size());
    t.set_metadata(StringPool::kEmpty, meta);
  }
  auto micros = [](Number n) {
    const double v = std::round(n.as_double());
    return v > 0 && v < 0x1p63 ? static_cast<uint64_t>(v) : uint64_t{0};
  };
  // Node ids in event order, so a GPU op can name its launch call (by correlation id) whether
  // the call came before it in the list or not.
  std::vector<uint64_t> id_of(d.ops.size(), 0);
  uint64_t id = 0;
  for (size_t i = 0; i < d.ops.size(); ++i)
    if (d.ops[i].kind != OpKind::Other && d.ops[i].kind != OpKind::Annotation) id_of[i] = ++id;
  NodeDraft node;
  for (size_t i = 0; i < d.ops.size(); ++i) {
    const KinetoOp& op = d.ops[i];
    if (!id_of[i]) continue;
    const std::string_view name = d.strings.view(op.name);
    node.clear();
    node.id = id_of[i];
    node.name = t.intern(name);
    node.type = static_cast<int32_t>(NodeType::Comp);
    node.start_time_micros = micros(op.ts);
    node.duration_micros = micros(op.dur);
    const bool cpu = op.kind != OpKind::Gpu && op.kind != OpKind::GpuMemset;
    node.attrs.add_bool(is_cpu_op, cpu);
    if (cpu) node.attrs.add_int64(tid, op.tid);
    else node.attrs.add_int64(stream, parse_stream(d, op.stream));
    if (auto st = stall_of.find(static_cast<int32_t>(i)); st != stall_of.end()) {
      node.attrs.add_string(stall_class, t.intern(stall_class_name(st->second.cls)));
      node.attrs.add_uint64(stall_micros, static_cast<uint64_t>(std::llround(st->second.micros)));
      node.attrs.add_string(stall_evidence, t.intern(st->second.evidence));
    }
    if (!cpu && op.correlation >= 0)  // a kernel or copy waits for the call that launched it
      if (auto l = d.launch_by_correlation.find(op.correlation); l != d.launch_by_correlation.end() && id_of[l->second])
        node.data_deps.push_back(id_of[l->second]);
    const bool nccl = !cpu && (name.find("ncclKernel") != std::string_view::npos ||
                               name.find("ncclDevKernel") != std::string_view::npos);
    int64_t ct = nccl ? collective_of(name, true) : -1;
    if (nccl && ct < 0 && name.find("SendRecv") != std::string_view::npos) ct = static_cast<int64_t>(CommType::AllToAll);
    if (ct >= 0) {
      node.type = static_cast<int32_t>(NodeType::CommColl);
      node.attrs.add_int64(comm_type, ct);
      node.attrs.add_int64(comm_size, 0);
    }
    t.append(node);
  }
  // ProfilerStep#N annotations: the iterations (analyses drop the last, incomplete one, as HTA).
  for (const Device::Step& step : d.profiler_steps) {
    node.clear();
    node.id = ++id;
    node.name = t.intern(d.strings.view(step.name));
    node.type = static_cast<int32_t>(NodeType::Comp);
    node.start_time_micros = micros(step.begin);
    const uint64_t end = micros(step.end);
    node.duration_micros = end > node.start_time_micros ? end - node.start_time_micros : 0;
    node.attrs.add_bool(is_cpu_op, true);
    node.attrs.add_int64(tid, step.tid);
    t.append(node);
  }
  return t;
}

std::optional<std::string> kineto_without_gpu_ops(const KinetoCategories& categories) {
  // The categories of GPU ops (Kineto's names, and those of PyTorch before 1.9).
  for (const auto& [cat, count] : categories)
    for (std::string_view gpu : {"kernel", "gpu_memcpy", "gpu_memset"})
      if (modern_category(cat) == gpu) return std::nullopt;
  if (categories.empty())
    return "it has no event with a category (\"cat\"), so no kernel, gpu_memcpy or gpu_memset event";
  std::string listed;
  for (size_t i = 0; i < categories.size() && i < 8; ++i)
    listed += (i ? ", " : "") + categories[i].first + " " + std::to_string(categories[i].second);
  if (categories.size() > 8) listed += ", and " + std::to_string(categories.size() - 8) + " more categories";
  // Kineto's activity types of devices other than CUDA and ROCm GPUs, by their categories' prefix.
  static constexpr std::pair<std::string_view, std::string_view> kDevices[] = {
      {"mtia_", "MTIA"}, {"xpu_", "Intel XPU"}, {"hpu_", "Gaudi (HPU)"}, {"mlu_", "Cambricon MLU"},
      {"gcu_", "Enflame GCU"}, {"privateuse1_", "PrivateUse1 backend"}};
  for (const auto& [prefix, device] : kDevices)
    for (const auto& [cat, count] : categories)
      if (cat.rfind(prefix, 0) == 0)
        return with_article(std::string(device) + " trace") + " (" + std::string(prefix) +
               "* events), not a CUDA or ROCm one: its events are " + listed +
               "; the analyses read kernel, gpu_memcpy and gpu_memset events";
  // Host-side categories: the CPU ops, Python calls, annotations and the profiler's own.
  static constexpr std::string_view kHost[] = {"cpu_op", "user_annotation", "python_function", "cpu_instant_event",
                                               "Trace", "overhead", "Operator"};
  const bool host_only = std::all_of(categories.begin(), categories.end(), [](const auto& c) {
    return std::find(std::begin(kHost), std::end(kHost), c.first) != std::end(kHost);
  });
  if (host_only)
    return "it records only host-side events (" + listed + "): no kernel, gpu_memcpy or gpu_memset event; profile "
           "with GPU activities on (torch.profiler.ProfilerActivity.CUDA)";
  return "its events are " + listed + ": no kernel, gpu_memcpy or gpu_memset event, which the analyses read";
}

}  // namespace chakra
