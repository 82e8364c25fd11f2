// Legacy ASTRA-sim 1.0 text workloads (a layer table per file) → Chakra traces.
//
// For the parallelism types mlcommons/chakra's `chakra_converter Text` supports (MICRO, DATA,
// MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM, HYBRID_DLRM_ENHANCED) the graph and
// its bytes are exactly the reference's, quirks included. The types it rejects
// (HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_CUSTOMIZED,
// DISTRIBUTED_INFERENCE) follow ASTRA-sim 1.0's training loops; core/docs/text-workloads.md
// describes every graph.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/trace/trace.h"

namespace chakra {

struct TextLayer {
  std::string name;
  uint32_t line = 0;  // 1-based line in the file, for messages
  // Per phase (forward, input gradient, weight gradient): compute time in the file's unit
  // (ASTRA-sim 1.0: cycles; the converter copies it to duration_micros), the collective's
  // type as written (ALLREDUCE, ALLGATHER, ..., NONE) and its size in bytes.
  struct Phase {
    uint64_t compute = 0;
    std::string comm;
    uint64_t comm_size = 0;
  } fwd, ig, wg;
  std::string parallelism;  // HYBRID_CUSTOMIZED: the layer's own parallelism token
};

struct TextWorkload {
  std::string type;                            // parallelism type, token 1 of line 1
  int64_t last_bottom_layer = -1;              // HYBRID_DLRM*: layer index ending the bottom MLP
  int64_t model_parallel_group = 0;            // HYBRID_TRANSFORMER*: NPUs per model-parallel group
  std::vector<uint32_t> checkpoints;           // HYBRID_TRANSFORMER_FWD_IN_BCKWD
  std::vector<uint32_t> recompute_initiators;  // idem: layers that trigger recomputation
  int64_t declared_layers = 0;                 // line 2 (the reference uses it in one test; see docs)
  std::vector<TextLayer> layers;
  std::string text;  // the whole file, stored in GlobalMetadata as input_file
  std::vector<std::string> warnings;
};

// Whether mlcommons/chakra's converter accepts this type (then its output is reproduced).
bool is_reference_text_type(std::string_view type);

// Parses a workload. Errors (unknown type, malformed header or layer line, non-numeric or
// negative times/sizes, unknown collective names in the extended types) throw chakra::Error
// naming `source` and the line.
TextWorkload parse_text_workload(std::string text, const std::string& source);

// The trace of one NPU. Node ids start at `first_id`: the reference numbers nodes of all NPUs
// with one counter, so NPU n starts at n × (nodes per NPU). Every NPU gets the same graph.
Trace text_workload_trace(const TextWorkload& workload, uint32_t num_passes, uint64_t first_id);

}  // namespace chakra
