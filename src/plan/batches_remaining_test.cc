// BatchPlanner::BatchesRemaining through the interface alone: for the row plan (one dataset and a
// mixture) and for steps counted in tokens, the batches that Advance walks to the epoch's end.
#include <gtest/gtest.h>

#include <memory>

#include "plan/plan_batch_planner.h"
#include "plan/plan_test_util.h"
#include "plan/token_step_planner.h"

namespace stoker {
namespace {

using plan::testing::MakeLengths;
using plan::testing::MakePlan;

// From every position of epoch 0 that Advance reaches, BatchesRemaining is the count of batches
// still to come in the epoch.
void ExpectRemainingMatchesAdvance(const BatchPlanner& planner) {
  std::vector<PlanPosition> positions;
  for (PlanPosition pos = planner.Normalize({0, 0}); pos.epoch == 0; pos = planner.Advance(pos)) {
    positions.push_back(pos);
  }
  ASSERT_GT(positions.size(), 2u);
  for (size_t k = 0; k < positions.size(); ++k) {
    Result<uint64_t> left = planner.BatchesRemaining(positions[k]);
    ASSERT_TRUE(left.ok()) << left.status().ToString();
    EXPECT_EQ(*left, positions.size() - k) << "batch " << k;
  }
}

TEST(BatchesRemainingTest, RowPlanOfOneDatasetAndOfAMixture) {
  auto a = MakeLengths(400, 60, 0.0, 2, 1), b = MakeLengths(300, 40, 0.0, 1, 2);
  PlanOptions o;
  o.seq_len = 128;
  o.batch_size = 2;
  o.world_size = 3;
  PlanBatchPlanner one(MakePlan({{a, 1.0}}, o), 1);
  ExpectRemainingMatchesAdvance(one);
  PlanBatchPlanner mixed(MakePlan({{a, 0.7}, {b, 0.3}}, o), 2);
  ExpectRemainingMatchesAdvance(mixed);
}

TEST(BatchesRemainingTest, StepsCountedInTokensCountMicrobatches) {
  PlanOptions o;
  o.seq_len = 1024;
  o.world_size = 2;
  o.rank = 1;
  o.tokens_per_step = 8192;
  o.microbatches = 2;
  o.max_tokens_per_microbatch = 1024;
  auto planner = TokenStepPlanner::Create(MakeLengths(600, 120, 0.0, 3, 5), o);
  ASSERT_TRUE(planner.ok()) << planner.status().ToString();
  ExpectRemainingMatchesAdvance(**planner);
}

}  // namespace
}  // namespace stoker
