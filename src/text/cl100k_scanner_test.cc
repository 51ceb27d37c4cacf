// The hand-written cl100k scanner against PCRE2 running the same pattern: a seeded differential
// fuzz over strings built from the characters the pattern distinguishes, plus random code points.
#include "text/cl100k_scanner.h"

#include <gtest/gtest.h>

#include <random>

#include "text/regex_splitter.h"
#include "text/utf8.h"

namespace stoker {
namespace {

std::vector<std::string> Pieces(const RegexSplitter& s, std::string_view text) {
  std::vector<std::string> out;
  EXPECT_TRUE(s.Split(text, [&](std::string_view p) { out.emplace_back(p); }).ok());
  return out;
}

TEST(Cl100kScannerTest, UsedOnlyForTheExactTiktokenPattern) {
  auto fast = RegexSplitter::Compile(kCl100kPattern, RegexSplitter::Dialect::kTiktoken, "t");
  auto onig = RegexSplitter::Compile(kCl100kPattern, RegexSplitter::Dialect::kOniguruma, "t");
  ASSERT_TRUE(fast.ok() && onig.ok());
  EXPECT_TRUE((*fast)->uses_scanner());
  EXPECT_FALSE((*onig)->uses_scanner());
}

TEST(Cl100kScannerTest, SameSplitsAsPcre2OnRandomText) {
  auto fast = RegexSplitter::Compile(kCl100kPattern, RegexSplitter::Dialect::kTiktoken, "t");
  auto slow = RegexSplitter::Compile(kCl100kPattern, RegexSplitter::Dialect::kTiktoken, "t", false);
  ASSERT_TRUE(fast.ok() && slow.ok());
  ASSERT_FALSE((*slow)->uses_scanner());
  const std::vector<char32_t> pool = {
      'a',    'Z',    's',     'S',     'd',    'm',    't',      'l',    'L',    'v',
      'e',    'r',    'R',     'E',     '\'',   '0',    '7',      ' ',    ' ',    '\t',
      '\n',   '\r',   '\x0b',  '\x0c',  '!',    '.',    '-',      '_',    '/',    '\\',
      '"',    '\x00', '\x1f',  0x85,    0xA0,   0x17F,  0x212A,   0x301,  0x308,  0x200D,
      0xFE0F, 0x2028, 0x2029,  0x3000,  0x1680, 0x4E00, 0x6708,   0xAC00, 0x0660, 0xFF10,
      0x2160, 0x00BD, 0x1F44D, 0x1F3FD, 0x0E01, 0x05D0, 0x10FFFF, 0xE000};
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

TEST(Cl100kScannerTest, KnownSplits) {
  auto fast = RegexSplitter::Compile(kCl100kPattern, RegexSplitter::Dialect::kTiktoken, "t");
  ASSERT_TRUE(fast.ok());
  EXPECT_EQ(
      Pieces(**fast, "I'M  ok 12345\r\n\n  x"),
      (std::vector<std::string>{"I", "'M", " ", " ok", " ", "123", "45", "\r\n\n", " ", " x"}));
}

}  // namespace
}  // namespace stoker
