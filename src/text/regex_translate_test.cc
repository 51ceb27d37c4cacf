#include "text/regex_translate.h"

#include <gtest/gtest.h>

#include "text/regex_splitter.h"

namespace stoker {
namespace {

std::vector<std::string> Pieces(std::string_view pattern, RegexSplitter::Dialect d,
                                std::string_view text) {
  auto s = RegexSplitter::Compile(pattern, d, "test");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  std::vector<std::string> out;
  EXPECT_TRUE((*s)->Split(text, [&](std::string_view p) { out.emplace_back(p); }).ok());
  return out;
}

TEST(RegexTranslateTest, WhitespaceIncludesNextLine) {
  EXPECT_EQ(TranslateToPcre2(R"(\s+|[^\s\p{L}]|\S)", false),
            R"([\s\x{85}]+|[^\s\x{85}\p{L}]|[^\s\x{85}])");
  EXPECT_EQ(TranslateToPcre2(R"(\Q\s\E[\]\s])", false), R"(\Q\s\E[\]\s\x{85}])");
}

TEST(RegexTranslateTest, OnigurumaIntervalsAreNotPossessive) {
  EXPECT_EQ(TranslateToPcre2(R"(\p{N}{1,3}+)", true), R"((?:\p{N}{1,3})+)");
  EXPECT_EQ(TranslateToPcre2(R"([ab]{2}+|(xy){1,}+)", true), R"((?:[ab]{2})+|(?:(xy){1,})+)");
  EXPECT_EQ(TranslateToPcre2(R"(\p{N}{1,3}+)", false), R"(\p{N}{1,3}+)");
  EXPECT_EQ(TranslateToPcre2("a{x}+", true), "a{x}+");  // not an interval: literal braces
}

TEST(RegexSplitterTest, TiktokenDropsGapsOnigurumaKeepsThem) {
  EXPECT_EQ(Pieces("[a-z]+", RegexSplitter::Dialect::kTiktoken, "ab, cd"),
            (std::vector<std::string>{"ab", "cd"}));
  EXPECT_EQ(Pieces("[a-z]+", RegexSplitter::Dialect::kOniguruma, "ab, cd!"),
            (std::vector<std::string>{"ab", ", ", "cd", "!"}));
}

TEST(RegexSplitterTest, DollarIsEndOfTextForTiktokenEndOfLineForOniguruma) {
  EXPECT_EQ(Pieces(R"(\s+$|\S+|\s)", RegexSplitter::Dialect::kTiktoken, "a  \nb"),
            (std::vector<std::string>{"a", " ", " ", "\n", "b"}));
  EXPECT_EQ(Pieces(R"(\s+$|\S+|\s)", RegexSplitter::Dialect::kOniguruma, "a  \nb"),
            (std::vector<std::string>{"a", "  ", "\n", "b"}));
}

TEST(RegexSplitterTest, EmptyMatchesAreSkipped) {
  EXPECT_EQ(Pieces("x*", RegexSplitter::Dialect::kTiktoken, "axxb"),
            (std::vector<std::string>{"xx"}));
  EXPECT_EQ(Pieces("x*", RegexSplitter::Dialect::kOniguruma, "axxb"),
            (std::vector<std::string>{"a", "xx", "b"}));
}

TEST(RegexSplitterTest, BadPatternNamesOriginAndOffset) {
  auto s = RegexSplitter::Compile("(ab", RegexSplitter::Dialect::kTiktoken, "my.tiktoken");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("my.tiktoken"), std::string::npos);
  EXPECT_NE(s.status().message().find("offset"), std::string::npos);
}

TEST(RegexSplitterTest, LongWhitespaceRunWithLookahead) {
  std::string text(1 << 20, ' ');
  text += "x";
  auto pieces = Pieces(R"(\s+(?!\S)|\s+|\S)", RegexSplitter::Dialect::kTiktoken, text);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].size(), (1u << 20) - 1);
}

}  // namespace
}  // namespace stoker
