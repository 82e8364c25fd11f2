// Legacy ASTRA-sim text workloads, parsed and instantiated for one NPU.
#include "chakra/astra/text_workload.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_support::expect_clean([&] {
    chakra::TextWorkload w = chakra::parse_text_workload(std::string(fuzz_support::text(data, size)), "fuzz.txt");
    chakra::text_workload_trace(w, 1, 0);
  });
  return 0;
}
