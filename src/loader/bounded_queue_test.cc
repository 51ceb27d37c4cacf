#include "loader/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace stoker::loader {
namespace {

TEST(LoaderQueueTest, KeepsFifoOrderAndCapacity) {
  BoundedQueue<int> q(3);
  EXPECT_TRUE(q.Push(1));
  EXPECT_TRUE(q.Push(2));
  EXPECT_TRUE(q.Push(3));
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_EQ(q.TryPop(), 2);
  EXPECT_EQ(q.Pop(), 3);
  EXPECT_EQ(q.TryPop(), std::nullopt);
}

TEST(LoaderQueueTest, ProducerBlocksWhenFullUntilConsumerPops) {
  BoundedQueue<int> q(2);
  constexpr int kItems = 1000;
  std::thread producer([&] {
    for (int i = 0; i < kItems; ++i) ASSERT_TRUE(q.Push(i));
  });
  for (int i = 0; i < kItems; ++i) {
    std::optional<int> v = q.Pop();
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(*v, i);
    EXPECT_LE(q.size(), 2u);
  }
  producer.join();
}

TEST(LoaderQueueTest, CancelWakesEveryBlockedPopAndPush) {
  BoundedQueue<int> empty(1);
  BoundedQueue<int> full(1);
  ASSERT_TRUE(full.Push(7));
  std::atomic<int> woken{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      EXPECT_EQ(empty.Pop(), std::nullopt);
      ++woken;
    });
    threads.emplace_back([&] {
      EXPECT_FALSE(full.Push(8));
      ++woken;
    });
  }
  empty.Cancel();
  full.Cancel();
  for (auto& t : threads) t.join();
  EXPECT_EQ(woken.load(), 8);
  EXPECT_TRUE(empty.cancelled());
  EXPECT_FALSE(empty.Push(1));
}

TEST(LoaderQueueTest, ResetAcceptsItemsAgain) {
  BoundedQueue<int> q(2);
  ASSERT_TRUE(q.Push(1));
  q.Cancel();
  q.Reset();
  EXPECT_EQ(q.size(), 0u);
  EXPECT_TRUE(q.Push(5));
  EXPECT_EQ(q.Pop(), 5);
}

}  // namespace
}  // namespace stoker::loader
