#include "cache/shard_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "cache/cache_testing.h"
#include "common/file_lock.h"
#include "common/file_util.h"
#include "common/temp_dir.h"
#include "storage/metering_backend.h"

namespace stoker::cache {
namespace {

using testing::ObjectBytes;
using testing::TestBackend;
using testing::Xxh3Of;

constexpr size_t kCacheObjectBytes = 10000;

class ShardCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir::Create("stoker-cache-test-").value();
    auto memory = storage::NewMemoryBackend();
    for (int i = 0; i < 8; ++i) {
      const std::string uri = Uri(i);
      bytes_[uri] = ObjectBytes(uri, kCacheObjectBytes + static_cast<size_t>(i));
      ASSERT_TRUE(storage::WriteAll(*memory, uri, bytes_[uri]).ok());
    }
    backend_ = std::make_shared<TestBackend>(std::move(memory));
  }

  static std::string Uri(int i) { return "s3://bucket/data/shard_" + std::to_string(i) + ".bin"; }
  CacheRequest Request(int i) {
    const std::string uri = Uri(i);
    return {uri, bytes_[uri].size(), Xxh3Of(bytes_[uri])};
  }
  CacheOptions Options(uint64_t budget, int threads = 0) {
    CacheOptions o;
    o.dir = dir_->Join("cache");
    o.budget_bytes = budget;
    o.download_threads = threads;
    o.poll_ms = 2;
    o.fsync = false;
    return o;
  }
  std::shared_ptr<ShardCache> OpenCache(const CacheOptions& options) {
    auto cache = ShardCache::Open(options, backend_);
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    return cache.ok() ? *cache : nullptr;
  }
  void ExpectContent(const CachedFile& file) {
    Result<std::string> got = ReadFileToString(file.path());
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, bytes_[file.uri()]) << file.uri();
  }
  // Which of the objects have a data file now.
  std::set<int> Cached() {
    std::set<int> out;
    for (int i = 0; i < 8; ++i) {
      if (PathExists(dir_->Join("cache/data/" + ObjectKey(Uri(i))))) out.insert(i);
    }
    return out;
  }
  static uint64_t Budget(int objects) { return objects * (kCacheObjectBytes + 8); }

  std::unique_ptr<TempDir> dir_;
  std::map<std::string, std::string> bytes_;
  std::shared_ptr<TestBackend> backend_;
};

TEST_F(ShardCacheTest, AcquireDownloadsOnceVerifiesAndHits) {
  auto cache = OpenCache(Options(Budget(4)));
  {
    Result<CachedFile> file = cache->Acquire(Request(0));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ExpectContent(*file);
    EXPECT_EQ(file->size_bytes(), bytes_[Uri(0)].size());
  }
  Result<CachedFile> again = cache->Acquire(Request(0));
  ASSERT_TRUE(again.ok());
  ExpectContent(*again);
  EXPECT_EQ(backend_->opens(Uri(0)), 1);
  CacheStats stats = cache->Stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.downloads, 1u);
  EXPECT_EQ(stats.bytes_downloaded, bytes_[Uri(0)].size());
  EXPECT_EQ(stats.used_bytes, bytes_[Uri(0)].size());
  EXPECT_EQ(stats.budget_bytes, Budget(4));
}

TEST_F(ShardCacheTest, SizeOnlyRequestAndUnknownSize) {
  auto cache = OpenCache(Options(Budget(4)));
  Result<CachedFile> sized = cache->Acquire({Uri(1), bytes_[Uri(1)].size(), ""});
  ASSERT_TRUE(sized.ok()) << sized.status().ToString();
  ExpectContent(*sized);
  Result<CachedFile> unknown = cache->Acquire({Uri(2), 0, ""});
  ASSERT_TRUE(unknown.ok()) << unknown.status().ToString();
  ExpectContent(*unknown);
  EXPECT_EQ(unknown->size_bytes(), bytes_[Uri(2)].size());
}

