// The order randomness of steps counted in tokens (token_step_order.h): on skewed lengths every
// piece stays within its window (displacement <= window pieces - 1, below today's bestfit bound
// when the window holds fewer pieces than bestfit_window), balancing does move pieces (the
// measure sees it), and balance=none, which serves the window in order, moves none.
#include "plan/token_step_order.h"

#include <gtest/gtest.h>

#include "plan/plan_test_util.h"

namespace stoker::plan {
namespace {

OrderDisplacement Epoch(BalanceMode balance, uint32_t world) {
  PlanOptions o;
  o.seq_len = 4096;
  o.world_size = world;
  o.seed = 3;
  o.tokens_per_step = 96 * 1024;
  o.microbatches = 2;
  o.max_tokens_per_microbatch = 4096;
  o.balance = balance;
  o.step_cost = {1.0, 1.0 / 1024, 0.0};
  // Skewed: log-normal around 150 tokens, a long tail cut into pieces at 4096.
  auto steps = TokenSteps::Create(testing::MakeLengths(6000, 150, 0.0, 4, 21), o);
  EXPECT_TRUE(steps.ok()) << steps.status().ToString();
  OrderDisplacement d;
  uint64_t first = 0;
  for (;;) {
    Result<TokenStep> step = (*steps)->StepAt(0, first);
    EXPECT_TRUE(step.ok());
    if (!step.ok() || step->empty()) break;
    OrderDisplacement one;
    AddOrderDisplacement(*step, &one);
    EXPECT_EQ(one.pieces, step->pieces.size());
    EXPECT_LE(one.max, step->pieces.size() - 1);  // never out of its window
    AddOrderDisplacement(*step, &d);
    first = step->end;
  }
  return d;
}

TEST(TokenStepOrder, BalancedPiecesStayWithinTheirWindow) {
  for (uint32_t world : {1u, 8u, 64u}) {
    SCOPED_TRACE("world " + std::to_string(world));
    const OrderDisplacement d = Epoch(BalanceMode::kAttention, world);
    ASSERT_GT(d.pieces, 0u);
    EXPECT_LE(d.max, d.bound);
    EXPECT_LT(d.bound, PlanOptions{}.bestfit_window - 1);  // within today's bestfit bound
    EXPECT_GT(d.max, 0u);                                  // balancing does reorder
    EXPECT_GT(d.relative(), 0.0);
    EXPECT_LT(d.relative(), 2.0);
  }
}

TEST(TokenStepOrder, UnbalancedStepsKeepTheShuffledOrder) {
  const OrderDisplacement d = Epoch(BalanceMode::kNone, 8);
  ASSERT_GT(d.pieces, 0u);
  EXPECT_EQ(d.max, 0u);
  EXPECT_EQ(d.sum, 0.0);
}

}  // namespace
}  // namespace stoker::plan
