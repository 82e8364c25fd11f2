#include "chakra/support/text.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "chakra/support/swar.h"

namespace chakra {
namespace {

// Python's str.isprintable() for the code points that occur in traces; the rare categories it
// also rejects (unassigned, private use) are printed as is.
bool python_printable(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp >= 0x80 && cp <= 0xA0) return false;  // C1 controls and no-break space
  if (cp == 0xAD || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
      (cp >= 0x205F && cp <= 0x2064) || cp == 0x3000 || cp == 0xFEFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return false;
  return true;
}

}  // namespace

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

namespace {

// Python's repr of a value with few decimal places (most timestamps and durations in traces),
// without printf or strtod, which in wasm compute in software 128-bit floats. A decimal m / 10^f
// with m < 2^53 and f <= 8 reads back as the division m / 10^f (both exact, the quotient
// correctly rounded, as strtod rounds). The fewest places at which exactly one m reads back to v
// give the fewest digits, and being the only one it is the closest: Python's choice. False when
// v is no such decimal (or two read back): the general path writes it.
bool append_few_decimals(std::string& out, double v) {
  const double a = std::fabs(v);
  if (a != 0 && (a < 1e-4 || a >= 1e15)) return false;  // Python's fixed notation, well inside 2^53
  static constexpr double kPow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  for (size_t f = 0; f < std::size(kPow10); ++f) {
    const double scaled = a * kPow10[f];
    if (scaled >= 0x1p52) return false;
    const double m = std::nearbyint(scaled);  // any m that reads back is within one of it
    int found = 0;
    double digits_of = 0;
    for (double c : {m - 1, m, m + 1})
      if (c >= 0 && c / kPow10[f] == a) {
        ++found;
        digits_of = c;
      }
    if (found > 1) return false;
    if (found == 0) continue;
    std::string digits;
    append_uint(digits, static_cast<uint64_t>(digits_of));
    if (std::signbit(v)) out += '-';
    if (f == 0) {
      out += digits;
      out += ".0";
    } else if (digits.size() <= f) {
      out += "0.";
      out.append(f - digits.size(), '0');
      out += digits;
    } else {
      out.append(digits, 0, digits.size() - f);
      out += '.';
      out.append(digits, digits.size() - f);
    }
    return true;
  }
  return false;
}

}  // namespace

bool parse_plain_decimal(std::string_view s, double& value) {
  static constexpr double kPow10[] = {1,    1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = !s.empty() && s[0] == '-';
  size_t i = negative ? 1 : 0, digits = 0, places = 0;
  bool point = false;
  uint64_t m = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    m = m * 10 + static_cast<uint64_t>(c - '0');
    if (m >= (uint64_t{1} << 53)) return false;
    ++digits;
    if (point) ++places;
  }
  if (digits == 0 || places >= std::size(kPow10)) return false;
  value = static_cast<double>(m) / kPow10[places];
  if (negative) value = -value;
  return true;
}

void append_python_float(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  if (append_few_decimals(out, v)) return;
  // Fewest significant digits that read back exactly, as d[.ddd]e±XX.
  char buf[48];
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L && !defined(__EMSCRIPTEN__)
  *std::to_chars(buf, buf + sizeof buf - 1, v, std::chars_format::scientific).ptr = '\0';
#else
  // Emscripten's libc++ has no floating-point to_chars. Round-tripping is monotone in the
  // digit count (a correctly rounded longer form is never farther away), so bisect.
  int lo = 0, hi = 16;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    std::snprintf(buf, sizeof buf, "%.*e", mid, v);
    if (std::strtod(buf, nullptr) == v)
      hi = mid;
    else
      lo = mid + 1;
  }
  std::snprintf(buf, sizeof buf, "%.*e", lo, v);
#endif

  // buf = [-]d[.ddd]e(+|-)XX
  const char* p = buf;
  if (*p == '-') {
    out += '-';
    ++p;
  }
  std::string digits;
  for (; *p != 'e'; ++p)
    if (*p != '.') digits += *p;
  const int exponent = std::atoi(p + 1);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int point = exponent + 1;  // digits before the decimal point
  const int n = static_cast<int>(digits.size());

  if (point > -4 && point <= 16) {  // Python switches to exponent notation outside this range
    if (point <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-point), '0');
      out += digits;
    } else if (point < n) {
      out.append(digits, 0, static_cast<size_t>(point));
      out += '.';
      out.append(digits, static_cast<size_t>(point));
    } else {
      out += digits;
      out.append(static_cast<size_t>(point - n), '0');
      out += ".0";
    }
    return;
  }
  out += digits[0];
  if (n > 1) {
    out += '.';
    out.append(digits, 1);
  }
  out += 'e';
  out += exponent < 0 ? '-' : '+';
  int e = std::abs(exponent);
  if (e < 10) out += '0';
  append_int(out, e);
}

