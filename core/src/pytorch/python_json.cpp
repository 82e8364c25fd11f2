#include "pytorch/python_json.h"

#include <algorithm>
#include <cerrno>
#include <new>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "chakra/support/text.h"

namespace chakra::pyjson {

Number parse_number(std::string_view text) {
  // Plain integers of up to 18 digits (every id and integral time) without strtoll.
  const size_t sign = !text.empty() && text[0] == '-';
  if (text.size() > sign && text.size() - sign <= 18) {
    int64_t v = 0;
    size_t k = sign;
    for (; k < text.size() && text[k] >= '0' && text[k] <= '9'; ++k) v = v * 10 + (text[k] - '0');
    if (k == text.size()) return Number::of_int(sign ? -v : v);
  }
  if (text.find_first_of(".eEIN") == std::string_view::npos) {
    const std::string s(text);  // strtoll needs a terminator
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno != ERANGE) return Number::of_int(v);
  }
  double v;
  if (parse_plain_decimal(text, v)) return Number::of_float(v);
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L && !defined(__EMSCRIPTEN__)
  // Correctly rounded as strtod, without a copy or the locale: Kineto's microsecond times with
  // three decimals (19 digits) were a quarter of reading a Kineto trace. Out of range: strtod.
  const char* const end = text.data() + text.size();
  if (const auto r = std::from_chars(text.data(), end, v); r.ec == std::errc() && r.ptr == end)
    return Number::of_float(v);
#endif
  return Number::of_float(std::strtod(std::string(text).c_str(), nullptr));
}

void append_number(std::string& out, Number n) {
  if (n.is_int) {
    append_int(out, n.i);
  } else if (std::isnan(n.f)) {
    out += "NaN";
  } else if (std::isinf(n.f)) {
    out += n.f > 0 ? "Infinity" : "-Infinity";
  } else {
    append_python_float(out, n.f);
  }
}

size_t skip_space(std::string_view t, size_t p) {
  while (p < t.size() && (t[p] == ' ' || t[p] == '\n' || t[p] == '\r' || t[p] == '\t')) ++p;
  return p;
}

// Out of line: inlined, its call saves registers on every room() check's fast path.
__attribute__((noinline)) char* OutBuffer::grow(size_t n) {
  const size_t wanted = std::max({capacity_ * 2, size_ + n, size_t{1} << 16});
  char* grown = static_cast<char*>(std::realloc(data_, wanted));
  if (!grown) throw std::bad_alloc();
  data_ = grown;
  capacity_ = wanted;
  return data_ + size_;
}

