// Chakra JSON (chakra_jsonizer's output) read back into a trace.
#include "chakra/format/et_json.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_support::expect_clean([&] { chakra::read_json_trace(fuzz_support::text(data, size), "fuzz.json"); });
  return 0;
}
