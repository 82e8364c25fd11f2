// The state of a shareable link: what the web app puts after '#' in its URL so that opening the
// link restores the views and simulation settings. Anyone can craft such a link, so decoding is
// strict and bounded: it never trusts a length, a count or a number it did not check.
//
// Format: `key=value&key=value…`, keys from [a-z0-9_.-], values percent-encoded (RFC 3986
// unreserved characters are written as is). Keys are unique and written in sorted order, so one
// state has exactly one link. Links are written compressed (encode_share_link); plain ones are
// still read.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/support/text.h"  // format_number

namespace chakra {

using ShareState = std::map<std::string, std::string>;

struct ShareLimits {
  size_t max_chars = 16384;  // the whole hash
  size_t max_keys = 256;
  size_t max_key_chars = 64;
};

// "k=v&…" (no leading '#').
std::string encode_share_state(const ShareState& state);

// The compact link: "z=" + the state's text deflated (zlib, level 9) in URL-safe base64 (RFC
// 4648 §5, no padding), a third to a fifth of the plain text's length for the app's states.
std::string encode_share_link(const ShareState& state);

// Accepts either form, with or without its leading '#' (an empty hash is an empty state).
// Throws chakra::Error ("share link: …") for anything malformed: a bad key, a bad %-escape, a
// duplicate key, damaged compressed data, or a hash (or its inflated text) over the limits.
ShareState decode_share_state(std::string_view hash, const ShareLimits& limits = {});

// Identifies a file's content in a share link without naming it: a 64-bit FNV-1a digest of its
// size and of its first and last 64 KiB (cheap on files of gigabytes). Files add up: the sum
// over a set does not depend on the order they were opened in.
uint64_t file_fingerprint(std::span<const uint8_t> bytes);
// The same from a file's size, its first 64 KiB (or all of it) and its last 64 KiB (at least
// its last min(size - 64 KiB, 64 KiB) bytes): for files that were never held whole.
uint64_t file_fingerprint(uint64_t size, std::span<const uint8_t> head, std::span<const uint8_t> tail);
constexpr size_t kFingerprintEnd = 64 << 10;

// Typed reads of one key. A missing key gives `fallback`; a present but malformed or
// out-of-range value throws chakra::Error naming the key.
int64_t share_int(const ShareState& state, const std::string& key, int64_t lo, int64_t hi, int64_t fallback);
double share_number(const ShareState& state, const std::string& key, double lo, double hi, double fallback);
std::string share_choice(const ShareState& state, const std::string& key, std::span<const std::string_view> allowed,
                         std::string fallback);
// Sets of small non-negative integers as ascending ranges ("0-63,70"), and lists of tuples of
// them ("3.0.1,5.1.0"). The readers take only what the writers write (digits, ranges ascending
// and disjoint, every number <= max_value, at most max_count values or tuples) and throw
// chakra::Error naming the key otherwise; a missing key is an empty list.
std::string format_index_ranges(std::span<const uint32_t> ascending_unique);
std::vector<uint32_t> share_index_ranges(const ShareState& state, const std::string& key, uint32_t max_value,
                                         size_t max_count);
std::vector<std::vector<uint32_t>> share_tuples(const ShareState& state, const std::string& key, size_t arity,
                                                uint32_t max_value, size_t max_count);
std::string share_choice(const ShareState& state, const std::string& key,
                         std::initializer_list<std::string_view> allowed, std::string fallback);

}  // namespace chakra
