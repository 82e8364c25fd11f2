#include "chakra/app/share_link.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra {

namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("share link: " + what); }

bool unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

bool key_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s, const std::string& key) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) fail("bad %-escape in the value of '" + key + "'");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+') {
      out.push_back(' ');  // what form encoding and some link shorteners produce
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string encode_share_state(const ShareState& state) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (const auto& entry : state) {
    if (!out.empty()) out.push_back('&');
    out += entry.first;
    out.push_back('=');
    for (char c : entry.second) {
      if (unreserved(c)) {
        out.push_back(c);
      } else {
        auto b = static_cast<unsigned char>(c);
        out.push_back('%');
        out.push_back(kHex[b >> 4]);
        out.push_back(kHex[b & 15]);
      }
    }
  }
  return out;
}

// The characters of a compressed link after "z=" (RFC 4648 §5, unpadded).
constexpr std::string_view kBase64Url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode_share_link(const ShareState& state) {
  const std::string plain = encode_share_state(state);
  uLongf size = compressBound(static_cast<uLong>(plain.size()));
  std::string packed(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &size, reinterpret_cast<const Bytef*>(plain.data()),
                static_cast<uLong>(plain.size()), 9) != Z_OK)
    fail("could not compress the state");
  packed.resize(size);
  std::string link = "z=";
  append_base64(link, packed, true);
  return link;
}