TEST_F(ShardCacheTest, ReaderNeverSeesAPartialFile) {
  auto cache = OpenCache(Options(Budget(4)));
  backend_->Block(Uri(3));
  std::thread reader([&] {
    Result<CachedFile> file = cache->Acquire(Request(3));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ExpectContent(*file);
  });
  backend_->WaitBlocked();
  // Mid-download: the bytes go to tmp/, nothing is under data/ yet.
  EXPECT_TRUE(Cached().empty());
  EXPECT_EQ(ListDirectory(dir_->Join("cache/tmp")).value().size(), 1u);
  backend_->Unblock();
  reader.join();
  EXPECT_EQ(Cached(), std::set<int>{3});
  EXPECT_TRUE(ListDirectory(dir_->Join("cache/tmp")).value().empty());
}

TEST_F(ShardCacheTest, CorruptDownloadIsRefetched) {
  CacheOptions options = Options(Budget(4));
  options.max_refetch = 3;
  auto cache = OpenCache(options);
  backend_->CorruptReads(2);  // the first two downloads are corrupt, the third is good
  Result<CachedFile> file = cache->Acquire(Request(0));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ExpectContent(*file);
  EXPECT_EQ(cache->Stats().refetches, 2u);
  EXPECT_EQ(backend_->opens(Uri(0)), 3);
}

TEST_F(ShardCacheTest, CorruptDownloadGivesUpAfterMaxRefetchNamingTheObject) {
  CacheOptions options = Options(Budget(4));
  options.max_refetch = 2;
  auto cache = OpenCache(options);
  backend_->CorruptReads(1000);
  Result<CachedFile> file = cache->Acquire(Request(5));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kCorruption);
  EXPECT_NE(file.status().message().find(Uri(5)), std::string::npos) << file.status().ToString();
  EXPECT_NE(file.status().message().find("3 download(s)"), std::string::npos);
  EXPECT_EQ(backend_->opens(Uri(5)), 3);
  EXPECT_EQ(cache->Stats().refetches, 2u);
  // Nothing of it is left: no data file, no temporary file.
  EXPECT_TRUE(Cached().empty());
  EXPECT_TRUE(ListDirectory(dir_->Join("cache/tmp")).value().empty());
}

TEST_F(ShardCacheTest, PartsReadInParallelAreCheckedAndRefetched) {
  CacheOptions options = Options(Budget(4));
  options.chunk_bytes = 1000;  // 11 parts per object, 4 in flight
  options.part_threads = 4;
  auto cache = OpenCache(options);
  backend_->CorruptReads(3);  // some parts of the first download are corrupt
  Result<CachedFile> file = cache->Acquire(Request(7));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ExpectContent(*file);
  EXPECT_EQ(cache->Stats().refetches, 1u);
  EXPECT_EQ(backend_->opens(Uri(7)), 2);
  Result<CachedFile> sized_only = cache->Acquire({Uri(6), bytes_[Uri(6)].size(), ""});
  ASSERT_TRUE(sized_only.ok());
  ExpectContent(*sized_only);
}

TEST_F(ShardCacheTest, WrongSizeAtTheSourceIsCorruption) {
  auto cache = OpenCache(Options(Budget(4)));
  Result<CachedFile> file = cache->Acquire({Uri(0), bytes_[Uri(0)].size() + 1, ""});
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kCorruption);
  EXPECT_NE(file.status().message().find("expected"), std::string::npos);
}

TEST_F(ShardCacheTest, BudgetSmallerThanOneObjectIsAClearError) {
  auto cache = OpenCache(Options(kCacheObjectBytes / 2));
  Result<CachedFile> file = cache->Acquire(Request(0));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(file.status().message().find("budget"), std::string::npos);
  EXPECT_NE(file.status().message().find(Uri(0)), std::string::npos);

  CacheOptions options = Options(kCacheObjectBytes / 2);
  options.largest_object_bytes = kCacheObjectBytes;
  Result<std::shared_ptr<ShardCache>> refused = ShardCache::Open(options, backend_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ShardCache::Open(Options(0), backend_).ok());
}

TEST_F(ShardCacheTest, EvictsPassedFirstThenUnplannedThenFurthestScheduled) {
  auto cache = OpenCache(Options(Budget(3)));
  for (int i : {0, 1, 2}) ASSERT_TRUE(cache->Acquire(Request(i)).ok());
  EXPECT_EQ(Cached(), (std::set<int>{0, 1, 2}));
  cache->Passed(Uri(1));
  ASSERT_TRUE(cache->Acquire(Request(3)).ok());  // 1 has passed: it goes
  EXPECT_EQ(Cached(), (std::set<int>{0, 2, 3}));

  cache->Schedule({Request(4), Request(0), Request(2)});
  ASSERT_TRUE(cache->Acquire(Request(4)).ok());  // 3 is in no plan: it goes
  EXPECT_EQ(Cached(), (std::set<int>{0, 2, 4}));
  ASSERT_TRUE(cache->Acquire(Request(5)).ok());  // 2 is read last of the planned ones
  EXPECT_EQ(Cached(), (std::set<int>{0, 4, 5}));
  EXPECT_EQ(cache->Stats().evictions, 3u);
}

