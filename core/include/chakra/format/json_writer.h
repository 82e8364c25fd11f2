// Streaming JSON output with Python json.dumps-compatible layout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/format/io.h"

namespace chakra {

struct JsonStyle {
  int indent = 0;              // 0: one line
  bool ascii_only = false;     // escape non-ASCII as \uXXXX (Python's ensure_ascii)
  const char* item_sep = ",";  // between items; a newline and indentation follow when indenting
  const char* key_sep = ":";   // between a key and its value

  static JsonStyle compact() { return {}; }
  // json.dumps(obj, indent=n): items separated by ",\n", keys by ": ".
  static JsonStyle python_indent(int n, bool ascii_only) { return {n, ascii_only, ",", ": "}; }
  // json.dumps(obj) with default separators: ", " and ": ".
  static JsonStyle python_line() { return {0, false, ", ", ": "}; }
};

// Writes one JSON value (or several, back to back) to a sink. Calls must nest correctly;
// flush() pushes buffered text to the sink (also done automatically every megabyte).
class JsonWriter {
 public:
  explicit JsonWriter(ByteSink& sink, JsonStyle style = {});

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value_int(int64_t v);
  JsonWriter& value_uint(uint64_t v);
  JsonWriter& value_double(double v);  // Python repr; NaN and infinities as proto3 JSON strings
  JsonWriter& value_null();
  // Text already formatted as a JSON value.
  JsonWriter& value_raw(std::string_view json);
  // Raw text between values (e.g. the newline ending a JSON Lines record).
  void raw(std::string_view text);
  void flush();

 private:
  void before_value();
  void separate(bool with_item_sep);
  void open(char c);
  void close(char c);
  void maybe_flush() {
    if (buf_.size() >= (1u << 20)) flush();
  }

  ByteSink& sink_;
  JsonStyle style_;
  std::string_view item_sep_, key_sep_;  // style_'s separators, measured once
  std::string separator_;                // item_sep_, then (indenting) "\n" and many spaces
  std::string buf_;
  std::string has_items_;  // per open container: 1 once it has an item
  bool after_key_ = false;
};

}  // namespace chakra
