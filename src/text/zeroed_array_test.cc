#include "text/zeroed_array.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace stoker {
namespace {

// Both allocation paths (calloc below 2 MiB, an aligned mapping from 2 MiB on, of a size that is
// not a multiple of 2 MiB) give zeroed, writable memory; the mapping starts on a 2 MiB boundary.
TEST(ZeroedArrayTest, SmallAndHugeArraysAreZeroedAndWritable) {
  for (size_t n : {size_t{1}, size_t{1000}, size_t{(3u << 20) / 8 + 5}}) {
    ZeroedArray<uint64_t> a(n);
    for (size_t i = 0; i < n; i += 511) EXPECT_EQ(a[i], 0u) << n << " " << i;
    EXPECT_EQ(a[n - 1], 0u);
    for (size_t i = 0; i < n; ++i) a[i] = i;
    EXPECT_EQ(a[n - 1], n - 1);
    if (n * 8 >= (2u << 20)) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(&a[0]) % (2u << 20), 0u);
    }
  }
  ZeroedArray<uint64_t> moved(10);
  moved[3] = 7;
  ZeroedArray<uint64_t> other = std::move(moved);
  EXPECT_EQ(other[3], 7u);
}

}  // namespace
}  // namespace stoker