TEST_F(ShardCacheTest, PinnedObjectsAreNeverEvicted) {
  auto cache = OpenCache(Options(Budget(2)));
  Result<CachedFile> a = cache->Acquire(Request(0));
  ASSERT_TRUE(a.ok());
  cache->Passed(Uri(0));  // passed but still pinned: must stay
  ASSERT_TRUE(cache->Acquire(Request(1)).ok());
  ASSERT_TRUE(cache->Acquire(Request(2)).ok());  // evicts 1, not the pinned 0
  EXPECT_EQ(Cached(), (std::set<int>{0, 2}));
  ExpectContent(*a);
}

TEST_F(ShardCacheTest, BudgetFullOfPinsWaitsForARelease) {
  auto cache = OpenCache(Options(Budget(1)));
  std::optional<CachedFile> held = cache->Acquire(Request(0)).value();
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    Result<CachedFile> next = cache->Acquire(Request(1));
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    ExpectContent(*next);
    done = true;
  });
  // The waiter cannot make room while 0 is pinned: it waits for space (back-pressure), and
  // releasing 0 lets it through.
  while (!cache->WaitingForSpace()) std::this_thread::yield();
  EXPECT_FALSE(done.load());
  held.reset();
  waiter.join();
  EXPECT_EQ(Cached(), std::set<int>{1});
}

TEST_F(ShardCacheTest, LookAheadDownloadsInPlanOrderWithinTheBudget) {
  auto cache = OpenCache(Options(Budget(3), /*threads=*/1));
  cache->Schedule({Request(4), Request(2), Request(6), Request(0), Request(1)});
  cache->WaitLookAheadIdle();  // it stops at the budget
  EXPECT_EQ(cache->Stats().downloads, 3u);
  EXPECT_EQ(backend_->order(), (std::vector<std::string>{Uri(4), Uri(2), Uri(6)}));
  for (int i : {4, 2}) {
    Result<CachedFile> file = cache->Acquire(Request(i));
    ASSERT_TRUE(file.ok());
    ExpectContent(*file);
    cache->Passed(Uri(i));
  }
  EXPECT_EQ(cache->Stats().hits, 2u);
  EXPECT_EQ(cache->Stats().misses, 0u);
  // With 4 and 2 passed, the look-ahead brings 0 and 1 in their place.
  cache->WaitLookAheadIdle();
  EXPECT_EQ(cache->Stats().downloads, 5u);
  EXPECT_EQ(Cached(), (std::set<int>{6, 0, 1}));
  EXPECT_EQ(backend_->order(), (std::vector<std::string>{Uri(4), Uri(2), Uri(6), Uri(0), Uri(1)}));
}

