#include "common/cache_root.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "common/env_testing.h"

namespace stoker {
namespace {

// Both variables unset at the start of each test, and put back at its end.
class CacheRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Unset("STOKER_CACHE_DIR");
    env_.Unset("XDG_CACHE_HOME");
  }
  stoker::testing::ScopedEnv env_;
};

TEST_F(CacheRootTest, StokerCacheDirWinsOverXdg) {
  env_.Set("XDG_CACHE_HOME", "/xdg");
  env_.Set("STOKER_CACHE_DIR", "/nvme/stoker");
  EXPECT_EQ(CacheRoot(), "/nvme/stoker");
  EXPECT_EQ(CacheDirFor(CacheKind::kShards), "/nvme/stoker/shards");
}

TEST_F(CacheRootTest, XdgThenAPerUserTmpDirectory) {
  env_.Set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(CacheRoot(), "/xdg/stoker");
  env_.Set("XDG_CACHE_HOME", "");  // empty is unset (XDG Base Directory)
  EXPECT_EQ(CacheRoot(), "/tmp/stoker-cache-" + std::to_string(::getuid()));
}

TEST_F(CacheRootTest, OffOrEmptyTurnsEveryKindOff) {
  for (const char* off : {"off", ""}) {
    env_.Set("STOKER_CACHE_DIR", off);
    EXPECT_EQ(CacheRoot(), std::nullopt) << off;
    for (CacheKind k : {CacheKind::kShards, CacheKind::kPlan, CacheKind::kStreamScan}) {
      EXPECT_EQ(CacheDirFor(k), std::nullopt) << off;
    }
  }
}

// Each kind has a subdirectory of its own: the shard cache never shares a directory with the
// plan's lock files (the XDG collision of issue 27).
TEST_F(CacheRootTest, EveryKindHasItsOwnSubdirectory) {
  env_.Set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(CacheDirFor(CacheKind::kShards), "/xdg/stoker/shards");
  EXPECT_EQ(CacheDirFor(CacheKind::kPlan), "/xdg/stoker/plan");
  EXPECT_EQ(CacheDirFor(CacheKind::kStreamScan), "/xdg/stoker/stream-scan");
  for (std::string_view name : {"shards", "plan", "stream-scan"}) {
    EXPECT_TRUE(IsCacheKindDirName(name)) << name;
  }
  EXPECT_FALSE(IsCacheKindDirName("data"));
  EXPECT_FALSE(IsCacheKindDirName("megatron-0123.lock"));
}

}  // namespace
}  // namespace stoker
