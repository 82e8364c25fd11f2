// Shared by the libFuzzer harnesses: every parser must either succeed or throw chakra::Error;
// anything else (a crash, a sanitizer report, another exception type, a hang) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "chakra/support/error.h"

namespace fuzz_support {

inline std::span<const uint8_t> bytes(const uint8_t* data, size_t size) { return {data, size}; }
inline std::string_view text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Runs `f`; chakra::Error (including Cancelled) is the expected way to refuse an input.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const chakra::Error&) {}
}

}  // namespace fuzz_support
