#include "plan/slot_assignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "plan/best_fit.h"

namespace stoker::plan {
namespace {

// Skewed document lengths: mostly short, a few near the budget.
std::vector<uint64_t> SkewedLengths(size_t n, uint64_t budget, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> len(std::log(400.0), 1.4);
  std::vector<uint64_t> lengths(n);
  for (auto& l : lengths) l = std::clamp<uint64_t>(static_cast<uint64_t>(len(rng)), 1, budget);
  return lengths;
}

void ExpectValid(const SlotAssignment& a, const std::vector<uint64_t>& lengths, uint32_t ranks,
                 uint64_t budget, const CostModel& cost) {
  ASSERT_EQ(a.ranks, ranks);
  ASSERT_EQ(a.slots.size(), size_t{ranks} * a.microbatches);  // equal count per rank
  ASSERT_EQ(a.slot_tokens.size(), a.slots.size());
  std::vector<int> seen(lengths.size(), 0);
  for (size_t s = 0; s < a.slots.size(); ++s) {
    uint64_t tokens = 0;
    double c = 0;
    ASSERT_TRUE(std::is_sorted(a.slots[s].begin(), a.slots[s].end()));
    for (uint32_t d : a.slots[s]) {
      ASSERT_LT(d, lengths.size());
      ++seen[d];
      tokens += lengths[d];
      c += cost.Cost(lengths[d]);
    }
    EXPECT_LE(tokens, budget) << "slot " << s;
    EXPECT_EQ(tokens, a.slot_tokens[s]);
    EXPECT_NEAR(c, a.slot_cost[s], 1e-9 * c);
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int x) { return x == 1; }));
}

double RankMaxOverMean(const std::vector<double>& v) {
  double total = 0, max = 0;
  for (double x : v) {
    total += x;
    max = std::max(max, x);
  }
  return max / (total / static_cast<double>(v.size()));
}

const CostModel kSmallModel{3e9, 1.3e5, 0};  // Qwen2.5-0.5B-like: L² counts from ~2k tokens

TEST(SlotAssignmentTest, ExactlyOnceWithinBudgetEqualCounts) {
  for (uint32_t ranks : {1u, 3u, 8u, 64u}) {
    const uint64_t budget = 8192;
    auto lengths = SkewedLengths(40 * ranks + 17, budget, ranks);
    auto a = AssignSlots(lengths, ranks, budget, kSmallModel);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ExpectValid(*a, lengths, ranks, budget, kSmallModel);
  }
}

TEST(SlotAssignmentTest, DeterministicAndMinimalMicrobatches) {
  auto lengths = SkewedLengths(2000, 4096, 5);
  auto a = AssignSlots(lengths, 8, 4096, kSmallModel);
  auto b = AssignSlots(lengths, 8, 4096, kSmallModel);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->slots, b->slots);
  uint64_t total = 0;
  for (uint64_t l : lengths) total += l;
  EXPECT_GE(uint64_t{a->microbatches} * 8 * 4096, total);
  // Within one microbatch per rank of the lower bound on this mix.
  EXPECT_LE(a->microbatches, (total + 8 * 4096 - 1) / (8 * 4096) + 1);
  // Asking for more microbatches gives at least that many.
  auto c = AssignSlots(lengths, 8, 4096, kSmallModel, a->microbatches + 3);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->microbatches, a->microbatches + 3);
  ExpectValid(*c, lengths, 8, 4096, kSmallModel);
}

TEST(SlotAssignmentTest, FewerDocumentsThanSlots) {
  std::vector<uint64_t> lengths{5, 3};
  auto a = AssignSlots(lengths, 4, 10, CostModel{});
  ASSERT_TRUE(a.ok());
  ExpectValid(*a, lengths, 4, 10, CostModel{});
  EXPECT_EQ(a->microbatches, 1u);  // two empty slots: those ranks pad
}

TEST(SlotAssignmentTest, BalancesBetterThanFixedRows) {
  // One step at a time: today's plan packs best-fit rows of 16k tokens and deals two to each
  // rank. Balanced slots of the same documents, two microbatches per rank, keep the per-rank step
  // cost closer to the mean: with a budget of one row (the documents fill the rows: whole rows
  // are balanced) and more so with 25% more room per microbatch (the greedy by cost).
  const uint64_t row = 16384;
  const uint32_t rows_per_rank = 2;
  for (uint32_t ranks : {16u, 64u}) {
    for (uint64_t budget : {row, row * 5 / 4}) {
      double fixed_sum = 0, balanced_sum = 0;
      int steps = 0;
      for (uint64_t seed = 0; seed < 10; ++seed) {
        auto pool = SkewedLengths(ranks * rows_per_rank * 40, row, 100 + seed);
        std::vector<uint32_t> bin_of;
        const uint64_t rows = BestFitDecreasing(pool, row, &bin_of);
        const uint64_t step_rows = uint64_t{ranks} * rows_per_rank;
        ASSERT_GE(rows, step_rows);
        std::vector<uint64_t> lengths;  // the documents of the step's rows
        std::vector<double> row_cost(step_rows, 0.0), rank_fixed(ranks, 0.0);
        for (size_t i = 0; i < pool.size(); ++i) {
          if (bin_of[i] >= step_rows) continue;
          lengths.push_back(pool[i]);
          row_cost[bin_of[i]] += kSmallModel.Cost(pool[i]);
        }
        for (uint64_t r = 0; r < step_rows; ++r) rank_fixed[r % ranks] += row_cost[r];
        auto a = AssignSlots(lengths, ranks, budget, kSmallModel, rows_per_rank);
        ASSERT_TRUE(a.ok());
        ExpectValid(*a, lengths, ranks, budget, kSmallModel);
        EXPECT_EQ(a->microbatches, rows_per_rank);  // never more microbatches than the rows
        std::vector<double> rank_balanced(ranks, 0.0);
        for (size_t s = 0; s < a->slots.size(); ++s) {
          rank_balanced[s / a->microbatches] += a->slot_cost[s];
        }
        fixed_sum += RankMaxOverMean(rank_fixed);
        balanced_sum += RankMaxOverMean(rank_balanced);
        ++steps;
      }
      const double fixed = fixed_sum / steps, balanced = balanced_sum / steps;
      SCOPED_TRACE(std::to_string(ranks) + " ranks, budget " + std::to_string(budget));
      EXPECT_GT(fixed, balanced + 0.04);
      EXPECT_LT(balanced, budget == row ? 1.07 : 1.03);
    }
  }
}

TEST(SlotAssignmentTest, RefusesBadInput) {
  std::vector<uint64_t> lengths{5, 11};
  EXPECT_NE(
      AssignSlots(lengths, 2, 10, CostModel{}).status().message().find("document 1 has 11 tokens"),
      std::string::npos);
  lengths[1] = 0;
  EXPECT_FALSE(AssignSlots(lengths, 2, 10, CostModel{}).ok());
  lengths[1] = 1;
  EXPECT_NE(AssignSlots(lengths, 0, 10, CostModel{}).status().message().find("ranks"),
            std::string::npos);
  EXPECT_NE(
      AssignSlots(lengths, 1, 0, CostModel{}).status().message().find("max_tokens_per_microbatch"),
      std::string::npos);
  EXPECT_FALSE(AssignSlots(lengths, 1, 10, CostModel{0, 0, 0}).ok());
}

}  // namespace
}  // namespace stoker::plan
