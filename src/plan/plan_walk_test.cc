// WalkPlanSteps and AdvanceSteps (plan_walk.h) against the plan's own GetBatchAt and Advance, over
// several epochs, every pack mode and remainder policy, one dataset and a scheduled mixture.
#include "plan/plan_walk.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "plan/plan_test_util.h"

namespace stoker::plan {
namespace {

using testing::MakeLengths;
using testing::MakePlan;

PlanOptions WalkOptions(PackMode pack, RemainderPolicy remainder) {
  PlanOptions o;
  o.seq_len = 48;
  o.pack = pack;
  o.bestfit_window = 40;
  o.world_size = 3;
  o.batch_size = 2;
  o.seed = 9;
  o.remainder = remainder;
  return o;
}

// Every piece of `steps` steps from `pos`, rank by rank, as GetBatchAt gives them.
void ExpectWalkEqualsBatches(const Plan& plan, PlanPosition pos, uint64_t steps) {
  std::vector<WalkedPiece> walked;
  auto end = WalkPlanSteps(plan, pos, 100, steps, [&](const WalkedPiece& w) {
    walked.push_back(w);
    return Status::OK();
  });
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  size_t k = 0;
  for (uint64_t s = 0; s < steps; ++s) {
    for (uint32_t rank = 0; rank < plan.options().world_size; ++rank) {
      Batch b = *plan.GetBatchAt(pos, rank);
      for (size_t r = 0; r < b.rows.size(); ++r) {
        uint64_t at = 0;
        for (const RowPiece& piece : b.rows[r].pieces) {
          ASSERT_LT(k, walked.size());
          const WalkedPiece& w = walked[k++];
          EXPECT_EQ(w.step, 100 + s);
          EXPECT_EQ(w.position, pos);
          EXPECT_EQ(w.epoch_step, b.step);
          EXPECT_EQ(w.rank, rank);
          EXPECT_EQ(w.row, r);
          EXPECT_EQ(w.repeated, b.rows[r].repeated);
          EXPECT_EQ(w.row_offset, at);
          EXPECT_EQ(w.piece, piece);
          at += piece.length;
        }
      }
    }
    pos = plan.Advance(pos);
  }
  EXPECT_EQ(k, walked.size());
  EXPECT_EQ(*end, pos);
}

TEST(PlanWalkTest, WalkEqualsGetBatchAtAcrossEpochs) {
  auto lengths = MakeLengths(150, 30, 0.1, 5, 3);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    for (RemainderPolicy rem : {RemainderPolicy::kDropLast, RemainderPolicy::kPad}) {
      auto plan = MakePlan({{lengths, 1.0}}, WalkOptions(pack, rem));
      const uint64_t steps = plan->steps_per_epoch(0) * 2 + 3;  // into the third epoch
      ExpectWalkEqualsBatches(*plan, {0, 0}, steps);
    }
  }
}

TEST(PlanWalkTest, AdvanceStepsEqualsRepeatedAdvance) {
  auto lengths = MakeLengths(150, 30, 0.1, 5, 3);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit}) {
    for (RemainderPolicy rem : {RemainderPolicy::kDropLast, RemainderPolicy::kPad}) {
      auto plan = MakePlan({{lengths, 1.0}}, WalkOptions(pack, rem));
      // From an epoch start and from an elastic position in the middle of a global batch.
      for (PlanPosition start : {PlanPosition{0, 0}, PlanPosition{0, 5}}) {
        PlanPosition want = start;
        for (uint64_t k = 0; k < 3 * plan->steps_per_epoch(0) + 2; ++k) {
          ASSERT_EQ(AdvanceSteps(*plan, start, k), plan->Normalize(want)) << "k " << k;
          want = plan->Advance(want);
        }
      }
    }
  }
}

