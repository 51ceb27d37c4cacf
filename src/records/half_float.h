// Packed little-endian arrays as MDS and LitData store them: integers of 1 to 8 bytes, IEEE 754
// half precision (binary16), float32 and float64. Plain functions; thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/load.h"
#include "records/record.h"

namespace stoker {

// The value of the half-precision number whose bits are `h` (subnormals, infinities, NaN).
inline double HalfToDouble(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0    ? std::ldexp(mant, -24)
             : exp == 31 ? (mant ? NAN : INFINITY)
                         : std::ldexp(mant + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}

// The element type of a packed array.
struct PackedType {
  int size = 0;  // bytes: 1, 2, 4 or 8 (floats 2, 4 or 8); 0: unknown
  bool is_float = false;
  bool is_signed = true;
};

// Appends the `n` elements of type `t` (size > 0) at `p` to f->floats (floats) or f->ints
// (integers, sign- or zero-extended to 64 bits).
inline void AppendPacked(const char* p, size_t n, PackedType t, Field* f) {
  if (t.is_float) {
    const size_t at = f->floats.size();
    f->floats.resize(at + n);
    for (double* out = f->floats.data() + at; n > 0; --n, ++out, p += t.size) {
      *out = t.size == 2   ? HalfToDouble(LoadAs<uint16_t>(p))
             : t.size == 4 ? LoadAs<float>(p)
                           : LoadAs<double>(p);
    }
    return;
  }
  const size_t at = f->ints.size();
  f->ints.resize(at + n);
  for (int64_t* out = f->ints.data() + at; n > 0; --n, ++out, p += t.size) {
    uint64_t u = 0;
    std::memcpy(&u, p, t.size);  // little-endian host
    if (t.is_signed && t.size < 8 && (u >> (8 * t.size - 1)) & 1) u |= ~uint64_t{0} << (8 * t.size);
    *out = static_cast<int64_t>(u);
  }
}

}  // namespace stoker
