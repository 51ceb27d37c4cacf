// IEEE 754 half precision (binary16), as MDS and LitData store float16 columns.
#pragma once

#include <cmath>
#include <cstdint>

namespace stoker {

// The value of the half-precision number whose bits are `h` (subnormals, infinities, NaN).
inline double HalfToDouble(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0    ? std::ldexp(mant, -24)
             : exp == 31 ? (mant ? NAN : INFINITY)
                         : std::ldexp(mant + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}

}  // namespace stoker
