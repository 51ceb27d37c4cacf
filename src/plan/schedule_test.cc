// Mixture schedules: phases of weights over the global rows (plan/schedule.h, docs/plan.md
// "Schedules"), on random mixtures and schedules.
#include "plan/schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "plan/plan_test_util.h"
#include "stoker/plan.h"

namespace stoker::plan {
namespace {

using testing::Coverage;
using testing::MakeLengths;
using testing::MakePlan;

// A random schedule over about `rows` rows for `k` datasets: 1-4 phases, some ramped, some with a
// dataset left out (weight 0).
std::vector<MixturePhase> RandomPhases(std::mt19937_64& rng, size_t k, uint64_t rows) {
  std::uniform_real_distribution<double> w(0, 1);
  const size_t n = 1 + rng() % 4;
  std::vector<MixturePhase> phases(n);
  uint64_t end = 0;
  for (size_t p = 0; p < n; ++p) {
    auto weights = [&] {
      std::vector<double> v(k);
      for (double& x : v) x = rng() % 4 == 0 ? 0.0 : w(rng);
      v[rng() % k] = 0.1 + w(rng);  // never all zero
      return v;
    };
    phases[p].weights = weights();
    if (p + 1 < n) {
      end += 1 + rng() % (2 * rows / n);
      phases[p].end_row = end;
      if (rng() % 2 == 0) phases[p].end_weights = weights();
    }
  }
  return phases;
}

TEST(ScheduleTest, RandomAccessMatchesTheSequentialWalkAndEveryDatasetContinues) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const size_t k = 2 + rng() % 4;
    const uint64_t rows = 200 + rng() % 3000;
    auto schedule = Schedule::Create(std::vector<double>(k, 1.0), RandomPhases(rng, k, rows));
    ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
    const Schedule& s = **schedule;
    std::vector<uint64_t> count(k, 0);
    std::vector<std::pair<uint32_t, uint64_t>> seq;
    std::vector<std::vector<uint64_t>> counts_at{count};
    s.Walk(0, rows, [&](uint32_t d, uint64_t j) {
      // Each dataset's rows come from its own stream in order: nothing repeated, nothing skipped,
      // whatever the phases do.
      ASSERT_EQ(j, count[d]) << "trial " << trial << " row " << seq.size();
      ++count[d];
      seq.push_back({d, j});
      counts_at.push_back(count);
    });
    for (int probe = 0; probe < 20; ++probe) {
      const uint64_t g = rng() % rows;
      EXPECT_EQ(s.CountsBefore(g), counts_at[g]) << "trial " << trial << " g " << g;
      const uint64_t n = std::min<uint64_t>(1 + rng() % 300, rows - g);
      std::vector<std::pair<uint32_t, uint64_t>> part;
      s.Walk(g, n, [&](uint32_t d, uint64_t j) { part.push_back({d, j}); });
      EXPECT_TRUE(std::equal(part.begin(), part.end(), seq.begin() + g)) << "trial " << trial;
    }
  }
}

TEST(ScheduleTest, RealisedSharesFollowEachPhase) {
  // Constant phases: within one row of the weights at every phase's end. A ramp: within one row
  // per ramp step of the linear ramp's integral (the steps' midpoints integrate a line exactly);
  // steps of 256 rows, so this ramp over 6,400 rows has 25.
  std::vector<MixturePhase> phases(3);
  phases[0] = {1000, {0.7, 0.2, 0.1}, {}};
  phases[1] = {1000 + 6400, {0.1, 0.1, 0.8}, {0.5, 0.5, 0.0}};
  phases[2] = {UINT64_MAX, {0.0, 1.0, 3.0}, {}};
  auto schedule = Schedule::Create({1, 1, 1}, phases);
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  const Schedule& s = **schedule;
  auto rows_in = [&](uint64_t b, uint64_t e) {
    std::vector<uint64_t> a = s.CountsBefore(b), z = s.CountsBefore(e);
    for (size_t k = 0; k < a.size(); ++k) z[k] -= a[k];
    return z;
  };
  std::vector<uint64_t> p0 = rows_in(0, 1000);
  EXPECT_NEAR(p0[0], 700, 1);
  EXPECT_NEAR(p0[1], 200, 1);
  EXPECT_NEAR(p0[2], 100, 1);
  std::vector<uint64_t> p1 = rows_in(1000, 7400);  // averages 0.3, 0.3, 0.4 of 6400 rows
  EXPECT_NEAR(p1[0], 1920, 25);                    // within a row per ramp step
  EXPECT_NEAR(p1[1], 1920, 25);
  EXPECT_NEAR(p1[2], 2560, 25);
  // 25 ramp steps of 256 rows: the first at weights 0.108, 0.108, 0.784 (t = 0.02), the last at
  // 0.492, 0.492, 0.016 (t = 0.98).
  std::vector<uint64_t> first = rows_in(1000, 1256), last = rows_in(7144, 7400);
  EXPECT_NEAR(first[2], 0.784 * 256, 1);
  EXPECT_NEAR(last[2], 0.016 * 256, 1);
  std::vector<uint64_t> p2 = rows_in(7400, 7400 + 4000);
  EXPECT_EQ(p2[0], 0u);  // weight 0: left out
  EXPECT_NEAR(p2[1], 1000, 1);
  EXPECT_NEAR(p2[2], 3000, 1);
  EXPECT_EQ(s.PhaseAt(0), 0u);
  EXPECT_EQ(s.PhaseAt(999), 0u);
  EXPECT_EQ(s.PhaseAt(1000), 1u);
  EXPECT_EQ(s.PhaseAt(7399), 1u);
  EXPECT_EQ(s.PhaseAt(7400), 2u);
  EXPECT_EQ(s.PhaseAt(uint64_t{1} << 50), 2u);
}

