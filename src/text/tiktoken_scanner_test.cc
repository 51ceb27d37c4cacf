// The hand-written scanners (cl100k, Llama 3, o200k) against PCRE2 running the same patterns: a
// seeded differential fuzz over strings built from the characters the patterns distinguish, plus
// random code points.
#include "text/tiktoken_scanner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "text/regex_splitter.h"
#include "text/utf8.h"

namespace stoker {
namespace {

std::vector<std::string> Pieces(const RegexSplitter& s, std::string_view text) {
  std::vector<std::string> out;
  EXPECT_TRUE(s.Split(text, [&](std::string_view p) { out.emplace_back(p); }).ok());
  return out;
}

std::unique_ptr<RegexSplitter> Scanned(std::string_view pattern) {
  auto s = RegexSplitter::Compile(pattern, RegexSplitter::Dialect::kTiktoken, "t");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

class TiktokenScannerTest : public testing::TestWithParam<std::string_view> {};

TEST_P(TiktokenScannerTest, UsedOnlyForTheExactTiktokenPattern) {
  auto fast = RegexSplitter::Compile(GetParam(), RegexSplitter::Dialect::kTiktoken, "t");
  auto onig = RegexSplitter::Compile(GetParam(), RegexSplitter::Dialect::kOniguruma, "t");
  std::string other(GetParam());
  other.back() = '*';  // its last character changed: a different pattern
  auto changed = RegexSplitter::Compile(other, RegexSplitter::Dialect::kTiktoken, "t");
  ASSERT_TRUE(fast.ok() && onig.ok() && changed.ok());
  EXPECT_TRUE((*fast)->uses_scanner());
  EXPECT_FALSE((*onig)->uses_scanner());
  EXPECT_FALSE((*changed)->uses_scanner());
}

TEST_P(TiktokenScannerTest, SameSplitsAsPcre2OnRandomText) {
  auto fast = RegexSplitter::Compile(GetParam(), RegexSplitter::Dialect::kTiktoken, "t");
  auto slow = RegexSplitter::Compile(GetParam(), RegexSplitter::Dialect::kTiktoken, "t", false);
  ASSERT_TRUE(fast.ok() && slow.ok());
  ASSERT_TRUE((*fast)->uses_scanner());
  ASSERT_FALSE((*slow)->uses_scanner());
  // ASCII letters of both cases and the contractions' letters; digits; every kind of whitespace;
  // punctuation with '/' and '\''; U+017F (long s) and U+212A (Kelvin); marks (U+0301, U+0308,
  // U+20DD); titlecase (U+01C5), modifier (U+02B0) and other letters (CJK, Hangul, Thai, Hebrew);
  // other numbers (Arabic-Indic, fullwidth, Roman, fractions); emoji and ZWJ; private use.
  const std::vector<char32_t> pool = {
      'a',    'Z',    's',     'S',     'd',    'm',    't',    'l',    'L',      'v',    'e',
      'r',    'R',    'E',     'A',     'q',    '\'',   '0',    '7',    ' ',      ' ',    '\t',
      '\n',   '\r',   '\x0b',  '\x0c',  '!',    '.',    '-',    '_',    '/',      '\\',   '"',
      '\x00', '\x1f', 0x85,    0xA0,    0x17F,  0x212A, 0x301,  0x308,  0x20DD,   0x1C5,  0x2B0,
      0x200D, 0xFE0F, 0x2028,  0x2029,  0x3000, 0x1680, 0x4E00, 0x6708, 0xAC00,   0x0660, 0xFF10,
      0x2160, 0x00BD, 0x1F44D, 0x1F3FD, 0x0E01, 0x05D0, 0xC9,   0xE9,   0x10FFFF, 0xE000};
  std::mt19937 rng(20260101);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text;
    int n = static_cast<int>(rng() % 24);
    for (int k = 0; k < n; ++k) {
      char32_t cp;
      if (rng() % 8 == 0) {
        do cp = rng() % 0x110000;
        while (cp >= 0xD800 && cp <= 0xDFFF);
      } else {
        cp = pool[rng() % pool.size()];
      }
      AppendUtf8(cp, &text);
    }
    ASSERT_EQ(Pieces(**fast, text), Pieces(**slow, text)) << "text: " << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Patterns, TiktokenScannerTest,
                         testing::Values(kCl100kPattern, kLlama3Pattern, kO200kPattern),
                         [](const testing::TestParamInfo<std::string_view>& info) {
                           return std::string(info.param == kCl100kPattern   ? "cl100k"
                                              : info.param == kLlama3Pattern ? "llama3"
                                                                             : "o200k");
                         });

TEST(TiktokenScannerKnownSplits, Cl100k) {
  auto s = Scanned(kCl100kPattern);
  ASSERT_TRUE(s);
  EXPECT_EQ(
      Pieces(*s, "I'M  ok 12345\r\n\n  x"),
      (std::vector<std::string>{"I", "'M", " ", " ok", " ", "123", "45", "\r\n\n", " ", " x"}));
}

TEST(TiktokenScannerKnownSplits, Llama3KeepsTheSpacesAfterTheLastNewlineApartAtTheEnd) {
  auto cl100k = Scanned(kCl100kPattern), llama3 = Scanned(kLlama3Pattern);
  ASSERT_TRUE(cl100k && llama3);
  EXPECT_EQ(Pieces(*cl100k, "a\n  "), (std::vector<std::string>{"a", "\n  "}));
  EXPECT_EQ(Pieces(*llama3, "a\n  "), (std::vector<std::string>{"a", "\n", "  "}));
}

TEST(TiktokenScannerKnownSplits, O200kCutsCamelCaseAndKeepsContractionsAndSlashes) {
  auto s = Scanned(kO200kPattern);
  ASSERT_TRUE(s);
  EXPECT_EQ(
      Pieces(*s, "HelloWORLDWide don't CAN'T a/b//\n"),
      (std::vector<std::string>{"Hello", "WORLDWide", " don't", " CAN'T", " a", "/b", "//\n"}));
}

// The ASCII-word shortcut (session 37) hands over to the general code where a word goes on past
// ASCII: a mark after a letter, a non-ASCII letter, U+017F ("long s") in a contraction.
TEST(TiktokenScannerKnownSplits, O200kAsciiWordsThatGoOnPastAscii) {
  auto s = Scanned(kO200kPattern);
  ASSERT_TRUE(s);
  EXPECT_EQ(Pieces(*s, "nai\xCC\x88ve Cafe\xCC\x81 na\xC3\xAFve it'\xC5\xBF x\xC3\x89"),
            (std::vector<std::string>{"nai\xCC\x88ve", " Cafe\xCC\x81", " na\xC3\xAFve",
                                      " it'\xC5\xBF", " x", "\xC3\x89"}));
}

// o200k's inline tail for numbers, punctuation and whitespace that start in ASCII hands the piece
// to MatchTail where a non-ASCII code point may decide it: an Arabic-Indic digit after ASCII ones,
// punctuation (U+00A7, U+00D7, U+2014) after ASCII punctuation, a no-break or ideographic space
// or U+0085 after ASCII whitespace, and a letter after a run of spaces.
TEST(TiktokenScannerKnownSplits, O200kAsciiTailsThatGoOnPastAscii) {
  auto fast = Scanned(kO200kPattern);
  auto slow = RegexSplitter::Compile(kO200kPattern, RegexSplitter::Dialect::kTiktoken, "t", false);
  ASSERT_TRUE(fast && slow.ok());
  ASSERT_FALSE((*slow)->uses_scanner());
  for (std::string_view text :
       {"12\xD9\xA3 1\xD9\xA3\xD9\xA4 123\xD9\xA3", ";\xC2\xA7; .\xC3\x97 --\xE2\x80\x94--/",
        "a  \xC2\xA0"
        "b \xE3\x80\x80x\t\xC2\x85z",
        "x  \xC3\xA9 \n\n  \xC2\xA0", " !!\xC2\xA7/\n"}) {
    EXPECT_EQ(Pieces(*fast, text), Pieces(**slow, text)) << "text: " << text;
  }
  EXPECT_EQ(Pieces(*fast, "12\xD9\xA3 ;\xC2\xA7;"),
            (std::vector<std::string>{"12\xD9\xA3", " ;\xC2\xA7;"}));
}

}  // namespace
}  // namespace stoker