TEST(PlanWalkTest, AMixtureWalkNamesDatasetEpochsAndPhases) {
  auto a = MakeLengths(120, 30, 0.1, 5, 3);
  auto b = MakeLengths(40, 30, 0.1, 7, 2);
  PlanOptions o = WalkOptions(PackMode::kBestFit, RemainderPolicy::kDropLast);
  o.phases = {{60, {0.8, 0.2}, {}}, {UINT64_MAX, {0.2, 0.8}, {}}};
  auto plan = MakePlan({{a, 1.0}, {b, 1.0}}, o);
  ExpectWalkEqualsBatches(*plan, {0, 0}, 25);
  std::vector<uint64_t> phase_rows(2);
  auto end = WalkPlanSteps(*plan, {0, 0}, 0, 25, [&](const WalkedPiece& w) {
    EXPECT_TRUE(w.dataset_epoch.has_value());
    EXPECT_TRUE(w.phase.has_value());
    const uint64_t row = w.position.rows_consumed + w.rank * o.batch_size + w.row;
    EXPECT_EQ(*w.dataset_epoch, plan->DatasetEpochOfRow(w.position.epoch, row));
    EXPECT_EQ(*w.phase, plan->PhaseAt({w.position.epoch, row}));
    if (w.row_offset == 0) ++phase_rows[*w.phase];
    return Status::OK();
  });
  ASSERT_TRUE(end.ok());
  EXPECT_GT(phase_rows[0], 0u);
  EXPECT_GT(phase_rows[1], 0u);
  // A visitor's error stops the walk.
  int calls = 0;
  auto stopped = WalkPlanSteps(*plan, {0, 0}, 0, 25, [&](const WalkedPiece&) {
    return ++calls == 3 ? Internal("stop") : Status::OK();
  });
  EXPECT_FALSE(stopped.ok());
  EXPECT_EQ(calls, 3);
}

TEST(PlanWalkTest, CountPlanStepsEqualsARecountOfTheBatches) {
  auto a = MakeLengths(120, 30, 0.1, 5, 3);
  auto b = MakeLengths(40, 30, 0.1, 7, 2);
  PlanOptions o = WalkOptions(PackMode::kBestFit, RemainderPolicy::kDropLast);
  o.phases = {{60, {0.8, 0.2}, {}}, {UINT64_MAX, {0.2, 0.8}, {}}};
  auto plan = MakePlan({{a, 1.0}, {b, 1.0}}, o);
  const PlanPosition start{0, 12};
  auto counts = CountPlanSteps(*plan, start, 20);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  std::map<uint64_t, PhaseTokenCounts> want;
  PlanPosition pos = start;
  for (int s = 0; s < 20; ++s) {
    for (uint32_t rank = 0; rank < o.world_size; ++rank) {
      Batch batch = *plan->GetBatchAt(pos, rank);
      for (size_t r = 0; r < batch.rows.size(); ++r) {
        const uint64_t row = pos.rows_consumed + rank * o.batch_size + r;
        PhaseTokenCounts& p = want[plan->PhaseAt({pos.epoch, row})];
        p.datasets.resize(2);
        ++p.rows;
        for (const RowPiece& piece : batch.rows[r].pieces) {
          p.datasets[piece.dataset].tokens += piece.length;
          p.datasets[piece.dataset].pieces += 1;
          p.datasets[piece.dataset].documents += piece.offset == 0;
        }
      }
    }
    pos = plan->Advance(pos);
  }
  ASSERT_EQ(counts->size(), want.size());
  for (const auto& [phase, p] : want) {
    const PhaseTokenCounts& got = counts->at(phase);
    EXPECT_EQ(got.rows, p.rows) << "phase " << phase;
    for (size_t d = 0; d < 2; ++d) {
      EXPECT_EQ(got.datasets[d].tokens, p.datasets[d].tokens) << phase << " " << d;
      EXPECT_EQ(got.datasets[d].pieces, p.datasets[d].pieces) << phase << " " << d;
      EXPECT_EQ(got.datasets[d].documents, p.datasets[d].documents) << phase << " " << d;
    }
  }
  EXPECT_EQ(want.size(), 2u);
}

}  // namespace
}  // namespace stoker::plan
