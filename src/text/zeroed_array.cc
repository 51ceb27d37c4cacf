#include "text/zeroed_array.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace stoker {
namespace {

constexpr size_t kHugePage = 2 << 20;

size_t MappedBytes(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* AllocateZeroed(size_t bytes) {
  if (bytes < kHugePage) {
    void* p = std::calloc(bytes == 0 ? 1 : bytes, 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
  const size_t len = MappedBytes(bytes);
  void* raw =
      ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  // Keep the 2 MiB-aligned `len` bytes inside the mapping; give back the rest.
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) ::munmap(raw, aligned - start);
  if (const size_t tail = start + len + kHugePage - (aligned + len); tail > 0) {
    ::munmap(reinterpret_cast<void*>(aligned + len), tail);
  }
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  ::madvise(p, len, MADV_HUGEPAGE);  // advisory: without it, ordinary pages
#endif
  return p;
}

void FreeZeroed(void* p, size_t bytes) {
  if (!p) return;
  if (bytes < kHugePage) {
    std::free(p);
  } else {
    ::munmap(p, MappedBytes(bytes));
  }
}

}  // namespace stoker
