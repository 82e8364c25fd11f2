// A pull parser over a JSON byte stream: the caller walks the document (objects, arrays,
// scalars) and the parser keeps only a sliding window of the input, so multi-gigabyte PyTorch
// traces are read in constant memory. A regular file is mapped a window at a time
// (ByteSource::map) instead of copied out of the page cache; other inputs are read into a
// buffer of the parser's own. Values can be rendered straight into Python's repr() form, which
// the Chakra PyTorch converter stores in IOInfo strings.
//
// Why not simdjson (Debian's libsimdjson-dev): `chakra_bench --side-by-side` measures both on
// the same document in memory; simdjson 3.0.1 On-Demand walks it 1.3× (Intel Xeon) to 2.2×
// (AMD EPYC) faster, but only over the whole document held in one padded buffer plus its index
// of structural characters: for the converter's 792 MB benchmark input that is four times the
// converter's whole peak memory now, and far above its target of a quarter of the reference's.
// This reader streams, and the wasm build needs it regardless.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <cstdlib>
#include <memory>

#include "chakra/format/io.h"
#include "chakra/support/error.h"

namespace chakra {

// Memory for parse windows and whole inputs: `bytes` is rounded up to 2 MiB, the block is
// 2 MiB-aligned with a huge-page hint (on VMs each 4 KiB page fault is costly). Release it with
// std::free.
char* allocate_input_buffer(size_t& bytes);

class JsonPull {
 public:
  enum class Kind : uint8_t { Object, Array, String, Number, Bool, Null, End };

  // `in` must outlive the parser; errors name in.name() and the byte offset. `window_bytes`:
  // how much of the input is looked at at once (tests make it small to put many tokens across
  // window ends).
  explicit JsonPull(ByteSource& in, size_t window_bytes = kWindowBytes);
  // Parses `whole`, an input already in memory that must outlive the parser, without copying
  // it; `named` is not read, it only names the input in errors.
  JsonPull(ByteSource& named, std::string_view whole);

  // Kind of the next value (skipping whitespace). End: at the end of the input.
  Kind peek();
  bool at_end() { return peek_char() == 0; }
  // Whether one of the next 16 bytes (after whitespace) is a control character no JSON text
  // has: the input is binary (a protobuf .et given where JSON is expected, say).
  bool next_is_binary() {
    if (peek_char() == 0) return false;
    for (size_t p = pos_; p < size_ && p < pos_ + 16; ++p) {
      unsigned char c = static_cast<unsigned char>(base_[p]);
      if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return true;
    }
    return false;
  }

  // Objects: begin_object(), then next_key(key) until it returns false (consumes '}').
  void begin_object();
  bool next_key(std::string& key);
  // next_key without a copy: the key's decoded text, valid until the next call on this parser.
  bool next_key(std::string_view& key);
  // Arrays: begin_array(), then next_element() until it returns false (consumes ']').
  void begin_array();
  bool next_element();

  void read_string(std::string& out);  // decoded UTF-8
  // The decoded string, valid until the next call on this parser (no copy when it has no
  // escapes and lies in the current window).
  std::string_view read_string_view();
  // Numbers: the raw text (as written) and whether it is an integer literal.
  std::string_view read_number_text(bool& is_integer);
  int64_t read_int64();  // an integer literal (or a float with an integral value)
  double read_double();  // any number
  bool read_bool();
  void read_null();
  void skip();  // any value

  // Appends Python's repr() of the next value as json.load would build it: lists, dicts,
  // 'strings', ints, floats in shortest round-trip form, True/False/None.
  void repr(std::string& out);

  // Position of the next unread byte in the decompressed input.
  uint64_t offset() const { return consumed_ + pos_; }
  [[noreturn]] void fail(const std::string& what) const;

  // Deepest nesting accepted (hostile inputs).
  static constexpr int kMaxDepth = 512;
  static constexpr size_t kWindowBytes = size_t{4} << 20;

