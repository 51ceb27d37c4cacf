// Weighted mixtures of datasets through the plan.
#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace stoker::plan
