// ZeroedArray: zero-filled arrays for BpeModel's lookup tables (see AllocateZeroed).
// Thread contract: an array is owned like a unique_ptr; its elements are the caller's to guard.
#pragma once

#include <cstddef>
#include <memory>

namespace stoker {

// Zero-filled memory for the lookup tables: fresh pages that the kernel zeroes when they are first
// touched, by the threads that fill the table, instead of a serial fill by the thread that
// allocates it. From `bytes` = 2 MiB on, a mapping of its own aligned to 2 MiB and marked for
// transparent huge pages (where the kernel allows them): one fault per 2 MiB instead of 512, and
// the random lookups of encoding miss the TLB less.
void* AllocateZeroed(size_t bytes);
void FreeZeroed(void* p, size_t bytes);

// A zero-filled array of n T (see AllocateZeroed). T must be valid as all-zero bytes.
template <typename T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n) : p_(static_cast<T*>(AllocateZeroed(n * sizeof(T))), Free{n}) {}
  T& operator[](size_t i) { return p_.get()[i]; }
  const T& operator[](size_t i) const { return p_.get()[i]; }

 private:
  struct Free {
    size_t n = 0;
    void operator()(T* p) const { FreeZeroed(p, n * sizeof(T)); }
  };
  std::unique_ptr<T, Free> p_;
};

}  // namespace stoker
