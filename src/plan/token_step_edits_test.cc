// Skip edits of steps counted in tokens (token_step_edits.h): a skip names token steps by index,
// a step begun is refused, the microbatches left leave the skipped steps out, and a step's start
// is found by its index; quarantined documents leave the batches, figures and states.
#include "plan/token_step_edits.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/plan_test_util.h"
#include "plan/state_edit.h"

namespace stoker {
namespace {

std::unique_ptr<TokenStepPlanner> Planner(uint32_t world) {
  PlanOptions o;
  o.seq_len = 2048;
  o.world_size = world;
  o.seed = 9;
  o.tokens_per_step = 32 * 1024;
  o.microbatches = 2;
  auto p = TokenStepPlanner::Create(plan::testing::MakeLengths(800, 200, 0.0, 2, 5), o);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : nullptr;
}

TEST(TokenStepEdits, SkipStepsByIndexAndCountWhatIsLeft) {
  auto planner = Planner(3);
  Result<PlanPosition> at2 = planner->StepStart(0, 2);
  ASSERT_TRUE(at2.ok());
  ASSERT_EQ(planner->Locate(*at2)->index, 2u);
  const std::string state = planner->MakeState(*at2).ToJson();
  Result<std::string> edited = SkipStepsInState(state, 3, 4);
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  const nlohmann::json skip = nlohmann::json::parse(*edited)["skip"][0];
  EXPECT_EQ(skip["from"], 3u);
  EXPECT_EQ(skip["to"], 5u);
  EXPECT_EQ(skip["unit"], "token_steps");
  Result<std::string> late = SkipStepsInState(state, 1, 4);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("token step 2"), std::string::npos);
  // Mid-step: the step itself cannot be skipped any more.
  const PlanPosition mid = planner->Advance(*at2);
  ASSERT_FALSE(SkipStepsInState(planner->MakeState(mid).ToJson(), 2, 2).ok());

  Result<StateEdits> edits = ReadStateEdits(*edited);
  ASSERT_TRUE(edits.ok());
  uint64_t skipped = 0;
  for (uint64_t k : {3u, 4u}) {
    Result<PlanPosition> start = planner->StepStart(0, k);
    ASSERT_TRUE(start.ok());
    Batch b;
    ASSERT_TRUE(planner->BatchAt(*start, &b).ok());
    skipped += b.figures->microbatches;
  }
  Result<uint64_t> all = planner->BatchesRemaining(*at2);
  Result<uint64_t> left = TokenBatchesRemaining(*planner, *at2, edits->skips);
  ASSERT_TRUE(all.ok() && left.ok());
  EXPECT_EQ(*left, *all - skipped);
  EXPECT_EQ(planner->StepStart(0, 1u << 30)->epoch, 1u);  // past the epoch's last step
}

TEST(TokenStepEdits, QuarantinedDocumentsLeaveBatchesFiguresAndStates) {
  auto planner = Planner(2);
  Batch b;
  ASSERT_TRUE(planner->BatchAt({0, 0}, &b).ok());
  ASSERT_FALSE(b.rows[0].pieces.empty());
  const uint64_t doc = b.rows[0].pieces[0].document;
  ProvenanceDataset d;
  d.path = "ds";
  d.shard_first_document = {0, 800};
  d.shard_paths = {"ds/shard-0"};
  Result<DocumentSkips> skips =
      DocumentSkips::Resolve({"ds:0:" + std::to_string(doc)}, {"ds"}, {d});
  ASSERT_TRUE(skips.ok()) << skips.status().ToString();
  auto quarantined = Planner(2);
  quarantined->SetDocumentSkips(std::make_shared<const DocumentSkips>(std::move(*skips)));
  Batch q;
  ASSERT_TRUE(quarantined->BatchAt({0, 0}, &q).ok());
  uint64_t gone = 0;
  for (const RowPiece& p : b.rows[0].pieces) gone += p.document == doc ? p.length : 0;
  EXPECT_EQ(q.rows[0].num_tokens(), b.rows[0].num_tokens() - gone);
  EXPECT_EQ(q.figures->global_tokens,
            b.figures->global_tokens - quarantined->steps().order().DocumentLength(0, doc));
  EXPECT_EQ(q.figures->step_tokens, b.figures->step_tokens - gone);
  const PlanState state = quarantined->MakeState({0, 0});
  EXPECT_EQ(state.skip_documents.size(), 1u);
  EXPECT_TRUE(quarantined->RestorePosition(state).ok());
  // A loader that quarantines other documents refuses the state (open one at it instead).
  EXPECT_EQ(planner->RestorePosition(state).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace stoker
