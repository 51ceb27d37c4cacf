#include "storage/window_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace stoker::storage {
namespace {

// Counts the reads that reach it; the first `fail_first` of them fail.
class CountingSource final : public ByteSourceWrapper {
 public:
  CountingSource(std::string bytes, int fail_first)
      : ByteSourceWrapper(MemorySource("mem://w", std::move(bytes))), fail_(fail_first) {}
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    ++(*reads);
    if (fail_-- > 0) return Unavailable("mem://w: injected");
    return inner().ReadAt(offset, n, out);
  }
  std::shared_ptr<std::atomic<int>> reads = std::make_shared<std::atomic<int>>(0);

 private:
  mutable std::atomic<int> fail_;
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 13 + i / 257);
  return s;
}

TEST(WindowSourceTest, SmallForwardReadsFetchEachPartOnce) {
  const std::string data = Pattern(1000);
  auto counting = std::make_unique<CountingSource>(data, 0);
  auto reads = counting->reads;
  auto source = NewWindowSource(std::move(counting), 64, 2);
  std::string got;
  for (uint64_t off = 0; off < 1000; off += 10) {
    char buf[10];
    auto n = source->ReadAt(off, sizeof(buf), buf);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    got.append(buf, *n);
  }
  EXPECT_EQ(got, data);
  EXPECT_EQ(reads->load(), 16);  // ceil(1000 / 64): one fetch a part, reader and fetcher together
  char c;
  EXPECT_EQ(*source->ReadAt(1000, 1, &c), 0u);
}

TEST(WindowSourceTest, KeepsABoundedWindowAndRefetchesWhatItDropped) {
  const std::string data = Pattern(640);
  auto counting = std::make_unique<CountingSource>(data, 0);
  auto reads = counting->reads;
  auto source = NewWindowSource(std::move(counting), 64, 2);
  std::string all(640, '\0');
  ASSERT_EQ(*source->ReadAt(0, 640, all.data()), 640u);
  EXPECT_EQ(all, data);
  const int after_scan = reads->load();
  EXPECT_GE(after_scan, 10);
  char buf[8];
  ASSERT_EQ(*source->ReadAt(3, 8, buf), 8u);  // part 0 fell out of the window
  EXPECT_EQ(std::string(buf, 8), data.substr(3, 8));
  EXPECT_GT(reads->load(), after_scan);
}

TEST(WindowSourceTest, AFailedFetchIsTheReadsErrorAndIsNotKept) {
  // One part: no fetcher runs ahead, so the failing read is the reader's own.
  const std::string data = Pattern(100);
  auto source = NewWindowSource(std::make_unique<CountingSource>(data, 1), 100, 2);
  char buf[50];
  auto first = source->ReadAt(0, sizeof(buf), buf);
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.status().message().find("mem://w"), std::string::npos);
  auto second = source->ReadAt(0, sizeof(buf), buf);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(std::string(buf, 50), data.substr(0, 50));
}

TEST(WindowSourceTest, ConcurrentReadersAnywhereGetTheRightBytes) {
  const std::string data = Pattern(5000);
  auto source = NewWindowSource(std::make_unique<CountingSource>(data, 0), 128, 3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 200; ++i) {
        const uint64_t off = rng() % 5000;
        char buf[300];
        auto n = source->ReadAt(off, sizeof(buf), buf);
        ASSERT_TRUE(n.ok());
        ASSERT_EQ(std::string(buf, *n), data.substr(off, *n));
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST(WindowSourceTest, DestroyedWhileTheFetcherRunsAhead) {
  const std::string data = Pattern(100000);
  for (int round = 0; round < 20; ++round) {
    auto source = NewWindowSource(std::make_unique<CountingSource>(data, 0), 1000, 2);
    char c;
    ASSERT_EQ(*source->ReadAt(static_cast<uint64_t>(round) * 1000, 1, &c), 1u);
  }
}

}  // namespace
}  // namespace stoker::storage
