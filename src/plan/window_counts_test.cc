#include "plan/window_counts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "common/file_util.h"
#include "common/hash.h"
#include "common/temp_dir.h"
#include "plan/plan_test_util.h"

namespace stoker::plan {
namespace {

using testing::MakeLengths;
using testing::MakePlan;

TEST(WindowCountsTest, ParallelCountsEqualSequentialOnes) {
  auto f = [](uint64_t w) { return w * w % 97 + 1; };
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    for (uint64_t first : {0u, 5u}) {
      std::vector<uint64_t> got = CountWindowsInParallel(first, 1000, threads, f);
      ASSERT_EQ(got.size(), 1000 - first);
      for (uint64_t w = first; w < 1000; ++w) ASSERT_EQ(got[w - first], f(w));
    }
  }
  EXPECT_TRUE(CountWindowsInParallel(7, 7, 4, f).empty());
}

// Plans counted through a cache directory of their own.
class WindowCountsCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::move(TempDir::Create()).value();
    setenv("STOKER_CACHE_DIR", dir_->path().c_str(), 1);
    setenv("STOKER_PLAN_CACHE_MIN_WINDOWS", "1", 1);
    lengths_ = MakeLengths(20000, 60, 0.05, 7, 41);
    options_.seq_len = 128;
    options_.pack = PackMode::kBestFit;
    options_.bestfit_window = 64;
    options_.seed = 9;
  }
  void TearDown() override {
    setenv("STOKER_CACHE_DIR", "off", 1);  // as every other plan test runs
    unsetenv("STOKER_PLAN_CACHE_MIN_WINDOWS");
  }
  std::unique_ptr<Plan> NewPlan() { return MakePlan({{lengths_, 1.0}}, options_); }
  std::string CacheFile(const Plan& plan, uint64_t epoch) const {
    WindowCountsKey key{plan.fingerprint(), 0, epoch, (20000 + 63) / 64};
    return JoinPath(PlanDir(), key.FileName());
  }
  std::string PlanDir() const { return dir_->Join("plan"); }  // the cache root's plan/
  // The rows of epoch 0 counted with caching off.
  uint64_t UncachedRows() {
    setenv("STOKER_CACHE_DIR", "off", 1);
    uint64_t rows = NewPlan()->rows_in_epoch(0);
    setenv("STOKER_CACHE_DIR", dir_->path().c_str(), 1);
    return rows;
  }
  std::unique_ptr<TempDir> dir_;
  std::shared_ptr<const DatasetLengths> lengths_;
  PlanOptions options_;
};

TEST_F(WindowCountsCacheTest, TheFirstCountWritesTheCacheAndLaterPlansReadIt) {
  const uint64_t rows = UncachedRows();
  auto plan = NewPlan();
  EXPECT_EQ(plan->rows_in_epoch(0), rows);
  const std::string file = CacheFile(*plan, 0);
  ASSERT_TRUE(PathExists(file));
  auto again = NewPlan();
  EXPECT_EQ(again->rows_in_epoch(0), rows);
  std::vector<Row> a, b;
  ASSERT_TRUE(plan->GetRows(0, rows - 50, 50, &a).ok());
  ASSERT_TRUE(again->GetRows(0, rows - 50, 50, &b).ok());
  EXPECT_TRUE(a == b);
  // Proof that the file is what a later plan reads: a forged (but well-formed) one changes it.
  WindowCountsKey key{plan->fingerprint(), 0, 0, (20000 + 63) / 64};
  std::vector<uint64_t> counts = *ReadWindowCounts(PlanDir(), key);
  counts[0] += 1;
  WriteWindowCounts(PlanDir(), key, counts);
  EXPECT_EQ(NewPlan()->rows_in_epoch(0), rows + 1);
}

TEST_F(WindowCountsCacheTest, AFileFromAKilledOrForeignWriterIsNeverUsed) {
  const uint64_t rows = UncachedRows();
  auto plan = NewPlan();
  const std::string file = CacheFile(*plan, 0);
  // What a writer killed before its rename leaves: a temporary file (with forged counts). It is
  // never read under the cache's name.
  WindowCountsKey key{plan->fingerprint(), 0, 0, (20000 + 63) / 64};
  WriteWindowCounts(PlanDir(), key, std::vector<uint64_t>(key.num_windows, 1));
  ASSERT_EQ(std::rename(file.c_str(), (file + ".tmp.12345.1").c_str()), 0);
  EXPECT_EQ(plan->rows_in_epoch(0), rows);
  ASSERT_TRUE(PathExists(file));
  // A truncated file, a flipped byte, and another epoch's file under this name: all recounted.
  auto text = ReadFileToString(file);
  ASSERT_TRUE(text.ok());
  auto key_other = key;
  key_other.epoch = 1;
  const std::string other = JoinPath(PlanDir(), key_other.FileName());
  for (int damage = 0; damage < 3; ++damage) {
    std::string bad = *text;
    if (damage == 0) bad.resize(bad.size() / 2);
    if (damage == 1) bad[bad.size() / 2] ^= 1;
    if (damage == 2) {
      NewPlan()->rows_in_epoch(1);
      bad = *ReadFileToString(other);
    }
    ASSERT_TRUE(WriteFileAtomically(file, bad).ok());
    EXPECT_EQ(NewPlan()->rows_in_epoch(0), rows) << damage;
    EXPECT_EQ(*ReadFileToString(file), *text) << "rewritten after damage " << damage;
  }
}

TEST_F(WindowCountsCacheTest, AResumeFarIntoTheEpochReadsTheSameRows) {
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    options_.pack = pack;
    options_.bestfit_window = 8;  // 2,500 windows for bestfit: far beyond the lazy ones
    setenv("STOKER_CACHE_DIR", "off", 1);
    auto reference = NewPlan();
    const uint64_t rows = reference->rows_in_epoch(0);
    std::vector<Row> all;
    ASSERT_TRUE(reference->GetRows(0, 0, rows, &all).ok());
    setenv("STOKER_CACHE_DIR", dir_->path().c_str(), 1);
    for (int run = 0; run < 2; ++run) {  // counts, then reads the cache
      auto resumed = NewPlan();
      std::vector<Row> tail;
      ASSERT_TRUE(resumed->GetRows(0, rows - 7, 7, &tail).ok());
      EXPECT_TRUE(std::equal(tail.begin(), tail.end(), all.end() - 7)) << PackModeName(pack);
    }
  }
}

}  // namespace
}  // namespace stoker::plan
