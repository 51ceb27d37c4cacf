// AddedTokens: leftmost-longest matches, and lstrip / rstrip taking Unicode whitespace (tokenizers'
// added-token options) into the match.
#include "text/added_tokens.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stoker {
namespace {

struct Found {
  size_t pos, len;
  int32_t id;
  bool operator==(const Found&) const = default;
};

Found Find(const AddedTokens& t, std::string_view text, size_t from = 0) {
  AddedTokens::Match m = t.Find(text, from);
  return {m.pos, m.len, m.id};
}

TEST(AddedTokensTest, LeftmostLongest) {
  AddedTokens t({{"<a>", 1}, {"<a><b>", 2}, {"<b>", 3}});
  EXPECT_EQ(Find(t, "x<b><a><b>"), (Found{1, 3, 3}));
  EXPECT_EQ(Find(t, "x<b><a><b>", 4), (Found{4, 6, 2}));
  EXPECT_EQ(Find(t, "none").pos, std::string_view::npos);
}

TEST(AddedTokensTest, RstripTakesTheWhitespaceAfterTheToken) {
  AddedTokens t({{"<|end|>", 7, false, true}, {"<|plain|>", 8}});
  EXPECT_EQ(Find(t, "a<|end|>  \n\tb"), (Found{1, 7 + 4, 7}));
  EXPECT_EQ(Find(t, "a<|end|>"), (Found{1, 7, 7}));
  EXPECT_EQ(Find(t, "<|end|>   "), (Found{0, 10, 7}));  // to the end of the text
  // Unicode White_Space: U+3000 and U+00A0 are, U+200B (zero width space) is not.
  EXPECT_EQ(Find(t, "<|end|>\u3000\u00a0\u200bx"), (Found{0, 7 + 3 + 2, 7}));
  EXPECT_EQ(Find(t, "<|plain|>  x"), (Found{0, 9, 8}));  // no rstrip: the spaces stay text
}

TEST(AddedTokensTest, LstripTakesTheWhitespaceBeforeButNotBeforeFrom) {
  AddedTokens t({{"<u>", 5, true, false}});
  EXPECT_EQ(Find(t, "hi \u2003 <u>"), (Found{2, 1 + 3 + 1 + 3, 5}));
  EXPECT_EQ(Find(t, "  <u>", 1), (Found{1, 4, 5}));  // the previous match ended at 1
  EXPECT_EQ(Find(t, "<u>"), (Found{0, 3, 5}));
  EXPECT_EQ(Find(t, "x<u>"), (Found{1, 3, 5}));
}

// Tokens that all start with one byte are found by jumping between its occurrences (memchr);
// others byte by byte. Both give the leftmost-longest match a plain search gives.
TEST(AddedTokensTest, OneFirstByteOrManyFindTheLeftmostLongest) {
  const std::vector<std::vector<AddedTokens::Token>> sets = {
      {{"<|im_start|>", 1}, {"<|im_end|>", 2}, {"<|im", 3}},
      {{"<s>", 1}, {"[INST]", 2}, {"[/INST]", 3}, {"</s>", 4}}};
  const std::vector<std::string> texts = {"",
                                          "<",
                                          "<|im",
                                          "a<|im_end|>b",
                                          "x<|im_start|>y<|im_end|>",
                                          "<<|im<|im_end|",
                                          "[INST] hi [/INST] ok</s><s>",
                                          "数据 <|im_start|> 🙂 [/INST",
                                          "no tokens at all here"};
  for (const auto& tokens : sets) {
    AddedTokens t(tokens);
    for (const std::string& text : texts) {
      for (size_t from = 0; from <= text.size(); ++from) {
        Found want{std::string_view::npos, 0, -1};
        for (size_t i = from; i < text.size() && want.id < 0; ++i) {
          for (const auto& tok : tokens) {
            if (text.compare(i, tok.content.size(), tok.content) == 0 &&
                (want.id < 0 || tok.content.size() > want.len)) {
              want = {i, tok.content.size(), tok.id};
            }
          }
        }
        Found got = Find(t, text, from);
        if (want.id < 0) {
          EXPECT_EQ(got.pos, std::string_view::npos) << text << " from " << from;
        } else {
          EXPECT_EQ(got, want) << text << " from " << from;
        }
      }
    }
  }
}

}  // namespace
}  // namespace stoker
