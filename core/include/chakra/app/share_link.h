// The state of a shareable link: what the web app puts after '#' in its URL so that opening the
// link restores the views and simulation settings. Anyone can craft such a link, so decoding is
// strict and bounded: it never trusts a length, a count or a number it did not check.
//
// Format: `key=value&key=value…`, keys from [a-z0-9_.-], values percent-encoded (RFC 3986
// unreserved characters are written as is). Keys are unique and written in sorted order, so one
// state has exactly one link.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

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

// Accepts the text with or without its leading '#' (an empty hash is an empty state). Throws
// chakra::Error ("share link: …") for anything malformed: a bad key, a bad %-escape, a
// duplicate key, or a hash over the limits.
ShareState decode_share_state(std::string_view hash, const ShareLimits& limits = {});

// Typed reads of one key. A missing key gives `fallback`; a present but malformed or
// out-of-range value throws chakra::Error naming the key.
int64_t share_int(const ShareState& state, const std::string& key, int64_t lo, int64_t hi, int64_t fallback);
double share_number(const ShareState& state, const std::string& key, double lo, double hi, double fallback);
std::string share_choice(const ShareState& state, const std::string& key,
                         std::span<const std::string_view> allowed, std::string fallback);
std::string share_choice(const ShareState& state, const std::string& key,
                         std::initializer_list<std::string_view> allowed, std::string fallback);


}  // namespace chakra
