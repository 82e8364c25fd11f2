// StableHLO / MLIR text (chakra import-stablehlo).
#include "chakra/stablehlo/stablehlo.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_support::expect_clean(
      [&] { chakra::stablehlo::parse_program(std::string(fuzz_support::text(data, size)), "fuzz.mlir"); });
  return 0;
}
