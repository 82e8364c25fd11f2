#include "chakra/support/memory.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__) && !defined(__EMSCRIPTEN__)
#include <malloc.h>
#define CHAKRA_GLIBC_MALLOC 1
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#undef CHAKRA_GLIBC_MALLOC
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#undef CHAKRA_GLIBC_MALLOC
#endif
#endif

namespace chakra {

void release_free_memory() {
#ifdef CHAKRA_GLIBC_MALLOC
  malloc_trim(0);
#endif
}

}  // namespace chakra
