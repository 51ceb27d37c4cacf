// Closing a cache (or a loader whose worker is inside Acquire) while a download is stalled at the
// server: the transfer is aborted inside libcurl, not retried, no partial file is left, and the
// next cache on the directory works. The server accepts every request and never answers.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cache/cache_testing.h"
#include "cache/shard_cache.h"
#include "common/file_util.h"
#include "common/temp_dir.h"
#include "storage/cancel.h"
#include "storage/open_backend.h"
#include "storage/stall_server_testing.h"

namespace stoker::cache {
namespace {

using storage::testing::StallingHttpServer;

constexpr size_t kStalledObjectBytes = 3000;

class ShardCacheCancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(server_.port(), 0);
    dir_ = TempDir::Create("stoker-cache-cancel-").value();
    storage::BackendOptions options;
    // A stall that only cancellation ends within the test: waited out and retried, it would
    // cost minutes and show in the server's request count.
    options.http.stall_timeout_s = 20;
    backend_ = storage::OpenBackendForUri(server_.url("/"), options).value();
  }
  CacheOptions Options(int threads) {
    CacheOptions o;
    o.dir = dir_->Join("cache");
    o.budget_bytes = 4 * kStalledObjectBytes;
    o.download_threads = threads;
    o.chunk_bytes = 1000;
    o.part_threads = 2;
    o.poll_ms = 2;
    o.fsync = false;
    return o;
  }
  CacheRequest Request() const { return {server_.url("/shard_0.bin"), kStalledObjectBytes, ""}; }
  // Nothing published, no temporary file; a new cache on the directory serves the object.
  void ExpectCleanAndRestartable() {
    EXPECT_TRUE(ListDirectory(dir_->Join("cache/tmp")).value().empty());
    EXPECT_TRUE(ListDirectory(dir_->Join("cache/data")).value().empty());
    auto memory = storage::NewMemoryBackend();
    const std::string bytes = testing::ObjectBytes("shard_0", kStalledObjectBytes);
    ASSERT_TRUE(storage::WriteAll(*memory, Request().uri, bytes).ok());
    auto cache = ShardCache::Open(Options(0), std::move(memory));
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    Result<CachedFile> file = (*cache)->Acquire(Request());
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ(ReadFileToString(file->path()).value(), bytes);
  }

  StallingHttpServer server_;
  std::unique_ptr<TempDir> dir_;
  std::shared_ptr<storage::Backend> backend_;
};

TEST_F(ShardCacheCancelTest, ClosingAbortsAStalledLookAheadDownload) {
  {
    auto cache = ShardCache::Open(Options(/*threads=*/1), backend_).value();
    cache->Schedule({Request()});
    ASSERT_TRUE(server_.WaitForRequests(2));  // both part threads' GETs are in flight
  }  // ~ShardCache: aborted in flight, not retried, not refetched
  EXPECT_EQ(server_.requests(), 2);
  ExpectCleanAndRestartable();
}

// A loader's worker reads under its engine's CancelScope: stopping the loader ends a demand
// download in flight, and a wait for a look-ahead thread's download of the same object.
TEST_F(ShardCacheCancelTest, CancellingTheReaderEndsItsDownloadAndItsWait) {
  auto cache = ShardCache::Open(Options(/*threads=*/0), backend_).value();
  std::atomic<bool> stop{false};
  Status demand;
  std::thread reader([&] {
    const storage::CancelScope scope(&stop);
    demand = cache->Acquire(Request()).status();
  });
  ASSERT_TRUE(server_.WaitForRequests(2));
  stop = true;
  reader.join();
  EXPECT_EQ(demand.code(), StatusCode::kCancelled) << demand.ToString();
  EXPECT_EQ(server_.requests(), 2);
  cache.reset();
  ExpectCleanAndRestartable();
}

TEST_F(ShardCacheCancelTest, CancellingAReaderThatWaitsForTheLookAhead) {
  auto cache = ShardCache::Open(Options(/*threads=*/1), backend_).value();
  cache->Schedule({Request()});
  ASSERT_TRUE(server_.WaitForRequests(2));  // the look-ahead thread holds the download
  std::atomic<bool> stop{false};
  Status waited;
  std::thread reader([&] {
    const storage::CancelScope scope(&stop);
    waited = cache->Acquire(Request()).status();
  });
  stop = true;
  reader.join();
  EXPECT_EQ(waited.code(), StatusCode::kCancelled) << waited.ToString();
  cache.reset();
  EXPECT_EQ(server_.requests(), 2);
  ExpectCleanAndRestartable();
}

}  // namespace
}  // namespace stoker::cache
