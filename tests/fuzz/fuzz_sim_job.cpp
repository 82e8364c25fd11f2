// Simulation jobs and results as they cross to and from the web app's worker.
#include "chakra/app/sim_job.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes = fuzz_support::text(data, size);
  fuzz_support::expect_clean([&] { chakra::decode_job(bytes); });
  fuzz_support::expect_clean([&] { chakra::decode_result(bytes); });
  return 0;
}
