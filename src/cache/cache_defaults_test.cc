#include "cache/cache_defaults.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/cache_layout.h"
#include "common/cache_root.h"
#include "common/env_testing.h"
#include "common/file_util.h"
#include "common/temp_dir.h"

namespace stoker::cache {
namespace {

// The cache root's variables unset at the start of each test and put back at its end, and a
// fresh directory.
class CacheDirDefaults : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Unset("STOKER_CACHE_DIR");
    env_.Unset("XDG_CACHE_HOME");
    dir_ = TempDir::Create("stoker-cache-defaults-").value();
  }
  stoker::testing::ScopedEnv env_;
  std::unique_ptr<TempDir> dir_;
};

TEST_F(CacheDirDefaults, TheShardsSubdirectoryOfTheCacheRoot) {
  env_.Set("XDG_CACHE_HOME", "/scratch/me/.cache");
  EXPECT_EQ(DefaultCacheDir(), "/scratch/me/.cache/stoker/shards");
  EXPECT_EQ(ResolveCacheDir("auto"), "/scratch/me/.cache/stoker/shards");
  EXPECT_EQ(ResolveCacheDir("/nvme/c"), "/nvme/c");  // a setting names the shard cache itself
  EXPECT_EQ(ResolveCacheDir(""), "");
  env_.Unset("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultCacheDir(), "/tmp/stoker-cache-" + std::to_string(::getuid()) + "/shards");
  env_.Set("STOKER_CACHE_DIR", "/nvme/root");
  EXPECT_EQ(DefaultCacheDir(), "/nvme/root/shards");
  env_.Set("STOKER_CACHE_DIR", "off");  // every default cache off: remote data uncached
  EXPECT_EQ(ResolveCacheDir("auto"), "");
}

// The issue-27 collision, in C++: the plan's lock and totals files in the same root do not stop
// the default shard cache from opening.
TEST_F(CacheDirDefaults, TheShardCacheOpensBesideThePlansFiles) {
  env_.Set("XDG_CACHE_HOME", dir_->path().c_str());
  const std::string plan = CacheDirFor(CacheKind::kPlan).value();
  ASSERT_TRUE(MakeDirectories(plan).ok());
  ASSERT_TRUE(WriteFileAtomically(JoinPath(plan, "megatron-0123456789abcdef.lock"), "").ok());
  Result<CacheLayout> layout = CacheLayout::Open(DefaultCacheDir(), /*create=*/true);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->dir(), dir_->Join("stoker/shards"));
}

// A cache root where an older stoker kept its shard cache (the marker at the root) goes on
// serving that cache, beside the root's new subdirectories of the other kinds.
TEST_F(CacheDirDefaults, AnOlderShardCacheAtTheRootIsUsedOn) {
  env_.Set("STOKER_CACHE_DIR", dir_->path().c_str());
  ASSERT_TRUE(CacheLayout::Open(dir_->path(), /*create=*/true).ok());
  EXPECT_EQ(DefaultCacheDir(), dir_->path());
  for (CacheKind k : {CacheKind::kPlan, CacheKind::kStreamScan}) {
    ASSERT_TRUE(MakeDirectories(CacheDirFor(k).value()).ok());
  }
  Result<CacheLayout> again = CacheLayout::Open(DefaultCacheDir(), /*create=*/false);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(CacheDefaults, BudgetIsCappedAndMeasuredOnAnExistingParent) {
  Result<uint64_t> budget = DefaultBudgetBytes("/tmp/does/not/exist/yet");
  ASSERT_TRUE(budget.ok()) << budget.status().ToString();
  EXPECT_GT(*budget, 0u);
  EXPECT_LE(*budget, kDefaultBudgetBytes);
}

TEST(CacheDefaults, ParsesSizesAndNamesTheFlag) {
  EXPECT_EQ(ParseCacheSize("200GiB").value(), uint64_t{200} << 30);
  EXPECT_EQ(ParseCacheSize("1.5TiB").value(), uint64_t{3} << 39);
  EXPECT_EQ(ParseCacheSize("500GB").value(), uint64_t{500} * 1000 * 1000 * 1000);
  Status bad = ParseCacheSize("lots").status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--cache-size"), std::string::npos);
  EXPECT_NE(ParseCacheSize("0", "cache_size").status().message().find("cache_size"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::cache
