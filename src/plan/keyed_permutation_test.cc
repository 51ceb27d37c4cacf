#include "plan/keyed_permutation.h"

#include <gtest/gtest.h>

#include <vector>

namespace stoker::plan {
namespace {

TEST(KeyedPermutationTest, IsABijectionForManySizes) {
  for (uint64_t n : {0, 1, 2, 3, 4, 5, 7, 16, 17, 100, 1000, 4097, 65537}) {
    KeyedPermutation perm(n, 42 + n);
    std::vector<bool> seen(n, false);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t j = perm.Apply(i);
      ASSERT_LT(j, n) << "n=" << n;
      ASSERT_FALSE(seen[j]) << "n=" << n << " value " << j << " twice";
      seen[j] = true;
    }
  }
}

TEST(KeyedPermutationTest, DifferentKeysGiveDifferentOrders) {
  KeyedPermutation a(1000, 1), b(1000, 2);
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) same += a.Apply(i) == b.Apply(i);
  EXPECT_LT(same, 20);
}

TEST(KeyedPermutationTest, SameKeySameOrder) {
  KeyedPermutation a(12345, 99), b(12345, 99);
  for (uint64_t i = 0; i < 12345; ++i) ASSERT_EQ(a.Apply(i), b.Apply(i));
}

TEST(KeyedPermutationTest, LooksShuffled) {
  // Not the identity and no long runs of consecutive values.
  KeyedPermutation perm(10000, 7);
  int consecutive = 0, fixed = 0;
  for (uint64_t i = 0; i + 1 < 10000; ++i) {
    consecutive += perm.Apply(i + 1) == perm.Apply(i) + 1;
    fixed += perm.Apply(i) == i;
  }
  EXPECT_LT(consecutive, 50);
  EXPECT_LT(fixed, 50);
}

}  // namespace
}  // namespace stoker::plan
