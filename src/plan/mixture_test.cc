#include "plan/mixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stoker::plan {
namespace {

TEST(MixtureTest, EveryPrefixWithinOneRowOfTheWeights) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    size_t k = 2 + rng() % 6;
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
        ASSERT_LE(std::abs(static_cast<double>(count[i]) - w[i] / sum * g), 1.0 + 1e-9)
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

TEST(MixtureTest, TheStreamRepeatsWithItsPeriod) {
  // A small quantum total gives a short period, so lookups across several periods are cheap to
  // check against one sequential walk.
  Mixture mix({0.45, 0.35, 0.2}, 5000);
  const uint64_t period = mix.period_rows();
  std::vector<uint32_t> seq;
  std::vector<uint64_t> count(3, 0);
  mix.Walk(0, 4 * period + 123, [&](uint32_t d, uint64_t j) {
    ASSERT_EQ(j, count[d]++);
    seq.push_back(d);
    for (int k = 0; k < 3; ++k) {
      // Within one row of the quantized weights (5000 quanta: 0.45 -> 2250 of 5000).
      ASSERT_LE(std::abs(static_cast<double>(count[k]) - (k == 0   ? 0.45
                                                          : k == 1 ? 0.35
                                                                   : 0.2) *
                                                             seq.size()),
                1.0 + 1e-9);
    }
  });
  for (uint64_t i = 0; i < seq.size() - period; ++i) ASSERT_EQ(seq[i], seq[i + period]) << i;
  Mixture fresh({0.45, 0.35, 0.2}, 5000);
  for (uint64_t g : {period * 3 + 7, period - 1, period, 2 * period + 4095, uint64_t{5}}) {
    std::vector<uint64_t> want(3, 0);
    for (uint64_t i = 0; i < g; ++i) ++want[seq[i]];
    EXPECT_EQ(fresh.CountsBefore(g), want) << g;
    fresh.Walk(g, 1, [&](uint32_t d, uint64_t j) {
      EXPECT_EQ(d, seq[g]);
      EXPECT_EQ(j, want[d]);
    });
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
