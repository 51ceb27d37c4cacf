#include "plan/mixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace stoker::plan {
namespace {

// The tree's depth over K datasets, and the bound every prefix keeps: depth / 2 rows, at least one.
double Bound(size_t k) {
  const double depth = std::ceil(std::log2(static_cast<double>(k)));
  return std::max(1.0, depth / 2);
}

TEST(MixtureTest, EveryPrefixWithinItsBoundOfTheWeights) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    size_t k = 2 + rng() % 9;
    std::vector<double> w(k);
    double sum = 0;
    for (auto& x : w) sum += x = 0.01 + (rng() % 1000) / 100.0;
    Mixture mix(w);
    std::vector<uint64_t> count(k, 0);
    uint64_t g = 0;
    mix.Walk(0, 20000, [&](uint32_t d, uint64_t j) {
      ASSERT_EQ(j, count[d]);  // each dataset's rows are taken in order
      ++count[d];
      ++g;
      for (size_t i = 0; i < k; ++i) {
        ASSERT_LE(std::abs(static_cast<double>(count[i]) - w[i] / sum * g), Bound(k) + 1e-9)
            << "trial " << trial << " prefix " << g << " dataset " << i;
      }
    });
  }
}

TEST(MixtureTest, RandomAccessMatchesSequentialWalk) {
  Mixture mix({0.5, 0.3, 0.2});
  std::vector<uint32_t> seq;
  mix.Walk(0, 30000, [&](uint32_t d, uint64_t) { seq.push_back(d); });
  Mixture fresh({0.5, 0.3, 0.2});
  for (uint64_t g : {29999u, 0u, 4095u, 4096u, 4097u, 12345u, 8192u}) {
    fresh.Walk(g, 1, [&](uint32_t d, uint64_t) { EXPECT_EQ(d, seq[g]) << g; });
  }
  std::vector<uint64_t> counts = fresh.CountsBefore(10000);
  uint64_t c0 = 0;
  for (int i = 0; i < 10000; ++i) c0 += seq[i] == 0;
  EXPECT_EQ(counts[0], c0);
  EXPECT_EQ(counts[0] + counts[1] + counts[2], 10000u);
}

TEST(MixtureTest, UpToThreeDatasetsStayWithinOneRowAndTwoFollowTheDeficitRule) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    const size_t k = 2 + trial % 2;
    std::vector<double> w(k);
    double sum = 0;
    for (auto& x : w) sum += x = 0.01 + (rng() % 1000) / 100.0;
    Mixture mix(w);
    // The deficit rule (largest weight * (g + 1) - count, ties: lowest), in doubles: for two
    // datasets the tree's one node is that rule.
    std::vector<double> deficit(k, 0);
    std::vector<uint64_t> count(k, 0);
    uint64_t g = 0;
    mix.Walk(0, 5000, [&](uint32_t d, uint64_t) {
      ++count[d];
      ++g;
      for (size_t i = 0; i < k; ++i) {
        ASSERT_LE(std::abs(static_cast<double>(count[i]) - w[i] / sum * g), 1.0 + 1e-9);
      }
      if (k == 2) {
        const double d0 = w[0] / sum * g - static_cast<double>(count[0] - (d == 0));
        const double d1 = w[1] / sum * g - static_cast<double>(count[1] - (d == 1));
        if (std::abs(d0 - d1) > 1e-6) {
          ASSERT_EQ(d, d0 > d1 ? 0u : 1u) << "row " << g - 1;
        }
      }
    });
  }
}

TEST(MixtureTest, RandomAccessFarIntoTheStreamIsExact) {
  // Counts before g + 1 differ from those before g by the one row Walk gives at g, however far.
  Mixture mix({0.37, 0.21, 0.0, 0.3, 0.12});
  std::mt19937_64 rng(9);
  for (int probe = 0; probe < 200; ++probe) {
    const uint64_t g = rng() >> (rng() % 60);
    std::vector<uint64_t> before = mix.CountsBefore(g);
    uint64_t sum = 0;
    for (uint64_t c : before) sum += c;
    EXPECT_EQ(sum, g);
    EXPECT_EQ(before[2], 0u);  // weight 0
    mix.Walk(g, 3, [&](uint32_t d, uint64_t j) {
      EXPECT_EQ(j, before[d]);
      ++before[d];
    });
    EXPECT_EQ(mix.CountsBefore(g + 3), before) << g;
  }
}

TEST(MixtureTest, SingleDatasetTakesEveryRow) {
  Mixture mix({3.0});
  uint64_t n = 0;
  mix.Walk(5, 100, [&](uint32_t d, uint64_t j) {
    EXPECT_EQ(d, 0u);
    EXPECT_EQ(j, 5 + n++);
  });
}

}  // namespace
}  // namespace stoker::plan
