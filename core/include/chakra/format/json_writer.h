// Streaming JSON output with Python json.dumps-compatible layout.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
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
// flush() pushes buffered text to the sink (also done automatically every 64 KiB).
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
  // A string the caller knows needs no escaping (json_plain_prefix(s) == s.size()).
  JsonWriter& value_plain(std::string_view s);
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
  // Flushes at this fill; every write first asks room() for its bytes, so the hot path is
  // plain stores into one buffer instead of many std::string appends.
  static constexpr size_t kFlushAt = size_t{64} << 10;
  char* room(size_t n) {
    if (used_ + n > capacity_) make_room(n);
    return buf_.get() + used_;
  }
  void make_room(size_t n);
  // memcpy without a library call for the short pieces that dominate (separators, keys).
  static void copy_bytes(char* dst, const char* src, size_t n) {
    if (n > 16) {
      std::memcpy(dst, src, n);
    } else if (n >= 8) {  // two overlapping words
      uint64_t a, b;
      std::memcpy(&a, src, 8);
      std::memcpy(&b, src + n - 8, 8);
      std::memcpy(dst, &a, 8);
      std::memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, src, 4);
      std::memcpy(&b, src + n - 4, 4);
      std::memcpy(dst, &a, 4);
      std::memcpy(dst + n - 4, &b, 4);
    } else if (n > 0) {
      dst[0] = src[0];
      dst[n / 2] = src[n / 2];
      dst[n - 1] = src[n - 1];
    }
  }
  void put(std::string_view text) {
    copy_bytes(room(text.size()), text.data(), text.size());
    used_ += text.size();
  }
  void put_string(std::string_view s);        // as a JSON string literal
  void put_plain_string(std::string_view s);  // the same, for one that needs no escaping
  void before_value();
  void separate(bool with_item_sep);
  void open(char c);
  void close(char c);

  ByteSink& sink_;
  JsonStyle style_;
  std::string_view item_sep_, key_sep_;  // style_'s separators, measured once
  std::string separator_;                // item_sep_, then (indenting) "\n" and many spaces
  std::unique_ptr<char[]> buf_;          // uninitialised: only written bytes are touched
  size_t capacity_ = 0, used_ = 0;
  std::string scratch_;    // strings that need escaping, numbers that need formatting
  std::string has_items_;  // per open container: 1 once it has an item
  bool after_key_ = false;
};

}  // namespace chakra