namespace {

// Offset of the closing quote of the string whose opening quote is at p.
size_t string_end(std::string_view t, size_t p) {
  size_t q = p + 1;
  for (;;) {
    const void* hit = std::memchr(t.data() + q, '"', t.size() - q);
    if (!hit) return t.size() - 1;  // unreachable for validated text
    size_t at = static_cast<size_t>(static_cast<const char*>(hit) - t.data());
    size_t backslashes = 0;
    while (at - backslashes > p + 1 && t[at - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return at;
    q = at + 1;
  }
}

bool is_number_byte(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// Newline plus 4 * depth spaces. Inlined: it runs before every member and element.
__attribute__((always_inline)) inline void newline_indent(OutBuffer& out, int depth) {
  // A fixed-size copy of the longest usual indent (a linked trace's values sit 3 to 8 levels
  // deep), the end set where this depth's indent ends.
  static constexpr char kIndent[] = "\n                                ";
  constexpr size_t kFixed = sizeof kIndent - 1;
  const size_t n = static_cast<size_t>(depth) * 4 + 1;
  char* w = out.room(std::max(n, kFixed));
  if (n <= kFixed) {
    std::memcpy(w, kIndent, kFixed);
  } else {
    w[0] = '\n';
    std::memset(w + 1, ' ', n - 1);
  }
  out.set_end(w + n);
}

// Writes \uXXXX at w (6 bytes); returns the end.
char* put_u(char* w, uint32_t v) {
  static const char kHex[] = "0123456789abcdef";
  *w++ = '\\';
  *w++ = 'u';
  for (int shift = 12; shift >= 0; shift -= 4) *w++ = kHex[(v >> shift) & 0xf];
  return w;
}

// One character (code unit for \u escapes) in ensure_ascii form at w (at most 6 bytes); returns
// the end.
char* put_ascii_char(char* w, uint32_t v) {
  char escape = 0;
  switch (v) {
    case '"': escape = '"'; break;
    case '\\': escape = '\\'; break;
    case '\n': escape = 'n'; break;
    case '\r': escape = 'r'; break;
    case '\t': escape = 't'; break;
    case '\b': escape = 'b'; break;
    case '\f': escape = 'f'; break;
    default: break;
  }
  if (escape) {
    *w++ = '\\';
    *w++ = escape;
  } else if (v >= 0x20 && v <= 0x7e) {
    *w++ = static_cast<char>(v);
  } else {
    w = put_u(w, v);
  }
  return w;
}

uint32_t hex4(std::string_view t, size_t p) {
  uint32_t v = 0;
  for (size_t k = 0; k < 4 && p + k < t.size(); ++k) {
    char h = t[p + k];
    v <<= 4;
    if (h >= '0' && h <= '9')
      v |= static_cast<uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f')
      v |= static_cast<uint32_t>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F')
      v |= static_cast<uint32_t>(h - 'A' + 10);
  }
  return v;
}

// Decodes the UTF-8 sequence at p; returns its length (0 if invalid).
size_t utf8_at(std::string_view t, size_t p, uint32_t* cp) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(t[p + k]); };
  uint8_t c = b(0);
  size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (len == 0 || len > 4 || p + len > t.size()) return 0;
  uint32_t v = c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3f);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return len;
}

// Appends t[begin, end). Tokens are short: 16 bytes at a time instead of a call to memcpy,
// reading and writing up to 15 bytes past the end where both buffers have them.
inline void copy_token(std::string_view t, size_t begin, size_t end, OutBuffer& out) {
  const size_t n = end - begin;
#if defined(__SSE2__)
  const size_t rounded = (n + 15) & ~size_t{15};
  if (t.size() - begin >= rounded) {
    char* w = out.room(rounded);
    for (size_t k = 0; k < rounded; k += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(w + k),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.data() + begin + k)));
    out.set_end(w + n);
    return;
  }
#endif
  out += t.substr(begin, n);
}

}  // namespace

size_t render_string(std::string_view t, size_t p, OutBuffer& out) {
  // The common case in one pass: printable ASCII up to the closing quote, copied as it is.
  size_t q = p + 1;
#if defined(__SSE2__)
  // 16 bytes at a time (op schemas and names run to tens of bytes): a signed compare below 0x20
  // also catches every byte >= 0x80.
  while (t.size() - q >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.data() + q));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f))),
                     _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
    if (const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(special))) {
      q += static_cast<size_t>(__builtin_ctz(mask));
      break;
    }
    q += 16;
  }
#endif
  while (q < t.size()) {
    const uint8_t c = static_cast<uint8_t>(t[q]);
    if (c == '"') {
      copy_token(t, p, q + 1, out);
      return q + 1;
    }
    if (c < 0x20 || c >= 0x7f || c == '\\') break;
    ++q;
  }
  const size_t end = string_end(t, p);
  out += t.substr(p, q - p);
  while (q < end) {
    char* w = out.room(12);  // the most one input character becomes: a surrogate pair
    uint8_t c = static_cast<uint8_t>(t[q]);
    if (c == '\\') {
      char e = t[q + 1];
      if (e == 'u') {
        w = put_ascii_char(w, hex4(t, q + 2));
        q += 6;
      } else {
        static const char kFrom[] = "\"\\/bfnrt";
        static const char kTo[] = "\"\\/\b\f\n\r\t";
        const char* k = std::strchr(kFrom, e);
        w = put_ascii_char(w, k ? static_cast<uint8_t>(kTo[k - kFrom]) : static_cast<uint8_t>(e));
        q += 2;
      }
    } else if (c >= 0x80) {
      uint32_t cp = 0xfffd;
      size_t len = utf8_at(t, q, &cp);
      q += len ? len : 1;
      if (cp >= 0x10000) {
        cp -= 0x10000;
        w = put_u(put_u(w, 0xd800 + (cp >> 10)), 0xdc00 + (cp & 0x3ff));
      } else {
        w = put_ascii_char(w, cp);
      }
    } else {
      w = put_ascii_char(w, c);
      ++q;
    }
    out.set_end(w);
  }
  out += '"';
  return end + 1;
}

