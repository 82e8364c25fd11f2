// Re-emitting JSON exactly as Python's `json.dump(obj, f, indent=4)` writes what `json.load`
// read: the reference tools round-trip their inputs through Python, so a byte-compatible port
// must reproduce Python's view of every value (int vs float, float repr, ASCII escapes, key
// order). Works on raw JSON text that a JsonPull pass has already validated.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace chakra::pyjson {

// A JSON number as Python holds it: an int (when written without '.', 'e' or 'E') or a float.
// Arithmetic follows Python: int op int stays int, anything with a float is a double.
struct Number {
  // One or the other, as is_int says: 16 bytes, not 24 (a large Kineto trace holds millions).
  union {
    int64_t i = 0;
    double f;
  };
  bool is_int = true;

  static Number of_int(int64_t v) {
    Number n;
    n.i = v;
    return n;
  }
  static Number of_float(double v) {
    Number n;
    n.f = v;
    n.is_int = false;
    return n;
  }
  double as_double() const { return is_int ? static_cast<double>(i) : f; }
};
inline Number add(Number a, Number b) {
  if (a.is_int && b.is_int) return Number::of_int(a.i + b.i);
  return Number::of_float(a.as_double() + b.as_double());
}
inline Number sub(Number a, Number b) {
  if (a.is_int && b.is_int) return Number::of_int(a.i - b.i);
  return Number::of_float(a.as_double() - b.as_double());
}
inline bool less(Number a, Number b) {
  if (a.is_int && b.is_int) return a.i < b.i;
  return a.as_double() < b.as_double();
}
// Parses JSON number text (NaN / Infinity / -Infinity included). Integers beyond int64 become
// floats, as close as Python's float() of them.
Number parse_number(std::string_view text);
// json.dumps of the number: "12", "12.5", "1e-05", "NaN", "Infinity".
void append_number(std::string& out, Number n);

// Offset of the first byte at or after `p` that is not JSON whitespace.
size_t skip_space(std::string_view text, size_t p);
// Offset just past the JSON value starting at `p` (which must be valid JSON).
size_t skip_value(std::string_view text, size_t p);

// The renderer's output: bytes written through a raw cursor, room checked once per token. It
// writes about four bytes for each byte it reads, a few at a time, and std::string's bookkeeping
// on every short append (capacity check, terminator, an out-of-line copy) was half its cost.
class OutBuffer {
 public:
  OutBuffer() = default;
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;
  ~OutBuffer() { std::free(data_); }

  std::string_view view() const { return {data_, size_}; }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }
  // At least `n` writable bytes past the end; set_end() after writing some of them.
  char* room(size_t n) { return capacity_ - size_ >= n ? data_ + size_ : grow(n); }
  void set_end(const char* end) { size_ = static_cast<size_t>(end - data_); }
  OutBuffer& operator+=(std::string_view s) {
    char* w = room(s.size());
    if (!s.empty()) std::memcpy(w, s.data(), s.size());
    size_ += s.size();
    return *this;
  }
  OutBuffer& operator+=(char c) {
    *room(1) = c;
    ++size_;
    return *this;
  }

 private:
  char* grow(size_t n);
  char* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0;
};

// Appends the value at `p` as json.dump(indent=4) writes it when the value sits at nesting
// `depth` (its members are indented by 4 * (depth + 1) spaces). Returns the offset after it.
size_t render_value(std::string_view text, size_t p, int depth, OutBuffer& out);
size_t render_value(std::string_view text, size_t p, int depth, std::string& out);
// Appends a JSON string token (raw text starting at its opening quote) with ensure_ascii
// escaping. Returns the offset after the closing quote.
size_t render_string(std::string_view text, size_t p, OutBuffer& out);

}  // namespace chakra::pyjson