TEST_F(ShardCacheTest, ForeignFilesAreRefusedAndKept) {
  const std::string dir = dir_->Join("cache");
  ASSERT_TRUE(MakeDirectories(dir).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/notes.txt", "mine").ok());
  Result<std::shared_ptr<ShardCache>> refused = ShardCache::Open(Options(Budget(2)), backend_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("notes.txt"), std::string::npos);
  EXPECT_EQ(ReadFileToString(dir + "/notes.txt").value(), "mine");

  // A real cache with a stranger dropped into data/ is refused too.
  ASSERT_TRUE(::unlink((dir + "/notes.txt").c_str()) == 0);
  { ASSERT_TRUE(ShardCache::Open(Options(Budget(2)), backend_).ok()); }
  ASSERT_TRUE(WriteFileAtomically(dir + "/data/model.pt", "weights").ok());
  refused = ShardCache::Open(Options(Budget(2)), backend_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("model.pt"), std::string::npos);
  EXPECT_EQ(ReadFileToString(dir + "/data/model.pt").value(), "weights");
}

TEST_F(ShardCacheTest, StaleTemporaryFilesAreRemovedAtOpen) {
  { ASSERT_TRUE(ShardCache::Open(Options(Budget(2)), backend_).ok()); }
  const std::string stale = dir_->Join("cache/tmp/" + ObjectKey(Uri(0)) + "~99999~0.part");
  ASSERT_TRUE(WriteFileAtomically(stale, "half a shar").ok());
  auto cache = OpenCache(Options(Budget(2)));
  EXPECT_FALSE(PathExists(stale));
  ASSERT_TRUE(cache->Acquire(Request(0)).ok());
}

TEST_F(ShardCacheTest, ChangedChecksumIsDownloadedAgain) {
  auto cache = OpenCache(Options(Budget(4)));
  ASSERT_TRUE(cache->Acquire({Uri(0), bytes_[Uri(0)].size(), ""}).ok());
  ASSERT_TRUE(cache->Acquire(Request(0)).ok());  // same bytes: the stored xxh3 matches
  EXPECT_EQ(backend_->opens(Uri(0)), 1);
  CacheRequest other = Request(0);
  other.checksum = "0123456789abcdef";  // a new version per the manifest: not what is stored
  Result<CachedFile> file = cache->Acquire(other);
  EXPECT_EQ(file.status().code(), StatusCode::kCorruption);  // and the source does not have it
  EXPECT_GE(backend_->opens(Uri(0)), 2);
}

TEST_F(ShardCacheTest, StatsArePersistedAcrossProcessesOfTheDirectory) {
  {
    auto cache = OpenCache(Options(Budget(4)));
    ASSERT_TRUE(cache->Acquire(Request(0)).ok());
    ASSERT_TRUE(cache->Acquire(Request(0)).ok());
  }
  {
    auto cache = OpenCache(Options(Budget(5)));
    ASSERT_TRUE(cache->Acquire(Request(0)).ok());
    ASSERT_TRUE(cache->Acquire(Request(1)).ok());
  }
  CacheLayout layout = CacheLayout::Open(dir_->Join("cache"), false).value();
  CacheStats total = ReadStatsFile(layout).value();
  EXPECT_EQ(total.downloads, 2u);
  EXPECT_EQ(total.hits, 2u);
  EXPECT_EQ(total.misses, 2u);
  EXPECT_EQ(total.budget_bytes, Budget(5));
  EXPECT_DOUBLE_EQ(total.hit_rate(), 0.5);
}

// Threads acquire, read and pass objects in a budget of two, with look-ahead on: the waits for
// space must always end, and every read sees the right bytes.
TEST_F(ShardCacheTest, SmallBudgetManyThreadsNeverDeadlock) {
  auto cache = OpenCache(Options(Budget(2), /*threads=*/2));
  std::vector<CacheRequest> plan;
  std::mt19937 rng(7);
  for (int i = 0; i < 64; ++i) plan.push_back(Request(static_cast<int>(rng() % 8)));
  cache->Schedule(plan);
  std::vector<std::thread> threads;
  std::atomic<int> reads{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < plan.size(); i += 6) {
        Result<CachedFile> file = cache->Acquire(plan[i]);
        ASSERT_TRUE(file.ok()) << file.status().ToString();
        ExpectContent(*file);
        cache->Passed(plan[i].uri);
        ++reads;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(reads.load(), 64);
  EXPECT_LE(cache->Stats().used_bytes, Budget(2));
}

// A download is renamed from tmp/ into data/ only while no reservation holds the space lock: a
// reservation scans data/ and then tmp/, and an object renamed between the two scans was in
// neither, so the reservation counted one object too few and overshot the budget by one.
TEST_F(ShardCacheTest, APublishWaitsForTheSpaceLock) {
  auto cache = OpenCache(Options(Budget(4)));
  backend_->Block(Uri(0));
  std::thread reader([&] { EXPECT_TRUE(cache->Acquire(Request(0)).ok()); });
  backend_->WaitBlocked();  // its space is reserved (the lock let go), its bytes not yet read
  CacheLayout layout = CacheLayout::Open(dir_->Join("cache"), false).value();
  Result<std::unique_ptr<FileLock>> space =
      FileLock::Acquire(layout.space_lock_path(), LockMode::kExclusive);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  backend_->Unblock();
  // Its meta file is written just before the rename: from then on only the lock holds it back.
  const std::string meta = layout.meta_path(ObjectKey(Uri(0)));
  while (!PathExists(meta)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Time for a rename that ignored the lock to happen (correct code never renames here).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Cached(), std::set<int>{});
  EXPECT_EQ(layout.TempBytes().value(), bytes_[Uri(0)].size());  // still in tmp/, whole
  space->reset();
  reader.join();
  EXPECT_EQ(Cached(), std::set<int>{0});
}

TEST_F(ShardCacheTest, ConcurrentAcquiresOfOneObjectDownloadItOnce) {
  auto cache = OpenCache(Options(Budget(4), /*threads=*/2));
  cache->Schedule({Request(0), Request(1)});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Result<CachedFile> file = cache->Acquire(Request(t % 2));
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      ExpectContent(*file);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(backend_->opens(Uri(0)), 1);
  EXPECT_EQ(backend_->opens(Uri(1)), 1);
  EXPECT_EQ(cache->Stats().downloads, 2u);
}

}  // namespace
}  // namespace stoker::cache

