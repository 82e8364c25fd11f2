// The web app's URL hash: anything anyone can put in a link. What decodes must re-encode to a
// canonical form that decodes to the same state; the list readers (folded ranks, pinned tracks)
// take or refuse every value, and what they take writes back to the same list.
#include <cstdlib>

#include "chakra/app/share_link.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  chakra::ShareState s;
  fuzz_support::expect_clean([&] {
    s = chakra::decode_share_state(fuzz_support::text(data, size));
    if (chakra::decode_share_state(chakra::encode_share_state(s)) != s) std::abort();
  });
  for (const auto& entry : s) {
    const std::string key = entry.first;  // a copy: clang 14 lambdas cannot capture bindings
    fuzz_support::expect_clean([&] {
      const std::vector<uint32_t> ranges = chakra::share_index_ranges(s, key, 1u << 20, 1u << 16);
      const chakra::ShareState again = {{key, chakra::format_index_ranges(ranges)}};
      if (!ranges.empty() && chakra::share_index_ranges(again, key, 1u << 20, 1u << 16) != ranges) std::abort();
    });
    fuzz_support::expect_clean([&] { chakra::share_tuples(s, key, 3, UINT32_MAX - 1, 256); });
  }
  return 0;
}
