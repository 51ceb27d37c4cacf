#include "common/env.h"

#include <gtest/gtest.h>

#include <cstdlib>

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

}  // namespace
}  // namespace stoker
