// PyTorch execution traces (host ET JSON, plain or linked with Kineto by `chakra link`) →
// Chakra trace: the node classification, attributes, IOInfo strings, dependency construction
// and pruning of mlcommons/chakra's `chakra_converter PyTorch` (chakra-reference-tools.md §3),
// with its defects fixed (core/docs/pytorch-converter.md lists them). The input is parsed as a
// stream; memory is proportional to the output, not to the JSON.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/format/io.h"
#include "chakra/support/progress.h"
#include "chakra/trace/trace.h"

namespace chakra {

struct PytorchConvertOptions {
  // Reproduce the reference's bytes exactly: keep ctrl_deps on pruned nodes, leave SEND/RECV
  // nodes without comm_src/comm_dst/comm_tag and drop measured start times. Off: those defects
  // are fixed, and each node of a linked trace keeps its measured start ("ts", rounded to µs:
  // the host op's, or its kernel's for a GPU op) as start_time_micros (a negative or 64-bit
  // overflowing "ts" is left out with a warning).
  bool reference_bytes = false;
  // The replay model for traces with measured times (core/docs/pytorch-replay.md): each GPU op
  // waits for the one before it on its stream, a CPU op lasts its own time (exclusive_dur less
  // blocked_dur, optimizer steps included), and the global metadata marks the trace so that
  // simulators run a lane per thread and stream. Off: the reference's graph and durations
  // (its defects still fixed). Always off with reference_bytes.
  bool replay_model = true;
  // Dependency cycles are errors naming the nodes on the cycle; with this the closing edge of
  // each cycle is dropped instead (and reported as a warning).
  bool break_cycles = false;
  // This trace's global rank: SEND nodes get it as comm_src, RECV nodes as comm_dst (ASTRA-sim
  // defaults both to the simulated NPU, so it may stay unknown).
  std::optional<int64_t> rank;
  Progress* progress = nullptr;
};

// Collective type (CommType value) named by an NCCL kernel or a "nccl:" host op
// ("ncclDevKernel_AllReduce_...", "nccl:all_to_all"), or -1: the types the reference converter
// knows, and with `beyond_reference` also those it aborts the whole file on (reduce, gather,
// scatter, barrier).
int64_t collective_of(std::string_view name, bool beyond_reference = false);

struct PytorchConvertResult {
  Trace trace;
  std::string schema;  // the host ET's schema field
  std::vector<std::string> warnings;
  // Process groups from the trace's process_group:init node: pg_name → global ranks (groups
  // listing no ranks, i.e. the default group, are left out), as ASTRA-sim's comm-group JSON.
  std::map<std::string, std::vector<int64_t>> process_groups;
  uint64_t host_nodes = 0;  // nodes in the JSON
  uint64_t gpu_nodes = 0;   // of which GPU operations (linked traces)
  uint64_t pruned = 0;      // converted nodes removed for having no dependencies at all
  uint64_t cycles_broken = 0;
};

// Converts one trace. Errors (malformed JSON, not a PyTorch ET, duplicate node ids, cycles
// unless break_cycles) throw chakra::Error naming the input.
PytorchConvertResult convert_pytorch(std::unique_ptr<ByteSource> in, const PytorchConvertOptions& options = {});

// The reference converter's --simulate: a toy list scheduler over the converted trace, in
// 1 µs ticks, one CPU node at a time and one GPU node per stream, a node becoming ready once
// every data dependency has been *issued* (as the reference does). Returns its log messages
// ("Issuing CPU Node ID 2 (name) at 0us with duration 0us, tid: 1", "... completed at 1us,
// tid: 1", ...) in order. The work is bounded by the sum of durations (in µs), like the
// reference's; `progress` may stop it.
std::vector<std::string> simulate_conversion(const Trace& trace, Progress* progress = nullptr);

}  // namespace chakra