TEST(ScheduleTest, BadPhasesAreRefusedNamingThePhase) {
  auto fails = [](std::vector<MixturePhase> phases, const std::string& want) {
    auto s = Schedule::Create({1, 1}, phases);
    ASSERT_FALSE(s.ok()) << want;
    EXPECT_NE(s.status().message().find(want), std::string::npos) << s.status().ToString();
  };
  fails({{10, {1, 1, 1}, {}}, {UINT64_MAX, {1, 1}, {}}}, "phase 1: 3 weights for 2 datasets");
  fails({{10, {0, 0}, {}}, {UINT64_MAX, {1, 1}, {}}}, "phase 1: the weights must not all be zero");
  fails({{10, {1, -1}, {}}, {UINT64_MAX, {1, 1}, {}}}, "non-negative");
  fails({{10, {1, 1}, {}}, {10, {1, 1}, {}}, {UINT64_MAX, {1, 1}, {}}},
        "phase 2: ends at global row 10, not after");
  fails({{10, {1, 1}, {}}, {20, {1, 1}, {}}}, "phase 2: the last phase must run to the end");
  fails({{UINT64_MAX, {1, 1}, {2, 1}}}, "a ramp needs the phase's end");
}

TEST(PlanScheduleTest, EveryDatasetIsReadExactlyOncePerItsOwnEpochAcrossPhases) {
  auto a = MakeLengths(300, 40, 0.0, 3, 11), b = MakeLengths(60, 40, 0.1, 1, 12),
       c = MakeLengths(600, 40, 0.0, 4, 13);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit}) {
    PlanOptions o;
    o.seq_len = 64;
    o.pack = pack;
    o.bestfit_window = 32;
    // b is left out of the middle phase and upsampled in the last; c ramps up.
    o.phases = {{150, {0.5, 0.3, 0.2}, {}},
                {700, {0.5, 0.0, 0.1}, {0.2, 0.0, 0.8}},
                {UINT64_MAX, {0.2, 0.6, 0.2}, {}}};
    auto plan = MakePlan({{a, 1}, {b, 1}, {c, 1}}, o);
    ASSERT_NE(plan, nullptr);
    std::vector<Row> rows;
    for (uint64_t e = 0; e < 3; ++e) {
      ASSERT_TRUE(plan->GetRows(e, 0, plan->rows_in_epoch(e), &rows).ok());
    }
    const uint64_t epoch_rows = plan->rows_in_epoch(0);
    // Per dataset, group its rows by the epoch of its own order they come from.
    const std::shared_ptr<const DatasetLengths> lengths[] = {a, b, c};
    for (uint32_t k = 0; k < 3; ++k) {
      std::vector<Coverage> per_epoch(64);
      for (uint64_t g = 0; g < rows.size(); ++g) {
        if (rows[g].pieces.empty() || rows[g].pieces[0].dataset != k) continue;
        const uint64_t e = plan->DatasetEpochOfRow(g / epoch_rows, g % epoch_rows);
        ASSERT_LT(e, per_epoch.size());
        per_epoch[e].Add(rows[g]);
      }
      const double done = plan->DatasetEpochs({3, 0})[k];
      ASSERT_GE(done, 1.0) << "dataset " << k << " finished no epoch";
      for (uint64_t e = 0; e + 1 <= static_cast<uint64_t>(done); ++e) {
        EXPECT_EQ(per_epoch[e].CheckExactlyOnce(k, *lengths[k]), "")
            << "pack " << PackModeName(pack) << " dataset " << k << " epoch " << e;
      }
    }
    // The phase's weights decide: b has no row in the middle phase.
    for (uint64_t g = 150; g < 700; ++g) {
      if (!rows[g].pieces.empty()) {
        EXPECT_NE(rows[g].pieces[0].dataset, 1u) << g;
      }
    }
    EXPECT_EQ(plan->PhaseAt({0, 149}), 0u);
    EXPECT_EQ(plan->PhaseAt({0, 150}), 1u);
    EXPECT_EQ(plan->PhaseAt({1, 0}), epoch_rows >= 700 ? 2u : 1u);
  }
}

