// SentencePiece-style text steps: SentencePiece's normalizer without a charsmap, tokenizers'
// Prepend / Replace / Strip / Metaspace, and the cut before "▁" (expected values from the
// references' documented behaviour; tests/python/test_bpe_sentencepiece.py checks whole pipelines).
#include "text/sp_text.h"

#include <gtest/gtest.h>

#include <vector>

namespace stoker {
namespace {

const std::string M(kMetaSymbol);

std::string Edit(const TextEdit& e, std::string_view in) {
  std::string out;
  ApplyTextEdit(e, in, &out);
  return out;
}

std::vector<std::string> Cut(std::string_view text, bool every) {
  std::vector<std::string> out;
  CutBeforeMarker(text, kMetaSymbol, every, [&](std::string_view p) { out.emplace_back(p); });
  return out;
}

TEST(SpTextTest, SentencePieceNormalizer) {
  TextEdit e;
  e.kind = TextEdit::Kind::kSentencePiece;
  EXPECT_EQ(Edit(e, ""), "");
  EXPECT_EQ(Edit(e, "a b"), M + "a" + M + "b");
  EXPECT_EQ(Edit(e, "  a  "), M + M + M + "a" + M + M);
  EXPECT_EQ(Edit(e, "\t\n"), M + "\t\n");  // only ' ' is a space
  e.remove_extra_whitespaces = true;
  EXPECT_EQ(Edit(e, "  a   b  "), M + "a" + M + "b");
  EXPECT_EQ(Edit(e, "   "), "");
  EXPECT_EQ(Edit(e, "a " + M), M + "a");  // a trailing "▁" of the text goes too
  e.add_dummy_prefix = false;
  EXPECT_EQ(Edit(e, " a"), "a");
}

TEST(SpTextTest, PrependAndReplace) {
  EXPECT_EQ(Edit({TextEdit::Kind::kPrepend, "", M}, ""), "");
  EXPECT_EQ(Edit({TextEdit::Kind::kPrepend, "", M}, " a"), M + " a");
  EXPECT_EQ(Edit({TextEdit::Kind::kReplace, " ", M}, " a  b"), M + "a" + M + M + "b");
  EXPECT_EQ(Edit({TextEdit::Kind::kReplace, "ab", "x"}, "aabab"), "axx");
}

// ReplaceAll's one-character path (the " " -> "▁" normalizers) against a plain find-and-append
// loop, appending after what *out already holds, for replacements of 1 to 3 bytes.
TEST(SpTextTest, ReplaceAllOfOneCharacterMatchesTheGeneralLoop) {
  auto slow = [](std::string_view in, char from, std::string_view to) {
    std::string r;
    for (char c : in) {
      if (c == from) {
        r.append(to);
      } else {
        r.push_back(c);
      }
    }
    return r;
  };
  const std::string texts[] = {"", " ", "   ", "a", "a b  c ", " lead", "trail ", "no-space"};
  for (const std::string& t : texts) {
    for (std::string_view to :
         {std::string_view("x"), std::string_view("\xC3\xA9"), std::string_view(M)}) {
      std::string out = "kept";
      ReplaceAll(t, " ", to, &out);
      EXPECT_EQ(out, "kept" + slow(t, ' ', to)) << t;
    }
  }
  EXPECT_EQ(ReplaceAll("a b", " ", ""), "ab");  // an empty replacement: the general loop
}

TEST(SpTextTest, StripTakesUnicodeWhiteSpaceOffTheEndsItIsGiven) {
  TextEdit e;
  e.kind = TextEdit::Kind::kStrip;
  e.strip_left = e.strip_right = true;
  // U+3000, U+2003, U+00A0 and U+0085 are White_Space; U+200B (zero width space) is not.
  const std::string ws = "\xE3\x80\x80\t\n \xE2\x80\x83\xC2\xA0\xC2\x85";
  EXPECT_EQ(Edit(e, ws + "a b" + ws), "a b");
  EXPECT_EQ(Edit(e, ws), "");
  EXPECT_EQ(Edit(e, ""), "");
  EXPECT_EQ(Edit(e, "\xE2\x80\x8B a \xE2\x80\x8B"), "\xE2\x80\x8B a \xE2\x80\x8B");
  EXPECT_EQ(Edit(e, M + " a " + M), M + " a " + M);  // "▁" is not whitespace
  e.strip_right = false;
  EXPECT_EQ(Edit(e, ws + "a" + ws), "a" + ws);
  e.strip_left = false;
  e.strip_right = true;
  EXPECT_EQ(Edit(e, ws + "a" + ws), ws + "a");
  EXPECT_EQ(Edit(e, ws), "");
}

// transformers' SentencePiece converters: Strip(right) then Replace(Regex(" {2,}"), "▁").
TEST(SpTextTest, SpaceRunsAndStrip) {
  TextEdit runs{TextEdit::Kind::kSpaceRuns, "", M};
  EXPECT_EQ(Edit(runs, "  a b   c "), M + "a b" + M + "c ");
  EXPECT_EQ(Edit(runs, "a"), "a");
  TextEdit strip{TextEdit::Kind::kStrip};
  strip.strip_right = true;
  // U+3000, U+00A0 and a tab are White_Space; U+200B (zero width space) is not.
  EXPECT_EQ(Edit(strip, " a b \xE3\x80\x80\xC2\xA0\t"), " a b");
  EXPECT_EQ(Edit(strip, "a\xE2\x80\x8B "), "a\xE2\x80\x8B");
  EXPECT_EQ(Edit(strip, " \n "), "");
  strip.strip_left = true;
  strip.strip_right = false;
  EXPECT_EQ(Edit(strip, "\xE2\x80\x83 a "), "a ");
}

TEST(SpTextTest, MetaspacePrependSchemes) {
  MetaspaceStep m;
  std::string out;
  ApplyMetaspace(m, "a b", false, &out);
  EXPECT_EQ(out, M + "a" + M + "b");
  ApplyMetaspace(m, " a", false, &out);  // already starts with the replacement
  EXPECT_EQ(out, M + "a");
  m.prepend = MetaspaceStep::Prepend::kFirst;
  ApplyMetaspace(m, "a", false, &out);
  EXPECT_EQ(out, "a");
  ApplyMetaspace(m, "a", true, &out);
  EXPECT_EQ(out, M + "a");
  m.prepend = MetaspaceStep::Prepend::kNever;
  ApplyMetaspace(m, "a", true, &out);
  EXPECT_EQ(out, "a");
}

TEST(SpTextTest, CutBeforeMarker) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Cut(M + "a" + M + M + M + "b" + M, false), (V{M + "a", M + M + M + "b", M}));
  EXPECT_EQ(Cut("ab" + M + "c", false), (V{"ab", M + "c"}));
  EXPECT_EQ(Cut(M + M + "a", true), (V{M, M + "a"}));
  EXPECT_EQ(Cut("", true), V{});
  EXPECT_EQ(Cut("xyz", false), V{"xyz"});
}

}  // namespace
}  // namespace stoker
