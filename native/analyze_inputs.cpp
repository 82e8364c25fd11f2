#include "analyze_inputs.h"

#include <sys/sysinfo.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "chakra/astra/generate.h"  // parse_size
#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/support/error.h"
#include "chakra/support/memory.h"
#include "chakra/support/text.h"

namespace fs = std::filesystem;

namespace cli {

namespace {

// Peak memory of reading a trace and analysing it, per byte of its text or protobuf (measured
// with bench/chakra_bench --analyze-ranks on the DLRM run replicated; core/docs/performance.md).
constexpr double kKinetoMemoryPerByte = 0.75, kEtMemoryPerByte = 1.0, kJsonMemoryPerByte = 1.5;
// What a Kineto trace keeps once read, with its times for the critical path: its trace takes
// 0.25-0.36x its JSON (1.5 GiB ranks replicated from the DLRM run, the shared HTA and Kineto
// traces). Other kinds are not measured: their whole estimate is held.
constexpr double kKinetoHeldPerByte = 0.5;

// A gzip file's inflated size: its last four bytes hold it modulo 2^32, so the smallest such
// size not below the compressed one.
uint64_t inflated_size(const std::string& path, uint64_t compressed) {
  std::ifstream in(path, std::ios::binary);
  unsigned char tail[4] = {};
  if (compressed < 18 || !in.seekg(-4, std::ios::end) || !in.read(reinterpret_cast<char*>(tail), 4)) return compressed;
  uint64_t size = tail[0] | tail[1] << 8 | tail[2] << 16 | uint64_t{tail[3]} << 24;
  while (size < compressed) size += uint64_t{1} << 32;
  return size;
}

// Counts the bytes read into `read` and stops the read on Ctrl-C.
class WatchedSource : public chakra::ByteSource {
 public:
  WatchedSource(std::unique_ptr<chakra::ByteSource> in, std::atomic<uint64_t>* read)
      : ByteSource(in->name()), in_(std::move(in)), read_(read) {}
  size_t read(uint8_t* dst, size_t n) override { return counted(in_->read(dst, n)); }
  bool map(uint64_t offset, size_t n, std::string_view& out) override {
    return in_->map(offset, n, out) && (counted(0), true);
  }
  uint64_t raw_position() const override { return in_->raw_position(); }
  uint64_t raw_size() const override { return in_->raw_size(); }
  bool compressed() const override { return in_->compressed(); }

