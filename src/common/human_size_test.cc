#include "common/human_size.h"

#include <gtest/gtest.h>

namespace stoker {
namespace {

TEST(HumanSizeTest, ParsesUnits) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("128MiB"), 128ull << 20);
  EXPECT_EQ(*ParseSize("128 mib"), 128ull << 20);
  EXPECT_EQ(*ParseSize("64k"), 65536u);
  EXPECT_EQ(*ParseSize("1.5GiB"), 3ull << 29);
  EXPECT_EQ(*ParseSize("100MB"), 100000000u);
  EXPECT_EQ(*ParseSize("2T"), 2ull << 40);
  EXPECT_EQ(*ParseSize("7b"), 7u);
}

TEST(HumanSizeTest, RejectsGarbage) {
  for (const char* bad : {"", "MiB", "12 parsecs", "-5", "1.5", "1e9", "99999999999999999999GiB"}) {
    auto r = ParseSize(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos);
  }
}

TEST(HumanSizeTest, Formats) {
  EXPECT_EQ(FormatSize(0), "0 B");
  EXPECT_EQ(FormatSize(1023), "1023 B");
  EXPECT_EQ(FormatSize(1536), "1.50 KiB");
  EXPECT_EQ(FormatSize(128ull << 20), "128 MiB");
  EXPECT_EQ(FormatSize(40ull << 30), "40.0 GiB");
  EXPECT_EQ(FormatRate(123456789), "123.5 MB/s");
  EXPECT_EQ(FormatDuration(7.4), "0:07");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
  EXPECT_EQ(*ParseSize(FormatSize(128ull << 20).substr(0, 3) + "MiB"), 128ull << 20);
}

}  // namespace
}  // namespace stoker
