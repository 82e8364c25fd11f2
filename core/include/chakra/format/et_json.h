// Chakra traces as JSON text, and back.
//
// Formats written by write_json():
//   Json       one JSON document: {"globalMetadata": {...}, "nodes": [{...}, ...]}
//              ("globalMetadata" is left out when the trace has no such record).
//   Jsonl      JSON Lines: a {"globalMetadata": {...}} line when present, then one node per line.
//   Reference  what mlcommons/chakra's chakra_jsonizer writes, byte for byte: protobuf's
//              MessageToJson of the GlobalMetadata and of every node, concatenated with no
//              separator (so not a valid JSON document).
//
// Json and Jsonl objects follow protobuf's proto3 JSON mapping (camelCase names, enums by name,
// fields at their default value left out, bytes in base64, NaN and infinities as strings) except
// that 64-bit integers are JSON numbers rather than strings, which every proto3 JSON parser also
// accepts. `id`, `name` and `type` are always written. Reference keeps 64-bit integers as strings.
//
// read_json_trace() accepts all three formats, and proto field names (ctrl_deps) as well as JSON
// names (ctrlDeps). Unknown keys and wrongly typed values are errors naming the node and key.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/progress.h"
#include "chakra/trace/trace.h"

namespace chakra {

enum class JsonFormat { Json, Jsonl, Reference };

struct JsonOptions {
  JsonFormat format = JsonFormat::Json;
  bool compact = false;  // Json only: one line instead of two-space indentation
  Progress* progress = nullptr;
};

void write_json(const Trace& trace, ByteSink& out, const JsonOptions& options = {});
// Atomic file write; gzip when the name ends in ".gz".
void write_json(const Trace& trace, const std::string& path, const JsonOptions& options = {});

struct JsonizeStats {
  uint64_t nodes = 0;
  bool has_metadata = false;
  bool unknown_fields = false;  // the input had fields JSON cannot carry (they are left out)
};

// Streams an .et input to JSON one node at a time: the same bytes as write_json(read_et(in)),
// in memory that grows only with the distinct strings of the trace. `options.progress` (which
// replaces `read.progress`) sees the input bytes consumed.
JsonizeStats jsonize_et(std::unique_ptr<ByteSource> in, ByteSink& out, const JsonOptions& options,
                        ReadOptions read = {});

// Parses any of the formats above. `name` is used in error messages ("x.json:12:5: ...").
Trace read_json_trace(std::string_view text, const std::string& name);
Trace read_json_trace_file(const std::string& path, const InputLimits& limits = {});

// Whether `head`, a file's first bytes, is one of the formats above: JSON text with a
// "globalMetadata" record or nodes whose type is a node type's name ("COMP_NODE"). PyTorch's
// host ETs also hold "nodes" (and often "schema"), so this is asked before taking one for them.
bool looks_like_chakra_json(std::string_view head);

}  // namespace chakra
