// Host execution trace + Kineto trace → linked trace (the "ET+" JSON that `chakra convert
// pytorch` reads), as mlcommons/chakra's `chakra_trace_link` builds it
// (chakra-reference-tools.md §2): host ops get the duration, timestamp and inter-thread
// dependency of their Kineto CPU op, and every GPU kernel/memcpy becomes a node right after the
// host op that launched it. The output is byte-identical to the reference where the reference
// works; core/docs/trace-linker.md lists where and why ours differs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chakra/format/io.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"
#include "chakra/support/progress.h"

namespace chakra {

// How host ops were paired with Kineto CPU ops.
enum class LinkMethod : uint8_t {
  Auto,              // options only: the first of the methods below that applies
  RecordFunctionId,  // host rf_id == Kineto "Record function id" (the reference's only method)
  ExternalId,        // host rf_id + constant offset == Kineto "External id", names agreeing
  EvIdx,             // the same with Kineto "Ev Idx"
  InOrder,           // per thread, ops in order, names aligned (traces without shared ids)
};
std::string_view link_method_name(LinkMethod m);
// Parses "auto", "rf-id", "external-id", "ev-idx", "in-order"; false if unknown.
bool parse_link_method(std::string_view text, LinkMethod* out);

struct LinkOptions {
  LinkMethod method = LinkMethod::Auto;
  // Compute `sync_dep` from the CUDA/HIP synchronisation calls in the Kineto trace
  // (cudaDeviceSynchronize, cudaStreamSynchronize, event syncs and stream waits): the node that
  // runs after a sync lists the GPU nodes it waited for. Off by default: the reference writes
  // none (core/docs/trace-linker.md).
  bool sync_deps = false;
  // The pair's rank as the caller knows it (a --rank, a rank folder's name) and what says so:
  // checked with the ranks the traces state.
  std::optional<uint32_t> rank;
  std::string rank_source;
  // Link a host ET and a Kineto trace whose ranks or process ids disagree (a warning instead of
  // the error).
  bool force = false;
  Progress* progress = nullptr;
};

struct LinkReport {
  LinkMethod method = LinkMethod::Auto;
  int64_t id_offset = 0;         // ExternalId / EvIdx: Kineto id − host rf_id
  std::string window;            // the part of the Kineto trace matched, when not all of it
  uint64_t host_nodes = 0;       // nodes in the host ET
  uint64_t host_ops_linked = 0;  // host nodes that got a Kineto op (durations, ts)
  uint64_t names_agree = 0;      // of which (profiler annotations aside) with the same op name
  uint64_t kineto_cpu_ops = 0;   // cpu_op / user_annotation events (ProfilerStep excluded)
  uint64_t gpu_ops = 0;          // kernel / gpu_memcpy events
  uint64_t gpu_ops_linked = 0;   // of which attached under a linked host op
  uint64_t gpu_nodes = 0;        // GPU nodes written (an op shared by host ops is copied)
  uint64_t output_nodes = 0;
  uint64_t sync_calls = 0;         // with sync_deps: synchronising calls in the Kineto trace
  uint64_t sync_waits = 0;         // of which gave a sync dependency
  uint64_t sync_edges = 0;         // sync_dep entries written
  uint64_t sync_thread_waits = 0;  // of which on the end of work handed to another thread
  // With sync_deps: host stalls found on linked ops, per StallClass; their unblocked µs; and
  // how many the wait replay can turn into waits for GPU work (core/docs/pytorch-replay.md).
  std::array<uint64_t, kStallClassCount> stalls{};
  double stall_micros = 0;
  uint64_t stall_waits = 0;
  // Host nodes the reference leaves out of its output: not reachable from node 1 (the process
  // root) through parents in the trace; of which those whose parent is missing. Linked here.
  struct OutsideRoot {
    uint64_t nodes = 0, missing_parent = 0;
  } outside_root;
  // What says the two traces are one rank's recording ("rank 3 by ... and ...; process 59814 in
  // both"), or that nothing does ("unverified: ...").
  std::string pairing;
  bool pairing_verified = false;
  std::vector<std::string> warnings;
};

// The rank a Kineto trace states about itself ("distributedInfo": {"rank": N, ...}) in `head`,
// its first bytes (decompressed; the field comes before the events); nullopt when absent.
// Ranks are taken from here before file names, whose numbers may be dates or versions.
std::optional<uint32_t> kineto_rank(std::string_view head);
// A Kineto trace's rank: the one it states, else the number in its file name
// (rank_from_file_name). When both exist and differ, a chakra::Error names the file and both.
std::optional<uint32_t> kineto_file_rank(std::string_view head, const std::string& file_name);

// Links one rank. Writes the linked JSON to `out` (the caller makes it atomic and compressed as
// it likes). Throws chakra::Error naming the inputs for malformed or unusable inputs; when the
// two traces state different ranks (the Kineto trace's distributedInfo, the numbers in the
// files' names, options.rank) or were recorded by different processes (the host ET's "pid", the
// Kineto trace's CPU ops'), unless options.force; and when fewer than half of the host ops pair
// with a Kineto op of the same name: such traces are not from the same run and rank, and a
// silently unlinked or mislinked output would be worse.
LinkReport link_traces(std::unique_ptr<ByteSource> host, std::unique_ptr<ByteSource> device, ByteSink& out,
                       const LinkOptions& options = {});

// A Kineto trace on its own as a trace of what was measured: a COMP node per CPU op
// (cpu_op, user_annotation, launch calls, ProfilerStep#N; is_cpu_op, "tid") and per GPU op
// (kernel, memcpy, memset; "stream"), at its start and duration rounded to µs; NCCL kernels
// become collectives of their
// type (comm_size 0: a Kineto trace does not say). The one dependency kept: a GPU op's data dep
// on the call that launched it (by correlation id). It shows what ran and does not replay; link
// it with its host ET for that. Errors as link_traces's for the Kineto side. With `categories`,
// also counts the trace's events per category.
using KinetoCategories = std::vector<std::pair<std::string, uint64_t>>;  // "cat" as written, count; most first
Trace kineto_activity(std::unique_ptr<ByteSource> device, KinetoCategories* categories = nullptr);

// Why a Kineto trace of these categories has no GPU op for the analyses (they read kernel,
// gpu_memcpy and gpu_memset events): what it records instead, and the device it is from when
// its categories name one (MTIA, Intel XPU, Gaudi...). Nullopt when it has such events (then
// they lack what the analyses need, not the events themselves).
std::optional<std::string> kineto_without_gpu_ops(const KinetoCategories& categories);

}  // namespace chakra
