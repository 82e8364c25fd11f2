// Column: the growable storage of every trace column (heap blocks, then mappings in whole huge
// pages on Linux).
#include "chakra/trace/column.h"

#include <gtest/gtest.h>

#include <cstdint>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <cerrno>
#include <sys/mman.h>
#include <unistd.h>
#define COLUMN_TEST_MAPPINGS 1
#endif

namespace {

// 24 bytes: divides no power of two.
struct Odd {
  uint64_t a;
  uint32_t b;
  uint8_t c;
  uint8_t pad[11];
};
static_assert(sizeof(Odd) == 24);

TEST(Column, KeepsValuesWhileGrowingFromHeapBlocksToMappings) {
  chakra::Column<uint32_t> c;
  constexpr uint32_t kCount = 3u << 20;  // 12 MiB: through the heap sizes and several remaps
  for (uint32_t i = 0; i < kCount; ++i) c.push_back(i * 2654435761u);
  ASSERT_EQ(c.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(c[i], i * 2654435761u) << "at " << i;

  chakra::Column<Odd> odd;
  for (uint32_t i = 0; i < 200000; ++i) odd.push_back(Odd{i, ~i, static_cast<uint8_t>(i), {}});
  chakra::Column<Odd> moved = std::move(odd);
  EXPECT_EQ(odd.size(), 0u);
  ASSERT_EQ(moved.size(), 200000u);
  for (uint32_t i = 0; i < 200000; ++i) {
    ASSERT_EQ(moved[i].a, i);
    ASSERT_EQ(moved[i].b, ~i);
    ASSERT_EQ(moved[i].c, static_cast<uint8_t>(i));
  }
}

TEST(Column, ReserveGivesAtLeastWhatWasAsked) {
  chakra::Column<Odd> c;
  c.reserve(10);
  EXPECT_GE(c.capacity(), 10u);
  c.reserve(100000);  // 1.6 MB: a mapping
  EXPECT_GE(c.capacity(), 100000u);
  c.resize(100000, Odd{7, 8, 9, {}});
  EXPECT_EQ(c.back().a, 7u);
}

#ifdef COLUMN_TEST_MAPPINGS
// Whether the page at `p` is mapped (msync fails with ENOMEM on unmapped memory).
bool mapped(const void* p) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) & ~(page - 1));
  if (msync(start, page, MS_ASYNC) == 0) return true;
  EXPECT_EQ(errno, ENOMEM);
  return false;
}

// 7000 bytes: the elements that fit 2 MiB leave more than a page of it over.
struct Wide {
  char bytes[7000];
};
constexpr size_t kHuge = size_t{2} << 20;
static_assert(kHuge % sizeof(Wide) >= 4096);

TEST(Column, MappedBlocksComeInWholeHugePages) {
  chakra::Column<Wide> c;
  c.reserve(200);  // 1.4 MB asked for
  // The whole 2 MiB mapping is usable, less the part of an element at its end.
  EXPECT_EQ(c.capacity(), kHuge / sizeof(Wide));
  EXPECT_TRUE(mapped(reinterpret_cast<const char*>(c.data()) + kHuge - 1));
  // Growth by remapping (by half, to 3 MiB) keeps whole huge pages.
  c.resize(c.capacity() + 1);
  EXPECT_EQ(c.capacity(), 2 * kHuge / sizeof(Wide));
  EXPECT_TRUE(mapped(reinterpret_cast<const char*>(c.data()) + 2 * kHuge - 1));
}

TEST(Column, MappingsAreReleasedToTheirEnd) {
  const char* last_page = nullptr;
  {
    chakra::Column<Wide> c;
    c.reserve(200);
    last_page = reinterpret_cast<const char*>(c.data()) + kHuge - 1;
    ASSERT_TRUE(mapped(last_page));
  }
  // Beyond the last whole element: the destructor computes the mapping's length again.
  EXPECT_FALSE(mapped(last_page));
}
#endif

}  // namespace
