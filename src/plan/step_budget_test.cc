// Batch-size schedules (step_budget.h): constant phases and linear ramps, and what is refused.
#include "plan/step_budget.h"

#include <gtest/gtest.h>

#include "plan/mixture_file.h"
#include "plan/plan_options_table.h"

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

TEST(StepBudgetTest, ParsesWhatTextWrites) {
  auto b = StepBudget::Parse("1000@100,1000..5000@300,8000");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->Text(), "1000@100,1000..5000@300,8000");
  EXPECT_TRUE(StepBudget::Parse("")->empty());
  auto bad = StepBudget::Parse("4M@10,8M");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("TOKENS[..TOKENS]@END_ROW"), std::string::npos);
}

TEST(StepBudgetTest, AMixtureFileDeclaresTheScheduleBesideItsPhases) {
  const std::string text = R"({"datasets": {"web": "/d/web", "code": "/d/code"},
    "phases": [{"until": "10 steps", "weights": {"web": 1, "code": 0}},
               {"weights": {"web": 1, "code": 1}}],
    "tokens_per_step": [{"until": "20 steps", "tokens": "4K"},
                        {"until": "1M tokens", "tokens": ["4K", 16384]},
                        {"tokens": 16384}]})";
  auto file = ParseMixtureFile(text, "m.json");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->step_tokens.size(), 3u);
  // Rows of 1024 tokens, 4 rows per step: step 20 is row 80, 1M tokens row 977.
  auto resolved = ResolveStepTokens(*file, 1024, 4, {});
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(*resolved, "4000@80,4000..16384@977,16384");
  auto fails = [](const std::string& schedule, const std::string& want) {
    const std::string t = R"({"datasets": {"web": "/d/web"}, "weights": {"web": 1},
                              "tokens_per_step": )" +
                          schedule + "}";
    auto f = ParseMixtureFile(t, "m.json");
    Result<std::string> r = f.ok() ? ResolveStepTokens(*f, 1024, 4, {}) : f.status();
    ASSERT_FALSE(r.ok()) << schedule;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().ToString();
  };
  fails(R"([{"tokens": 0}])", "tokens_per_step[0]: 'tokens' must be a count > 0");
  fails(R"([{"until": "5 steps", "tokens": 10}])", "the last phase runs to the end");
  fails(R"([{"tokens": 10}, {"tokens": 20}])", "tokens_per_step[0]: 'until' is missing");
  fails(R"([{"tokens": [1, 2]}])", "a ramp is [start, end], in a phase with an 'until'");
  fails(R"([{"until": "5 steps", "tokens": 10, "batch": 1}, {"tokens": 2}])", "batch");
  fails(R"([{"until": "5 steps", "tokens": 10}, {"until": "2 steps", "tokens": 2},
            {"tokens": 3}])",
        "its end must be after the previous phase's");
}

// PlanOptions::tokens_per_step_schedule, the option the Loader follows: its row takes only what
// StepBudget::Parse reads, naming the option and the form to write.
TEST(StepBudgetTest, TheOptionRowTakesOnlyASchedule) {
  const OptionRow<PlanOptions>* row = FindOption(PlanOptionTable(), "tokens_per_step_schedule");
  ASSERT_NE(row, nullptr);
  PlanOptions o;
  ASSERT_TRUE(row->set(o, "512@32,512..2000@96,2000").ok());
  EXPECT_EQ(o.tokens_per_step_schedule, "512@32,512..2000@96,2000");
  EXPECT_EQ(StepBudget::Parse(o.tokens_per_step_schedule)->TokensAt(64), 512u + 32 * 1488 / 64);
  Status bad = row->set(o, "4M@10,8M");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("tokens_per_step_schedule '4M@10,8M': write TOKENS"),
            std::string::npos)
      << bad.ToString();
  EXPECT_EQ(o.tokens_per_step_schedule, "512@32,512..2000@96,2000");  // unchanged
  EXPECT_TRUE(row->set(o, "").ok());
  EXPECT_TRUE(o.tokens_per_step_schedule.empty());
}

}  // namespace
}  // namespace stoker::plan
