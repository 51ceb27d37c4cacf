// SkipOver / StepsRemainingWithSkips / ReadStateEdits / DropDatasets: a skip edit as a plan
// reader honours it, on the writer's world size and on another one.
#include "plan/state_skips.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/plan_test_util.h"
#include "plan/state_edit.h"

namespace stoker {
namespace {

using plan::testing::MakeLengths;
using plan::testing::MakePlan;

// A plan of one dataset whose epoch is 40 global rows (concat packing of 40 * 64 tokens).
std::unique_ptr<Plan> SkipPlan(uint32_t world_size, uint64_t batch_size) {
  auto lengths = std::make_shared<DatasetLengths>();
  lengths->name = "skips";
  lengths->document_lengths.assign(80, 32);
  lengths->shard_first_document = {0, 80};
  PlanOptions o;
  o.seq_len = 64;
  o.batch_size = batch_size;
  o.world_size = world_size;
  return MakePlan({PlanDataset{lengths, 1.0}}, o);
}

// The positions every step of epoch 0 starts at, from `pos`, honouring `skips`.
std::vector<uint64_t> StepStarts(const Plan& plan, PlanPosition pos, std::vector<SkipRange> skips,
                                 std::string* warnings) {
  std::vector<uint64_t> starts;
  std::string w;
  for (;;) {
    pos = SkipOver(plan, pos, &skips, &w);
    *warnings += w;
    if (pos.epoch != 0 || !plan.HasStep(pos)) break;
    starts.push_back(pos.rows_consumed);
    pos = plan.Advance(pos);
  }
  return starts;
}

TEST(SkipOver, JumpsOverTheSkippedStepsOnTheWritersWorld) {
  std::unique_ptr<Plan> plan = SkipPlan(2, 2);  // 4 rows a step, 10 steps
  ASSERT_NE(plan, nullptr);
  std::string warnings;
  // Steps 3..5 are rows [12, 24).
  std::vector<uint64_t> starts = StepStarts(*plan, {0, 0}, {{0, 12, 24, "3..5"}}, &warnings);
  EXPECT_EQ(starts, (std::vector<uint64_t>{0, 4, 8, 24, 28, 32, 36}));
  EXPECT_EQ(warnings, "");
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 0}, {{0, 12, 24, "3..5"}}), 7u);
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 24}, {{0, 12, 24, "3..5"}}), 4u);
  EXPECT_EQ(plan->steps_remaining({0, 0}), 10u);
}

TEST(SkipOver, SkipsAStraddlingStepWholeOnAnotherWorldAndSaysSo) {
  std::unique_ptr<Plan> plan = SkipPlan(3, 2);  // 6 rows a step, 6 steps
  ASSERT_NE(plan, nullptr);
  std::string warnings;
  std::vector<uint64_t> starts = StepStarts(*plan, {0, 0}, {{0, 8, 16, "2..3"}}, &warnings);
  // The step at row 6 reaches row 8: skipped whole; the next starts at 16.
  EXPECT_EQ(starts, (std::vector<uint64_t>{0, 16, 22, 28, 34}));
  EXPECT_NE(warnings.find("rows 6..7 are skipped too"), std::string::npos) << warnings;
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 0}, {{0, 8, 16, "2..3"}}),
            static_cast<uint64_t>(starts.size()));
}

TEST(SkipOver, ASkipToTheEpochsEndEndsTheEpoch) {
  std::unique_ptr<Plan> plan = SkipPlan(2, 2);
  ASSERT_NE(plan, nullptr);
  std::vector<SkipRange> skips = {{0, 32, 40, "8..9"}};
  std::string w;
  EXPECT_EQ(SkipOver(*plan, {0, 32}, &skips, &w), (PlanPosition{1, 0}));
  EXPECT_TRUE(skips.empty());
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 0}, {{0, 32, 40, "8..9"}}), 8u);
}

TEST(ReadStateEdits, ReadsWhatResumeEditWrote) {
  PlanState s;
  s.position = {0, 8};
  s.fingerprint = "abc";
  s.world_size = 2;
  s.batch_size = 2;
  Result<std::string> edited = SkipStepsInState(s.ToJson(), 5, 6);
  ASSERT_TRUE(edited.ok());
  nlohmann::json loader = {{"format", "stoker-loader-state"},
                           {"version", 1},
                           {"plan_state", nlohmann::json::parse(*edited)}};
  loader["plan_state"]["drop"] = {"web"};
  Result<StateEdits> e = ReadStateEdits(loader.dump());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->skips.size(), 1u);
  EXPECT_EQ(e->skips[0].from, 20u);
  EXPECT_EQ(e->skips[0].to, 28u);
  EXPECT_EQ(e->drops, std::vector<std::string>{"web"});
  // Written back: a skip not reached stays, a passed one goes; drops stay.
  nlohmann::json kept = nlohmann::json::parse(WithStateEdits(s.ToJson(), *e, {0, 12}));
  EXPECT_EQ(kept["skip"].size(), 1u);
  EXPECT_EQ(kept["drop"][0], "web");
  nlohmann::json passed = nlohmann::json::parse(WithStateEdits(s.ToJson(), *e, {0, 28}));
  EXPECT_FALSE(passed.contains("skip"));

  Result<StateEdits> bad = ReadStateEdits(R"({"skip": [{"epoch": 0, "from": 9}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("malformed range"), std::string::npos);
  EXPECT_FALSE(ReadStateEdits("{").ok());
}

TEST(DropDatasets, LeavesTheNamedDatasetOutOfEveryPhase) {
  std::vector<PlanDataset> ds = {{MakeLengths(10, 20, 0, 1, 1), 1.0},
                                 {MakeLengths(10, 20, 0, 1, 2), 1.0},
                                 {MakeLengths(10, 20, 0, 1, 3), 1.0}};
  PlanOptions o;
  o.phases = {{100, {0.5, 0.3, 0.2}, {}}, {UINT64_MAX, {0.0, 0.5, 0.5}, {}}};
  o.dataset_names = {"a", "b", "c"};
  ASSERT_TRUE(DropDatasets({"b"}, o.dataset_names, &ds, &o).ok());
  EXPECT_EQ(ds.size(), 2u);
  EXPECT_EQ(o.phases[0].weights, (std::vector<double>{0.5, 0.2}));
  EXPECT_EQ(o.dataset_names, (std::vector<std::string>{"a", "c"}));

  Status unknown = DropDatasets({"x"}, o.dataset_names, &ds, &o);
  EXPECT_NE(unknown.message().find("'x', which these datasets do not have (a, c)"),
            std::string::npos)
      << unknown.ToString();
  EXPECT_NE(DropDatasets({"a"}, o.dataset_names, &ds, &o).message().find("fewer than two"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker
