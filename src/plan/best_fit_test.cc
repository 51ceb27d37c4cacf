#include "plan/best_fit.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace stoker::plan {
namespace {

TEST(BestFitTest, PacksIntoTightestBin) {
  // Decreasing: 6 opens bin 0 (room 4), 5 opens bin 1 (room 5), 4 fits bin 0 exactly,
  // 3 goes to bin 1 (room 2), 2 fits bin 1 exactly.
  std::vector<uint64_t> lengths{4, 6, 2, 5, 3};
  std::vector<uint32_t> bins;
  EXPECT_EQ(BestFitDecreasing(lengths, 10, &bins), 2u);
  EXPECT_EQ(bins, (std::vector<uint32_t>{0, 0, 1, 1, 1}));
}

TEST(BestFitTest, NeverOverfillsAndUsesFewBins) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    uint64_t cap = 1 + rng() % 300;
    std::vector<uint64_t> lengths(rng() % 500);
    uint64_t total = 0;
    for (auto& l : lengths) total += l = 1 + rng() % cap;
    std::vector<uint32_t> bins;
    uint64_t n = BestFitDecreasing(lengths, cap, &bins);
    std::vector<uint64_t> fill(n, 0);
    for (size_t i = 0; i < lengths.size(); ++i) {
      ASSERT_LT(bins[i], n);
      fill[bins[i]] += lengths[i];
    }
    for (uint64_t f : fill) {
      ASSERT_LE(f, cap);
      ASSERT_GT(f, 0u);
    }
    // First-fit-decreasing family bound: at most 11/9 OPT + 1 bins, OPT >= total / cap.
    EXPECT_LE(n, (11 * ((total + cap - 1) / cap)) / 9 + 1);
  }
}

TEST(BestFitTest, EmptyInput) {
  std::vector<uint32_t> bins;
  EXPECT_EQ(BestFitDecreasing({}, 10, &bins), 0u);
  EXPECT_TRUE(bins.empty());
}

}  // namespace
}  // namespace stoker::plan