size_t skip_value(std::string_view t, size_t p) {
  p = skip_space(t, p);
  char c = t[p];
  if (c == '"') return string_end(t, p) + 1;
  if (c == '{' || c == '[') {
    int depth = 0;
    for (; p < t.size(); ++p) {
      char d = t[p];
      if (d == '"')
        p = string_end(t, p);
      else if (d == '{' || d == '[')
        ++depth;
      else if ((d == '}' || d == ']') && --depth == 0)
        return p + 1;
    }
    return t.size();
  }
  if (c == 't' || c == 'n') return p + 4;
  if (c == 'f') return p + 5;
  if (c == 'N') return p + 3;
  if (c == 'I') return p + 8;
  if (c == '-' && p + 1 < t.size() && t[p + 1] == 'I') return p + 9;
  while (p < t.size() && is_number_byte(t[p])) ++p;
  return p;
}

namespace {

// A string, number or literal starting at p. Returns the offset after it.
__attribute__((always_inline)) inline size_t render_scalar(std::string_view t, size_t p, OutBuffer& out) {
  const char c = t[p];
  if (c == '"') return render_string(t, p, out);
  if ((c >= '0' && c <= '9') || (c == '-' && p + 1 < t.size() && t[p + 1] != 'I')) {
    // A number, scanned once: ints of any size print as written (Python's int("-0") is 0),
    // floats as Python's repr.
    size_t end = p;
    bool is_float = false, nonzero = false;
    for (; end < t.size() && is_number_byte(t[end]); ++end) {
      const char d = t[end];
      is_float |= d == '.' || d == 'e' || d == 'E';
      nonzero |= d >= '1' && d <= '9';
    }
    const std::string_view token = t.substr(p, end - p);
    if (is_float) {
      thread_local std::string repr;  // reused: a float's repr is longer than std::string holds inline
      repr.clear();
      append_number(repr, parse_number(token));
      out += repr;
    } else if (!nonzero) {
      out += '0';
    } else {
      copy_token(t, p, end, out);
    }
    return end;
  }
  const size_t end = skip_value(t, p);  // true, false, null, NaN, Infinity, -Infinity
  out += t.substr(p, end - p);
  return end;
}

}  // namespace

size_t render_value(std::string_view t, size_t p, int depth, OutBuffer& out) {
  p = skip_space(t, p);
  const char c = t[p];
  if (c != '{' && c != '[') return render_scalar(t, p, out);
  const char close = c == '{' ? '}' : ']';
  size_t q = skip_space(t, p + 1);
  out += c;
  if (t[q] == close) {
    out += close;
    return q + 1;
  }
  for (;;) {
    newline_indent(out, depth + 1);
    if (c == '{') {
      q = render_string(t, q, out);
      q = skip_space(t, skip_space(t, q) + 1);  // past ':'
      out += ": ";
    }
    // Scalars without a call: most members and elements are.
    q = t[q] == '{' || t[q] == '[' ? render_value(t, q, depth + 1, out) : render_scalar(t, q, out);
    q = skip_space(t, q);
    if (t[q] == ',') {
      out += ',';
      q = skip_space(t, q + 1);
      continue;
    }
    newline_indent(out, depth);
    out += close;
    return q + 1;
  }
}

size_t render_value(std::string_view t, size_t p, int depth, std::string& out) {
  thread_local OutBuffer rendered;  // reused: this serves a few small values per node
  rendered.clear();
  const size_t end = render_value(t, p, depth, rendered);
  out += rendered.view();
  return end;
}

}  // namespace chakra::pyjson
