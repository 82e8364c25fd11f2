// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104): the keyed tokens of `chakra anonymize`
// (trace/anonymize.h), where the same name under the same key must give the same token and the
// token must not give the name back without the key.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace chakra {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);
// The digest as lower-case hex (64 characters).
std::string to_hex(const Sha256Digest& digest);

}  // namespace chakra