 private:
  bool fill();  // reads more; keeps bytes from keep_ on; false at EOF
  // Next non-whitespace byte, 0 at EOF. The common cases (none or one space before the token)
  // inline: it runs once per token.
  [[gnu::always_inline]] char peek_char() {
    if (size_ - pos_ >= 2) {
      const char c = base_[pos_];
      if (!is_space(c)) return c;
      if (c == ' ' && !is_space(base_[pos_ + 1])) return base_[++pos_];
    }
    return skip_spaces();
  }
  static bool is_space(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= ' ' && ((uint64_t{1} << u) & ((uint64_t{1} << ' ') | (1u << '\n') | (1u << '\r') | (1u << '\t')));
  }
  char skip_spaces();  // the rest of peek_char: runs of whitespace, refills
  void expect(char c);
  void open(char c);         // consumes '{' or '['
  bool next_in(char close);  // comma handling shared by next_key / next_element
  // The error paths of the per-token functions, out of line so that those stay small enough
  // to inline (a message built in place kept them out of line: 15% of convert's time).
  [[noreturn, gnu::cold]] void fail_expected(char wanted, char got) const;
  [[noreturn, gnu::cold]] void fail_unexpected(char got) const;
  [[noreturn, gnu::cold]] void fail_in_container(char close, char got) const;
  [[noreturn, gnu::cold]] void fail_too_deep() const;
  void scan_string(std::string& out);
  // At an opening quote: a string with no escape that ends inside the window, as a view of
  // it, moving past its closing quote; otherwise false and nothing consumed.
  bool plain_string(std::string_view& view);
  size_t skip_plain_string_bytes(size_t p) const;
  void repr_string(std::string_view s, std::string& out);
  void repr_number(std::string& out);
  void repr_depth(std::string& out, int depth);
  void skip_depth(int depth);

  ByteSource& in_;
  // Window over the input: bytes [pos_, size_) of buf_ are unread; capacity_ is allocated.
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  using Storage = std::unique_ptr<char[], Free>;
  Storage storage_;
  size_t capacity_ = 0, size_ = 0;
  std::string_view buf_;        // storage_[0, size_), or the whole in-memory input
  const char* base_ = nullptr;  // buf_.data()
  size_t pos_ = 0;
  uint64_t consumed_ = 0;  // bytes dropped from the front of buf_
  bool eof_ = false;
  // buf_ is a window the source maps (ByteSource::map), not storage_: a refill maps the next.
  bool mapped_ = false;
  size_t window_bytes_ = kWindowBytes;
  // Per open container, outermost first: true until its first member was read.
  bool awaiting_first_[kMaxDepth] = {};
  int depth_ = 0;
  std::string scratch_;
};

// ---- per-token operations, inline: they run for every token of multi-gigabyte inputs ----

[[gnu::always_inline]] inline void JsonPull::expect(char c) {
  const char got = peek_char();
  if (got != c) [[unlikely]]
    fail_expected(c, got);
  ++pos_;
}

[[gnu::always_inline]] inline JsonPull::Kind JsonPull::peek() {
  const char c = peek_char();
  switch (c) {
    case '{': return Kind::Object;
    case '[': return Kind::Array;
    case '"': return Kind::String;
    case 't':
    case 'f': return Kind::Bool;
    case 'n': return Kind::Null;
    case 0: return Kind::End;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return Kind::Number;
      if (c == 'N' || c == 'I') return Kind::Number;  // NaN, Infinity (Python's json accepts them)
      fail_unexpected(c);
  }
}

inline void JsonPull::open(char c) {
  expect(c);
  if (depth_ >= kMaxDepth) [[unlikely]]
    fail_too_deep();
  awaiting_first_[depth_++] = true;
}

[[gnu::always_inline]] inline bool JsonPull::next_in(char close) {
  const char c = peek_char();
  if (c == close) {
    ++pos_;
    --depth_;
    return false;
  }
  if (awaiting_first_[depth_ - 1]) {
    awaiting_first_[depth_ - 1] = false;
  } else {
    if (c != ',') [[unlikely]]
      fail_in_container(close, c);
    ++pos_;
  }
  return true;
}

inline void JsonPull::begin_object() { open('{'); }
inline void JsonPull::begin_array() { open('['); }

inline bool JsonPull::next_key(std::string& key) {
  if (!next_in('}')) return false;
  if (peek_char() != '"') fail("expected a string key in JSON object");
  scan_string(key);
  expect(':');
  return true;
}

[[gnu::always_inline]] inline bool JsonPull::next_key(std::string_view& key) {
  if (!next_in('}')) return false;
  if (peek_char() != '"') fail("expected a string key in JSON object");
  if (plain_string(key)) {
    // A colon right after the key is taken here: expect() could refill the window and move the
    // bytes the view points to.
    if (size_ - pos_ >= 2 && base_[pos_] == ':') {
      ++pos_;
      return true;
    }
    if (size_ - pos_ >= 2 && base_[pos_] == ' ' && base_[pos_ + 1] == ':') {
      pos_ += 2;
      return true;
    }
    scratch_.assign(key);
  } else {
    scan_string(scratch_);
  }
  key = scratch_;
  expect(':');
  return true;
}

[[gnu::always_inline]] inline std::string_view JsonPull::read_string_view() {
  if (peek_char() != '"') fail("expected a string");
  std::string_view view;
  if (plain_string(view)) return view;
  scan_string(scratch_);
  return scratch_;
}

[[gnu::always_inline]] inline bool JsonPull::next_element() {
  if (!next_in(']')) return false;
  return true;
}

}  // namespace chakra
