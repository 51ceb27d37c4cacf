#include "common/clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace stoker {
namespace {

TEST(ClockTest, ATestClockReplacesTheSteadyClockOnEveryThreadWhileInstalled) {
  ManualClock clock(5'000);
  {
    ScopedTestClock installed(&clock);
    EXPECT_EQ(SteadyNowNs(), 5'000);
    clock.AdvanceNs(250);
    int64_t seen = 0;
    std::thread other([&] { seen = SteadyNowNs(); });
    other.join();
    EXPECT_EQ(seen, 5'250);
  }
  // Removed: the steady clock again, which is far past 5,250 ns after boot.
  EXPECT_GT(SteadyNowNs(), 1'000'000);
}

}  // namespace
}  // namespace stoker
