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
            StatusCode::kInvalidArgument);
  // Whitespace vanishes only beside an added token that strips it.
  EXPECT_FALSE(AlignTokens("a b", std::vector<AlignedToken>{T("a"), T("b")}).ok());
  EXPECT_FALSE(AlignTokens("<s> b", std::vector<AlignedToken>{Added("<s>"), T("b")}).ok());
  // The error is a conversation's, in plain words: no token offsets, no bytes of the text.
  EXPECT_EQ(AlignTokens("a", std::vector<AlignedToken>{T("\xf0")}).status().message(),
            "stoker cannot place the tokens of this conversation in its text (the tokenizer "
            "changes the text in a way stoker does not follow), so it cannot compute its loss "
            "mask");
  // A token's bytes must be the text's (U+FFFD from a decoded lone byte is not).
  EXPECT_FALSE(AlignTokens("\xe4\xbd\xa0", std::vector<AlignedToken>{T("\xef\xbf\xbd")}).ok());
  // Every byte of the text has a token.
  EXPECT_FALSE(AlignTokens("abc", std::vector<AlignedToken>{T("ab")}).ok());
  EXPECT_FALSE(AlignTokens("ab", std::vector<AlignedToken>{T("abc")}).ok());
}

// Gemma's tokenizer.json: its runs of "▁" are non-special added tokens that are model pieces too.
// Two spaces become "▁▁" under its Replace normalizer, which the model merges into that id.
AlignedToken Runs(std::string_view added, std::string_view piece) {
  return {added, {.added = true}, piece};
}

TEST(AlignTokensTest, WhitespaceStrippedOffARunBelongsToItsTokens) {
  // tokenizers' Strip (both ends) before Prepend("▁"): each run of text loses its whitespace
  // ends; it belongs to the token of text of its run ("▁Yo" takes " \n" and " \t").
  const StrippedEnds both{.left = true, .right = true};
  const std::vector<AlignedToken> tokens{T(" Hi"), Added("<s>"), T(" Yo"), Added("</s>")};
  auto r = AlignTokens("\t Hi<s> \nYo \t</s>\n", tokens, both);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<TokenRange>{{0, 4}, {4, 7}, {7, 13}, {13, 18}}));
  // A run of only whitespace between added tokens: the one before's, under either end.
  r = AlignTokens("<a>\n<b>", std::vector<AlignedToken>{Added("<a>"), Added("<b>")},
                  {.left = true});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<TokenRange>{{0, 4}, {4, 7}}));
  // An added token that is whitespace itself (Gemma's tabs) is not skipped as stripped.
  r = AlignTokens("a:\n\tb", std::vector<AlignedToken>{T("a"), T(":"), Added("\t"), T("b")}, both);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<TokenRange>{{0, 1}, {1, 3}, {3, 4}, {4, 5}}));
  // Typed "▁▁" that a Gemma added token matches on the raw text, with the spaces around it
  // stripped off the runs beside it: the literal is the added token, the other "▁" a space.
  r = AlignTokens("a \u2581\u2581 b\u2581",
                  std::vector<AlignedToken>{T("a"), Runs("\u2581\u2581", "  "), T("b"), T(" ")},
                  both);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<TokenRange>{{0, 2}, {2, 8}, {8, 10}, {10, 13}}));
  // A text of only whitespace has no tokens.
  r = AlignTokens(" \n", std::vector<AlignedToken>{}, {.right = true});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  // Only the ends the tokenizer strips, only at the edges of a run, and not without Strip.
  EXPECT_TRUE(AlignTokens("a \t", std::vector<AlignedToken>{T("a")}, {.right = true}).ok());
  EXPECT_FALSE(AlignTokens("a \t", std::vector<AlignedToken>{T("a")}, {.left = true}).ok());
  EXPECT_FALSE(AlignTokens("a \t", std::vector<AlignedToken>{T("a")}).ok());
  EXPECT_FALSE(
      AlignTokens("<s> b", std::vector<AlignedToken>{Added("<s>"), T("b")}, {.right = true}).ok());
  EXPECT_FALSE(AlignTokens("a b", std::vector<AlignedToken>{T("a"), T("b")}, both).ok());
  EXPECT_FALSE(AlignTokens(" \n", std::vector<AlignedToken>{}).ok());
}

