#include "chakra/format/json_pull.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "chakra/support/error.h"
#include "chakra/support/swar.h"
#include "chakra/support/text.h"

namespace chakra {
namespace {

constexpr size_t kHuge = 2 << 20;

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A validated JSON number literal as a double.
double parse_double(std::string_view literal) {
  double v = 0;
  if (parse_plain_decimal(literal, v)) return v;
#if __cpp_lib_to_chars >= 201611L
  auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), v);
  // from_chars reports out-of-range literals (1e999, 1e-999) where strtod gives +-inf or 0.
  if (ec != std::errc::result_out_of_range) return v;
#endif
  return std::strtod(std::string(literal).c_str(), nullptr);
}

}  // namespace

char* allocate_input_buffer(size_t& bytes) {
  bytes = (bytes + kHuge - 1) / kHuge * kHuge;
  char* p = static_cast<char*>(std::aligned_alloc(kHuge, bytes));
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

JsonPull::JsonPull(ByteSource& in, size_t window_bytes) : in_(in), window_bytes_(std::max<size_t>(window_bytes, 64)) {
  std::string_view window;
  if (!in_.map(0, window_bytes_, window)) return;  // read() into our own buffer instead
  mapped_ = true;
  buf_ = window;
  base_ = buf_.data();
  size_ = buf_.size();
  eof_ = size_ < window_bytes_;
}

JsonPull::JsonPull(ByteSource& named, std::string_view whole)
    : in_(named), size_(whole.size()), buf_(whole), base_(whole.data()), eof_(true) {}

void JsonPull::fail(const std::string& what) const {
  throw Error(in_.name() + ": byte " + std::to_string(offset()) + ": " + what);
}

bool JsonPull::fill() {
  if (eof_) return false;
  if (mapped_) {
    // A new window from the first unread byte on; one that cannot hold a long token grows.
    const uint64_t at = consumed_ + pos_;
    const size_t keep = size_ - pos_;
    const size_t want = std::max(window_bytes_, 2 * keep);
    std::string_view window;
    if (!in_.map(at, want, window)) fail("the input could not be mapped any further");
    consumed_ = at;
    pos_ = 0;
    buf_ = window;
    base_ = buf_.data();
    size_ = buf_.size();
    if (size_ < want) eof_ = true;
    return size_ > keep;
  }
  // Move the unread bytes to the front, grow if a single token needs it, then append a chunk.
  if (pos_ > 0) {
    std::memmove(storage_.get(), storage_.get() + pos_, size_ - pos_);
    size_ -= pos_;
    consumed_ += pos_;
    pos_ = 0;
  }
  // Read a quarter window at a time (a quarter of a mapped window's memory).
  const size_t chunk = window_bytes_ / 4;
  if (capacity_ - size_ < chunk) {
    size_t grown = std::max(capacity_ * 2, size_ + chunk);
    Storage next(allocate_input_buffer(grown));
    if (size_) std::memcpy(next.get(), storage_.get(), size_);
    storage_ = std::move(next);
    capacity_ = grown;
  }
  size_t n = in_.read(reinterpret_cast<uint8_t*>(storage_.get() + size_), chunk);
  size_ += n;
  buf_ = std::string_view(storage_.get(), size_);
  base_ = buf_.data();
  if (n == 0) eof_ = true;
  return n > 0;
}

void JsonPull::fail_expected(char wanted, char got) const {
  if (got == 0) fail(std::string("unexpected end of input, expected '") + wanted + "' (truncated file?)");
  fail(std::string("expected '") + wanted + "', found '" + got + "'");
}

void JsonPull::fail_unexpected(char got) const { fail(std::string("unexpected character '") + got + "'"); }

void JsonPull::fail_in_container(char close, char got) const {
  if (got == 0) fail("unexpected end of input inside a JSON container (truncated file?)");
  fail(std::string("expected ',' or '") + close + "', found '" + got + "'");
}

void JsonPull::fail_too_deep() const { fail("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels"); }

char JsonPull::skip_spaces() {
  for (;;) {
#if defined(__SSE2__)
    // Indented JSON is mostly a newline and a run of spaces before each token: look at 32 bytes
    // at once, so that indents up to 31 need no second round (the round count was mispredicted).
    // Only ' ' and '\n' are matched here; '\t' and '\r' are stepped over one at a time.
    while (size_ - pos_ >= 32) {
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base_ + pos_));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base_ + pos_ + 16));
      const __m128i space_lo =
          _mm_or_si128(_mm_cmpeq_epi8(lo, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(lo, _mm_set1_epi8('\n')));
      const __m128i space_hi =
          _mm_or_si128(_mm_cmpeq_epi8(hi, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(hi, _mm_set1_epi8('\n')));
      const uint32_t space = static_cast<uint32_t>(_mm_movemask_epi8(space_lo)) |
                             (static_cast<uint32_t>(_mm_movemask_epi8(space_hi)) << 16);
      if (space != 0xFFFFFFFFu) {
        pos_ += static_cast<size_t>(__builtin_ctz(~space));
        const char c = base_[pos_];
        if (c != '\t' && c != '\r') return c;
        ++pos_;
        continue;
      }
      pos_ += 32;
    }
#else
    // Runs of spaces 8 bytes at a time.
    while (size_ - pos_ >= 8 && swar::load8(base_ + pos_) == 0x2020202020202020ull) pos_ += 8;
#endif
    while (pos_ < size_ && is_space(base_[pos_])) ++pos_;
    if (pos_ < size_) return base_[pos_];
    if (!fill()) return 0;
  }
}

