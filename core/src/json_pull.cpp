#include "json_pull.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "chakra/error.h"

namespace chakra {
namespace {

constexpr size_t kChunk = 1 << 20;
constexpr size_t kHuge = 2 << 20;

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

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

void append_python_string(std::string_view s, std::string& out) {
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

void append_python_float(double v, std::string& out) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  // Shortest round-trip digits, then Python's layout: positional when -4 <= exponent < 16.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(end - buf));
  size_t e = sci.find('e');
  std::string_view mant = sci.substr(0, e);
  int exp = std::stoi(std::string(sci.substr(e + 1)));
  bool neg = mant[0] == '-';
  if (neg) mant.remove_prefix(1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  if (neg) out += '-';
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1);
    }
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  } else if (exp < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exp - 1), '0');
    out += digits;
  } else {
    size_t int_len = static_cast<size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      out += digits;
      out.append(int_len - digits.size(), '0');
      out += ".0";
    } else {
      out.append(digits, 0, int_len);
      out += '.';
      out.append(digits, int_len);
    }
  }
}

JsonPull::JsonPull(ByteSource& in) : in_(in) {}

void JsonPull::fail(const std::string& what) const {
  throw Error(in_.name() + ": byte " + std::to_string(offset()) + ": " + what);
}

bool JsonPull::fill() {
  if (eof_) return false;
  // Move the unread bytes to the front, grow if a single token needs it, then append a chunk.
  if (pos_ > 0) {
    std::memmove(storage_.get(), storage_.get() + pos_, size_ - pos_);
    size_ -= pos_;
    consumed_ += pos_;
    pos_ = 0;
  }
  if (capacity_ - size_ < kChunk) {
    // 2 MiB-aligned and a huge-page hint: on VMs each 4 KiB page fault is costly.
    size_t grown = std::max(capacity_ * 2, (size_ + kChunk + kHuge - 1) / kHuge * kHuge);
    Storage next(static_cast<char*>(std::aligned_alloc(kHuge, grown)));
    if (!next) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(next.get(), grown, MADV_HUGEPAGE);
#endif
    if (size_) std::memcpy(next.get(), storage_.get(), size_);
    storage_ = std::move(next);
    capacity_ = grown;
  }
  size_t n = in_.read(reinterpret_cast<uint8_t*>(storage_.get() + size_), kChunk);
  size_ += n;
  buf_ = std::string_view(storage_.get(), size_);
  if (n == 0) eof_ = true;
  return n > 0;
}

char JsonPull::peek_char_refill() {
  for (;;) {
    while (pos_ < buf_.size() && is_ws(buf_[pos_])) ++pos_;
    if (pos_ < buf_.size()) return buf_[pos_];
    if (!fill()) return 0;
  }
}

void JsonPull::scan_string(std::string& out) {
  expect('"');
  out.clear();
  for (;;) {
    // Copy a run of plain bytes.
    size_t start = pos_;
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
    while (buf_.size() - pos_ < 12 && fill()) {
    }
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
            if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
            else fail("bad \\u escape");
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
      default:
        fail(std::string("bad escape '\\") + e + "' in string");
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
  while (buf_.size() - pos_ < 64 && fill()) {
  }
  size_t start = pos_;
  std::string_view rest(buf_.data() + pos_, buf_.size() - pos_);
  for (std::string_view lit : {"NaN", "Infinity", "-Infinity"})
    if (rest.substr(0, lit.size()) == lit) {
      pos_ += lit.size();
      is_integer = false;
      return {buf_.data() + start, lit.size()};
    }
  is_integer = true;
  size_t i = pos_;
  if (i < buf_.size() && buf_[i] == '-') ++i;
  size_t digits_at = i;
  while (i < buf_.size() && buf_[i] >= '0' && buf_[i] <= '9') ++i;
  if (i == digits_at) fail("malformed number");
  if (i < buf_.size() && buf_[i] == '.') {
    is_integer = false;
    ++i;
    size_t frac = i;
    while (i < buf_.size() && buf_[i] >= '0' && buf_[i] <= '9') ++i;
    if (i == frac) fail("malformed number");
  }
  if (i < buf_.size() && (buf_[i] == 'e' || buf_[i] == 'E')) {
    is_integer = false;
    ++i;
    if (i < buf_.size() && (buf_[i] == '+' || buf_[i] == '-')) ++i;
    size_t ex = i;
    while (i < buf_.size() && buf_[i] >= '0' && buf_[i] <= '9') ++i;
    if (i == ex) fail("malformed number");
  }
  pos_ = i;
  return {buf_.data() + start, i - start};
}

double JsonPull::read_double() {
  bool is_int;
  std::string_view t = read_number_text(is_int);
  if (t == "NaN") return std::nan("");
  if (t == "Infinity") return HUGE_VAL;
  if (t == "-Infinity") return -HUGE_VAL;
  double v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
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
  double d = 0;
  std::from_chars(t.data(), t.data() + t.size(), d);
  if (!(d >= -9.2e18 && d <= 9.2e18)) fail("number " + std::string(t) + " is not a 64-bit integer");
  return static_cast<int64_t>(d);
}

bool JsonPull::read_bool() {
  peek_char();
  while (buf_.size() - pos_ < 5 && fill()) {
  }
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
  while (buf_.size() - pos_ < 4 && fill()) {
  }
  if (std::string_view(buf_.data() + pos_, std::min<size_t>(4, buf_.size() - pos_)) != "null") fail("expected null");
  pos_ += 4;
}

void JsonPull::skip() { skip_depth(0); }

void JsonPull::skip_depth(int depth) {
  switch (peek()) {
    case Kind::Object:
      begin_object();
      while (next_key(scratch_)) skip_depth(depth + 1);
      break;
    case Kind::Array:
      begin_array();
      while (next_element()) skip_depth(depth + 1);
      break;
    case Kind::String: scan_string(scratch_); break;
    case Kind::Number: { bool i; read_number_text(i); break; }
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
    if (t == "-0") out += '0';
    else out.append(t);
    return;
  }
  if (t == "NaN") { out += "nan"; return; }
  if (t == "Infinity") { out += "inf"; return; }
  if (t == "-Infinity") { out += "-inf"; return; }
  double v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  append_python_float(v, out);
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
        append_python_string(key, out);
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
      append_python_string(scratch_, out);
      break;
    case Kind::Number: repr_number(out); break;
    case Kind::Bool: out += read_bool() ? "True" : "False"; break;
    case Kind::Null: read_null(); out += "None"; break;
    case Kind::End: fail("unexpected end of input (truncated file?)");
  }
}

}  // namespace chakra
