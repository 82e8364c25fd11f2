// Anonymized copies of traces (`chakra anonymize`, the web page's export): what a workload does
// without what it is. Node names, op schemas, string attribute values, the string literals in
// inputs/outputs values (devices, arguments, file paths) and the metadata's strings become keyed
// tokens: "<kind>_" + 12 hex digits of HMAC-SHA-256(key, kind:original). One key gives the same
// token for the same string on every rank and in every run, so cross-rank analyses and diffs
// still pair ops up; without the key a token does not give its string back.
//
// Kept: node ids, types, dependencies, durations and start times, every numeric and bool
// attribute (num_ops, tensor_size, comm_type, comm_size, comm_src/dst/tag, is_cpu_op, tid,
// stream, ...), process-group ids that are numbers (pg_name, and the groups a METADATA node lists,
// whose other strings are tokens), tensor shapes (or with `bucket_shapes` each dimension rounded
// up to a power of two), tensor types ("Tensor(float)"), attribute names, the Chakra version and
// the metadata's `schema` version. Dropped: attribute doc strings and fields outside the schema
// (raw bytes that could hold anything).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/trace/trace.h"

namespace chakra {

struct AnonymizeOptions {
  std::string key;                                  // the secret: same key, same tokens (random_anonymize_key())
  std::function<bool(std::string_view)> keep_name;  // node names kept as they are (unset: none)
  bool bucket_shapes = false;
};

// A key nobody can recompute: 32 bytes from the system's random source, for a run that keeps
// no key (the caller holds it in memory only).
std::string random_anonymize_key();

// What one or more traces' anonymization replaced, kept and dropped (merge() adds ranks up).
struct AnonymizeReport {
  uint64_t nodes = 0;
  uint64_t names = 0, names_kept = 0;  // node names replaced, and kept by keep_name
  uint64_t io_literals = 0;            // string literals in inputs/outputs values
  uint64_t metadata_strings = 0;       // GlobalMetadata string attributes and METADATA node strings
  uint64_t shapes_bucketed = 0;        // shape dimensions rounded up
  uint64_t docs_dropped = 0, unknown_fields_dropped = 0;
  std::map<std::string, uint64_t> attributes;  // string attribute values replaced, by attribute name
  void merge(const AnonymizeReport& other);
  // A few lines saying what was replaced, kept and dropped.
  std::string text() const;
};

class Anonymizer {
 public:
  explicit Anonymizer(AnonymizeOptions options);
  // The token of `original` among strings of `kind` ("op", "str", ...).
  std::string token(std::string_view kind, std::string_view original) const;
  // `in` anonymized into `out` (cleared first). Thread-safe: ranks may run in parallel.
  void anonymize(const Trace& in, Trace& out, AnonymizeReport& report) const;
  // A PyTorch host execution trace or linked trace (JSON) anonymized the same way: each node's
  // `name` an "op" token, every other string a token (deny by default), except the tensor types
  // (`input_types`, `output_types`), attribute entries' `name` and `type`, numeric `pg_name`s and
  // process groups' ids, and the top-level `schema`; shapes bucketed as asked. Convert first and
  // anonymize the .et when the conversion must still see the names (it finds collectives by
  // them). Throws chakra::Error naming `source` when the text is not JSON.
  std::string anonymize_json(std::string_view json, const std::string& source, AnonymizeReport& report) const;

 private:
  std::string anonymize_process_groups(std::string_view values, AnonymizeReport& report) const;
  AnonymizeOptions options_;
};

}  // namespace chakra