uint64_t file_fingerprint(uint64_t size, std::span<const uint8_t> head, std::span<const uint8_t> tail) {
  uint64_t h = kFnv1aBasis;
  auto mix = [&](std::span<const uint8_t> part) {
    h = fnv1a({reinterpret_cast<const char*>(part.data()), part.size()}, h);
  };
  mix(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
  mix(head.first(static_cast<size_t>(std::min<uint64_t>({head.size(), size, kFingerprintEnd}))));
  if (size > kFingerprintEnd) {
    const size_t last = static_cast<size_t>(std::min<uint64_t>(size - kFingerprintEnd, kFingerprintEnd));
    if (tail.size() < last) throw Error("file fingerprint: the tail given is shorter than the file's last bytes");
    mix(tail.last(last));
  }
  return h;
}

uint64_t file_fingerprint(std::span<const uint8_t> bytes) { return file_fingerprint(bytes.size(), bytes, bytes); }

ShareState decode_share_state(std::string_view hash, const ShareLimits& limits) {
  if (!hash.empty() && hash.front() == '#') hash.remove_prefix(1);
  if (hash.size() > limits.max_chars)
    fail(std::to_string(hash.size()) + " characters is over the limit of " + std::to_string(limits.max_chars));
  std::string inflated;  // a compressed link: its text, at most max_chars long
  if (hash.substr(0, 2) == "z=") {
    const std::string_view text = hash.substr(2);
    if (text.find_first_not_of(kBase64Url) != std::string_view::npos)
      fail("the compressed link has a character outside URL-safe base64");
    std::string packed;
    if (!decode_base64(text, packed)) fail("the compressed link is damaged (cut short or altered)");
    inflated.resize(limits.max_chars);
    uLongf size = static_cast<uLongf>(inflated.size());
    const int rc = uncompress(reinterpret_cast<Bytef*>(inflated.data()), &size,
                              reinterpret_cast<const Bytef*>(packed.data()), static_cast<uLong>(packed.size()));
    if (rc == Z_BUF_ERROR && size == inflated.size())
      fail("the compressed link inflates beyond " + std::to_string(limits.max_chars) + " characters");
    if (rc != Z_OK) fail("the compressed link is damaged (cut short or altered)");
    inflated.resize(size);
    hash = inflated;
  }
  ShareState state;
  for (std::string_view item : Split(hash, '&')) {
    if (item.empty()) continue;  // "a=1&&b=2", a trailing '&'
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    if (key.empty() || key.size() > limits.max_key_chars)
      fail("a key must have 1 to " + std::to_string(limits.max_key_chars) + " characters");
    for (char c : key)
      if (!key_char(c)) fail("key '" + std::string(key.substr(0, 32)) + "' has characters other than a-z 0-9 _ . -");
    std::string k(key);
    std::string value = eq == std::string_view::npos ? std::string() : percent_decode(item.substr(eq + 1), k);
    if (!state.emplace(k, std::move(value)).second) fail("key '" + k + "' appears twice");
    if (state.size() > limits.max_keys) fail("more than " + std::to_string(limits.max_keys) + " keys");
  }
  return state;
}

int64_t share_int(const ShareState& state, const std::string& key, int64_t lo, int64_t hi, int64_t fallback) {
  auto it = state.find(key);
  if (it == state.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  errno = 0;
  long long v = s.empty() ? 0 : std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    fail("'" + key + "' must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not '" +
         s.substr(0, 32) + "'");
  return v;
}

double share_number(const ShareState& state, const std::string& key, double lo, double hi, double fallback) {
  auto it = state.find(key);
  if (it == state.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    fail("'" + key + "' must be a number from " + format_number(lo) + " to " + format_number(hi) + ", not '" +
         s.substr(0, 32) + "'");
  return v;
}

std::string share_choice(const ShareState& state, const std::string& key,
                         std::initializer_list<std::string_view> allowed, std::string fallback) {
  return share_choice(state, key, std::span<const std::string_view>(allowed.begin(), allowed.size()),
                      std::move(fallback));
}

std::string share_choice(const ShareState& state, const std::string& key, std::span<const std::string_view> allowed,
                         std::string fallback) {
  auto it = state.find(key);
  if (it == state.end()) return fallback;
  std::string names;
  for (std::string_view a : allowed) {
    if (a == it->second) return it->second;
    names += (names.empty() ? "" : ", ") + std::string(a);
  }
  fail("'" + key + "' must be one of " + names + ", not '" + it->second.substr(0, 32) + "'");
}

}  // namespace chakra

namespace chakra {
namespace {

// A plain decimal number (digits only, no sign, no spaces) of at most max_value.
uint32_t share_index(std::string_view text, const std::string& key, uint32_t max_value) {
  uint64_t v = 0;
  if (text.empty() || text.size() > 10)
    fail("'" + key + "' has a bad number '" + std::string(text.substr(0, 12)) + "'");
  for (char c : text) {
    if (c < '0' || c > '9') fail("'" + key + "' has a bad number '" + std::string(text.substr(0, 12)) + "'");
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > max_value) fail("'" + key + "' has " + std::to_string(v) + ", over " + std::to_string(max_value));
  return static_cast<uint32_t>(v);
}

}  // namespace

std::string format_index_ranges(std::span<const uint32_t> values) {
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(values[i]);
    if (j > i) out += '-' + std::to_string(values[j]);
    i = j + 1;
  }
  return out;
}

std::vector<uint32_t> share_index_ranges(const ShareState& state, const std::string& key, uint32_t max_value,
                                         size_t max_count) {
  std::vector<uint32_t> out;
  auto it = state.find(key);
  if (it == state.end()) return out;
  for (std::string_view piece : Split(it->second, ',')) {
    const size_t dash = piece.find('-');
    const uint32_t lo = share_index(piece.substr(0, dash), key, max_value);
    const uint32_t hi = dash == std::string_view::npos ? lo : share_index(piece.substr(dash + 1), key, max_value);
    if (hi < lo || (!out.empty() && lo <= out.back())) fail("'" + key + "' must list ascending ranges");
    if (hi - lo >= max_count || out.size() + (hi - lo) >= max_count)
      fail("'" + key + "' lists more than " + std::to_string(max_count) + " values");
    for (uint64_t v = lo; v <= hi; ++v) out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

std::vector<std::vector<uint32_t>> share_tuples(const ShareState& state, const std::string& key, size_t arity,
                                                uint32_t max_value, size_t max_count) {
  std::vector<std::vector<uint32_t>> out;
  auto it = state.find(key);
  if (it == state.end()) return out;
  for (std::string_view piece : Split(it->second, ',')) {
    if (out.size() == max_count) fail("'" + key + "' lists more than " + std::to_string(max_count) + " entries");
    std::vector<uint32_t> tuple;
    for (std::string_view part : Split(piece, '.')) {
      if (tuple.size() == arity) fail("'" + key + "' entries have " + std::to_string(arity) + " numbers");
      tuple.push_back(share_index(part, key, max_value));
    }
    if (tuple.size() != arity) fail("'" + key + "' entries have " + std::to_string(arity) + " numbers");
    out.push_back(std::move(tuple));
  }
  return out;
}

}  // namespace chakra
