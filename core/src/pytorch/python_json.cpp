#include "python_json.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "chakra/support/text.h"

namespace chakra::pyjson {

Number add(Number a, Number b) {
  if (a.is_int && b.is_int) return Number::of_int(a.i + b.i);
  return Number::of_float(a.as_double() + b.as_double());
}

Number sub(Number a, Number b) {
  if (a.is_int && b.is_int) return Number::of_int(a.i - b.i);
  return Number::of_float(a.as_double() - b.as_double());
}

bool less(Number a, Number b) {
  if (a.is_int && b.is_int) return a.i < b.i;
  return a.as_double() < b.as_double();
}

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
  if (const auto r = std::from_chars(text.data(), end, v); r.ec == std::errc() && r.ptr == end) return Number::of_float(v);
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

void newline_indent(std::string& out, int depth) {
  // One append for the usual depths (a linked trace's values sit 3 to 8 levels deep).
  static constexpr std::string_view kIndent = "\n                                ";
  const size_t n = static_cast<size_t>(depth) * 4 + 1;
  if (n <= kIndent.size()) {
    out.append(kIndent.data(), n);
  } else {
    out += kIndent;
    out.append(n - kIndent.size(), ' ');
  }
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

void append_u(std::string& out, uint32_t v) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 0xf];
}

// One character (code unit for \u escapes) in ensure_ascii form.
void append_ascii_char(std::string& out, uint32_t v) {
  switch (v) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    default: break;
  }
  if (v >= 0x20 && v <= 0x7e) out += static_cast<char>(v);
  else append_u(out, v);
}

uint32_t hex4(std::string_view t, size_t p) {
  uint32_t v = 0;
  for (size_t k = 0; k < 4 && p + k < t.size(); ++k) {
    char h = t[p + k];
    v <<= 4;
    if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
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

}  // namespace

size_t render_string(std::string_view t, size_t p, std::string& out) {
  // The common case in one pass: printable ASCII up to the closing quote, copied as it is.
  size_t q = p + 1;
  while (q < t.size()) {
    const uint8_t c = static_cast<uint8_t>(t[q]);
    if (c == '"') {
      out.append(t.data() + p, q + 1 - p);
      return q + 1;
    }
    if (c < 0x20 || c >= 0x7f || c == '\\') break;
    ++q;
  }
  const size_t end = string_end(t, p);
  out.append(t.data() + p, q - p);
  while (q < end) {
    uint8_t c = static_cast<uint8_t>(t[q]);
    if (c == '\\') {
      char e = t[q + 1];
      if (e == 'u') {
        append_ascii_char(out, hex4(t, q + 2));
        q += 6;
        continue;
      }
      static const char kFrom[] = "\"\\/bfnrt";
      static const char kTo[] = "\"\\/\b\f\n\r\t";
      const char* k = std::strchr(kFrom, e);
      append_ascii_char(out, k ? static_cast<uint8_t>(kTo[k - kFrom]) : static_cast<uint8_t>(e));
      q += 2;
    } else if (c >= 0x80) {
      uint32_t cp = 0xfffd;
      size_t len = utf8_at(t, q, &cp);
      q += len ? len : 1;
      if (cp >= 0x10000) {
        cp -= 0x10000;
        append_u(out, 0xd800 + (cp >> 10));
        append_u(out, 0xdc00 + (cp & 0x3ff));
      } else {
        append_ascii_char(out, cp);
      }
    } else {
      append_ascii_char(out, c);
      ++q;
    }
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
      if (d == '"') p = string_end(t, p);
      else if (d == '{' || d == '[') ++depth;
      else if ((d == '}' || d == ']') && --depth == 0) return p + 1;
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

size_t render_value(std::string_view t, size_t p, int depth, std::string& out) {
  p = skip_space(t, p);
  char c = t[p];
  if (c == '{' || c == '[') {
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
        q = skip_space(t, q) + 1;  // ':'
        out += ": ";
      }
      q = skip_space(t, render_value(t, q, depth + 1, out));
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
    if (is_float) append_number(out, parse_number(token));
    else if (!nonzero) out += '0';
    else out += token;
    return end;
  }
  const size_t end = skip_value(t, p);  // true, false, null, NaN, Infinity, -Infinity
  out += t.substr(p, end - p);
  return end;
}

}  // namespace chakra::pyjson
