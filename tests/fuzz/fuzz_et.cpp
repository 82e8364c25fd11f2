// Chakra .et reader (plain or gzip), then what every front end does with a decoded trace.
#include "chakra/analysis/validate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_support::expect_clean([&] {
    chakra::InputLimits limits;
    limits.max_bytes = 64 << 20;
    chakra::Trace trace = chakra::read_et(chakra::memory_input(fuzz_support::bytes(data, size), "fuzz.et", limits));
    chakra::validate(trace);
    chakra::encode_et(trace);
  });
  return 0;
}
