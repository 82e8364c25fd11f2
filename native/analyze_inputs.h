// The traces `chakra analyze` and `chakra diff` read, found from their first bytes, and the
// bounded loop that reads them: each rank's trace is read, reduced to what the report needs and
// dropped, up to --jobs at once while their estimated memory fits --memory-limit
// (core/docs/analyses.md, "Runs larger than memory").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chakra/app/workspace.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/trace/trace.h"
#include "cli.h"

namespace cli {

// A trace the analyses read: a Kineto trace as recorded, or a Chakra .et or JSON trace.
struct TraceInput {
  uint32_t rank = 0;
  std::string path;
  chakra::InputKind kind = chakra::InputKind::Unknown;
  uint64_t bytes = 0;   // its size on disk, which progress counts (compressed, when gzip)
  uint64_t memory = 0;  // the memory its trace and analyses take at most, from kind and inflated size
  uint64_t held = 0;    // of that, what its trace keeps once read (the critical path holds every rank's)
};

// Every trace under `paths`, by rank, from each file's first bytes (nothing is read whole).
// Ranks come from a Kineto trace's distributedInfo or the file name, else the position. Host ETs
// and configs in a folder are skipped with a note; named on the command line they are errors.
// Two traces of one rank are an error.
std::vector<TraceInput> scan_traces(const std::vector<std::string>& paths, std::vector<std::string>& notes);

// A trace read whole, with a Kineto trace's events per category. `read` counts the bytes read
// so far (for progress) and the read stops with chakra::Cancelled on Ctrl-C.
struct LoadedTrace {
  chakra::Trace trace;
  std::optional<chakra::KinetoCategories> categories;
};
LoadedTrace load_trace(const TraceInput& input, std::atomic<uint64_t>* read = nullptr);

// Why a trace has no GPU op to analyse: for a Kineto trace without GPU events, what it records
// instead (an MTIA trace, host-side events only...).
std::string why_no_gpu_op(const LoadedTrace& l);

// --memory-limit SIZE and --jobs N.
void add_memory_options(Args& args, const std::string& units);
struct MemoryBudget {
  uint64_t limit = 0;  // bytes
  unsigned jobs = 1;
};
MemoryBudget memory_budget(const Args& args);

// Runs work(i) for every unit, up to budget.jobs at once, starting them in order, each once the
// memory of those running (memory[i]) leaves room for it. A unit larger than the limit alone is a
// chakra::Error naming `what(i)` before anything runs. The first error stops the rest and is
// rethrown. Progress ("stage" over the units' bytes) on the terminal; Ctrl-C stops it.
void for_each_within(const std::vector<uint64_t>& memory, const std::vector<uint64_t>& bytes,
                     const MemoryBudget& budget, const std::string& stage,
                     const std::function<std::string(size_t)>& what,
                     const std::function<void(size_t, std::atomic<uint64_t>& read)>& work);

}  // namespace cli
