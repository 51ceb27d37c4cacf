// SkipOver / EmptySkippedRows / StepsRemainingWithSkips / ReadStateEdits / DropDatasets: a skip
// edit as a plan reader honours it, on the writer's world size and on another one (where a step
// reaching into the skip serves its rows before it and padding after).
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

// The positions every step of epoch 0 starts at, from `pos`, honouring `skips` as the loader's
// planner does (SkipOver after each step).
std::vector<uint64_t> StepStarts(const Plan& plan, PlanPosition pos,
                                 const std::vector<SkipRange>& skips) {
  std::vector<uint64_t> starts;
  for (pos = SkipOver(plan, pos, skips); pos.epoch == 0 && plan.HasStep(pos);
       pos = SkipOver(plan, plan.Advance(pos), skips)) {
    starts.push_back(pos.rows_consumed);
  }
  return starts;
}

TEST(SkipOver, JumpsOverTheSkippedStepsOnTheWritersWorld) {
  std::unique_ptr<Plan> plan = SkipPlan(2, 2);  // 4 rows a step, 10 steps
  ASSERT_NE(plan, nullptr);
  // Steps 3..5 are rows [12, 24).
  const std::vector<SkipRange> skips = {{0, 12, 24, "3..5"}};
  EXPECT_EQ(StepStarts(*plan, {0, 0}, skips), (std::vector<uint64_t>{0, 4, 8, 24, 28, 32, 36}));
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 0}, skips), 7u);
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 24}, skips), 4u);
  EXPECT_EQ(plan->steps_remaining({0, 0}), 10u);
  // A step that starts on the skip's rows serves none of them: nothing to empty before it.
  Result<Batch> before = plan->GetBatchAt({0, 8}, 1);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(EmptySkippedRows(*plan, skips, &*before), 0u);
}

TEST(SkipOver, AStraddlingStepOfAnotherWorldServesItsRowsBeforeTheSkipAndPaddingAfter) {
  std::unique_ptr<Plan> plan = SkipPlan(3, 2);  // 6 rows a step, 6 steps
  ASSERT_NE(plan, nullptr);
  const std::vector<SkipRange> skips = {{0, 8, 16, "2..3"}};
  // The step at row 6 reaches rows 8..11: it is served (rows 6, 7 and padding); the next starts
  // at 16, the skip's end.
  const std::vector<uint64_t> starts = StepStarts(*plan, {0, 0}, skips);
  EXPECT_EQ(starts, (std::vector<uint64_t>{0, 6, 16, 22, 28, 34}));
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 0}, skips), starts.size());
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 6}, skips), starts.size() - 1);
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 10}, skips), starts.size() - 2);  // inside it
  // Rank 0 holds rows 6, 7 (served), rank 1 rows 8, 9 and rank 2 rows 10, 11 (padding).
  for (uint32_t rank = 0; rank < 3; ++rank) {
    Result<Batch> batch = plan->GetBatchAt({0, 6}, rank);
    ASSERT_TRUE(batch.ok());
    EXPECT_EQ(EmptySkippedRows(*plan, skips, &*batch), rank == 0 ? 0u : 2u);
    for (const Row& row : batch->rows) EXPECT_EQ(row.pieces.empty(), rank > 0);
  }
  // A skip shorter than a step, inside one: the step is served with those rows empty, and the
  // next one follows it as planned.
  const std::vector<SkipRange> inner = {{0, 7, 9, "x"}};
  EXPECT_EQ(StepStarts(*plan, {0, 0}, inner), (std::vector<uint64_t>{0, 6, 12, 18, 24, 30}));
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 0}, inner), 6u);
}

TEST(SkipOver, ASkipToTheEpochsEndEndsTheEpoch) {
  std::unique_ptr<Plan> plan = SkipPlan(2, 2);
  ASSERT_NE(plan, nullptr);
  const std::vector<SkipRange> skips = {{0, 32, 40, "8..9"}};
  EXPECT_EQ(SkipOver(*plan, {0, 32}, skips), (PlanPosition{1, 0}));
  EXPECT_EQ(StepsRemainingWithSkips(*plan, {0, 0}, skips), 8u);
  // Token-step skips (by step index) are not rows: left alone here (token_step_edits.h).
  SkipRange tokens{0, 0, 40, "0..9"};
  tokens.unit = "token_steps";
  EXPECT_EQ(SkipOver(*plan, {0, 0}, {tokens}), (PlanPosition{0, 0}));
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
  EXPECT_EQ(e->skips[0].steps, "5..6");
  EXPECT_EQ(e->skips[0].world_size, 2u);
  EXPECT_EQ(e->skips[0].batch_size, 2u);
  // PlanState reads them too, and writes them back key for key.
  Result<PlanState> state = PlanState::FromJson(loader.dump());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->skips, e->skips);
  EXPECT_EQ(state->drops, e->drops);
  EXPECT_EQ(nlohmann::json::parse(state->ToJson())["skip"], loader["plan_state"]["skip"]);
  EXPECT_EQ(nlohmann::json::parse(state->ToJson())["drop"], loader["plan_state"]["drop"]);
  EXPECT_EQ(SkipsAhead(state->skips, {0, 12}).size(), 1u);  // not reached: kept
  EXPECT_TRUE(SkipsAhead(state->skips, {0, 28}).empty());   // passed

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
