// Batch-size schedules (step_budget.h): constant phases and linear ramps, and what is refused.
#include "plan/step_budget.h"

#include <gtest/gtest.h>

namespace stoker::plan {
namespace {

TEST(StepBudgetTest, PhasesAndRampsGiveEachPositionItsBudget) {
  auto b = StepBudget::Create({{100, 1000, 0}, {300, 1000, 5000}, {UINT64_MAX, 8000, 0}});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->TokensAt(0), 1000u);
  EXPECT_EQ(b->TokensAt(99), 1000u);
  EXPECT_EQ(b->TokensAt(100), 1000u);  // the ramp starts at its start value
  EXPECT_EQ(b->TokensAt(200), 3000u);  // half way
  EXPECT_EQ(b->TokensAt(299), 4980u);
  EXPECT_EQ(b->TokensAt(300), 8000u);
  EXPECT_EQ(b->TokensAt(uint64_t{1} << 60), 8000u);
  EXPECT_EQ(b->Text(), "1000@100,1000..5000@300,8000");
  auto down = StepBudget::Create({{10, 4000, 2000}, {UINT64_MAX, 2000, 0}});
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(down->TokensAt(5), 3000u);
  EXPECT_TRUE(StepBudget().empty());
}

TEST(StepBudgetTest, RefusesWhatCannotBeASchedule) {
  auto fails = [](std::vector<StepBudgetPhase> phases, const std::string& want) {
    auto b = StepBudget::Create(std::move(phases));
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.status().message().find(want), std::string::npos) << b.status().ToString();
  };
  fails({{UINT64_MAX, 0, 0}}, "phase 0: a budget of 0 tokens");
  fails({{UINT64_MAX, 10, 0}, {UINT64_MAX, 20, 0}}, "phase 0: only the last phase");
  fails({{10, 10, 0}}, "phase 0: the last phase runs to the end");
  fails({{10, 10, 0}, {5, 10, 0}, {UINT64_MAX, 10, 0}}, "phase 1: its end must be after");
}

}  // namespace
}  // namespace stoker::plan