TEST(AlignTokensTest, AnAddedTokenTheModelProducesIsItsPieceWhereItsTextIsNot) {
  // "a  b": "a", "▁▁" (two spaces), "b" (this was "token 1 (\"▁▁\") is not at byte 1").
  EXPECT_EQ(Ranges("a  b", {T("a"), Runs("\u2581\u2581", "  "), T("b")}),
            (std::vector<TokenRange>{{0, 1}, {1, 3}, {3, 4}}));
  // Indented code: "\n", "▁▁▁" (three spaces), " return".
  EXPECT_EQ(
      Ranges(":\n    return", {T(":"), T("\n"), Runs("\u2581\u2581\u2581", "   "), T(" return")}),
      (std::vector<TokenRange>{{0, 1}, {1, 2}, {2, 5}, {5, 12}}));
  // The literal "▁▁" in the text is the added token matched whole.
  EXPECT_EQ(Ranges("x\u2581\u2581", {T("x"), Runs("\u2581\u2581", "  ")}),
            (std::vector<TokenRange>{{0, 1}, {1, 7}}));
  // Neither reading: refused.
  EXPECT_FALSE(
      AlignTokens("a b", std::vector<AlignedToken>{T("a"), Runs("\u2581\u2581", "  "), T("b")})
          .ok());
}

TEST(AlignTokensTest, ComposedTokensCoverTheDecomposedText) {
  // Qwen2's NFC normalizer: "e" + U+0301 is encoded as "é" (U+00E9); the token covers both.
  EXPECT_EQ(Ranges("e\xcc\x81t\xc3\xa9", {T("\xc3\xa9t"), T("\xc3\xa9")}),
            (std::vector<TokenRange>{{0, 4}, {4, 6}}));
  // A byte-level token of part of the composed character covers all of it; the next one starts
  // where its character starts (tokenizers gives both the character's offsets).
  EXPECT_EQ(Ranges("<s>Ko\xcc\x88ln", {Added("<s>"), T("K"), T("\xc3"), T("\xb6ln")}),
            (std::vector<TokenRange>{{0, 3}, {3, 4}, {4, 7}, {4, 9}}));
  // Hangul jamo compose into one syllable (가: U+1100 U+1161 -> U+AC00).
  EXPECT_EQ(Ranges("\xe1\x84\x80\xe1\x85\xa1!", {T("\xea\xb0\x80"), T("!")}),
            (std::vector<TokenRange>{{0, 6}, {6, 7}}));
  // NFKC where NFC does not align: the ligature "ﬁ" (U+FB01) is "fi".
  EXPECT_EQ(Ranges("\xef\xac\x81ne", {T("fine")}), (std::vector<TokenRange>{{0, 5}}));
  // Text already composed is matched as it is; a token that is in neither form is refused.
  EXPECT_EQ(Ranges("\xc3\xa9", {T("\xc3\xa9")}), (std::vector<TokenRange>{{0, 2}}));
  EXPECT_FALSE(AlignTokens("e\xcc\x81", std::vector<AlignedToken>{T("e")}).ok());
}

TEST(AlignTokensTest, TheMetaSymbolInTheTextIsASpaceToTheTokens) {
  // Llama 2's Replace(" ", "▁") on "a▁b c": "▁a", "▁b", "▁c"; the text's own "▁" is read as a
  // space, as the normalizer left it ("▁b" covers it).
  EXPECT_EQ(Ranges("a\u2581b c", {T(" a"), T(" b"), T(" c")}),
            (std::vector<TokenRange>{{0, 1}, {1, 5}, {5, 7}}));
  EXPECT_FALSE(AlignTokens("a\u2581b", std::vector<AlignedToken>{T(" a"), T("b")}).ok());
}

}  // namespace
}  // namespace stoker
