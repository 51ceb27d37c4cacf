// BinLease: a kept lease serves reads from a mapping of the cached copy (views in place, no copy),
// never unmaps under a view, and lets go of the mapping and the pin when idle, so that the cache
// can evict the object and a later read maps it again.
#include "format/cached_bin_lease.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_testing.h"
#include "common/temp_dir.h"
#include "storage/memory_backend.h"

namespace stoker {
namespace {

using cache::testing::ObjectBytes;
using cache::testing::TestBackend;
using cache::testing::Xxh3Of;

constexpr size_t kObjectBytes = 20000;

class BinLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir::Create("stoker-bin-lease-test-").value();
    auto memory = storage::NewMemoryBackend();
    for (int i = 0; i < 2; ++i) {
      bytes_[i] = ObjectBytes(Uri(i), kObjectBytes);
      ASSERT_TRUE(storage::WriteAll(*memory, Uri(i), bytes_[i]).ok());
    }
    backend_ = std::make_shared<TestBackend>(std::move(memory));
  }

  static std::string Uri(int i) { return "s3://bucket/data/s" + std::to_string(i) + ".bin"; }
  cache::CacheRequest Request(int i) const { return {Uri(i), kObjectBytes, Xxh3Of(bytes_[i])}; }
  // A budget of `objects` objects.
  std::shared_ptr<cache::ShardCache> OpenCache(int objects) {
    cache::CacheOptions o;
    o.dir = dir_->Join("cache");
    o.budget_bytes = objects * (kObjectBytes + 8);
    o.download_threads = 0;
    o.poll_ms = 2;
    auto c = cache::ShardCache::Open(o, backend_);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : nullptr;
  }
  // The `n` bytes at `offset` through a view, and where the view was.
  static std::string View(const BinLease& lease, uint64_t offset, size_t n,
                          const uint8_t** where = nullptr) {
    std::string got;
    Status st = lease.ViewAt(offset, n, "test bytes", [&](const uint8_t* data) {
      got.assign(reinterpret_cast<const char*>(data), n);
      if (where != nullptr) *where = data;
      return Status::OK();
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return got;
  }

  std::unique_ptr<TempDir> dir_;
  std::string bytes_[2];
  std::shared_ptr<TestBackend> backend_;
};

// Views of a kept lease point into one mapping of the whole object (bytes `d` apart are `d` apart
// in memory): no copy per read. A copy (the fallback, into one per-thread buffer) would put both
// at the same address.
TEST_F(BinLeaseTest, AKeptLeaseViewsTheCachedCopyInPlace) {
  auto cache = OpenCache(4);
  ASSERT_NE(cache, nullptr);
  BinLease lease(cache, Request(0), /*keep=*/true);
  const uint8_t* first = nullptr;
  const uint8_t* second = nullptr;
  EXPECT_EQ(View(lease, 100, 50, &first), bytes_[0].substr(100, 50));
  EXPECT_EQ(View(lease, 7000, 300, &second), bytes_[0].substr(7000, 300));
  EXPECT_EQ(second - first, 7000 - 100);
  EXPECT_EQ(View(lease, kObjectBytes - 5, 5), bytes_[0].substr(kObjectBytes - 5));
  std::string copy(64, '\0');
  Result<size_t> got = lease.ReadAt(kObjectBytes - 10, 64, copy.data());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(copy.substr(0, *got), bytes_[0].substr(kObjectBytes - 10));
  EXPECT_EQ(backend_->opens(Uri(0)), 1);
  // Past the end: the truncation error, naming the object.
  Status past = lease.ViewAt(kObjectBytes - 5, 10, "tokens", [](const uint8_t*) {
    ADD_FAILURE() << "viewed past the end";
    return Status::OK();
  });
  EXPECT_EQ(past.code(), StatusCode::kCorruption);
  EXPECT_NE(past.message().find(Uri(0)), std::string::npos) << past.message();
  // A lease not kept copies (and pins within each read); the bytes are the same.
  BinLease unkept(cache, Request(1), /*keep=*/false);
  EXPECT_EQ(View(unkept, 100, 50), bytes_[1].substr(100, 50));
  EXPECT_EQ(View(unkept, 7000, 300), bytes_[1].substr(7000, 300));
}

// A view holds the mapping: ReleaseIfIdle refuses while one is in use, and lets go once it is
// done. The cache (a budget of one object) may then evict the object for another, and the next
// view downloads and maps it again.
TEST_F(BinLeaseTest, ReleaseWaitsForViewsAndTheCacheEvictsAfterIt) {
  auto cache = OpenCache(1);
  ASSERT_NE(cache, nullptr);
  BinLease lease(cache, Request(0), /*keep=*/true);
  std::mutex mu;
  std::condition_variable cv;
  bool inside = false, done = false;
  std::string seen;
  std::thread reader([&] {
    Status st = lease.ViewAt(1000, 2000, "test bytes", [&](const uint8_t* data) {
      {
        std::unique_lock<std::mutex> l(mu);
        inside = true;
        cv.notify_all();
        cv.wait(l, [&] { return done; });
      }
      seen.assign(reinterpret_cast<const char*>(data), 2000);  // after the release attempts
      return Status::OK();
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
  });
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return inside; });
  }
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(lease.ReleaseIfIdle(std::chrono::milliseconds(0)));
  {
    std::lock_guard<std::mutex> l(mu);
    done = true;
  }
  cv.notify_all();
  reader.join();
  EXPECT_EQ(seen, bytes_[0].substr(1000, 2000));
  EXPECT_TRUE(lease.ReleaseIfIdle(std::chrono::milliseconds(0)));
  EXPECT_FALSE(lease.ReleaseIfIdle(std::chrono::milliseconds(0)));  // nothing held
  {
    // The pin is gone: the other object takes the whole budget, evicting this one.
    Result<cache::CachedFile> other = cache->Acquire(Request(1));
    ASSERT_TRUE(other.ok()) << other.status().ToString();
  }
  EXPECT_EQ(View(lease, 1000, 2000), bytes_[0].substr(1000, 2000));
  EXPECT_EQ(backend_->opens(Uri(0)), 2);
}

// Readers viewing, copying and prefetching from several threads while the lease is released as
// often as it can be: every byte read is the object's (a view never outlives its mapping).
TEST_F(BinLeaseTest, ReadsRacingReleasesSeeTheObject) {
  auto cache = OpenCache(4);
  ASSERT_NE(cache, nullptr);
  BinLease lease(cache, Request(0), /*keep=*/true);
  std::atomic<bool> stop{false};
  std::atomic<int> releases{0};
  std::thread releaser([&] {
    while (!stop.load()) {
      if (lease.ReleaseIfIdle(std::chrono::milliseconds(0))) ++releases;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> readers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      std::string copy(512, '\0');
      // Until the lease was let go of (and so taken again) often enough, or 5 s have passed.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      for (int i = 0;
           i < 2000 || (releases.load() < 20 && std::chrono::steady_clock::now() < until); ++i) {
        const uint64_t offset = static_cast<uint64_t>(i * 37 + t * 1000) % (kObjectBytes - 512);
        Status st = lease.ViewAt(offset, 512, "test bytes", [&](const uint8_t* data) {
          if (bytes_[0].compare(offset, 512, reinterpret_cast<const char*>(data), 512) != 0) ++bad;
          return Status::OK();
        });
        if (!st.ok()) ++bad;
        Result<size_t> got = lease.ReadAt(offset, 512, copy.data());
        if (!got.ok() || *got != 512 || bytes_[0].compare(offset, 512, copy) != 0) ++bad;
        lease.Prefetch(offset, 512);  // a hint: never touches a mapping let go of
        std::this_thread::yield();    // a window for the releaser
      }
    });
  }
  for (std::thread& r : readers) r.join();
  stop = true;
  releaser.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GE(releases.load(), 20);
}

}  // namespace
}  // namespace stoker