TEST(PlanScheduleTest, ResumeAtRandomStepsOfEpochsZeroToThreeOnW1_3_8ContinuesTheSameRows) {
  // A checkpoint from a W-rank run at a random step of epochs 0-3 (phases inside and across
  // epochs), restored on W' ranks: the next global rows are the uninterrupted run's, exactly
  // (the same W) or elastically (another W, another split of the same global batch).
  auto a = MakeLengths(400, 40, 0.0, 2, 21), b = MakeLengths(80, 40, 0.0, 1, 22);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit}) {
    PlanOptions o;
    o.seq_len = 64;
    o.pack = pack;
    o.bestfit_window = 32;
    o.phases = {{300, {0.9, 0.1}, {}}, {1200, {0.2, 0.8}, {0.7, 0.3}}, {UINT64_MAX, {1, 1}, {}}};
    std::mt19937_64 rng(3);
    for (uint32_t w : {1u, 3u, 8u}) {
      for (uint32_t w2 : {1u, 3u, 8u}) {
        PlanOptions ow = o, ow2 = o;
        ow.world_size = w;
        ow.batch_size = 24 / w;
        ow2.world_size = w2;
        ow2.batch_size = 24 / w2;
        auto plan = MakePlan({{a, 1}, {b, 1}}, ow), plan2 = MakePlan({{a, 1}, {b, 1}}, ow2);
        ASSERT_NE(plan, nullptr);
        ASSERT_NE(plan2, nullptr);
        for (int probe = 0; probe < 4; ++probe) {
          const uint64_t epoch = rng() % 4;
          const uint64_t step = rng() % (plan->steps_per_epoch(epoch) - 1);
          const PlanPosition pos{epoch, step * 24};
          std::vector<Row> want;
          ASSERT_TRUE(plan->GetRows(epoch, pos.rows_consumed, 24, &want).ok());
          auto restored =
              plan2->Restore(PlanState::FromJson(plan->MakeState(pos).ToJson()).value());
          ASSERT_TRUE(restored.ok()) << restored.status().ToString();
          std::vector<Row> got;
          for (uint32_t r = 0; r < w2; ++r) {
            auto batch = plan2->GetBatchAt(*restored, r);
            ASSERT_TRUE(batch.ok()) << batch.status().ToString();
            got.insert(got.end(), batch->rows.begin(), batch->rows.end());
          }
          EXPECT_EQ(got, want) << "W " << w << " -> " << w2 << " epoch " << epoch << " step "
                               << step;
        }
      }
    }
  }
}

TEST(PlanScheduleTest, TheFingerprintCoversThePhasesAndPlansWithoutPhasesKeepTheirs) {
  auto a = MakeLengths(100, 40, 0.0, 1, 31), b = MakeLengths(100, 40, 0.0, 1, 32);
  PlanOptions o;
  o.seq_len = 64;
  auto plain = MakePlan({{a, 2}, {b, 1}}, o);
  o.phases = {{50, {2, 1}, {}}, {UINT64_MAX, {1, 1}, {}}};
  auto phased = MakePlan({{a, 1}, {b, 1}}, o);
  o.phases[0].end_row = 60;
  auto moved = MakePlan({{a, 1}, {b, 1}}, o);
  EXPECT_NE(plain->fingerprint(), phased->fingerprint());
  EXPECT_NE(phased->fingerprint(), moved->fingerprint());
  // Without phases the order is the datasets' own weights' order, as before schedules existed.
  std::vector<Row> p, q;
  ASSERT_TRUE(plain->GetRows(0, 0, 50, &p).ok());
  ASSERT_TRUE(phased->GetRows(0, 0, 50, &q).ok());
  EXPECT_EQ(p, q);  // phase 1 has the same weights 2:1
}

TEST(PlanScheduleTest, PhasesNeedSeveralDatasets) {
  PlanOptions o;
  o.phases = {{10, {1}, {}}, {UINT64_MAX, {1}, {}}};
  auto plan = Plan::Create({{MakeLengths(10, 40, 0.0, 1, 1), 1}}, o);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("at least two datasets"), std::string::npos);
}

}  // namespace
}  // namespace stoker::plan
