// Steps counted in tokens with pad_each_document_to and max_documents_per_row (issue 46 on
// issue 45's steps): every piece's padded room fits its microbatch, no microbatch holds more
// documents than the cap, every token exactly once at W = 1 and 3 for both balance modes, the
// figures unpadded, bit-exact resume, and a budget that is no multiple of the padding refused.
#include <gtest/gtest.h>

#include <map>

#include "plan/plan_test_util.h"
#include "plan/slot_assignment.h"
#include "plan/token_step_planner.h"

namespace stoker {
namespace {

using plan::testing::MakeLengths;

constexpr uint64_t kPadBudget = 2048, kPadTo = 64, kPadCap = 3;

PlanOptions PaddedTokenOptions(uint32_t world, uint32_t rank, BalanceMode balance) {
  PlanOptions o;
  o.seq_len = kPadBudget;
  o.world_size = world;
  o.rank = rank;
  o.seed = 9;
  o.tokens_per_step = 24 * 1024;
  o.microbatches = 2;
  o.max_tokens_per_microbatch = kPadBudget;
  o.balance = balance;
  o.step_cost = {1.0, 1.0 / 2048, 0.0};
  o.pad_each_document_to = kPadTo;
  o.max_documents_per_row = kPadCap;
  return o;
}

void CheckPaddedEpoch(uint32_t world, BalanceMode balance) {
  SCOPED_TRACE("world " + std::to_string(world) + " balance " +
               std::string(BalanceModeName(balance)));
  auto lengths = MakeLengths(1500, 300, 0.02, 5, 13);  // odd lengths, some longer than a budget
  std::vector<std::unique_ptr<TokenStepPlanner>> ranks;
  for (uint32_t r = 0; r < world; ++r) {
    auto p = TokenStepPlanner::Create(lengths, PaddedTokenOptions(world, r, balance));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ranks.push_back(std::move(p).value());
  }
  std::map<uint64_t, uint64_t> seen;  // document -> tokens served
  uint64_t capped = 0;
  for (PlanPosition pos = ranks[0]->Normalize({0, 0}); pos.epoch == 0;
       pos = ranks[0]->Advance(pos)) {
    uint64_t served = 0;
    for (uint32_t r = 0; r < world; ++r) {
      Batch b;
      ASSERT_TRUE(ranks[r]->BatchAt(pos, &b).ok());
      ASSERT_EQ(b.rows.size(), 1u);
      const Row& row = b.rows[0];
      EXPECT_LE(row.pieces.size(), kPadCap);
      capped += row.pieces.size() == kPadCap;
      uint64_t room = 0;
      for (const RowPiece& p : row.pieces) {
        room += PaddedLength(p.length, kPadTo);
        EXPECT_EQ(seen[p.document], p.offset) << "document " << p.document;
        seen[p.document] += p.length;
        served += p.length;
      }
      EXPECT_LE(room, kPadBudget);
    }
    EXPECT_GT(served, 0u);
  }
  EXPECT_GT(capped, 0u) << "the cap never bound: the test would pass without it";
  for (uint64_t d = 0; d < lengths->num_documents(); ++d) {
    EXPECT_EQ(seen.count(d) ? seen[d] : 0, lengths->length(d)) << "document " << d;
  }
}

TEST(TokenStepPaddingTest, PaddedRoomsAndCapHoldAndEveryTokenIsServedOnce) {
  for (BalanceMode balance : {BalanceMode::kAttention, BalanceMode::kNone}) {
    for (uint32_t world : {1u, 3u}) CheckPaddedEpoch(world, balance);
  }
}

TEST(TokenStepPaddingTest, StepFiguresCountUnpaddedTokens) {
  auto lengths = MakeLengths(1500, 300, 0.0, 5, 17);
  auto p = TokenStepPlanner::Create(lengths, PaddedTokenOptions(3, 0, BalanceMode::kAttention));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto step = (*p)->steps().StepAt(0, 0);
  ASSERT_TRUE(step.ok());
  uint64_t real = 0, rooms = 0;
  for (const RowPiece& piece : step->pieces) {
    real += piece.length;
    rooms += PaddedLength(piece.length, kPadTo);
  }
  ASSERT_GT(rooms, real);  // the padding is real here
  EXPECT_EQ(step->tokens, real);
  Batch b;
  ASSERT_TRUE((*p)->BatchAt({0, 0}, &b).ok());
  EXPECT_EQ(b.figures->global_tokens, real);
  // Each slot's tokens are its padded rooms, within the budget.
  for (size_t s = 0; s < step->slots.slots.size(); ++s) {
    uint64_t room = 0;
    for (uint32_t i : step->slots.slots[s]) room += PaddedLength(step->pieces[i].length, kPadTo);
    EXPECT_EQ(step->slots.slot_tokens[s], room);
    EXPECT_LE(room, kPadBudget);
  }
}

TEST(TokenStepPaddingTest, ResumesBitExactWithPaddingAndCap) {
  auto lengths = MakeLengths(1500, 300, 0.0, 3, 19);
  const PlanOptions o = PaddedTokenOptions(3, 2, BalanceMode::kAttention);
  auto a = TokenStepPlanner::Create(lengths, o);
  ASSERT_TRUE(a.ok());
  PlanPosition pos{0, 0};
  for (int i = 0; i < 11; ++i) pos = (*a)->Advance(pos);
  auto state = PlanState::FromJson((*a)->MakeState(pos).ToJson());
  ASSERT_TRUE(state.ok());
  auto b = TokenStepPlanner::Create(lengths, o);
  ASSERT_TRUE(b.ok());
  auto restored = (*b)->RestorePosition(*state);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  for (PlanPosition p = pos, q = *restored; p.epoch == 0;
       p = (*a)->Advance(p), q = (*b)->Advance(q)) {
    Batch want, got;
    ASSERT_TRUE((*a)->BatchAt(p, &want).ok());
    ASSERT_TRUE((*b)->BatchAt(q, &got).ok());
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_EQ(got.figures, want.figures);
  }
  // Another padding is another plan: its checkpoint is refused.
  PlanOptions other = o;
  other.pad_each_document_to = 128;
  auto c = TokenStepPlanner::Create(lengths, other);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE((*c)->RestorePosition(*state).ok());
}

// Serves every rank of `world` from `from` (the epoch's start, or where `state` resumes) until
// `until` or the epoch's end: each microbatch's padded rooms within the budget, at most the cap.
void ServePadded(std::shared_ptr<const DatasetLengths> lengths, uint32_t world,
                 const PlanState* state, PlanPosition until, std::map<uint64_t, uint64_t>* seen) {
  std::vector<std::unique_ptr<TokenStepPlanner>> ranks;
  PlanPosition pos{0, 0};
  for (uint32_t r = 0; r < world; ++r) {
    auto p = TokenStepPlanner::Create(lengths, PaddedTokenOptions(world, r, BalanceMode::kTokens));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ranks.push_back(std::move(p).value());
    if (state != nullptr) {  // every rank restores: it learns the rest of the old step
      auto restored = ranks.back()->RestorePosition(*state);
      ASSERT_TRUE(restored.ok()) << restored.status().ToString();
      pos = *restored;
    }
  }
  for (; pos.epoch == 0 && !(pos == until); pos = ranks[0]->Advance(pos)) {
    for (uint32_t r = 0; r < world; ++r) {
      Batch b;
      ASSERT_TRUE(ranks[r]->BatchAt(pos, &b).ok());
      uint64_t room = 0;
      EXPECT_LE(b.rows[0].pieces.size(), kPadCap);
      for (const RowPiece& p : b.rows[0].pieces) {
        room += PaddedLength(p.length, kPadTo);
        EXPECT_EQ((*seen)[p.document], p.offset) << "document " << p.document;
        (*seen)[p.document] += p.length;
      }
      EXPECT_LE(room, kPadBudget);
    }
  }
}

TEST(TokenStepPaddingTest, ElasticResumeMidStepWithPaddingAndCapServesTheRestOnce) {
  auto lengths = MakeLengths(1500, 300, 0.02, 5, 23);
  auto a = TokenStepPlanner::Create(lengths, PaddedTokenOptions(3, 0, BalanceMode::kTokens));
  ASSERT_TRUE(a.ok());
  PlanPosition mid{0, 0};
  for (int i = 0; i < 7 || (mid.rows_consumed & 0xffff) == 0; ++i) mid = (*a)->Advance(mid);
  const PlanState state = (*a)->MakeState(mid);
  for (uint32_t world : {5u, 1u}) {
    SCOPED_TRACE("world " + std::to_string(world));
    std::map<uint64_t, uint64_t> seen;
    ServePadded(lengths, 3, nullptr, mid, &seen);
    ServePadded(lengths, world, &state, {UINT64_MAX, 0}, &seen);
    for (uint64_t d = 0; d < lengths->num_documents(); ++d) {
      ASSERT_EQ(seen.count(d) ? seen[d] : 0, lengths->length(d)) << "document " << d;
    }
  }
}

TEST(TokenStepPaddingTest, RefusesABudgetThatIsNoMultipleOfThePadding) {
  auto lengths = MakeLengths(100, 300, 0.0, 3, 5);
  PlanOptions o = PaddedTokenOptions(1, 0, BalanceMode::kTokens);
  o.max_tokens_per_microbatch = 2000;
  auto p = TokenStepPlanner::Create(lengths, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("max_tokens_per_microbatch=2000 must be a multiple of "
                                      "pad_each_document_to=64"),
            std::string::npos)
      << p.status().ToString();
}

TEST(TokenStepPaddingTest, SlotCapSpreadsDocumentsNeverDropsThem) {
  std::vector<uint64_t> lengths(50, 10);  // 50 tiny documents: one slot would hold them all
  for (uint64_t cap : {1u, 4u, 7u}) {
    auto a = plan::AssignSlots(lengths, 3, 4096, plan::CostModel{1, 0, 0}, 1, cap);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    std::vector<int> seen(lengths.size(), 0);
    for (const auto& slot : a->slots) {
      EXPECT_LE(slot.size(), cap);
      for (uint32_t d : slot) ++seen[d];
    }
    for (int s : seen) EXPECT_EQ(s, 1);
    EXPECT_EQ(a->microbatches, (50 + 3 * cap - 1) / (3 * cap));
  }
}

}  // namespace
}  // namespace stoker
