#include "format/shard_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/temp_dir.h"
#include "format/megatron_source.h"
#include "format/megatron_writer.h"

namespace stoker {
namespace {

// Shards of one document each; shard s holds the tokens [s, s + 1, s + 2].
class ShardPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    for (int s = 0; s < kShards; ++s) {
      auto w = MegatronWriter::Create(Prefix(s), TokenDType::kInt32);
      ASSERT_TRUE(w.ok());
      std::vector<int32_t> tokens = {s, s + 1, s + 2};
      ASSERT_TRUE((*w)->AddDocument(tokens).ok());
      ASSERT_TRUE((*w)->Finish().ok());
    }
  }
  std::string Prefix(int s) const { return dir_->Join("s" + std::to_string(s)); }
  ShardPool::Opener Opener() {
    return [this](uint64_t s) -> Result<ShardPool::Shard> {
      ++opens_;
      if (s == fail_shard_) return Unavailable("cannot map shard " + std::to_string(s));
      STOKER_ASSIGN_OR_RETURN(auto shard, MegatronSource::Open(Prefix(static_cast<int>(s)),
                                                               MegatronIndex::Checks::kFull));
      return ShardPool::Shard(std::move(shard));
    };
  }
  static int32_t FirstToken(const TokenSource& shard) {
    int32_t t = -1;
    EXPECT_TRUE(shard.Read(0, 0, 1, &t).ok());
    return t;
  }

  static constexpr int kShards = 12;
  std::unique_ptr<TempDir> dir_;
  std::atomic<int> opens_{0};
  uint64_t fail_shard_ = ~uint64_t{0};
};

TEST_F(ShardPoolTest, KeepsAtMostItsCapacityMapped) {
  ShardPool pool(kShards, 3, Opener());
  for (int s = 0; s < kShards; ++s) {
    auto shard = pool.Acquire(s);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    EXPECT_EQ(FirstToken(**shard), s);
  }
  ShardPool::Counters c = pool.counters();
  EXPECT_EQ(c.mapped, 3u);
  EXPECT_EQ(c.opened, 12u);
  EXPECT_EQ(c.unmapped, 9u);
  ASSERT_TRUE(pool.Acquire(11).ok());  // still mapped: no new open
  EXPECT_EQ(opens_.load(), 12);
  ASSERT_TRUE(pool.Acquire(0).ok());  // let go long ago: mapped again
  EXPECT_EQ(opens_.load(), 13);
}

TEST_F(ShardPoolTest, TheLeastRecentlyUsedShardIsLetGo) {
  ShardPool pool(kShards, 2, Opener());
  ASSERT_TRUE(pool.Acquire(0).ok());
  ASSERT_TRUE(pool.Acquire(1).ok());
  ASSERT_TRUE(pool.Acquire(0).ok());  // 0 is now more recent than 1
  ASSERT_TRUE(pool.Acquire(2).ok());  // lets 1 go
  EXPECT_EQ(opens_.load(), 3);
  ASSERT_TRUE(pool.Acquire(0).ok());
  EXPECT_EQ(opens_.load(), 3);
  ASSERT_TRUE(pool.Acquire(1).ok());
  EXPECT_EQ(opens_.load(), 4);
}

TEST_F(ShardPoolTest, AHeldShardStaysReadableAfterThePoolLetsItGo) {
  ShardPool pool(kShards, 1, Opener());
  auto held = pool.Acquire(5);
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(pool.Acquire(6).ok());
  ASSERT_TRUE(pool.Acquire(7).ok());
  EXPECT_EQ(pool.counters().unmapped, 2u);
  EXPECT_EQ(FirstToken(**held), 5);
}

TEST_F(ShardPoolTest, OfferedShardsAreKeptOnlyWhileThereIsRoom) {
  ShardPool pool(kShards, 2, Opener());
  for (int s = 0; s < 4; ++s) {
    auto shard = MegatronSource::Open(Prefix(s), MegatronIndex::Checks::kFull);
    ASSERT_TRUE(shard.ok());
    pool.Offer(s, ShardPool::Shard(std::move(*shard)));
  }
  EXPECT_EQ(pool.counters().mapped, 2u);
  ASSERT_TRUE(pool.Acquire(1).ok());
  EXPECT_EQ(opens_.load(), 0);
  ASSERT_TRUE(pool.Acquire(2).ok());
  EXPECT_EQ(opens_.load(), 1);
}

TEST_F(ShardPoolTest, APoolHoldingEveryShardHandsOutOpenShardsWithoutAcquire) {
  ShardPool pool(kShards, kShards, Opener());
  EXPECT_EQ(pool.Kept(4), nullptr);  // not open yet: Acquire opens it
  auto shard = pool.Acquire(4);
  ASSERT_TRUE(shard.ok());
  ASSERT_EQ(pool.Kept(4), shard->get());
  EXPECT_EQ(FirstToken(*pool.Kept(4)), 4);
  pool.Offer(7, *Opener()(7));
  ASSERT_NE(pool.Kept(7), nullptr);
  EXPECT_EQ(FirstToken(*pool.Kept(7)), 7);
  // Opening every other shard unmaps none of them, so what Kept gave stays valid.
  for (int s = 0; s < kShards; ++s) ASSERT_TRUE(pool.Acquire(s).ok());
  EXPECT_EQ(pool.counters().unmapped, 0u);
  EXPECT_EQ(FirstToken(*pool.Kept(4)), 4);
}

TEST_F(ShardPoolTest, APoolThatUnmapsHandsOutNothingWithoutAcquire) {
  ShardPool pool(kShards, kShards - 1, Opener());
  auto shard = pool.Acquire(4);
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(pool.Kept(4), nullptr);
}

TEST_F(ShardPoolTest, AFailedMapIsReturnedAndNotKept) {
  ShardPool pool(kShards, 2, Opener());
  fail_shard_ = 4;
  auto bad = pool.Acquire(4);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(pool.counters().mapped, 0u);
  fail_shard_ = ~uint64_t{0};
  auto good = pool.Acquire(4);  // tried again on the next read
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(FirstToken(**good), 4);
}

TEST_F(ShardPoolTest, ManyReadersGetTheirOwnShards) {
  ShardPool pool(kShards, 3, Opener());
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 8; ++r) {
    readers.emplace_back([&, r] {
      for (int i = 0; i < 500; ++i) {
        int s = (i * 5 + r) % kShards;
        auto shard = pool.Acquire(s);
        if (!shard.ok() || FirstToken(**shard) != s) ++wrong;
      }
    });
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(pool.counters().mapped, 3u);
}

// Regression: two readers of a shard not yet open each opened it (for a remote shard, a second
// download of its index and parts). The open lasts until the seven other readers wait for it, or
// (the bug) until all eight have started an open of their own.
TEST_F(ShardPoolTest, ReadersOfAShardBeingOpenedWaitForTheOneOpen) {
  std::atomic<int> started{0};
  ShardPool* pool_seen = nullptr;
  ShardPool pool(kShards, 4, [&](uint64_t s) -> Result<ShardPool::Shard> {
    ++started;
    while (pool_seen->counters().waited < 7 && started.load() < 8) std::this_thread::yield();
    return Opener()(s);
  });
  pool_seen = &pool;
  std::vector<std::thread> readers;
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&] {
      auto shard = pool.Acquire(5);
      ASSERT_TRUE(shard.ok());
      EXPECT_EQ(FirstToken(**shard), 5);
    });
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(pool.counters().opened, 1u);
  EXPECT_EQ(pool.counters().waited, 7u);
}

}  // namespace
}  // namespace stoker
