#include "text/regex_splitter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace stoker {
namespace {

using Behavior = RegexSplitter::Behavior;

std::vector<std::string> Pieces(std::string_view pattern, Behavior behavior, bool invert,
                                std::string_view text) {
  auto s = RegexSplitter::Compile(pattern, RegexSplitter::Dialect::kOniguruma, "test", true,
                                  behavior, invert);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  std::vector<std::string> out;
  EXPECT_TRUE((*s)->Split(text, [&](std::string_view p) { out.emplace_back(p); }).ok());
  return out;
}

using V = std::vector<std::string>;

// The examples of tokenizers' SplitDelimiterBehavior documentation.
TEST(RegexSplitterBehaviorTest, MatchesTokenizersDocumentedExamples) {
  const std::string_view text = "the-final--countdown";
  EXPECT_EQ(Pieces("-", Behavior::kRemoved, false, text), (V{"the", "final", "countdown"}));
  EXPECT_EQ(Pieces("-", Behavior::kIsolated, false, text),
            (V{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(Pieces("-", Behavior::kMergedWithPrevious, false, text),
            (V{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(Pieces("-", Behavior::kMergedWithNext, false, text),
            (V{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(Pieces("-", Behavior::kContiguous, false, text),
            (V{"the", "-", "final", "--", "countdown"}));
}

TEST(RegexSplitterBehaviorTest, InvertSwapsMatchesAndTheTextBetween) {
  // OLMo 2: Removed + invert keeps only the matches (tiktoken's way).
  EXPECT_EQ(Pieces("[a-z]+", Behavior::kRemoved, true, "ab, cd!"), (V{"ab", "cd"}));
  EXPECT_EQ(Pieces("[a-z]+", Behavior::kRemoved, false, "ab, cd!"), (V{", ", "!"}));
  // Inverted, the text between matches is the delimiter that merges.
  EXPECT_EQ(Pieces("[a-z]+", Behavior::kMergedWithPrevious, true, "ab, cd!"), (V{"ab, ", "cd!"}));
  EXPECT_EQ(Pieces("[a-z]+", Behavior::kMergedWithNext, true, ", ab cd"), (V{", ab", " cd"}));
  // Adjacent matches are non-delimiters when inverted: Contiguous joins them.
  EXPECT_EQ(Pieces("[a-z]", Behavior::kContiguous, true, "ab-c"), (V{"ab", "-", "c"}));
}

// Every behavior but Removed keeps every byte, in order, with no empty piece.
TEST(RegexSplitterBehaviorTest, PiecesCoverTheTextOnRandomInput) {
  std::mt19937 rng(28);
  const std::string alphabet[] = {"a", "B", " ", "-", "--", "1", "\n", "\xe4\xb8\x80", "!"};
  for (int round = 0; round < 500; ++round) {
    std::string text;
    for (int i = rng() % 20; i > 0; --i) text += alphabet[rng() % std::size(alphabet)];
    for (Behavior b : {Behavior::kIsolated, Behavior::kMergedWithPrevious,
                       Behavior::kMergedWithNext, Behavior::kContiguous}) {
      for (bool invert : {false, true}) {
        std::string joined;
        for (const std::string& p : Pieces(R"(-+|\p{L}+|\s)", b, invert, text)) {
          ASSERT_FALSE(p.empty());
          joined += p;
        }
        ASSERT_EQ(joined, text);
      }
    }
  }
}

}  // namespace
}  // namespace stoker
