#include "common/env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace stoker {
namespace {

constexpr const char* kName = "STOKER_ENV_TEST_NUMBER";

TEST(EnvNumber, UnsetAndEmptyAreNothing) {
  ::unsetenv(kName);
  auto unset = EnvNumber(kName);
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->has_value());
  ::setenv(kName, "", 1);
  auto empty = EnvNumber(kName);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
  ::unsetenv(kName);
}

TEST(EnvNumber, ReadsADecimalAndRefusesTheRestNamingIt) {
  ::setenv(kName, "18446744073709551615", 1);
  auto big = EnvNumber(kName);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(**big, UINT64_MAX);
  for (const char* bad : {"-1", "12x", "lots", " 3", "18446744073709551616"}) {
    ::setenv(kName, bad, 1);
    auto r = EnvNumber(kName);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string(kName) + "='" + bad + "'"), std::string::npos)
        << r.status().message();
  }
  ::unsetenv(kName);
}

TEST(ThreadsPerRank, SharesTheCoresOfANodeBetweenItsRanks) {
  EXPECT_EQ(ThreadsPerRank(64, 1), 64);
  EXPECT_EQ(ThreadsPerRank(64, 8), 8);
  EXPECT_EQ(ThreadsPerRank(6, 4), 1);   // rounded down
  EXPECT_EQ(ThreadsPerRank(4, 16), 1);  // more ranks than cores: still one thread each
  EXPECT_EQ(ThreadsPerRank(0, 0), 1);   // unknown hardware, no ranks
}

TEST(ThreadsPerRank, DefaultReadsLocalWorldSize) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ::setenv("LOCAL_WORLD_SIZE", "2", 1);
  EXPECT_EQ(DefaultThreadsPerRank(), std::max(1, cores / 2));
  ::setenv("LOCAL_WORLD_SIZE", "not a number", 1);  // ignored, as torchrun never writes it
  EXPECT_EQ(DefaultThreadsPerRank(), cores);
  ::unsetenv("LOCAL_WORLD_SIZE");
  EXPECT_EQ(DefaultThreadsPerRank(), cores);
}

}  // namespace
}  // namespace stoker
