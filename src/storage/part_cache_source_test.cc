#include "storage/part_cache_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/cancel.h"
#include "storage/cancel_testing.h"

namespace stoker::storage {
namespace {

// Counts the reads that reach it (in `reads`, which outlives it); the first `fail_first` of them
// fail.
class CountingSource final : public ByteSourceWrapper {
 public:
  // The reads so far; a test waits for a number of them.
  class Reads {
   public:
    int load() const {
      std::lock_guard<std::mutex> l(mu_);
      return n_;
    }
    void Add() {
      std::lock_guard<std::mutex> l(mu_);
      ++n_;
      cv_.notify_all();
    }
    // Until `n` reads have reached the source; false when that has not happened after a minute.
    bool WaitFor(int n) const {
      std::unique_lock<std::mutex> l(mu_);
      return cv_.wait_for(l, std::chrono::minutes(1), [&] { return n_ >= n; });
    }

   private:
    mutable std::mutex mu_;
    mutable std::condition_variable cv_;
    int n_ = 0;
  };

  CountingSource(std::string bytes, int fail_first)
      : ByteSourceWrapper(MemorySource("mem://x", std::move(bytes))), fail_(fail_first) {}
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    reads->Add();
    if (fail_-- > 0) return Unavailable("mem://x: injected");
    return inner().ReadAt(offset, n, out);
  }
  std::shared_ptr<Reads> reads = std::make_shared<Reads>();

 private:
  mutable std::atomic<int> fail_;
};

// Its reads block until Open() (a request stalled at the server); counts the reads that began.
class GatedSource final : public ByteSourceWrapper {
 public:
  explicit GatedSource(std::string bytes)
      : ByteSourceWrapper(MemorySource("mem://gated", std::move(bytes))) {}
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    std::unique_lock<std::mutex> l(gate_->mu);
    ++gate_->began;
    gate_->cv.notify_all();
    gate_->cv.wait(l, [&] { return gate_->open; });
    return inner().ReadAt(offset, n, out);
  }
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    int began = 0;
    bool open = false;
    bool WaitBegan(int n) {
      std::unique_lock<std::mutex> l(mu);
      return cv.wait_for(l, std::chrono::minutes(1), [&] { return began >= n; });
    }
    void Open() {
      std::lock_guard<std::mutex> l(mu);
      open = true;
      cv.notify_all();
    }
  };
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
};

// The threads of this process now.
size_t ThreadCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 + i / 251);
  return s;
}

TEST(PartCacheSourceTest, ManyReadersFetchEachPartOnce) {
  const std::string data = Pattern(1000);
  auto counting = std::make_unique<CountingSource>(data, 0);
  auto reads = counting->reads;
  auto source = NewPartCacheSource(std::move(counting), 64);
  EXPECT_EQ(source->size_bytes(), 1000u);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t off = t; off < 1000; off += 37) {
        char buf[100];
        auto got = source->ReadAt(off, sizeof(buf), buf);
        ASSERT_TRUE(got.ok());
        ASSERT_EQ(*got, std::min<size_t>(100, 1000 - off));
        ASSERT_EQ(std::string(buf, *got), data.substr(off, *got));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(reads->load(), 16);  // ceil(1000 / 64)
  char c;
  EXPECT_EQ(*source->ReadAt(1000, 1, &c), 0u);
}

TEST(PartCacheSourceTest, AFailedPartIsFetchedAgainByTheNextRead) {
  const std::string data = Pattern(200);
  auto counting = std::make_unique<CountingSource>(data, 1);
  auto source = NewPartCacheSource(std::move(counting), 64);
  char buf[10];
  EXPECT_EQ(source->ReadAt(70, 10, buf).status().code(), StatusCode::kUnavailable);
  auto got = source->ReadAt(70, 10, buf);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(std::string(buf, 10), data.substr(70, 10));
}

TEST(PartCacheSourceTest, FetchAheadFetchesEveryPartOnceAndStopsWhenDestroyed) {
  const std::string data = Pattern(64 * 20 + 5);
  auto counting = std::make_unique<CountingSource>(data, 0);
  auto reads = counting->reads;
  {
    // Nothing before the first read: no fetcher is even started (a thread that exited just
    // before may still be listed by the first count, hence <=).
    const size_t threads_before = ThreadCount();
    auto source = NewPartCacheSource(std::move(counting), 64, 3);
    EXPECT_LE(ThreadCount(), threads_before);
    EXPECT_EQ(reads->load(), 0);
    char first;
    ASSERT_TRUE(source->ReadAt(0, 1, &first).ok());
    ASSERT_TRUE(reads->WaitFor(21)) << "the fetchers never fetched every part";
    char buf[64 * 3];
    auto got = source->ReadAt(64 * 19, sizeof(buf), buf);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(std::string(buf, *got), data.substr(64 * 19));
    EXPECT_EQ(reads->load(), 21);
  }
  // A large source destroyed at once: its fetchers stop early, and nothing is left running.
  auto big = std::make_unique<CountingSource>(Pattern(64 * 1000), 0);
  auto big_reads = big->reads;
  {
    auto source = NewPartCacheSource(std::move(big), 64, 2);
    char c;
    ASSERT_TRUE(source->ReadAt(5, 1, &c).ok());
  }
  EXPECT_LE(big_reads->load(), 1000);
}

// Closing a loader cancels its workers' requests, but a worker may be waiting for a part that a
// fetch-ahead thread claimed and whose request is stalled: the wait must end with the worker's
// cancellation, not with that request (issue 11's close-while-stalled hang, seen in
// test_remote_cancel.py).
TEST(PartCacheSourceTest, AReaderWaitingForAnotherThreadsStalledFetchStopsWhenCancelled) {
  const std::string data = Pattern(64 * 4);
  auto gated = std::make_unique<GatedSource>(data);
  auto gate = gated->gate_;
  auto source = NewPartCacheSource(std::move(gated), 64, 1);
  // The first reader (or the fetcher it starts) claims part 0 and stalls in the request.
  std::thread first([&] {
    char c;
    auto got = source->ReadAt(0, 1, &c);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
  });
  ASSERT_TRUE(gate->WaitBegan(1)) << "part 0 was never requested";
  testing::CheckedCancel cancel;
  Status waiter_status;
  std::thread waiter([&] {
    const CancelScope scope(cancel.flag(), cancel.hook());
    char c;
    waiter_status = source->ReadAt(5, 1, &c).status();
  });
  ASSERT_TRUE(cancel.WaitChecks(1)) << "the second reader never waited for part 0";
  cancel.Cancel();
  waiter.join();  // before the stalled request ends: a hang here is the failure
  EXPECT_EQ(waiter_status.code(), StatusCode::kCancelled) << waiter_status.ToString();
  gate->Open();
  first.join();
  char c;
  ASSERT_TRUE(source->ReadAt(5, 1, &c).ok());
  EXPECT_EQ(c, data[5]);
}

}  // namespace
}  // namespace stoker::storage
