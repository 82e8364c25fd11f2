// The commands' malloc heap on huge pages (cli.h says why).
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli.h"

namespace cli {

void back_heap_with_huge_pages() {
#if defined(__GLIBC__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  constexpr size_t kPad = size_t{64} << 20, kProbe = size_t{64} << 10;
  if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TOP_PAD, kPad)) return;
  char* const before = static_cast<char*>(sbrk(0));
  // Small blocks until one does not fit the heap's free top: that one grows it by the pad.
  void* probes[64];
  int n = 0;
  while (n < 64 && static_cast<char*>(sbrk(0)) == before) probes[n++] = std::malloc(kProbe);
  char* const after = static_cast<char*>(sbrk(0));
  for (int i = 0; i < n; ++i) std::free(probes[i]);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(before) + page - 1) & ~(page - 1);
  if (reinterpret_cast<uintptr_t>(after) > begin)
    madvise(reinterpret_cast<void*>(begin), reinterpret_cast<uintptr_t>(after) - begin, MADV_HUGEPAGE);
#endif
}

void reexec_with_huge_page_malloc(char** argv) {
#if defined(__GLIBC__) && !defined(__EMSCRIPTEN__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb")) return;
  const std::string with = std::string(tunables && *tunables ? tunables : "") + (tunables && *tunables ? ":" : "") +
                           "glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0) return;
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
#else
  (void)argv;
#endif
}

void default_heap_thresholds() {
#if defined(__GLIBC__) && !defined(__EMSCRIPTEN__)
  mallopt(M_MMAP_THRESHOLD, 128 << 10);  // glibc's defaults
  mallopt(M_TOP_PAD, 128 << 10);
#endif
}

}  // namespace cli
