// Milliseconds since a point of the steady clock: how long loading, converting or simulating took.
#pragma once

#include <chrono>

namespace chakra {

inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace chakra
