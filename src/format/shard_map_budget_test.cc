#include "format/shard_map_budget.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace stoker {
namespace {

uint64_t MaxMapCount() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  uint64_t n = 0;
  in >> n;
  return n;
}

TEST(MappedShardBudget, TheDefaultLeavesMapsToTheRestAndFitsATrillionTokens) {
  ::unsetenv("STOKER_MAX_MAPPED_SHARDS");
  auto budget = MappedShardReservation::Budget();
  ASSERT_TRUE(budget.ok()) << budget.status().ToString();
  const uint64_t cap = MaxMapCount();
  ASSERT_GT(cap, 0u);
  EXPECT_LE(2 * *budget + 16384, std::max<uint64_t>(cap, 2 * 16384));  // maps left for the rest
  if (cap >= 65530) {
    EXPECT_GE(*budget, 16000u);  // a 1 T-token uint16 corpus in 128 MiB shards stays mapped
  }
}

TEST(MappedShardBudget, ReservationsShareTheBudgetAndGiveItBack) {
  ::setenv("STOKER_MAX_MAPPED_SHARDS", "100", 1);
  {
    auto a = MappedShardReservation::Reserve(70);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->granted(), 70u);
    auto b = MappedShardReservation::Reserve(70);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->granted(), 30u);
    auto c = MappedShardReservation::Reserve(70);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->granted(), 12u);  // nothing left: the minimum share, an eighth of the budget
    auto small = MappedShardReservation::Reserve(3);
    ASSERT_TRUE(small.ok());
    EXPECT_EQ(small->granted(), 3u);  // never more than asked
    MappedShardReservation moved = std::move(*a);
    EXPECT_EQ(moved.granted(), 70u);
  }
  auto all = MappedShardReservation::Reserve(100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->granted(), 100u);
  ::unsetenv("STOKER_MAX_MAPPED_SHARDS");
}

TEST(MappedShardBudget, ABadValueIsRefused) {
  for (const char* bad : {"0", "-5", "12x", "lots"}) {
    ::setenv("STOKER_MAX_MAPPED_SHARDS", bad, 1);
    auto r = MappedShardReservation::Reserve(1);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
  ::unsetenv("STOKER_MAX_MAPPED_SHARDS");
}

}  // namespace
}  // namespace stoker
