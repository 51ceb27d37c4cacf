#include "common/option_table.h"

#include <gtest/gtest.h>

#include "stoker/error_policy.h"

namespace stoker {
namespace {

struct BaseOptionsForTest {
  uint32_t count = 4;
};
struct OptionsForTest : BaseOptionsForTest {
  bool flag = false;
  int level = -1;
  std::string name = "x";
  ErrorPolicy policy = ErrorPolicy::kFail;
};

OptionTable<OptionsForTest> TableForTest() {
  using O = OptionsForTest;
  OptionTable<BaseOptionsForTest> base;
  base.push_back(WholeOption<BaseOptionsForTest>("count", "how many", &BaseOptionsForTest::count, 1)
                     .Cli("--count")
                     .InState());
  OptionTable<O> t = RebaseOptions<O>(base);
  t.push_back(BoolOption<O>("flag", "a flag", &O::flag).Cli("--flag"));
  t.push_back(WholeOption<O>("level", "signed", &O::level, -1).InState([](const O& o) {
    return o.flag;  // in a state only with the flag
  }));
  t.push_back(TextOption<O>("name", "text", &O::name).Py("label"));
  t.push_back(ChoiceOption<O>("policy", "fail | skip", &O::policy, {"fail", "skip"},
                              ErrorPolicyName, ParseErrorPolicy)
                  .Cli("--policy"));
  return t;
}

TEST(OptionTableTest, RowsReadAndWriteTheirFieldAsText) {
  const OptionTable<OptionsForTest> t = TableForTest();
  OptionsForTest o;
  EXPECT_EQ(FindOption(t, "count")->get(o), "4");  // a base's field, through RebaseOptions
  ASSERT_TRUE(FindOption(t, "count")->set(o, "7").ok());
  EXPECT_EQ(o.count, 7u);
  ASSERT_TRUE(FindOption(t, "flag")->set(o, "true").ok());
  EXPECT_TRUE(o.flag);
  ASSERT_TRUE(FindOption(t, "level")->set(o, "-1").ok());
  ASSERT_TRUE(FindOption(t, "policy")->set(o, "skip").ok());
  EXPECT_EQ(o.policy, ErrorPolicy::kSkip);
  EXPECT_EQ(FindOption(t, "policy")->get(o), "skip");
  EXPECT_EQ(FindOption(t, "name")->python_name(), "label");
  EXPECT_EQ(FindOption(t, "flag")->python_name(), "flag");
  EXPECT_EQ(FindOption(t, "count")->max, UINT32_MAX);
  EXPECT_EQ(FindOption(t, "nope"), nullptr);
}

TEST(OptionTableTest, BadTextNamesTheOptionAndLeavesTheField) {
  const OptionTable<OptionsForTest> t = TableForTest();
  OptionsForTest o;
  struct Bad {
    const char* option;
    const char* text;
    const char* message;
  };
  for (const Bad& b : {Bad{"count", "0", "count: must be a whole number >= 1"},
                       Bad{"count", "4294967296", "count: must be a whole number >= 1"},
                       Bad{"count", "-3", "got '-3'"}, Bad{"level", "-2", "level: must be"},
                       Bad{"flag", "yes", "flag: must be true or false, got 'yes'"},
                       Bad{"policy", "ignore", "on_error must be 'fail' or 'skip'"}}) {
    Status s = FindOption(t, b.option)->set(o, b.text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << b.option << " " << b.text;
    EXPECT_NE(s.message().find(b.message), std::string::npos) << s.message();
  }
  EXPECT_EQ(o.count, 4u);
  EXPECT_EQ(o.level, -1);
  EXPECT_FALSE(o.flag);
}

TEST(OptionTableTest, DescribesAsACommandLine) {
  const OptionTable<OptionsForTest> t = TableForTest();
  OptionsForTest o;
  o.policy = ErrorPolicy::kSkip;
  // Rows without a CLI spelling are left out.
  EXPECT_EQ(DescribeOptions(t, o, {"count", "level", "policy"}), " --count 4 --policy skip");
}

TEST(ErrorPolicyTest, OneReadingOfItsNames) {
  for (ErrorPolicy p : {ErrorPolicy::kFail, ErrorPolicy::kSkip}) {
    EXPECT_EQ(*ParseErrorPolicy(ErrorPolicyName(p)), p);
  }
  EXPECT_EQ(ParseErrorPolicy("Skip").status().message(),
            "on_error must be 'fail' or 'skip', not 'Skip'");
}

TEST(OptionTableTest, OptionsTextWalksTheRowsInTheState) {
  const OptionTable<OptionsForTest> t = TableForTest();
  OptionsForTest o;
  EXPECT_EQ(OptionsText(t, o), "count=4");  // a base's row keeps its InState through RebaseOptions
  o.flag = true;
  o.level = 3;
  EXPECT_EQ(OptionsText(t, o), "count=4 level=3");  // `level` is in the state while the flag is
  // Named rows, in the order given, whether or not in the state; unknown names left out.
  EXPECT_EQ(OptionsText(t, o, {"policy", "name", "nope", "count"}), "policy=fail name=x count=4");
}

}  // namespace
}  // namespace stoker
