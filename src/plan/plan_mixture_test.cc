// Weighted mixtures of datasets through the plan.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "plan/plan_test_util.h"
#include "stoker/plan.h"

namespace stoker::plan {
namespace {

using testing::Coverage;
using testing::MakeLengths;
using testing::MakePlan;

TEST(PlanMixtureTest, ProportionsWithinOneRowAtEveryPrefix) {
  auto a = MakeLengths(300, 40, 0.0, 2, 1), b = MakeLengths(50, 40, 0.1, 1, 2),
       c = MakeLengths(1000, 40, 0.0, 3, 3);
  const double w[] = {0.5, 0.3, 0.2};
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    PlanOptions o;
    o.seq_len = 64;
    o.pack = pack;
    o.bestfit_window = 50;
    auto plan = MakePlan({{a, w[0]}, {b, w[1]}, {c, w[2]}}, o);
    std::vector<uint64_t> count(3, 0);
    uint64_t g = 0;
    for (uint64_t epoch = 0; epoch < 2; ++epoch) {
      std::vector<Row> rows;
      ASSERT_TRUE(plan->GetRows(epoch, 0, plan->rows_in_epoch(epoch), &rows).ok());
      for (const Row& row : rows) {
        ++count[row.pieces[0].dataset];
        ++g;
        for (int k = 0; k < 3; ++k) ASSERT_LE(std::abs(count[k] - w[k] * g), 1.0 + 1e-9) << g;
      }
    }
  }
}

TEST(PlanMixtureTest, SmallDatasetRepeatsLargeOneIsSubsampledEachEpochExactlyOnce) {
  auto small = MakeLengths(40, 30, 0.1, 1, 4), large = MakeLengths(2000, 30, 0.0, 4, 5);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    PlanOptions o;
    o.seq_len = 64;
    o.pack = pack;
    o.bestfit_window = 16;
    auto plan = MakePlan({{small, 1.0}, {large, 1.0}}, o);
    std::vector<Row> rows;
    ASSERT_TRUE(plan->GetRows(0, 0, plan->rows_in_epoch(0), &rows).ok());
    std::vector<double> end = plan->DatasetEpochs({1, 0});
    EXPECT_GT(end[0], 2.0);  // small: repeated
    EXPECT_LT(end[1], 1.0);  // large: subsampled
    // The small dataset's rows in mixture order run through its own epochs; every complete
    // epoch covers each of its tokens exactly once.
    std::vector<Coverage> per_epoch(static_cast<size_t>(end[0]) + 1);
    for (uint64_t g = 0; g < rows.size(); ++g) {
      if (rows[g].pieces[0].dataset != 0) continue;
      double e = plan->DatasetEpochs({0, g})[0];
      per_epoch[static_cast<size_t>(e)].Add(rows[g]);
    }
    uint64_t limit = pack == PackMode::kPad ? 64 : UINT64_MAX;
    for (size_t e = 0; e + 1 < per_epoch.size(); ++e) {
      EXPECT_EQ(per_epoch[e].CheckExactlyOnce(0, *small, limit), "") << "small epoch " << e;
    }
  }
}

// Serves `plan` as every rank of a run does (GetBatchAt and Advance) up to its epoch `epochs`, and
// checks every complete epoch of every dataset's own order: each token exactly once, whatever the
// remainder policy does at the mixture epoch's edge. Rows flagged `repeated` are not counted.
void ExpectEveryDatasetEpochServedOnce(
    const Plan& plan, const std::vector<std::shared_ptr<const DatasetLengths>>& lengths,
    uint64_t epochs, const std::string& what) {
  const PlanOptions& o = plan.options();
  std::vector<std::vector<Coverage>> per_epoch(lengths.size(), std::vector<Coverage>(64));
  PlanPosition pos = plan.Normalize({0, 0});
  while (pos.epoch < epochs) {
    for (uint32_t r = 0; r < o.world_size; ++r) {
      auto batch = plan.GetBatchAt(pos, r);
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      for (size_t i = 0; i < batch->rows.size(); ++i) {
        const Row& row = batch->rows[i];
        if (row.repeated || row.pieces.empty()) continue;
        const uint64_t e =
            plan.DatasetEpochOfRow(pos.epoch, pos.rows_consumed + r * o.batch_size + i);
        ASSERT_LT(e, 64u);
        per_epoch[row.pieces[0].dataset][e].Add(row);
      }
    }
    pos = plan.Advance(pos);
  }
  const std::vector<double> done = plan.DatasetEpochs(pos);
  for (uint32_t k = 0; k < lengths.size(); ++k) {
    ASSERT_GE(done[k], 1.0) << what << ": dataset " << k << " finished no epoch";
    for (uint64_t e = 0; e + 1 <= static_cast<uint64_t>(done[k]); ++e) {
      EXPECT_EQ(per_epoch[k][e].CheckExactlyOnce(k, *lengths[k]), "")
          << what << ": dataset " << k << " epoch " << e;
    }
  }
}