 private:
  size_t counted(size_t n) {
    if (interrupted()) throw chakra::Cancelled();
    const uint64_t at = in_->raw_position();
    if (read_ && at > seen_) read_->fetch_add(at - seen_), seen_ = at;
    return n;
  }
  std::unique_ptr<chakra::ByteSource> in_;
  std::atomic<uint64_t>* read_;
  uint64_t seen_ = 0;
};

}  // namespace

std::vector<TraceInput> scan_traces(const std::vector<std::string>& paths, std::vector<std::string>& notes) {
  std::vector<TraceInput> out;
  std::map<uint32_t, std::string> owner;
  const std::vector<std::string> files = files_under(paths);
  const bool from_folder = files.size() != paths.size() || (paths.size() == 1 && fs::is_directory(paths[0]));
  for (const std::string& path : files) {
    const std::string head = read_head(path);
    TraceInput in;
    in.path = path;
    in.kind = chakra::detect_input_kind(path, std::span(reinterpret_cast<const uint8_t*>(head.data()), head.size()));
    std::optional<uint32_t> rank;
    double per_byte = 0;
    if (in.kind == chakra::InputKind::KinetoTrace) {
      rank = chakra::kineto_file_rank(head, path), per_byte = kKinetoMemoryPerByte;
    } else if (in.kind == chakra::InputKind::ChakraEt) {
      rank = chakra::rank_from_file_name(path), per_byte = kEtMemoryPerByte;
    } else if (in.kind == chakra::InputKind::ChakraJson) {
      rank = chakra::rank_from_file_name(path), per_byte = kJsonMemoryPerByte;
    } else {
      const std::string what = chakra::input_kind_name(in.kind);
      if (!from_folder)
        throw chakra::Error(
            path + ": " + chakra::with_article(what) +
            ", not a trace this command reads (Kineto traces, Chakra .et and JSON traces" +
            (in.kind == chakra::InputKind::PytorchHostEt ? "; a host ET's GPU work is in its Kineto trace)" : ")"));
      notes.push_back(path + ": skipped (" + chakra::with_article(what) + ")");
      continue;
    }
    in.rank = rank.value_or(static_cast<uint32_t>(out.size()));
    const uint64_t on_disk = fs::file_size(path);
    in.bytes = on_disk;
    const uint64_t inflated = chakra::ends_with(path, ".gz") ? inflated_size(path, on_disk) : on_disk;
    in.memory = static_cast<uint64_t>(per_byte * static_cast<double>(inflated)) + (uint64_t{16} << 20);
    in.held = in.kind == chakra::InputKind::KinetoTrace
                  ? static_cast<uint64_t>(kKinetoHeldPerByte * static_cast<double>(inflated)) + (uint64_t{1} << 20)
                  : in.memory;
    if (auto [it, fresh] = owner.emplace(in.rank, path); !fresh)
      throw chakra::Error("rank " + std::to_string(in.rank) + " twice: " + it->second + " and " + path);
    out.push_back(std::move(in));
  }
  if (out.empty()) throw chakra::Error("no trace among the " + std::to_string(files.size()) + " files given");
  std::sort(out.begin(), out.end(), [](const TraceInput& a, const TraceInput& b) { return a.rank < b.rank; });
  return out;
}

LoadedTrace load_trace(const TraceInput& input, std::atomic<uint64_t>* read) {
  LoadedTrace l;
  auto source = std::make_unique<WatchedSource>(chakra::open_input(input.path), read);
  if (input.kind == chakra::InputKind::KinetoTrace)
    l.trace = chakra::kineto_activity(std::move(source), &l.categories.emplace());
  else if (input.kind == chakra::InputKind::ChakraEt)
    l.trace = chakra::read_et(std::move(source));
  else
    l.trace = chakra::read_json_trace_file(input.path);
  return l;
}

std::string why_no_gpu_op(const LoadedTrace& l) {
  if (l.categories)
    if (std::optional<std::string> why = chakra::kineto_without_gpu_ops(*l.categories)) return "no GPU op: " + *why;
  return "no GPU op with a measured start time (is_cpu_op false and a \"stream\"); analyze reads Kineto traces, "
         "and .et traces converted with their times (chakra convert pytorch without --reference-bytes)";
}

void add_memory_options(Args& args, const std::string& units) {
  args.option("--memory-limit", "SIZE",
              "memory the " + units + " being read may take together (e.g. 2G; default: half of this machine's)");
  args.option("--jobs", "N", units + " read at once (default: every core, as memory allows)");
}

MemoryBudget memory_budget(const Args& args) {
  MemoryBudget b;
  if (args.has("--memory-limit")) {
    const std::optional<uint64_t> limit = chakra::parse_size(args.get("--memory-limit"));
    if (!limit || *limit == 0)
      args.fail("--memory-limit: a size such as 2G or 1500M, not '" + args.get("--memory-limit") + "'");
    b.limit = *limit;
  } else {
    struct sysinfo si {};
    b.limit = sysinfo(&si) == 0 ? uint64_t{si.totalram} * si.mem_unit / 2 : uint64_t{4} << 30;
  }
  b.jobs = args.has("--jobs") ? static_cast<unsigned>(std::max<uint64_t>(1, args.get_uint("--jobs", 4096)))
                              : std::max(1u, std::thread::hardware_concurrency());
  return b;
}

void for_each_within(const std::vector<uint64_t>& memory, const std::vector<uint64_t>& bytes,
                     const MemoryBudget& budget, const std::string& stage,
                     const std::function<std::string(size_t)>& what,
                     const std::function<void(size_t, std::atomic<uint64_t>& read)>& work) {
  const size_t n = memory.size();
  for (size_t i = 0; i < n; ++i)
    if (memory[i] > budget.limit)
      throw chakra::Error(what(i) + " needs about " + chakra::format_bytes(memory[i]) + " to read and analyse, over " +
                          "--memory-limit " + chakra::format_bytes(budget.limit) + " (raise the limit)");
  uint64_t total = 0;
  for (uint64_t b : bytes) total += b;
  std::mutex m;
  std::condition_variable room;
  size_t next = 0;
  uint64_t in_use = 0;
  std::exception_ptr failed;
  std::atomic<uint64_t> read{0};
  auto worker = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock lock(m);
        room.wait(lock, [&] { return failed || next == n || in_use + memory[next] <= budget.limit; });
        if (failed || next == n) return;
        i = next++;
        in_use += memory[i];
      }
      try {
        work(i, read);
      } catch (...) {
        std::lock_guard lock(m);
        if (!failed) failed = std::current_exception();
      }
      chakra::release_free_memory();  // the trace's pages back before the next one is admitted
      {
        std::lock_guard lock(m);
        in_use -= memory[i];
      }
      room.notify_all();
    }
  };
  std::vector<std::thread> threads;
  const unsigned jobs = static_cast<unsigned>(std::min<size_t>(budget.jobs, n));
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(worker);
  std::thread progress([&] {
    TerminalProgress p;
    for (;;) {
      {
        std::unique_lock lock(m);
        if (room.wait_for(lock, std::chrono::milliseconds(100), [&] { return failed || (next == n && in_use == 0); }))
          return;
      }
      p.report(stage, read.load(), total);
    }
  });
  worker();
  for (std::thread& t : threads) t.join();
  room.notify_all();
  progress.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace cli
