// Step windows (step_windows.h): on log-normal lengths at W = 8 and 64, windows cut by cost even
// the ranks' step cost where windows cut by tokens leave the rank with the longest document the
// slowest; both keep every document in at most one window, in order, and the same step count on
// every rank. Prints the per-rank cost max / mean of both.
#include "stream/step_windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace stoker::stream {
namespace {

// `docs` log-normal lengths (median 245 tokens, up to 6,000), dealt to `world` ranks in
// contiguous runs, with cost L + 0.0005·L².
void LogNormalRanks(uint32_t world, size_t docs, std::vector<std::vector<uint64_t>>* lengths,
                    std::vector<std::vector<double>>* costs) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(245.0), 1.0);
  lengths->assign(world, {});
  costs->assign(world, {});
  for (size_t i = 0; i < docs; ++i) {
    const uint64_t n = std::clamp<uint64_t>(static_cast<uint64_t>(dist(rng)), 1, 6000);
    const size_t r = i * world / docs;
    (*lengths)[r].push_back(n);
    (*costs)[r].push_back(double(n) + 0.0005 * double(n) * double(n));
  }
}

struct Imbalance {
  double mean = 0, worst = 0;
  size_t steps = 0;
};

Imbalance Measure(const std::vector<std::vector<uint64_t>>& lengths,
                  const std::vector<std::vector<StepWindow>>& windows, uint64_t per_rank) {
  const size_t world = windows.size();
  Imbalance out;
  out.steps = windows[0].size();
  for (size_t r = 0; r < world; ++r) {
    EXPECT_EQ(windows[r].size(), out.steps) << "rank " << r;
    size_t at = 0;
    for (const StepWindow& w : windows[r]) {  // contiguous, in order, none empty
      EXPECT_EQ(w.first, at);
      EXPECT_GT(w.end, w.first);
      uint64_t tokens = 0;
      for (size_t i = w.first; i < w.end; ++i) tokens += lengths[r][i];
      EXPECT_EQ(tokens, w.tokens);
      at = w.end;
    }
    EXPECT_LE(at, lengths[r].size());
  }
  uint64_t all = 0;
  for (size_t s = 0; s < out.steps; ++s) {
    double max = 0, sum = 0;
    for (size_t r = 0; r < world; ++r) {
      max = std::max(max, windows[r][s].cost);
      sum += windows[r][s].cost;
      all += windows[r][s].tokens;
    }
    const double ratio = max / (sum / double(world));
    out.mean += ratio / double(out.steps);
    out.worst = std::max(out.worst, ratio);
  }
  // A step holds about tokens_per_step tokens either way.
  EXPECT_NEAR(double(all) / double(out.steps), double(per_rank * world),
              0.15 * double(per_rank * world));
  return out;
}

TEST(StepWindows, CutByCostEvensTheRanksWhereTokensDoNot) {
  for (uint32_t world : {8u, 64u}) {
    std::vector<std::vector<uint64_t>> lengths;
    std::vector<std::vector<double>> costs;
    LogNormalRanks(world, world == 8 ? 20000 : 80000, &lengths, &costs);
    const uint64_t per_rank = 8192;  // 65,536 tokens per step at W = 8, 524,288 at 64
    const Imbalance tokens =
        Measure(lengths, CutStepWindows(lengths, costs, per_rank, false), per_rank);
    const Imbalance cost =
        Measure(lengths, CutStepWindows(lengths, costs, per_rank, true), per_rank);
    std::printf(
        "[ step windows ] W=%u: per-rank cost max/mean, mean over %zu steps (worst): by tokens "
        "%.3f (%.3f), by cost %.3f (%.3f) over %zu steps\n",
        world, tokens.steps, tokens.mean, tokens.worst, cost.mean, cost.worst, cost.steps);
    ASSERT_GT(cost.steps, 2u);
    // Measured: 1.51 -> 1.20 at W = 8, 2.16 -> 1.60 at W = 64. A document can cost more than a
    // rank's share of a step (6,000 tokens: 24,000 against about 13,000), so no prefix evens it.
    EXPECT_LT(cost.mean, 0.85 * tokens.mean);
    EXPECT_LT(cost.worst, tokens.worst);
  }
}

}  // namespace
}  // namespace stoker::stream
