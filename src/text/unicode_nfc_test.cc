#include "text/unicode_nfc.h"

#include <gtest/gtest.h>

#include <vector>

namespace stoker {
namespace {

NormalizedText Normalized(std::string_view text, UnicodeForm form) {
  NormalizedText n;
  const Status s = NormalizeWithOffsets(text, form, &n);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(n.lo.size(), n.text.size() + 1);
  EXPECT_EQ(n.hi.size(), n.text.size() + 1);
  return n;
}

TEST(NormalizeWithOffsetsTest, UnchangedTextMapsByteForByte) {
  const NormalizedText n = Normalized("a\xc3\xa9 \xe4\xb8\xad", UnicodeForm::kNfc);
  EXPECT_EQ(n.text, "a\xc3\xa9 \xe4\xb8\xad");
  for (uint32_t p = 0; p <= n.text.size(); ++p) {
    EXPECT_EQ(n.lo[p], p);
    EXPECT_EQ(n.hi[p], p);
  }
}

TEST(NormalizeWithOffsetsTest, AComposedCharacterMapsToItsWholeDecomposedRange) {
  // "xe" + U+0301 + "y": "é" (2 bytes) stands for bytes [1, 4) of the original.
  const NormalizedText n = Normalized("xe\xcc\x81y", UnicodeForm::kNfc);
  EXPECT_EQ(n.text, "x\xc3\xa9y");
  EXPECT_EQ(n.lo, (std::vector<uint32_t>{0, 1, 1, 4, 5}));
  EXPECT_EQ(n.hi, (std::vector<uint32_t>{0, 1, 4, 4, 5}));
}

TEST(NormalizeWithOffsetsTest, NfkcAlsoFoldsCompatibilityCharacters) {
  // U+FB01 "ﬁ" is itself under NFC and "fi" under NFKC.
  EXPECT_EQ(Normalized("\xef\xac\x81", UnicodeForm::kNfc).text, "\xef\xac\x81");
  const NormalizedText n = Normalized("\xef\xac\x81!", UnicodeForm::kNfkc);
  EXPECT_EQ(n.text, "fi!");
  EXPECT_EQ(n.lo, (std::vector<uint32_t>{0, 0, 3, 4}));
  EXPECT_EQ(n.hi, (std::vector<uint32_t>{0, 3, 3, 4}));
}

TEST(NormalizeWithOffsetsTest, EmptyTextAndInvalidUtf8) {
  const NormalizedText n = Normalized("", UnicodeForm::kNfc);
  EXPECT_EQ(n.text, "");
  EXPECT_EQ(n.lo, std::vector<uint32_t>{0});
  NormalizedText bad;
  EXPECT_FALSE(NormalizeWithOffsets("a\xff", UnicodeForm::kNfc, &bad).ok());
}

}  // namespace
}  // namespace stoker
