#include "storage/concurrency_backend.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "storage/memory_backend.h"

namespace stoker::storage {
namespace {

TEST(ConcurrencyLimiterTest, HalvesOnThrottleAndClimbsBackOnSuccess) {
  ConcurrencyLimiter limiter({/*max_in_flight=*/16, /*min_in_flight=*/1});
  EXPECT_EQ(limiter.limit(), 16);
  for (int i = 0; i < 3; ++i) {
    limiter.Acquire();
    limiter.Release(/*throttled=*/true);
  }
  EXPECT_EQ(limiter.limit(), 2);
  for (int i = 0; i < 10; ++i) {
    limiter.Acquire();
    limiter.Release(true);
  }
  EXPECT_EQ(limiter.limit(), 1);  // never below the minimum
  double before = limiter.limit();
  for (int i = 0; i < 200; ++i) {
    limiter.Acquire();
    limiter.Release(false);
    EXPECT_GE(limiter.limit(), before);
    before = limiter.limit();
  }
  EXPECT_GT(limiter.limit(), 10);  // additive increase: ~sqrt(2 * successes)
  EXPECT_LE(limiter.limit(), 16);
}

TEST(ConcurrencyLimiterTest, ThrottleIsSlowDown503Or429Only) {
  EXPECT_TRUE(IsThrottle(Unavailable("GET s3://b/k: HTTP 503 SlowDown: Please reduce")));
  EXPECT_TRUE(IsThrottle(Unavailable("GET http://h/x: HTTP 429 Too Many Requests")));
  EXPECT_FALSE(IsThrottle(Unavailable("GET http://h/x: Connection refused")));
  EXPECT_FALSE(IsThrottle(Corruption("HTTP 503 SlowDown")));
  EXPECT_FALSE(IsThrottle(Status::OK()));
}

TEST(ConcurrencyLimiterTest, HostIsTheBucketOrTheAuthority) {
  EXPECT_EQ(HostOf("s3://bkt/a/b"), "s3://bkt");
  EXPECT_EQ(HostOf("https://cdn.example:8443/x/y"), "https://cdn.example:8443");
  EXPECT_EQ(HostOf("/local/file"), "");
}

// Counts how many Stat calls overlap.
class Overlap final : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;
  Result<ObjectInfo> Stat(const std::string& uri) const override {
    const int now = ++in_flight;
    int seen = max_seen.load();
    while (now > seen && !max_seen.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --in_flight;
    return ObjectInfo{uri, 0, ""};
  }
  mutable std::atomic<int> in_flight{0};
  mutable std::atomic<int> max_seen{0};
};

TEST(ConcurrencyBackendTest, NeverMoreInFlightThanTheBound) {
  auto inner = std::make_unique<Overlap>(NewMemoryBackend());
  Overlap* overlap = inner.get();
  auto backend = NewConcurrencyBackend(std::move(inner), {/*max_in_flight=*/3, 1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 12; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) EXPECT_TRUE(backend->Stat("s3://bkt/k").ok());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(overlap->max_seen.load(), 3);
  EXPECT_GE(overlap->max_seen.load(), 1);
}

}  // namespace
}  // namespace stoker::storage