namespace stoker::cache {
namespace {

TEST_F(ShardCacheTest, DownloadsOfKnownSizeMakeNoHead) {
  storage::StorageMetrics metrics;
  auto memory = storage::NewMemoryBackend();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(storage::WriteAll(*memory, Uri(i), bytes_[Uri(i)]).ok());
  std::shared_ptr<storage::Backend> metered =
      storage::NewMeteringBackend(std::move(memory), &metrics);
  CacheOptions options = Options(Budget(4), /*threads=*/2);
  options.chunk_bytes = 4096;  // several parts per object
  auto cache = ShardCache::Open(options, metered);
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  (*cache)->Schedule({Request(1), Request(2)});
  for (int i = 0; i < 3; ++i) {
    Result<CachedFile> file = (*cache)->Acquire(Request(i));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ExpectContent(*file);
  }
  const storage::StorageMetricsSnapshot m = metrics.Snapshot();
  EXPECT_EQ(m.requests[static_cast<int>(storage::RequestKind::kHead)], 0u);
  EXPECT_EQ(m.requests[static_cast<int>(storage::RequestKind::kGet)], 3u * 3u);  // 3 parts each
}

TEST_F(ShardCacheTest, AWarmCacheWithLookAheadCountsEveryAcquireAsAHit) {
  std::vector<CacheRequest> all;
  for (int i = 0; i < 6; ++i) all.push_back(Request(i));
  {
    auto cold = OpenCache(Options(Budget(8)));
    for (const CacheRequest& r : all) ASSERT_TRUE(cold->Acquire(r).ok());
  }
  auto warm = OpenCache(Options(Budget(8), /*threads=*/4));
  warm->Schedule(all);
  for (const CacheRequest& r : all) {
    Result<CachedFile> file = warm->Acquire(r);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ExpectContent(*file);
  }
  const CacheStats stats = warm->Stats();
  EXPECT_EQ(stats.hits, 6u);
  EXPECT_EQ(stats.misses, 0u);
  EXPECT_EQ(stats.downloads, 0u);
  for (const CacheRequest& r : all) EXPECT_EQ(backend_->opens(r.uri), 1) << r.uri;
}

// Closing a cache does not wait for the rest of a look-ahead download: the part in flight ends,
// no further part starts, nothing is published and no temporary file is left.
TEST_F(ShardCacheTest, ClosingTheCacheCancelsALookAheadDownloadAfterItsPart) {
  CacheOptions options = Options(Budget(4), /*threads=*/1);
  options.chunk_bytes = 1000;  // ten parts
  options.part_threads = 1;
  auto cache = OpenCache(options);
  backend_->Block(Uri(3));
  cache->Schedule({Request(3)});
  backend_->WaitBlocked();  // the first part is in flight
  // The part in flight returns only once the destructor has raised the flag (a late flag would
  // let the download finish and publish the object, which the checks below catch).
  backend_->UnblockWhenCancelled();
  std::thread closer([&] { cache.reset(); });
  closer.join();
  EXPECT_EQ(Cached(), std::set<int>{});
  EXPECT_TRUE(ListDirectory(dir_->Join("cache/tmp")).value().empty());
}

}  // namespace
}  // namespace stoker::cache
