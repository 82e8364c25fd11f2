// Anonymized copies of traces (`chakra anonymize`, the web page's export): what a workload does
// without what it is. Node names, op schemas, string attribute values, the string literals in
// inputs/outputs values (devices, arguments, file paths) and the metadata's strings become keyed
// tokens: "<kind>_" + 12 hex digits of HMAC-SHA-256(key, kind:original). One key gives the same
// token for the same string on every rank, in every run and in every format (.et, host ET,
// Kineto), so cross-rank analyses, diffs and the linker still pair ops up; without the key a
// token does not give its string back.
//
// Names the tools themselves read are kept (vocabulary_kept): communication and memory-copy
// names (the analyses classify GPU work by them, the converter finds collectives by them),
// CUDA/HIP runtime calls, ProfilerStep#N, the execution trace's own annotations, PyTorch's
// process-group and communication ops, and the Chrome trace's and Kineto's own event names.
// They name library and profiler calls, never the model's code.
//
// Kept: node ids, types, dependencies, durations and start times, every numeric and bool
// attribute (num_ops, tensor_size, comm_type, comm_size, comm_src/dst/tag, is_cpu_op, tid,
// stream, ...), strings that are only numbers (numeric pg_names, "[0, 1]"), process-group ids
// (the groups a METADATA node lists keep their ids and ranks; their other strings are tokens),
// tensor shapes (or with `bucket_shapes` each dimension rounded up to a power of two), tensor
// types ("Tensor(float)"), attribute names, the Chakra version and the metadata's `schema`
// version. Dropped: attribute doc strings and fields outside the schema (raw bytes that could
// hold anything). PyTorch's JSON traces are anonymized by chakra/pytorch/anonymize_json.h with
// the same tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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

// How much of a name is the vocabulary of the tools (the module comment lists it), kept as it
// is: all of it (kWholeName), a prefix that classifies it ("Optimizer.step#", whose rest is the
// optimizer's class), or nothing (0).
inline constexpr size_t kWholeName = static_cast<size_t>(-1);
size_t vocabulary_kept(std::string_view name);

// How the value of a node or metadata attribute (or a linked JSON field) of this name is
// anonymized: as any text (a token unless numbers_only), kept (what chakrakit writes that names
// nothing: a stall's class and evidence), or as names are (the profiler's step names).
enum class ValuePolicy : uint8_t { Text, Kept, Name };
ValuePolicy value_policy(std::string_view attribute);

// Text that holds numbers only ("3", "-1.5e3", "0x7f00", "[0, 1]", "True"): it names nothing,
// and tools read some of it (numeric process-group names), so it is kept.
bool numbers_only(std::string_view text);

// A tensor dimension as `bucket_shapes` writes it: rounded up to a power of two (0 and 1 kept;
// at most 2^62).
uint64_t bucketed_dimension(uint64_t v);

// What one or more traces' anonymization replaced, kept and dropped (merge() adds ranks up).
struct AnonymizeReport {
  uint64_t nodes = 0, events = 0;      // nodes (.et, host ET), Kineto events
  uint64_t names = 0, names_kept = 0;  // names of nodes and events replaced, and kept by keep_name
  uint64_t names_vocabulary = 0;       // names kept (wholly or a prefix) as vocabulary_kept says
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
  const AnonymizeOptions& options() const { return options_; }
  // The token of `original` among strings of `kind` ("op", "str", ...).
  std::string token(std::string_view kind, std::string_view original) const;
  // An op's or event's name as every format writes it: kept by keep_name or as vocabulary
  // (vocabulary_kept), else its "op" token; counted in `report`.
  std::string name(std::string_view original, AnonymizeReport& report) const;
  // Any other string: kept when empty or numbers_only, else its "str" token (counted in `count`).
  std::string text(std::string_view original, uint64_t& count) const;
  // A process_group:init node's groups (the JSON list the profiler records, or the converter's
  // Python repr of a list holding it): their ids and ranks kept, their other strings as text()
  // makes them. nullopt when `values` is not such a list.
  std::optional<std::string> process_groups(std::string_view values, AnonymizeReport& report) const;
  // `in` anonymized into `out` (cleared first). Thread-safe: ranks may run in parallel.
  void anonymize(const Trace& in, Trace& out, AnonymizeReport& report) const;

 private:
  AnonymizeOptions options_;
};

}  // namespace chakra