double shortest_float32(float v) {
  if (!std::isfinite(v)) return v;
  char buf[48];
  for (int precision = 6; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    double d = std::strtod(buf, nullptr);
    if (static_cast<float>(d) == v) return d;
  }
  return v;
}

void append_json_double(std::string& out, double v) {
  if (std::isnan(v))
    out += "\"NaN\"";
  else if (std::isinf(v))
    out += v < 0 ? "\"-Infinity\"" : "\"Infinity\"";
  else
    append_python_float(out, v);
}

namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 if invalid.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  size_t len;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    v = c & 0x1f;
    min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    v = c & 0x0f;
    min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    v = c & 0x07;
    min = 0x10000;
  } else
    return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return len;
}

void append_u_escape(std::string& out, uint32_t unit) {
  static const char hex[] = "0123456789abcdef";
  char buf[6] = {'\\', 'u', hex[(unit >> 12) & 15], hex[(unit >> 8) & 15], hex[(unit >> 4) & 15], hex[unit & 15]};
  out.append(buf, 6);
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  uint32_t cp;
  for (size_t i = 0; i < s.size();) {
    // ASCII, the bulk of a trace's strings, eight bytes at a time (validation read every byte
    // of every distinct string one by one: two thirds of its time on a large trace).
    if (i + 8 <= s.size() && !swar::has_high_bit(swar::load8(s.data() + i))) {
      i += 8;
      continue;
    }
    size_t len = utf8_sequence(s, i, &cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  uint32_t cp;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = utf8_sequence(s, i, &cp);
    if (len == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string quoted_excerpt(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return "'" + printable(s) + "'";
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return "'" + printable(s.substr(0, cut)) + "...' (" + std::to_string(s.size()) + " bytes)";
}

namespace {

// True when none of the 8 bytes at p needs attention in a JSON string: all printable ASCII
// (0x20..0x7e) other than '"' and '\\'. Lets the common case move a word at a time.
bool plain_json_word(const char* p) {
  const uint64_t w = swar::load8(p);
  return !(swar::has_high_bit(w) | swar::has_below(w, 0x20) | swar::has_byte(w, '"') | swar::has_byte(w, '\\') |
           swar::has_byte(w, 0x7f));
}

constexpr auto kPlainJsonByte = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7f; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

}  // namespace

size_t json_plain_prefix(std::string_view s) {
  size_t i = 0;
  while (i + 8 <= s.size() && plain_json_word(s.data() + i)) i += 8;
  while (i < s.size() && kPlainJsonByte[static_cast<uint8_t>(s[i])]) ++i;
  return i;
}

void append_json_string(std::string& out, std::string_view s, bool ascii_only) {
  // Most strings (keys, names, numbers in strings) need no escaping: one append.
  size_t i = json_plain_prefix(s);
  if (i == s.size()) {
    const size_t at = out.size();
    out.resize(at + s.size() + 2);
    char* p = out.data() + at;
    p[0] = '"';
    if (!s.empty()) std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    return;
  }
  out += '"';
  size_t run = 0;  // start of the pending run of bytes that need no escaping
  for (; i < s.size();) {
    while (i + 8 <= s.size() && plain_json_word(s.data() + i)) i += 8;
    if (i >= s.size()) break;
    uint8_t c = static_cast<uint8_t>(s[i]);
    if (kPlainJsonByte[c]) {
      ++i;
      continue;
    }
    if (c >= 0x80 && !ascii_only) {
      uint32_t cp;
      size_t len = utf8_sequence(s, i, &cp);
      if (len != 0) {
        i += len;
        continue;
      }
    }
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        break;
      case '\\':
        out += "\\\\";
        ++i;
        break;
      case '\n':
        out += "\\n";
        ++i;
        break;
      case '\r':
        out += "\\r";
        ++i;
        break;
      case '\t':
        out += "\\t";
        ++i;
        break;
      case '\b':
        out += "\\b";
        ++i;
        break;
      case '\f':
        out += "\\f";
        ++i;
        break;
      default:
        if (c < 0x80) {
          append_u_escape(out, c);
          ++i;
        } else {
          uint32_t cp;
          size_t len = utf8_sequence(s, i, &cp);
          if (len == 0) {
            if (ascii_only)
              append_u_escape(out, 0xfffd);
            else
              out += "\xef\xbf\xbd";
            ++i;
          } else if (cp >= 0x10000) {
            cp -= 0x10000;
            append_u_escape(out, 0xd800 + (cp >> 10));
            append_u_escape(out, 0xdc00 + (cp & 0x3ff));
            i += len;
          } else {
            append_u_escape(out, cp);
            i += len;
          }
        }
    }
    run = i;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void append_base64(std::string& out, std::string_view bytes, bool url_safe) {
  const char* table = url_safe ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                               : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const size_t pad = url_safe ? 0 : 4;  // characters per group when padded
  size_t i = 0;
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = b(i) << 16 | b(i + 1) << 8 | b(i + 2);
    char q[4] = {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], table[v & 63]};
    out.append(q, 4);
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t v = b(i) << 16;
    char q[4] = {table[v >> 18], table[(v >> 12) & 63], '=', '='};
    out.append(q, std::max<size_t>(pad, 2));
  } else if (rest == 2) {
    uint32_t v = b(i) << 16 | b(i + 1) << 8;
    char q[4] = {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], '='};
    out.append(q, std::max<size_t>(pad, 3));
  }
}

bool decode_base64(std::string_view text, std::string& out) {
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  size_t padding = 0;
  for (char ch : text) {
    int v;
    if (ch >= 'A' && ch <= 'Z')
      v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z')
      v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9')
      v = ch - '0' + 52;
    else if (ch == '+' || ch == '-')
      v = 62;
    else if (ch == '/' || ch == '_')
      v = 63;
    else if (ch == '=') {
      ++padding;
      continue;
    } else
      return false;
    if (padding) return false;  // data after padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return bits < 6 && padding <= 2;
}

namespace {

// Whether `noun` starts with a vowel sound (see with_article).
bool starts_with_vowel_sound(std::string_view noun) {
  if (noun.empty()) return false;
  auto run = [&](auto in_run) {
    size_t n = 0;
    while (n < noun.size() && in_run(static_cast<unsigned char>(noun[n]))) ++n;
    return noun.substr(0, n);
  };
  if (const std::string_view digits = run(::isdigit); !digits.empty()) {
    // Read as a number: "eight...", and "eleven..." or "eighteen..." (11, 18, 11000, 18500000).
    if (digits[0] == '8') return true;
    return digits.size() % 3 == 2 && digits[0] == '1' && (digits[1] == '1' || digits[1] == '8');
  }
  const std::string_view word = run(::isalpha);
  if (word.empty()) return false;
  // Acronyms in capitals are said letter by letter, but for those said as words.
  static constexpr std::string_view kSaidAsWords[] = {"JSON", "NUMA", "RAM", "SIMD", "SQL", "YAML"};
  if (word.size() >= 2 && std::all_of(word.begin(), word.end(), ::isupper) &&
      std::find(std::begin(kSaidAsWords), std::end(kSaidAsWords), word) == std::end(kSaidAsWords))
    return std::string_view("AEFHILMNORSX").find(word[0]) != std::string_view::npos;
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // "u" said "you" (unit, user, usual, utility, uint64, unique), "one", "eu"; a silent "h".
  for (std::string_view you : {"uni", "use", "usu", "uti", "uint", "ubi", "one", "eu"})
    if (lower.rfind(you, 0) == 0) return false;
  for (std::string_view silent : {"hour", "honest", "honor", "honour"})
    if (lower.rfind(silent, 0) == 0) return true;
  return std::string_view("aeiou").find(lower[0]) != std::string_view::npos;
}

}  // namespace

std::string with_article(std::string_view noun) {
  return (starts_with_vowel_sound(noun) ? "an " : "a ") + std::string(noun);
}

std::string format_share(uint64_t part, uint64_t whole, int decimals) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*f%%", decimals,
                whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return text;
}

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

namespace {
// Whether s is printable ASCII without quotes or backslashes: Python writes it as it is,
// between single quotes. Eight bytes at a time; most strings of a trace are such.
bool plain_python_ascii(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    const uint64_t w = swar::load8(s.data() + i);
    if (swar::has_below(w, 0x20) | swar::has_high_bit(w) | swar::has_byte(w, 0x7F) | swar::has_byte(w, '\\') |
        swar::has_byte(w, '\'') | swar::has_byte(w, '"'))
      return false;
  }
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7F || c == '\\' || c == '\'' || c == '"') return false;
  }
  return true;
}
}  // namespace

void append_python_string(std::string& out, std::string_view s) {
  if (plain_python_ascii(s)) {
    out += '\'';
    out.append(s);
    out += '\'';
    return;
  }
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  static const char* hex = "0123456789abcdef";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      if (c == '\\' || c == static_cast<unsigned char>(quote)) {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7F) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
      continue;
    }
    // Multi-byte UTF-8 (validated by the parser).
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    if (python_printable(cp)) {
      out.append(s.substr(i, len));
    } else if (cp <= 0xFF) {
      out += "\\x";
      out += hex[cp >> 4];
      out += hex[cp & 15];
    } else if (cp <= 0xFFFF) {
      out += "\\u";
      for (int sh = 12; sh >= 0; sh -= 4) out += hex[(cp >> sh) & 15];
    } else {
      out += "\\U";
      for (int sh = 28; sh >= 0; sh -= 4) out += hex[(cp >> sh) & 15];
    }
    i += len;
  }
  out += quote;
}

std::string format_number(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {  // integers as integers, never "1e+01"
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

uint64_t fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace chakra
