#include "records/brace_expand.h"

#include <gtest/gtest.h>

namespace stoker {
namespace {

std::vector<std::string> Expand(std::string_view p) {
  auto r = ExpandBraces(p);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<std::string>{};
}

TEST(BraceExpandTest, ZeroPaddedRangesAndAlternatives) {
  auto names = Expand("shard-{000000..000009}.tar");
  ASSERT_EQ(names.size(), 10u);
  EXPECT_EQ(names[0], "shard-000000.tar");
  EXPECT_EQ(names[9], "shard-000009.tar");
  EXPECT_EQ(Expand("{07..10}"), (std::vector<std::string>{"07", "08", "09", "10"}));
  EXPECT_EQ(Expand("{3..1}"), (std::vector<std::string>{"3", "2", "1"}));
  EXPECT_EQ(Expand("{0..6..3}"), (std::vector<std::string>{"0", "3", "6"}));
  EXPECT_EQ(Expand("{a,b}{1,2}"), (std::vector<std::string>{"a1", "a2", "b1", "b2"}));
  EXPECT_EQ(Expand("x{a,{b,c}}"), (std::vector<std::string>{"xa", "xb", "xc"}));
  EXPECT_EQ(Expand("{a..c}"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Expand("{x}"), (std::vector<std::string>{"{x}"}));
  EXPECT_EQ(Expand("a\\{b,c\\}"), (std::vector<std::string>{"a{b,c}"}));
  EXPECT_EQ(Expand("a::b{1,2}"), (std::vector<std::string>{"a", "b1", "b2"}));
}

TEST(BraceExpandTest, UnbalancedAndHugeAreErrors) {
  EXPECT_EQ(ExpandBraces("a{b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ExpandBraces("a}b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ExpandBraces("{0..999999999}").status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasBracePattern("a{1,2}"));
  EXPECT_FALSE(HasBracePattern("a\\{1,2}"));
}

}  // namespace
}  // namespace stoker
