// LoadAs: a value read from possibly unaligned bytes in host (little-endian) order. Thread-safe.
#pragma once

#include <cstring>

namespace stoker {

// The T whose bytes start at `p` (memcpy: any alignment, no aliasing trouble).
template <typename T>
inline T LoadAs(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace stoker
