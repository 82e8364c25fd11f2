// Re-emitting JSON exactly as Python's `json.dump(obj, f, indent=4)` writes what `json.load`
// read: the reference tools round-trip their inputs through Python, so a byte-compatible port
// must reproduce Python's view of every value (int vs float, float repr, ASCII escapes, key
// order). Works on raw JSON text that a JsonPull pass has already validated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chakra::pyjson {

// A JSON number as Python holds it: an int (when written without '.', 'e' or 'E') or a float.
// Arithmetic follows Python: int op int stays int, anything with a float is a double.
struct Number {
  int64_t i = 0;
  double f = 0;
  bool is_int = true;

  static Number of_int(int64_t v) { return {v, 0, true}; }
  static Number of_float(double v) { return {0, v, false}; }
  double as_double() const { return is_int ? static_cast<double>(i) : f; }
};
Number add(Number a, Number b);
Number sub(Number a, Number b);
bool less(Number a, Number b);
// Parses JSON number text (NaN / Infinity / -Infinity included). Integers beyond int64 become
// floats, as close as Python's float() of them.
Number parse_number(std::string_view text);
// json.dumps of the number: "12", "12.5", "1e-05", "NaN", "Infinity".
void append_number(std::string& out, Number n);

// Offset of the first byte at or after `p` that is not JSON whitespace.
size_t skip_space(std::string_view text, size_t p);
// Offset just past the JSON value starting at `p` (which must be valid JSON).
size_t skip_value(std::string_view text, size_t p);
// Appends the value at `p` as json.dump(indent=4) writes it when the value sits at nesting
// `depth` (its members are indented by 4 * (depth + 1) spaces). Returns the offset after it.
size_t render_value(std::string_view text, size_t p, int depth, std::string& out);
// Appends a JSON string token (raw text starting at its opening quote) with ensure_ascii
// escaping. Returns the offset after the closing quote.
size_t render_string(std::string_view text, size_t p, std::string& out);
// Newline plus 4 * depth spaces.
void newline_indent(std::string& out, int depth);

}  // namespace chakra::pyjson
