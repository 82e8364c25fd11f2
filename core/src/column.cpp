#include "chakra/column.h"

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

bool is_mapped(size_t bytes) { return bytes >= kMappedFrom; }

void* map(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint; ignored where THP is off
#endif
  return p;
}

}  // namespace

void* resize_block(void* data, size_t old_bytes, size_t new_bytes) {
  if (!is_mapped(new_bytes)) return std::realloc(data, new_bytes);
  if (data && is_mapped(old_bytes)) {
    void* p = mremap(data, old_bytes, new_bytes, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? nullptr : p;
  }
  void* p = map(new_bytes);
  if (p && data) {
    std::memcpy(p, data, old_bytes);
    std::free(data);
  }
  return p;
}

void free_block(void* data, size_t bytes) {
  if (!data) return;
  if (is_mapped(bytes)) munmap(data, bytes); else std::free(data);
}

#else

void* resize_block(void* data, size_t, size_t new_bytes) { return std::realloc(data, new_bytes); }
void free_block(void* data, size_t) { std::free(data); }

#endif

}  // namespace chakra::detail
