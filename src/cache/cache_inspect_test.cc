#include "cache/cache_inspect.h"

#include <gtest/gtest.h>

#include "cache/cache_testing.h"
#include "cache/shard_cache.h"
#include "common/file_util.h"
#include "common/temp_dir.h"

namespace stoker::cache {
namespace {

using testing::ObjectBytes;
using testing::Xxh3Of;

class CacheInspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir::Create("stoker-cache-inspect-").value();
    auto memory = storage::NewMemoryBackend();
    for (const char* uri : {"s3://b/a.bin", "s3://b/b.bin"}) {
      bytes_[uri] = ObjectBytes(uri, 3000);
      ASSERT_TRUE(storage::WriteAll(*memory, uri, bytes_[uri]).ok());
    }
    CacheOptions options;
    options.dir = dir_->Join("cache");
    options.budget_bytes = 1 << 20;
    options.download_threads = 0;
    options.fsync = false;
    cache_ = ShardCache::Open(options, std::move(memory)).value();
  }
  CacheRequest Request(const std::string& uri) { return {uri, 3000, Xxh3Of(bytes_[uri])}; }

  std::unique_ptr<TempDir> dir_;
  std::map<std::string, std::string> bytes_;
  std::shared_ptr<ShardCache> cache_;
};

TEST_F(CacheInspectTest, ReportsObjectsPinsBudgetAndHitRate) {
  Result<CachedFile> a = cache_->Acquire(Request("s3://b/a.bin"));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(cache_->Acquire(Request("s3://b/b.bin")).ok());
  ASSERT_TRUE(cache_->Acquire(Request("s3://b/b.bin")).ok());
  ASSERT_TRUE(cache_->FlushStats().ok());
  Result<CacheReport> report = InspectCache(dir_->Join("cache"));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->objects.size(), 2u);
  EXPECT_EQ(report->objects[0].uri, "s3://b/a.bin");
  EXPECT_TRUE(report->objects[0].in_use);  // `a` pins it
  EXPECT_FALSE(report->objects[1].in_use);
  EXPECT_EQ(report->objects[1].xxh3, Xxh3Of(bytes_["s3://b/b.bin"]));
  EXPECT_EQ(report->stats.used_bytes, 6000u);
  EXPECT_EQ(report->stats.budget_bytes, 1u << 20);
  EXPECT_EQ(report->stats.downloads, 2u);
  EXPECT_EQ(report->stats.hits, 1u);
  EXPECT_EQ(report->stats.misses, 2u);
}

TEST_F(CacheInspectTest, ClearKeepsPinnedObjectsAndForeignDirectoriesAreRefused) {
  Result<CachedFile> a = cache_->Acquire(Request("s3://b/a.bin"));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(cache_->Acquire(Request("s3://b/b.bin")).ok());
  Result<ClearReport> cleared = ClearCache(dir_->Join("cache"));
  ASSERT_TRUE(cleared.ok()) << cleared.status().ToString();
  EXPECT_EQ(cleared->removed_objects, 1u);
  EXPECT_EQ(cleared->removed_bytes, 3000u);
  EXPECT_EQ(cleared->in_use, 1u);
  EXPECT_EQ(ReadFileToString(a->path()).value(), bytes_["s3://b/a.bin"]);
  EXPECT_EQ(InspectCache(dir_->Join("cache"))->objects.size(), 1u);

  const std::string foreign = dir_->Join("home");
  ASSERT_TRUE(MakeDirectories(foreign).ok());
  ASSERT_TRUE(WriteFileAtomically(foreign + "/thesis.tex", "x").ok());
  EXPECT_EQ(ClearCache(foreign).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(InspectCache(foreign).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(PathExists(foreign + "/thesis.tex"));
  EXPECT_EQ(InspectCache(dir_->Join("nothing")).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(PathExists(dir_->Join("nothing")));
}

}  // namespace
}  // namespace stoker::cache
