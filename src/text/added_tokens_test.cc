// AddedTokens: leftmost-longest matches, and lstrip / rstrip taking Unicode whitespace (tokenizers'
// added-token options) into the match.
#include "text/added_tokens.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace stoker
