// Steps counted in tokens (token_step_planner.h): exactly once, equal microbatch counts on every
// rank, per-step figures, bit-exact resume and refused checkpoints.
#include "plan/token_step_planner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "plan/plan_test_util.h"

namespace stoker {
namespace {

using plan::testing::MakeLengths;

PlanOptions TokenOptions(uint32_t world, uint32_t rank, uint64_t tokens_per_step) {
  PlanOptions o;
  o.seq_len = 4096;
  o.world_size = world;
  o.rank = rank;
  o.seed = 7;
  o.tokens_per_step = tokens_per_step;
  o.microbatches = 2;
  o.max_tokens_per_microbatch = 4096;
  o.balance = BalanceMode::kAttention;
  o.step_cost = {1.0, 1.0 / 2048, 0.0};
  return o;
}

std::unique_ptr<TokenStepPlanner> MakeTokenPlanner(std::shared_ptr<const DatasetLengths> l,
                                                   const PlanOptions& o) {
  auto p = TokenStepPlanner::Create(std::move(l), o);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : nullptr;
}

// One epoch of every rank: each token of every document exactly once, the same number of
// microbatches on every rank in every step, and the figures of a step agreeing across ranks.
void CheckEpoch(uint32_t world) {
  SCOPED_TRACE("world " + std::to_string(world));
  auto lengths = MakeLengths(3000, 300, 0.02, 5, 11);
  const uint64_t tokens_per_step = 64 * 1024;
  std::vector<std::unique_ptr<TokenStepPlanner>> ranks;
  for (uint32_t r = 0; r < world; ++r) {
    ranks.push_back(MakeTokenPlanner(lengths, TokenOptions(world, r, tokens_per_step)));
  }
  std::map<uint64_t, uint64_t> seen;  // document -> tokens served
  PlanPosition pos = ranks[0]->Normalize({0, 0});
  uint64_t steps = 0;
  while (pos.epoch == 0) {
    std::vector<Batch> batches(world);
    for (uint32_t r = 0; r < world; ++r) {
      ASSERT_TRUE(ranks[r]->BatchAt(pos, &batches[r]).ok());
      ASSERT_EQ(ranks[r]->Advance(pos), ranks[0]->Advance(pos));
    }
    uint64_t step_tokens = 0;
    for (uint32_t r = 0; r < world; ++r) {
      const Batch& b = batches[r];
      ASSERT_TRUE(b.figures.has_value());
      ASSERT_EQ(b.rows.size(), 1u);
      EXPECT_LE(b.rows[0].num_tokens(), 4096u);
      EXPECT_EQ(b.figures->microbatches, batches[0].figures->microbatches);
      EXPECT_EQ(b.figures->microbatch, batches[0].figures->microbatch);
      EXPECT_EQ(b.figures->global_tokens, batches[0].figures->global_tokens);
      EXPECT_EQ(b.step, batches[0].step);
      EXPECT_GE(b.figures->microbatches, 2u);
      for (const RowPiece& p : b.rows[0].pieces) {
        EXPECT_EQ(seen[p.document], p.offset) << "document " << p.document;
        seen[p.document] += p.length;
      }
      if (b.figures->microbatch == 0) step_tokens += b.figures->step_tokens;
    }
    if (batches[0].figures->microbatch == 0) {
      EXPECT_EQ(step_tokens, batches[0].figures->global_tokens);
      ++steps;
    }
    pos = ranks[0]->Advance(pos);
  }
  EXPECT_EQ(pos, (PlanPosition{1, 0}));
  for (uint64_t d = 0; d < lengths->num_documents(); ++d) {
    EXPECT_EQ(seen.count(d) ? seen[d] : 0, lengths->length(d)) << "document " << d;
  }
  uint64_t total = 0;
  for (uint64_t l : lengths->document_lengths) total += l;
  EXPECT_GE(steps, total / (tokens_per_step + 20000));
  EXPECT_LE(steps, total / tokens_per_step + 1);
}

TEST(TokenStepPlannerTest, ExactlyOnceAndEqualMicrobatchesOnEveryRank) {
  for (uint32_t world : {1u, 3u, 8u, 64u}) CheckEpoch(world);
}

TEST(TokenStepPlannerTest, BalancedStepsBeatFixedRowsOnSkewedLengths) {
  auto lengths = MakeLengths(4000, 400, 0.0, 1, 3);
  PlanOptions o = TokenOptions(8, 0, 256 * 1024);
  o.max_tokens_per_microbatch = 8192;
  auto planner = MakeTokenPlanner(lengths, o);
  double balanced = 0, fixed = 0;
  for (uint64_t first = 0, n = 0; n < 4; ++n) {
    auto step = planner->steps().StepAt(0, first);
    ASSERT_TRUE(step.ok());
    balanced += step->imbalance;
    fixed += planner->steps().FixedRowsImbalance(*step);
    first = step->end;
  }
  EXPECT_LT(balanced / 4, 1.05);
  EXPECT_GT(fixed / 4, balanced / 4);
}

TEST(TokenStepPlannerTest, ResumesBitExactMidEpochAndAtAnotherWorldSizeAtAStepStart) {
  auto lengths = MakeLengths(2000, 300, 0.0, 3, 5);
  auto a = MakeTokenPlanner(lengths, TokenOptions(3, 1, 32 * 1024));
  PlanPosition pos{0, 0};
  for (int i = 0; i < 17; ++i) pos = a->Advance(pos);
  const std::string json = a->MakeState(pos).ToJson();
  std::vector<Batch> expected;
  for (PlanPosition p = pos; p.epoch == 0; p = a->Advance(p)) {
    expected.emplace_back();
    ASSERT_TRUE(a->BatchAt(p, &expected.back()).ok());
  }
  EXPECT_EQ(*a->BatchesRemaining(pos), expected.size());
  auto b = MakeTokenPlanner(lengths, TokenOptions(3, 1, 32 * 1024));
  auto state = PlanState::FromJson(json);
  ASSERT_TRUE(state.ok());
  auto restored = b->RestorePosition(*state);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  size_t k = 0;
  for (PlanPosition p = *restored; p.epoch == 0; p = b->Advance(p), ++k) {
    Batch got;
    ASSERT_TRUE(b->BatchAt(p, &got).ok());
    ASSERT_LT(k, expected.size());
    EXPECT_EQ(got.rows, expected[k].rows);
    EXPECT_EQ(got.figures, expected[k].figures);
    EXPECT_EQ(got.step, expected[k].step);
  }
  EXPECT_EQ(k, expected.size());

  // Another world size, at a step's first microbatch (mid-step: the next test).
  auto w5 = MakeTokenPlanner(lengths, TokenOptions(5, 0, 32 * 1024));
  PlanPosition start{0, 0};
  while ((start.rows_consumed & 0xffff) == 0 && start.rows_consumed == 0) start = a->Advance(start);
  while ((start.rows_consumed & 0xffff) != 0) start = a->Advance(start);
  auto elastic = w5->RestorePosition(a->MakeState(start));
  ASSERT_TRUE(elastic.ok()) << elastic.status().ToString();
  Batch first;
  ASSERT_TRUE(w5->BatchAt(*elastic, &first).ok());
  EXPECT_EQ(first.step, 1u);
}

// Serves every token of epoch 0 from `pos` on, on every rank of `world`, into *seen (document ->
// next expected offset); each planner restored from `state` when given.
void ServeRest(std::shared_ptr<const DatasetLengths> lengths, uint32_t world,
               const PlanState* state, PlanPosition from, PlanPosition until,
               std::map<uint64_t, uint64_t>* seen) {
  std::vector<std::unique_ptr<TokenStepPlanner>> ranks;
  PlanPosition start = from;
  for (uint32_t r = 0; r < world; ++r) {
    ranks.push_back(MakeTokenPlanner(lengths, TokenOptions(world, r, 32 * 1024)));
    if (state != nullptr) {
      auto p = ranks.back()->RestorePosition(*state);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      start = *p;
    }
  }
  for (PlanPosition pos = start; pos.epoch == 0 && !(pos == until); pos = ranks[0]->Advance(pos)) {
    for (uint32_t r = 0; r < world; ++r) {
      Batch b;
      ASSERT_TRUE(ranks[r]->BatchAt(pos, &b).ok());
      for (const RowPiece& p : b.rows[0].pieces) {
        ASSERT_EQ((*seen)[p.document], p.offset) << "document " << p.document;
        (*seen)[p.document] += p.length;
      }
    }
  }
}

TEST(TokenStepPlannerTest, ElasticResumeMidStepServesTheRestExactlyOnce) {
  auto lengths = MakeLengths(2000, 300, 0.0, 3, 5);
  auto a = MakeTokenPlanner(lengths, TokenOptions(3, 0, 32 * 1024));
  PlanPosition mid{0, 0};
  for (int i = 0; i < 8 || (mid.rows_consumed & 0xffff) == 0; ++i) mid = a->Advance(mid);
  const PlanState state = a->MakeState(mid);
  for (uint32_t world : {5u, 2u, 8u}) {
    SCOPED_TRACE("world " + std::to_string(world));
    std::map<uint64_t, uint64_t> seen;
    ServeRest(lengths, 3, nullptr, {0, 0}, mid, &seen);
    ServeRest(lengths, world, &state, {}, {UINT64_MAX, 0}, &seen);
    for (uint64_t d = 0; d < lengths->num_documents(); ++d) {
      ASSERT_EQ(seen.count(d) ? seen[d] : 0, lengths->length(d)) << "document " << d;
    }
  }
  // A checkpoint within the rest of that step resumes bit-exactly at its own world size.
  auto w5 = MakeTokenPlanner(lengths, TokenOptions(5, 2, 32 * 1024));
  auto at = w5->RestorePosition(state);
  ASSERT_TRUE(at.ok());
  const PlanPosition next = w5->Advance(*at);
  const PlanState inner = w5->MakeState(next);
  EXPECT_NE(inner.stream.find("from_world=3"), std::string::npos) << inner.stream;
  Batch want, got;
  ASSERT_TRUE(w5->BatchAt(next, &want).ok());
  auto again = MakeTokenPlanner(lengths, TokenOptions(5, 2, 32 * 1024));
  auto back = again->RestorePosition(inner);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(again->BatchAt(*back, &got).ok());
  EXPECT_EQ(got.rows, want.rows);
  // ... and is refused at a third world size when taken in its middle.
  if ((next.rows_consumed & 0xffff) != 0) {
    auto w7 = MakeTokenPlanner(lengths, TokenOptions(7, 0, 32 * 1024));
    EXPECT_FALSE(w7->RestorePosition(inner).ok());
  }
}

TEST(TokenStepPlannerTest, RefusesACheckpointOfAnotherTokenBudgetNamingIt) {
  auto lengths = MakeLengths(500, 200, 0.0, 1, 9);
  auto a = MakeTokenPlanner(lengths, TokenOptions(2, 0, 16 * 1024));
  auto b = MakeTokenPlanner(lengths, TokenOptions(2, 0, 32 * 1024));
  auto r = b->RestorePosition(a->MakeState(a->Advance({0, 0})));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tokens_per_step (16384 in the checkpoint, 32768 here)"),
            std::string::npos)
      << r.status().message();
  // A checkpoint of fixed rows is refused too.
  PlanState rows;
  rows.fingerprint = a->Fingerprint();
  EXPECT_FALSE(a->RestorePosition(rows).ok());
}

TEST(TokenStepPlannerTest, RefusesAttentionBalanceWithoutACostAndSplitsLongDocuments) {
  auto lengths = std::make_shared<DatasetLengths>();
  lengths->name = "long";
  lengths->document_lengths = {10000, 5, 3000};
  PlanOptions o = TokenOptions(2, 0, 4096);
  o.step_cost = {1.0, 0.0, 0.0};
  auto refused = TokenStepPlanner::Create(lengths, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("model="), std::string::npos);
  uint64_t served = 0, trained = 0;
  for (BalanceMode mode : {BalanceMode::kNone, BalanceMode::kAttention}) {
    for (uint32_t r = 0; r < 2; ++r) {
      PlanOptions ro = TokenOptions(2, r, 4096);
      ro.balance = mode;
      auto p = MakeTokenPlanner(lengths, ro);
      for (PlanPosition pos{0, 0}; pos.epoch == 0; pos = p->Advance(pos)) {
        Batch b;
        ASSERT_TRUE(p->BatchAt(pos, &b).ok());
        served += b.rows[0].num_tokens();
        if (r == 0 && b.figures->microbatch == 0) trained += b.figures->global_trained_tokens;
      }
    }
  }
  // Text: every token but each document's last has a trained target.
  EXPECT_EQ(trained, 2 * (13005u - 3));
  EXPECT_EQ(served, 2 * 13005u);
}

}  // namespace
}  // namespace stoker
