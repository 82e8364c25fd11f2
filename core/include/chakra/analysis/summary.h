// Aggregate statistics of a trace (what `chakra info` prints and the web app's overview shows).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chakra/format/json_writer.h"
#include "chakra/trace/trace.h"

namespace chakra {

struct TraceSummary {
  struct PerType {
    uint64_t nodes = 0;
    uint64_t duration_micros = 0;  // sum of duration_micros
  };
  struct Comm {
    uint64_t count = 0;
    uint64_t bytes = 0;         // sum of comm_size (integer values only)
    uint64_t missing_size = 0;  // nodes without a readable comm_size
  };
  struct AttrUse {
    std::string name;
    AttrKind kind;
    uint64_t nodes = 0;
  };

  bool has_metadata = false;
  std::string version;  // GlobalMetadata.version
  std::string schema;   // GlobalMetadata attribute "schema", if any
  uint64_t nodes = 0;
  std::array<PerType, kNodeTypeCount> by_type{};
  PerType other_types;                  // type values outside the enum
  std::map<int64_t, Comm> collectives;  // by comm_type value
  Comm sends, recvs;
  std::map<std::string, uint64_t> process_groups;  // pg_name → communication nodes
  // Communication nodes (collectives, sends, receives) by size: entry k counts comm_size in
  // [2^k, 2^(k+1)) bytes (entry 0 also sizes 0 and 1); nodes without a size are not counted.
  std::array<uint64_t, 64> comm_sizes_log2{};
  std::vector<AttrUse> attrs;  // by name, then kind
  uint64_t data_deps = 0, ctrl_deps = 0;
  uint64_t nodes_without_data_deps = 0;
  uint64_t total_duration_micros = 0;
  uint64_t min_id = 0, max_id = 0;
  bool ids_ascending = true;
  uint64_t nodes_with_unknown_fields = 0;
  bool legacy_schema = false;  // looks like a pre-0.0.4 ".eg" trace (see looks_like_legacy_schema)
};

TraceSummary summarize(const Trace& trace);

void write_summary_json(const TraceSummary& s, JsonWriter& w);

}  // namespace chakra
