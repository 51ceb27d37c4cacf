#include "chat/chat_align.h"

#include <gtest/gtest.h>

#include <vector>

namespace stoker {
namespace {

// A token of the text, an added token, and added ones that take the whitespace after or before.
AlignedToken T(std::string_view bytes) { return {bytes, {}}; }
AlignedToken Added(std::string_view bytes) { return {bytes, {.added = true}}; }
AlignedToken Rstrip(std::string_view bytes) { return {bytes, {.added = true, .rstrip = true}}; }
AlignedToken Lstrip(std::string_view bytes) { return {bytes, {.added = true, .lstrip = true}}; }

std::vector<TokenRange> Ranges(std::string_view text, const std::vector<AlignedToken>& tokens) {
  Result<std::vector<TokenRange>> r = AlignTokens(text, tokens);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<TokenRange>{};
}

TEST(AlignTokensTest, ByteLevelTokensAreTheirBytes) {
  EXPECT_EQ(Ranges("<|im_start|>user\nHi there",
                   {Added("<|im_start|>"), T("user"), T("\n"), T("Hi"), T(" there")}),
            (std::vector<TokenRange>{{0, 12}, {12, 16}, {16, 17}, {17, 19}, {19, 25}}));
}

TEST(AlignTokensTest, DummyPrefixAtTheStartAndAfterAnAddedToken) {
  // SentencePiece's "▁Hi" at the start of the text and after "<s>": the space is not in the text.
  EXPECT_EQ(Ranges("Hi<s>Yo you", {T(" Hi"), Added("<s>"), T(" Yo"), T(" you")}),
            (std::vector<TokenRange>{{0, 2}, {2, 5}, {5, 7}, {7, 11}}));
  // "▁" alone before a byte-fallback character covers no text.
  EXPECT_EQ(Ranges("\xf0\x9f\x98\x80", {T(" "), T("\xf0"), T("\x9f"), T("\x98"), T("\x80")}),
            (std::vector<TokenRange>{{0, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 4}}));
}

TEST(AlignTokensTest, WhitespaceTakenByAnAddedTokenIsItsOwn) {
  // Phi-3's "<|user|>" (rstrip) takes the newline and spaces after it; "<|end|>" the one at the
  // end.
  EXPECT_EQ(Ranges("<|user|>\n Hi<|end|>\n", {Rstrip("<|user|>"), T("Hi"), Rstrip("<|end|>")}),
            (std::vector<TokenRange>{{0, 10}, {10, 12}, {12, 20}}));
  // An lstrip token takes the whitespace before it (U+3000 included, as tokenizers strips).
  EXPECT_EQ(Ranges("a \n\xe3\x80\x80<mask>", {T("a"), Lstrip("<mask>")}),
            (std::vector<TokenRange>{{0, 1}, {1, 12}}));
  // Without rstrip the whitespace is text: "▁" then "<0x0A>" after Llama 2's "<end_of_turn>".
  EXPECT_EQ(Ranges("<eot>\n<sot>", {Added("<eot>"), T(" "), T("\n"), Added("<sot>")}),
            (std::vector<TokenRange>{{0, 5}, {5, 5}, {5, 6}, {6, 11}}));
}

TEST(AlignTokensTest, ADummyPrefixIsTakenWhereTheNextTokenFollows) {
  // " x" after an added token: "▁" is a dummy prefix when "▁x" follows, a space when "x" does.
  EXPECT_EQ(Ranges("<s> x", {Added("<s>"), T(" "), T(" x")}),
            (std::vector<TokenRange>{{0, 3}, {3, 3}, {3, 5}}));
  EXPECT_EQ(Ranges("<s> x", {Added("<s>"), T(" "), T("x")}),
            (std::vector<TokenRange>{{0, 3}, {3, 4}, {4, 5}}));
}

TEST(AlignTokensTest, RefusesWhatTheTokenizerDoesNotDo) {
  // A missing space in the middle of a text run is not a dummy prefix.
  EXPECT_EQ(AlignTokens("ab", std::vector<AlignedToken>{T("a"), T(" b")}).status().code(),
            StatusCode::kUnimplemented);
  // Whitespace vanishes only beside an added token that strips it.
  EXPECT_FALSE(AlignTokens("a b", std::vector<AlignedToken>{T("a"), T("b")}).ok());
  EXPECT_FALSE(AlignTokens("<s> b", std::vector<AlignedToken>{Added("<s>"), T("b")}).ok());
  // A lone byte-fallback byte is named in hex: the message stays UTF-8.
  EXPECT_EQ(AlignTokens("a", std::vector<AlignedToken>{T("\xf0")}).status().message(),
            "the tokens of a chat cannot be aligned with its text: token 0 (\"\\xf0\") is not at "
            "byte 0 (\"a\")");
  // A token's bytes must be the text's (U+FFFD from a decoded lone byte is not).
  EXPECT_FALSE(AlignTokens("\xe4\xbd\xa0", std::vector<AlignedToken>{T("\xef\xbf\xbd")}).ok());
  // Every byte of the text has a token.
  EXPECT_FALSE(AlignTokens("abc", std::vector<AlignedToken>{T("ab")}).ok());
  EXPECT_FALSE(AlignTokens("ab", std::vector<AlignedToken>{T("abc")}).ok());
}

}  // namespace
}  // namespace stoker
