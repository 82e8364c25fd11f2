#include "chakra/trace/column.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#define CHAKRA_COLUMN_MMAP 1
#endif

namespace chakra::detail {

#ifdef CHAKRA_COLUMN_MMAP

namespace {

constexpr size_t kMappedFrom = size_t{1} << 20;  // blocks this large get their own mapping
constexpr size_t kHugePage = size_t{2} << 20;

bool is_mapped(size_t bytes) { return bytes >= kMappedFrom; }
// Length of the mapping that holds a block of `bytes`: whole huge pages. Linux places anonymous
// mappings of such lengths on huge-page boundaries, so every page of it can be a huge one.
// Idempotent, and the same for any size a Column derives from it (capacity × element size
// loses less than an element). Lengths near SIZE_MAX stay as they are; mmap refuses them.
size_t mapping_length(size_t bytes) {
  return bytes > SIZE_MAX - kHugePage ? bytes : (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

void* map(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint; ignored where THP is off
#endif
  return p;
}

}  // namespace

size_t block_bytes(size_t bytes) { return is_mapped(bytes) ? mapping_length(bytes) : bytes; }

void* resize_block(void* data, size_t old_bytes, size_t new_bytes) {
  if (!is_mapped(new_bytes)) return std::realloc(data, new_bytes);
  if (data && is_mapped(old_bytes)) {
    void* p = mremap(data, mapping_length(old_bytes), mapping_length(new_bytes), MREMAP_MAYMOVE);
    return p == MAP_FAILED ? nullptr : p;
  }
  void* p = map(mapping_length(new_bytes));
  if (p && data) {
    std::memcpy(p, data, old_bytes);
    std::free(data);
  }
  return p;
}

void free_block(void* data, size_t bytes) {
  if (!data) return;
  if (is_mapped(bytes))
    munmap(data, mapping_length(bytes));
  else
    std::free(data);
}

#else

size_t block_bytes(size_t bytes) { return bytes; }
void* resize_block(void* data, size_t, size_t new_bytes) { return std::realloc(data, new_bytes); }
void free_block(void* data, size_t) { std::free(data); }

#endif

}  // namespace chakra::detail