TEST(PlanMixtureTest, EveryDatasetEpochIsServedOnceWhateverTheRemainderDoesAtTheMixtureEdge) {
  // A global batch of 15 rows that does not divide the mixture epoch: drop_last used to drop the
  // last rows of each mixture epoch, and with them rows of the datasets' own epochs.
  auto a = MakeLengths(300, 40, 0.0, 2, 41), b = MakeLengths(90, 40, 0.0, 1, 42);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit}) {
    for (RemainderPolicy rem : {RemainderPolicy::kDropLast, RemainderPolicy::kPad}) {
      const PlanOptions o{.seq_len = 64,
                          .batch_size = 5,
                          .world_size = 3,
                          .pack = pack,
                          .bestfit_window = 32,
                          .remainder = rem};
      auto plan = MakePlan({{a, 1}, {b, 1}}, o);
      ASSERT_NE(plan, nullptr);
      ExpectEveryDatasetEpochServedOnce(
          *plan, {a, b}, 4,
          std::string(PackModeName(pack)) + " " + std::string(RemainderPolicyName(rem)));
    }
  }
}

TEST(PlanMixtureTest, AMixtureEpochIsWholeGlobalBatchesAndTheRunWhenItsLengthIsGiven) {
  auto a = MakeLengths(300, 40, 0.0, 2, 43), b = MakeLengths(90, 40, 0.0, 1, 44);
  PlanOptions o;
  o.seq_len = 64;
  o.world_size = 2;
  o.batch_size = 9;
  auto drop = MakePlan({{a, 1}, {b, 1}}, o);
  o.remainder = RemainderPolicy::kPad;
  auto pad = MakePlan({{a, 1}, {b, 1}}, o);
  EXPECT_EQ(drop->rows_in_epoch(0) % 18, 0u);
  EXPECT_EQ(pad->rows_in_epoch(0), drop->rows_in_epoch(0) + 18);
  EXPECT_EQ(pad->steps_per_epoch(0), drop->steps_per_epoch(0) + 1);
  // The run's length (total_steps 50): the epoch is the run, so len() is what the user gave.
  o.run_rows = 50 * 18;
  auto run = MakePlan({{a, 1}, {b, 1}}, o);
  EXPECT_EQ(run->steps_per_epoch(0), 50u);
  EXPECT_EQ(run->fingerprint(), pad->fingerprint());  // the same rows, other epochs
  std::vector<Row> x, y;
  ASSERT_TRUE(run->GetRows(0, 0, 100, &x).ok());
  ASSERT_TRUE(pad->GetRows(0, 0, 100, &y).ok());
  EXPECT_EQ(x, y);
  // A state resumes at its global row on another global batch, past a mixture epoch's end.
  const PlanPosition at{1, 3 * 18};
  PlanOptions other = o;
  other.run_rows = 0;
  other.world_size = 3;
  other.batch_size = 4;
  auto elastic = MakePlan({{a, 1}, {b, 1}}, other);
  auto pos = elastic->Restore(PlanState::FromJson(run->MakeState(at).ToJson()).value());
  ASSERT_TRUE(pos.ok()) << pos.status().ToString();
  std::vector<Row> want, got;
  ASSERT_TRUE(run->GetRows(at.epoch, at.rows_consumed, 12, &want).ok());
  for (uint32_t r = 0; r < 3; ++r) {
    auto batch = elastic->GetBatchAt(*pos, r);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    got.insert(got.end(), batch->rows.begin(), batch->rows.end());
  }
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace stoker::plan
