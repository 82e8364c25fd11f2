// PyTorch host execution trace JSON converted to Chakra (chakra convert --input-type PyTorch).
#include "chakra/format/io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_support::expect_clean(
      [&] { chakra::convert_pytorch(chakra::memory_input(fuzz_support::bytes(data, size), "fuzz_et.json")); });
  return 0;
}
