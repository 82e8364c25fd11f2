// Giving freed memory back to the system between large pieces of work.
#pragma once

namespace chakra {

// glibc keeps freed pages of its heaps for reuse; a large trace read and dropped would leave its
// peak resident while the next piece of work maps memory of its own (trace columns are mapped
// apart from the heap). This hands them back. Nothing where malloc is not glibc's (wasm, and
// sanitizers, under which glibc's malloc_trim finds its own heap unset and crashes).
void release_free_memory();

}  // namespace chakra
