// Number and string formatting shared by every text output of the core. Where a reference
// tool is written in Python, its output is reproduced exactly, so these follow Python's rules.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>

namespace chakra {

void append_uint(std::string& out, uint64_t v);
void append_int(std::string& out, int64_t v);

// Python's repr(float): shortest digits that read back to the same double, fixed notation for
// decimal exponents -4..15 (with ".0" on integral values), otherwise "1e-05"/"1.5e+16";
// "nan", "inf", "-inf".
void append_python_float(std::string& out, double v);
// A plain decimal literal ([-]digits[.digits], no exponent) whose digits make an integer below
// 2^53, as the correctly rounded double strtod gives (the integer and the power of ten are exact,
// their quotient correctly rounded); false for any other text. Used before strtod, which in wasm
// computes in software 128-bit floats.
bool parse_plain_decimal(std::string_view literal, double& value);

// Python's repr(str): single quotes unless the text has ' and no "; backslash escapes for \\,
// the quote, \n \r \t; \xNN / \uNNNN / \UNNNNNNNN for characters Python does not print.
void append_python_string(std::string& out, std::string_view utf8);

// The shortest decimal (starting from 6 significant digits, as protobuf's Python runtime does)
// that reads back to the same float32, returned as a double.
double shortest_float32(float v);

// A double as a JSON value: Python repr for finite values, "NaN"/"Infinity"/"-Infinity" as
// strings (the proto3 JSON convention).
void append_json_double(std::string& out, double v);

// A JSON string literal. With ascii_only, every character outside printable ASCII becomes a
// \uXXXX escape (Python json's ensure_ascii); otherwise UTF-8 passes through. Bytes that are not
// valid UTF-8 become U+FFFD.
void append_json_string(std::string& out, std::string_view s, bool ascii_only);
// Length of the leading run of `s` that a JSON string literal holds unescaped (printable ASCII
// other than '"' and '\\'); equal to s.size() when `s` needs no escaping at all.
size_t json_plain_prefix(std::string_view s);
bool is_valid_utf8(std::string_view s);

// Text from an input file made safe for a message on a terminal: control characters (other
// than newline and tab) and bytes that are not valid UTF-8 become \xNN.
std::string printable(std::string_view s);
// A token from an input file for an error message: printable() and in single quotes, cut after
// `max_bytes` bytes with "..." (a hostile file's "token" can be megabytes of binary).
std::string quoted_excerpt(std::string_view s, size_t max_bytes = 80);

// Standard alphabet with '=' padding; `url_safe`: RFC 4648 §5's alphabet ('-', '_'), no padding.
void append_base64(std::string& out, std::string_view bytes, bool url_safe = false);
// Accepts standard and URL-safe alphabets, with or without padding.
bool decode_base64(std::string_view text, std::string& out);

// Shortest text that reads back as the same double (integers without exponent), for share
// links and configuration files.
std::string format_number(double v);

// 64-bit FNV-1a of `bytes`, continuing from `h` (the offset basis by default): content
// fingerprints (files in share links, sweep specs), not for security.
inline constexpr uint64_t kFnv1aBasis = 14695981039346656037ull;
uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnv1aBasis);

// A CSV field (RFC 4180): as it is, or quoted with inner quotes doubled when it holds a comma, a
// quote or a line break.
std::string csv_field(std::string_view s);

// `s` without the spaces, tabs and carriage returns around it.
std::string_view trim_blanks(std::string_view s);

// `noun` after the indefinite article its first sound takes, for messages that name a thing
// known only at run time: "an ASTRA-sim system config", "an 8-point product", "an MTIA trace",
// "a Kineto trace", "a unit". By rule of thumb: a vowel letter takes "an" ("u" said "you" and
// "one" aside), an acronym in capitals takes it when its first letter is said with a vowel
// (F, H, L, M, N, R, S, X), a number when it is said "eight", "eleven" or "eighteen" first.
std::string with_article(std::string_view noun);

// "12.3 MiB" style sizes for humans.
std::string format_bytes(uint64_t bytes);
// `part` as a percentage of `whole` ("12.5%"; "0.0%" when whole is 0), with `decimals` digits.
std::string format_share(uint64_t part, uint64_t whole, int decimals = 1);

// printf-style formatting appended to `out` (one line of a table: at most 1023 bytes).
template <class... A>
void appendf(std::string& out, const char* format, A... args) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, format, args...);
  out += buf;
}

// The pieces of `s` between the separators, as Python's s.split(sep): n separators give n + 1
// pieces, empty ones included ("" gives one empty piece). A range of views into `s`, found as
// it is walked (a log of millions of lines is not indexed first):
//   for (std::string_view line : Split(text, '\n')) ...
class Split {
 public:
  Split(std::string_view s, char sep) : s_(s), sep_(sep) {}

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;

    iterator() = default;  // the end
    iterator(std::string_view s, char sep) : s_(s), sep_(sep), done_(false) { find_end(); }
    std::string_view operator*() const { return s_.substr(start_, end_ - start_); }
    iterator& operator++() {
      if (end_ == s_.size()) {
        done_ = true;
      } else {
        start_ = end_ + 1;
        find_end();
      }
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(const iterator& o) const { return done_ == o.done_ && (done_ || start_ == o.start_); }

   private:
    void find_end() { end_ = std::min(s_.find(sep_, start_), s_.size()); }
    std::string_view s_;
    char sep_ = 0;
    size_t start_ = 0, end_ = 0;
    bool done_ = true;
  };

  iterator begin() const { return {s_, sep_}; }
  iterator end() const { return {}; }

 private:
  std::string_view s_;
  char sep_;
};

}  // namespace chakra
