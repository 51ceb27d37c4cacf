// PlanBatchPlanner at a state with steps skipped (`stoker resume-edit --skip-steps`): every rank
// together serves the rest of the epoch exactly once but the skipped steps' rows, on the world
// that wrote the state and on another one whose step reaches into the skip (its rows before the
// skip served, the rest of it padding); its states carry the skip until it is passed.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "plan/plan_batch_planner.h"
#include "plan/plan_test_util.h"
#include "plan/state_edit.h"

namespace stoker {
namespace {

// One dataset of 80 documents of 32 tokens, concat rows of 64: each global row holds two whole
// documents, 40 rows an epoch.
std::shared_ptr<const Plan> TwoPerRowPlan(uint32_t world_size) {
  auto lengths = std::make_shared<DatasetLengths>();
  lengths->name = "skips";
  lengths->document_lengths.assign(80, 32);
  lengths->shard_first_document = {0, 80};
  PlanOptions o;
  o.seq_len = 64;
  o.batch_size = 2;
  o.world_size = world_size;
  o.shuffle = ShuffleMode::kGlobal;
  o.seed = 7;
  return plan::testing::MakePlan({PlanDataset{lengths, 1.0}}, o);
}

// The documents of global rows [first, end) of epoch 0.
std::set<uint64_t> DocumentsOfRows(const Plan& plan, uint64_t first, uint64_t end) {
  std::vector<Row> rows;
  EXPECT_TRUE(plan.GetRows(0, first, end - first, &rows).ok());
  std::set<uint64_t> out;
  for (const Row& row : rows) {
    for (const RowPiece& p : row.pieces) out.insert(p.document);
  }
  return out;
}

struct Served {
  std::map<uint64_t, int> documents;  // times each document was served, all ranks
  std::set<uint64_t> empty_rows;      // global rows served as padding
  uint64_t steps = 0;                 // rank 0's
};

// Every rank of `plan`'s world restored at `state`, to the end of epoch 0.
Served ServeEpoch(const std::shared_ptr<const Plan>& plan, const PlanState& state) {
  Served out;
  const PlanOptions& o = plan->options();
  for (uint32_t rank = 0; rank < o.world_size; ++rank) {
    PlanBatchPlanner planner(plan, rank);
    Result<PlanPosition> restored = planner.RestorePosition(state);
    EXPECT_TRUE(restored.ok()) << restored.status().ToString();
    PlanPosition pos = planner.Normalize(*restored);
    Result<uint64_t> remaining = planner.BatchesRemaining(pos);
    uint64_t steps = 0;
    for (; pos.epoch == 0; pos = planner.Advance(pos), ++steps) {
      Batch batch;
      EXPECT_TRUE(planner.BatchAt(pos, &batch).ok());
      for (size_t i = 0; i < batch.rows.size(); ++i) {
        if (batch.rows[i].pieces.empty()) out.empty_rows.insert(pos.rows_consumed + rank * 2 + i);
        for (const RowPiece& p : batch.rows[i].pieces) ++out.documents[p.document];
      }
    }
    EXPECT_TRUE(remaining.ok());
    if (remaining.ok()) EXPECT_EQ(*remaining, steps) << "rank " << rank;
    if (rank == 0) out.steps = steps;
  }
  return out;
}

TEST(PlanBatchPlannerSkips, TheRestOfTheEpochOnceButTheSkippedStepsOnAnyWorld) {
  // Written on 2 ranks (4 rows a step) after step 0; steps 2..3 (rows [8, 16)) skipped.
  std::shared_ptr<const Plan> writer = TwoPerRowPlan(2);
  ASSERT_NE(writer, nullptr);
  Result<std::string> edited = SkipStepsInState(writer->MakeState({0, 4}).ToJson(), 2, 3);
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  Result<PlanState> state = PlanState::FromJson(*edited);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ASSERT_EQ(state->skips.size(), 1u);
  ASSERT_EQ(state->skips[0].from, 8u);
  ASSERT_EQ(state->skips[0].to, 16u);

  const std::set<uint64_t> skipped = DocumentsOfRows(*writer, 8, 16);
  std::set<uint64_t> rest = DocumentsOfRows(*writer, 4, 8);
  for (uint64_t d : DocumentsOfRows(*writer, 16, 40)) rest.insert(d);
  ASSERT_EQ(skipped.size(), 16u);
  ASSERT_EQ(rest.size(), 56u);
  // 2 ranks: the writer's steps 1, 4..9. 3 ranks (6 rows a step): the step at row 4 reaches rows
  // 8, 9 (ranks 2's, padding), the next starts at 16: steps at 4, 16, 22, 28, 34.
  for (const uint32_t world : {2u, 3u}) {
    SCOPED_TRACE("world size " + std::to_string(world));
    std::shared_ptr<const Plan> reader = TwoPerRowPlan(world);
    ASSERT_NE(reader, nullptr);
    const Served served = ServeEpoch(reader, *state);
    std::set<uint64_t> seen;
    for (const auto& [document, times] : served.documents) {
      EXPECT_EQ(times, 1) << "document " << document;
      EXPECT_EQ(skipped.count(document), 0u) << "skipped document " << document << " served";
      seen.insert(document);
    }
    EXPECT_EQ(seen, rest);
    EXPECT_EQ(served.steps, world == 2 ? 7u : 5u);
    EXPECT_EQ(served.empty_rows, (world == 2 ? std::set<uint64_t>{} : std::set<uint64_t>{8, 9}));
  }
}

TEST(PlanBatchPlannerSkips, StatesCarryTheSkipUntilItIsPassed) {
  std::shared_ptr<const Plan> plan = TwoPerRowPlan(3);
  ASSERT_NE(plan, nullptr);
  PlanState state = plan->MakeState({0, 0});
  state.skips = {{0, 8, 16, "2..3", 2, 2, ""}};
  state.drops = {"web"};
  PlanBatchPlanner planner(plan, 0);
  ASSERT_TRUE(planner.RestorePosition(state).ok());
  PlanState before = planner.MakeState({0, 6});
  EXPECT_EQ(before.skips, state.skips);
  EXPECT_EQ(before.drops, state.drops);
  // Through JSON, into another planner: the same steps follow.
  Result<PlanState> back = PlanState::FromJson(before.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  PlanBatchPlanner other(plan, 0);
  Result<PlanPosition> at = other.RestorePosition(*back);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(other.Advance(*at), (PlanPosition{0, 16}));
  EXPECT_EQ(planner.Advance({0, 6}), (PlanPosition{0, 16}));
  // Passed: left out of the state, which then restores with none.
  PlanState after = planner.MakeState({0, 16});
  EXPECT_TRUE(after.skips.empty());
  EXPECT_EQ(after.drops, state.drops);
  ASSERT_TRUE(other.RestorePosition(plan->MakeState({0, 6})).ok());
  EXPECT_EQ(other.Advance({0, 6}), (PlanPosition{0, 12}));
  // A state restored inside the skip resumes at its end.
  PlanState inside = state;
  inside.position = {0, 10};
  Result<PlanPosition> moved = other.RestorePosition(inside);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, (PlanPosition{0, 16}));
  // A state written before skips existed (no "skip" key) still loads, with none.
  Result<PlanState> old = PlanState::FromJson(plan->MakeState({0, 6}).ToJson());
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->skips.empty());
  EXPECT_TRUE(old->drops.empty());
}

}  // namespace
}  // namespace stoker