// From p, over plain string bytes many at a time: the result is at or shortly before the first
// '"', '\\' or control character (the caller finishes bytewise).
size_t JsonPull::skip_plain_string_bytes(size_t p) const {
#if defined(__SSE2__)
  while (size_ - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base_ + p));
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
    const __m128i special = _mm_or_si128(
        control, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask) return p + static_cast<size_t>(__builtin_ctz(mask));
    p += 16;
  }
#else
  for (; size_ - p >= 8; p += 8) {
    const uint64_t w = swar::load8(base_ + p);
    if (swar::has_byte(w, '"') | swar::has_byte(w, '\\') | swar::has_below(w, 0x20)) return p;
  }
#endif
  return p;
}

bool JsonPull::plain_string(std::string_view& view) {
  const size_t start = pos_ + 1;
  size_t p = skip_plain_string_bytes(start);
  while (p < size_ && base_[p] != '"' && base_[p] != '\\' && static_cast<unsigned char>(base_[p]) >= 0x20) ++p;
  if (p >= size_ || base_[p] != '"') return false;
  view = std::string_view(base_ + start, p - start);
  pos_ = p + 1;
  return true;
}

void JsonPull::scan_string(std::string& out) {
  expect('"');
  out.clear();
  for (;;) {
    // Copy a run of plain bytes.
    size_t start = pos_;
    pos_ = skip_plain_string_bytes(pos_);
    while (pos_ < buf_.size()) {
      char c = buf_[pos_];
      if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) break;
      ++pos_;
    }
    out.append(buf_.data() + start, pos_ - start);
    if (pos_ >= buf_.size()) {
      if (!fill()) fail("unexpected end of input inside a string (truncated file?)");
      continue;
    }
    char c = buf_[pos_];
    if (c == '"') {
      ++pos_;
      return;
    }
    if (c != '\\') fail("control character inside a string");
    // Escapes: make sure the whole sequence is in the buffer.
    while (buf_.size() - pos_ < 12 && fill()) {}
    if (buf_.size() - pos_ < 2) fail("unexpected end of input inside a string (truncated file?)");
    char e = buf_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto hex4 = [&](size_t at) -> uint32_t {
          if (buf_.size() < at + 4) fail("truncated \\u escape");
          uint32_t v = 0;
          for (size_t k = 0; k < 4; ++k) {
            char h = buf_[at + k];
            v <<= 4;
            if (h >= '0' && h <= '9')
              v |= static_cast<uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f')
              v |= static_cast<uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
              v |= static_cast<uint32_t>(h - 'A' + 10);
            else
              fail("bad \\u escape");
          }
          return v;
        };
        uint32_t cp = hex4(pos_);
        pos_ += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && buf_.size() >= pos_ + 6 && buf_[pos_] == '\\' && buf_[pos_ + 1] == 'u') {
          uint32_t lo = hex4(pos_ + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            pos_ += 6;
          }
        }
        append_utf8(cp, out);
        break;
      }
      default: fail(std::string("bad escape '\\") + e + "' in string");
    }
  }
}

void JsonPull::read_string(std::string& out) {
  if (peek_char() != '"') fail("expected a string");
  scan_string(out);
}

