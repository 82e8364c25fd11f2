// Synthetic Chakra traces: mlcommons/chakra's `chakra_generator` microbenchmarks
// (chakra-reference-tools.md §9) and single-collective workloads like the microbenchmarks
// ASTRA-sim ships (examples/workload/microbenchmarks/<type>/<N>npus_<size>/<type>.<npu>.et).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"

namespace chakra {

struct MicrobenchmarkOptions {
  uint32_t num_npus = 64;
  uint64_t runtime = 5;         // duration_micros of compute nodes
  uint64_t tensor_size = 1024;  // memory and send/recv nodes
  int64_t comm_size = 65536;    // collectives (BARRIER: 0)
};

// The reference generator's 14 cases, in its order, each with one trace per NPU:
// emit(case name, npu, trace) is called case by case, NPU by NPU. Node ids come from one
// counter over the whole run, as in the reference (files differ between NPUs only in ids).
void generate_microbenchmarks(const MicrobenchmarkOptions& options,
                              const std::function<void(std::string_view, uint32_t, const Trace&)>& emit);

struct CollectiveOptions {
  CommType type = CommType::AllReduce;
  uint64_t size = 1 << 20;  // comm_size in bytes
  uint32_t npus = 8;
  uint32_t count = 1;  // collectives per NPU, each depending on the previous one
  std::string name;    // node name; empty: "<type>_<npus>npus_<size>" as ASTRA-sim's files
};

// NPU `npu`'s trace: as ASTRA-sim's microbenchmark files (metadata version 0.0.4, node id =
// npu for one collective; is_cpu_op, comm_type, comm_size), byte for byte when count is 1.
Trace collective_trace(const CollectiveOptions& options, uint32_t npu);

// "1MB" for 1048576: the largest binary unit (B, KB, MB, GB) that divides the size.
std::string size_label(uint64_t bytes);
// "1MiB", "1MB", "64KiB", "512": binary units (K/M/G/T, with or without "i"); nullopt if invalid.
std::optional<uint64_t> parse_size(std::string_view text);

}  // namespace chakra
