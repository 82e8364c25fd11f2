// Byte tests on 8 bytes at once (SWAR), for scanners that skip plain runs of text a word at a
// time (internal header). Each test is exact as a yes/no: non-zero iff some byte qualifies.
#pragma once

#include <cstdint>
#include <cstring>

namespace chakra::swar {

inline constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;

inline uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline constexpr uint64_t has_zero(uint64_t w) { return (w - kOnes) & ~w & kHighs; }
inline constexpr uint64_t has_byte(uint64_t w, uint8_t b) { return has_zero(w ^ (kOnes * b)); }
// Some byte below n (n <= 0x80).
inline constexpr uint64_t has_below(uint64_t w, uint8_t n) { return (w - kOnes * n) & ~w & kHighs; }
inline constexpr uint64_t has_high_bit(uint64_t w) { return w & kHighs; }

}  // namespace chakra::swar
