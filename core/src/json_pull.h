// A pull parser over a JSON byte stream: the caller walks the document (objects, arrays,
// scalars) and the parser keeps only a sliding window of the input, so multi-gigabyte PyTorch
// traces are read in constant memory. Values can be rendered straight into Python's repr()
// form, which the Chakra PyTorch converter stores in IOInfo strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "chakra/io.h"

namespace chakra {

class JsonPull {
 public:
  enum class Kind : uint8_t { Object, Array, String, Number, Bool, Null, End };

  // `in` must outlive the parser; errors name in.name() and the byte offset.
  explicit JsonPull(ByteSource& in);

  // Kind of the next value (skipping whitespace). End: at the end of the input.
  Kind peek();

  // Objects: begin_object(), then next_key(key) until it returns false (consumes '}').
  void begin_object();
  bool next_key(std::string& key);
  // Arrays: begin_array(), then next_element() until it returns false (consumes ']').
  void begin_array();
  bool next_element();

  void read_string(std::string& out);  // decoded UTF-8
  // Numbers: the raw text (as written) and whether it is an integer literal.
  std::string_view read_number_text(bool& is_integer);
  int64_t read_int64();     // an integer literal (or a float with an integral value)
  double read_double();     // any number
  bool read_bool();
  void read_null();
  void skip();              // any value

  // Appends Python's repr() of the next value as json.load would build it: lists, dicts,
  // 'strings', ints, floats in shortest round-trip form, True/False/None.
  void repr(std::string& out);

  // Position of the next unread byte in the decompressed input.
  uint64_t offset() const { return consumed_ + pos_; }
  [[noreturn]] void fail(const std::string& what) const;

  // Deepest nesting accepted (hostile inputs).
  static constexpr int kMaxDepth = 512;

 private:
  bool fill();                 // reads more; keeps bytes from keep_ on; false at EOF
  char peek_char();            // next non-whitespace byte, 0 at EOF
  void expect(char c);
  void open(char c);           // consumes '{' or '['
  bool next_in(char close);    // comma handling shared by next_key / next_element
  void scan_string(std::string& out);
  void repr_string(std::string_view s, std::string& out);
  void repr_number(std::string& out);
  void repr_depth(std::string& out, int depth);
  void skip_depth(int depth);

  ByteSource& in_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;   // bytes dropped from the front of buf_
  bool eof_ = false;
  std::string first_;        // per open container: '1' until its first member was read
  std::string scratch_;
};

// Python repr() of a float (shortest round trip: 0.1, 1e-05, 1e+16, 100.0, inf, nan).
void append_python_float(double v, std::string& out);
// Python repr() of a str.
void append_python_string(std::string_view utf8, std::string& out);

}  // namespace chakra
