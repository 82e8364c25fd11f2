// PyTorch host ET / Kineto JSON anonymized as it streams (chakra anonymize on JSON and run folders).
#include "chakra/format/io.h"
#include "chakra/pytorch/anonymize_json.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const chakra::Anonymizer anonymizer([] {
    chakra::AnonymizeOptions o;
    o.key = "fuzz";
    o.bucket_shapes = true;
    return o;
  }());
  fuzz_support::expect_clean([&] {
    chakra::StringSink out;
    chakra::AnonymizeReport report;
    auto in = chakra::memory_input(fuzz_support::bytes(data, size), "fuzz.json");
    chakra::anonymize_pytorch_json(anonymizer, std::move(in), out, report);
  });
  return 0;
}
