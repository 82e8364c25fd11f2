// The web app's URL hash: anything anyone can put in a link. What decodes must re-encode to a
// canonical form that decodes to the same state.
#include <cstdlib>

#include "chakra/app/share_link.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_support::expect_clean([&] {
    chakra::ShareState s = chakra::decode_share_state(fuzz_support::text(data, size));
    if (chakra::decode_share_state(chakra::encode_share_state(s)) != s) std::abort();
  });
  return 0;
}
