#include "plan/best_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
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

// The textbook algorithm, quadratic: bins with equal room are interchangeable, so the bin count
// and every bin's fill must agree with the fast version whatever the tie-breaking.
std::vector<uint64_t> ReferenceFills(std::vector<uint64_t> lengths, uint64_t cap) {
  std::stable_sort(lengths.begin(), lengths.end(), std::greater<>());
  std::vector<uint64_t> fill;
  for (uint64_t l : lengths) {
    int best = -1;
    for (size_t b = 0; b < fill.size(); ++b) {
      if (fill[b] + l <= cap && (best < 0 || fill[b] > fill[best])) best = static_cast<int>(b);
    }
    if (best < 0) {
      fill.push_back(l);
    } else {
      fill[best] += l;
    }
  }
  std::sort(fill.begin(), fill.end());
  return fill;
}

TEST(BestFitTest, MatchesTheTextbookAlgorithm) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 60; ++trial) {
    uint64_t cap = 1 + rng() % (trial % 2 ? 9000 : 70);
    std::vector<uint64_t> lengths(rng() % 400);
    for (auto& l : lengths) l = 1 + rng() % cap;
    std::vector<uint32_t> bins;
    uint64_t n = BestFitDecreasing(lengths, cap, &bins);
    std::vector<uint64_t> fill(n, 0);
    for (size_t i = 0; i < lengths.size(); ++i) fill[bins[i]] += lengths[i];
    std::sort(fill.begin(), fill.end());
    ASSERT_EQ(fill, ReferenceFills(lengths, cap)) << "trial " << trial;
  }
}

TEST(BestFitTest, ABinWithMaxItemsIsClosed) {
  // Ten items of 1 fit one bin of 100; with at most 3 items per bin they take four bins.
  std::vector<uint32_t> bins;
  const std::vector<uint64_t> ones(10, 1);
  EXPECT_EQ(BestFitDecreasing(ones, 100, &bins), 1u);
  EXPECT_EQ(BestFitDecreasing(ones, 100, &bins, 3), 4u);
  std::vector<int> count(4, 0);
  for (uint32_t b : bins) ++count[b];
  EXPECT_EQ(count, (std::vector<int>{3, 3, 3, 1}));
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint64_t> lengths(rng() % 300);
    for (auto& l : lengths) l = 1 + rng() % 64;
    const uint64_t most = 1 + trial % 5;
    const uint64_t n = BestFitDecreasing(lengths, 64, &bins, most);
    std::vector<uint64_t> fill(n, 0), items(n, 0);
    for (size_t i = 0; i < lengths.size(); ++i) {
      fill[bins[i]] += lengths[i];
      ++items[bins[i]];
    }
    for (uint64_t b = 0; b < n; ++b) {
      EXPECT_LE(fill[b], 64u);
      EXPECT_LE(items[b], most);
      EXPECT_GE(items[b], 1u);
    }
  }
}

TEST(BestFitTest, EmptyInput) {
  std::vector<uint32_t> bins;
  EXPECT_EQ(BestFitDecreasing({}, 10, &bins), 0u);
  EXPECT_TRUE(bins.empty());
}

}  // namespace
}  // namespace stoker::plan