std::string_view JsonPull::read_number_text(bool& is_integer) {
  peek_char();
  // A number is short; make sure it is entirely in the buffer.
  while (size_ - pos_ < 64 && fill()) {}
  // Locals, not members: the scan then runs in registers (a store through is_integer could
  // alias the members and make the compiler reload them per byte).
  const char* const start = base_ + pos_;
  const char* const end = base_ + size_;
  const char* p = start;
  auto digits = [&] {
    const char* from = p;
    // Eight bytes at a time: a byte is a digit iff its high nibble is 3 and adding 6 keeps it
    // so (a carry out of a non-digit byte only disturbs bytes after the first non-digit).
    while (end - p >= 8) {
      const uint64_t w = swar::load8(p);
      const uint64_t not_digit = ((w & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
                                 (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull);
      if (not_digit) {
        p += __builtin_ctzll(not_digit) / 8;
        return p != from;
      }
      p += 8;
    }
    while (p < end && static_cast<unsigned char>(*p - '0') < 10) ++p;
    return p != from;
  };
  // Python's json writes NaN and +-Infinity; only a leading letter can start them.
  const char lead = p < end ? *p : 0;
  if (lead == 'N' || lead == 'I' || (lead == '-' && p + 1 < end && p[1] == 'I')) {
    const std::string_view rest(start, static_cast<size_t>(end - start));
    for (std::string_view lit : {"NaN", "Infinity", "-Infinity"})
      if (rest.substr(0, lit.size()) == lit) {
        pos_ += lit.size();
        is_integer = false;
        return {start, lit.size()};
      }
    fail("malformed number");
  }
  bool integer = true;
  if (lead == '-') ++p;
  if (!digits()) fail("malformed number");
  if (p < end && *p == '.') {
    integer = false;
    ++p;
    if (!digits()) fail("malformed number");
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    integer = false;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (!digits()) fail("malformed number");
  }
  const size_t length = static_cast<size_t>(p - start);
  pos_ += length;
  is_integer = integer;
  return {start, length};
}

double JsonPull::read_double() {
  bool is_int;
  std::string_view t = read_number_text(is_int);
  if (t == "NaN") return std::nan("");
  if (t == "Infinity") return HUGE_VAL;
  if (t == "-Infinity") return -HUGE_VAL;
  return parse_double(t);
}

int64_t JsonPull::read_int64() {
  bool is_int;
  std::string_view t = read_number_text(is_int);
  int64_t v = 0;
  if (is_int) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc()) fail("integer " + std::string(t) + " does not fit in 64 bits");
    return v;
  }
  double d = parse_double(t);
  if (!(d >= -9.2e18 && d <= 9.2e18)) fail("number " + std::string(t) + " is not a 64-bit integer");
  return static_cast<int64_t>(d);
}

bool JsonPull::read_bool() {
  peek_char();
  while (buf_.size() - pos_ < 5 && fill()) {}
  std::string_view rest(buf_.data() + pos_, buf_.size() - pos_);
  if (rest.substr(0, 4) == "true") {
    pos_ += 4;
    return true;
  }
  if (rest.substr(0, 5) == "false") {
    pos_ += 5;
    return false;
  }
  fail("expected true or false");
}

void JsonPull::read_null() {
  peek_char();
  while (buf_.size() - pos_ < 4 && fill()) {}
  if (std::string_view(buf_.data() + pos_, std::min<size_t>(4, buf_.size() - pos_)) != "null") fail("expected null");
  pos_ += 4;
}

void JsonPull::skip() { skip_depth(0); }

void JsonPull::skip_depth(int depth) {
  switch (peek()) {
    case Kind::Object:
      begin_object();
      for (std::string_view key; next_key(key);) skip_depth(depth + 1);
      break;
    case Kind::Array:
      begin_array();
      while (next_element()) skip_depth(depth + 1);
      break;
    case Kind::String: read_string_view(); break;
    case Kind::Number: {
      bool i;
      read_number_text(i);
      break;
    }
    case Kind::Bool: read_bool(); break;
    case Kind::Null: read_null(); break;
    case Kind::End: fail("unexpected end of input (truncated file?)");
  }
}

void JsonPull::repr(std::string& out) { repr_depth(out, 0); }

void JsonPull::repr_number(std::string& out) {
  bool is_int;
  std::string_view t = read_number_text(is_int);
  if (is_int) {
    if (t == "-0")
      out += '0';
    else
      out.append(t);
    return;
  }
  if (t == "NaN") {
    out += "nan";
    return;
  }
  if (t == "Infinity") {
    out += "inf";
    return;
  }
  if (t == "-Infinity") {
    out += "-inf";
    return;
  }
  append_python_float(out, parse_double(t));
}

void JsonPull::repr_depth(std::string& out, int depth) {
  switch (peek()) {
    case Kind::Object: {
      begin_object();
      out += '{';
      bool first = true;
      std::string key;
      while (next_key(key)) {
        if (!first) out += ", ";
        first = false;
        append_python_string(out, key);
        out += ": ";
        repr_depth(out, depth + 1);
      }
      out += '}';
      break;
    }
    case Kind::Array: {
      begin_array();
      out += '[';
      bool first = true;
      while (next_element()) {
        if (!first) out += ", ";
        first = false;
        repr_depth(out, depth + 1);
      }
      out += ']';
      break;
    }
    case Kind::String:
      scan_string(scratch_);
      append_python_string(out, scratch_);
      break;
    case Kind::Number: repr_number(out); break;
    case Kind::Bool: out += read_bool() ? "True" : "False"; break;
    case Kind::Null:
      read_null();
      out += "None";
      break;
    case Kind::End: fail("unexpected end of input (truncated file?)");
  }
}

}  // namespace chakra
