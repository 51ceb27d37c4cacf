#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/cancel.h"
#include "storage/concurrency_backend.h"
#include "storage/memory_backend.h"

namespace stoker::storage {
namespace {

TEST(ConcurrencyLimiterTest, HalvesOnThrottleAndClimbsBackOnSuccess) {
  ConcurrencyLimiter limiter({/*max_in_flight=*/16, /*min_in_flight=*/1});
  EXPECT_EQ(limiter.limit(), 16);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(limiter.Acquire().ok());
    limiter.Release(/*throttled=*/true);
  }
  EXPECT_EQ(limiter.limit(), 2);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(limiter.Acquire().ok());
    limiter.Release(true);
  }
  EXPECT_EQ(limiter.limit(), 1);  // never below the minimum
  double before = limiter.limit();
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(limiter.Acquire().ok());
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

TEST(ConcurrencyLimiterTest, CancellingAThreadThatWaitsForASlotEndsItsWait) {
  ConcurrencyLimiter limiter({/*max_in_flight=*/1, 1});
  ASSERT_TRUE(limiter.Acquire().ok());  // the one slot, held
  std::atomic<bool> stop{false};
  Status waited;
  std::thread waiter([&] {
    const CancelScope scope(&stop);
    waited = limiter.Acquire();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // most likely waiting by now
  stop = true;
  waiter.join();
  EXPECT_EQ(waited.code(), StatusCode::kCancelled) << waited.ToString();
  EXPECT_EQ(limiter.in_flight(), 1u);  // the cancelled wait took nothing
  limiter.Release(false);
  EXPECT_EQ(limiter.in_flight(), 0u);
  ASSERT_TRUE(limiter.Acquire().ok());
}

TEST(ConcurrencyLimiterTest, AWaiterWithAScopeTakesTheSlotWhenItIsReleased) {
  ConcurrencyLimiter limiter({/*max_in_flight=*/1, 1});
  ASSERT_TRUE(limiter.Acquire().ok());
  std::atomic<bool> stop{false};
  Status waited = Internal("not run");
  std::thread waiter([&] {
    const CancelScope scope(&stop);
    waited = limiter.Acquire();
  });
  limiter.Release(false);
  waiter.join();
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_EQ(limiter.in_flight(), 1u);
}

// Holds every Stat in the inner backend until released, counting the calls that got there.
class Gate final : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;
  Result<ObjectInfo> Stat(const std::string& uri) const override {
    std::unique_lock<std::mutex> lock(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    return ObjectInfo{uri, 0, ""};
  }
  void WaitEntered(int n) const {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_ >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int entered() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entered_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable int entered_ = 0;
  bool open_ = false;
};

// A request stuck behind a full host is cancelled without being sent; the request that held the
// slot finishes, and the slot is free again afterwards.
TEST(ConcurrencyBackendTest, ARequestWaitingForAFullHostIsCancelledUnsent) {
  auto inner = std::make_unique<Gate>(NewMemoryBackend());
  Gate* gate = inner.get();
  auto backend = NewConcurrencyBackend(std::move(inner), {/*max_in_flight=*/1, 1});
  Status first;
  std::thread holder([&] { first = backend->Stat("s3://bkt/a").status(); });
  gate->WaitEntered(1);
  std::atomic<bool> stop{false};
  Status second;
  std::thread waiter([&] {
    const CancelScope scope(&stop);
    second = backend->Stat("s3://bkt/b").status();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop = true;
  waiter.join();
  EXPECT_EQ(second.code(), StatusCode::kCancelled) << second.ToString();
  EXPECT_NE(second.message().find("s3://bkt/b"), std::string::npos) << second.ToString();
  EXPECT_EQ(gate->entered(), 1);  // never sent
  gate->Open();
  holder.join();
  EXPECT_TRUE(first.ok()) << first.ToString();
  EXPECT_TRUE(backend->Stat("s3://bkt/c").ok());
  EXPECT_EQ(gate->entered(), 2);
}

}  // namespace
}  // namespace stoker::storage
