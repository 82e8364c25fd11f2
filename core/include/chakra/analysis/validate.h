// Checks a trace against what its consumers need: a well-formed dependency graph, and the
// attribute contract of ASTRA-sim and the Chakra feeders (chakra-reference-tools.md §1.4, §5).
//
// Errors are problems that make a simulator abort, hang or compute garbage; warnings are
// problems for some consumers only, or likely mistakes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/format/json_writer.h"
#include "chakra/trace/trace.h"

namespace chakra {

enum class Severity : uint8_t { Error, Warning };

struct Finding {
  Severity severity;
  std::string code;     // stable identifier, e.g. "dangling-data-dep"
  std::string message;  // one sentence naming the node(s) involved
  int64_t node = -1;    // position of the node concerned, or -1
};

struct ValidationReport {
  std::vector<Finding> findings;           // at most ValidateOptions::max_per_code per code
  std::map<std::string, uint64_t> counts;  // every occurrence per code, including those not listed
  uint64_t errors = 0;
  uint64_t warnings = 0;
  bool ok() const { return errors == 0; }
};

struct ValidateOptions {
  size_t max_per_code = 20;
};

ValidationReport validate(const Trace& trace, const ValidateOptions& options = {});

// validate() in steps, so a page can draw between them: the same report in the end. `trace`
// must outlive it and not change meanwhile.
class Validator {
 public:
  explicit Validator(const Trace& trace, const ValidateOptions& options = {});
  ~Validator();
  // Checks the next part: the whole-trace checks and the id index, or up to `max_nodes` nodes,
  // or the cycles, or the timing. True once everything is checked (then take_report()).
  bool step(uint32_t max_nodes);
  ValidationReport take_report();

 private:
  class Checker;
  std::unique_ptr<Checker> checker_;
};

// {"errors": n, "warnings": n, "counts": {...}, "findings": [{severity, code, message, node, id}]}
void write_report_json(const Trace& trace, const ValidationReport& report, JsonWriter& w);

// True when most nodes carry fields above number 10: a pre-0.0.4 Chakra "execution graph"
// (.eg) trace, whose node types and fields are numbered differently from today's schema.
bool looks_like_legacy_schema(const Trace& trace);

// `node id 40 "aten::mm"`: how findings name nodes.
std::string describe_node(const Trace& trace, uint32_t n);

// An attribute's value as one line of text: numbers, quoted strings, lists as [a, b, …] cut
// after `max_elements` elements.
std::string attr_value_text(const Trace& trace, const AttrView& attr, size_t max_elements = 16);

}  // namespace chakra
