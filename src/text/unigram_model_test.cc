// UnigramModel's Viterbi on hand-made vocabularies: ties go to the path whose last piece starts
// first, unknown characters, user-defined bonus, skipped pieces, and the two arithmetics.
#include "text/unigram_model.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace stoker {
namespace {

using Kind = UnigramModel::Kind;

std::vector<int32_t> Ids(const UnigramModel& m, std::string_view text) {
  std::vector<UnigramModel::Span> spans;
  m.Encode(text, &spans);
  std::vector<int32_t> ids;
  uint32_t at = 0;
  for (const auto& s : spans) {
    EXPECT_EQ(s.begin, at);
    at = s.end;
    ids.push_back(s.id);
  }
  EXPECT_EQ(at, text.size());
  return ids;
}

TEST(UnigramModelTest, TiesGoToTheLongestLastPiece) {
  // "<" + "<<" = "<<" + "<" = 3 × "<": every split of "<<<" scores -3.
  std::vector<UnigramModel::Piece> pieces = {
      {"<unk>", 0, Kind::kSkip}, {"<", -1}, {"<<", -2}, {"-", -1.5f}, {"--", -3}};
  for (auto a : {UnigramModel::Arithmetic::kSentencePiece, UnigramModel::Arithmetic::kTokenizers}) {
    UnigramModel m = UnigramModel::Build(pieces, 0, -3, a);
    EXPECT_EQ(Ids(m, "<<<"), (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(Ids(m, "<<<<"), (std::vector<int32_t>{2, 2}));
    EXPECT_EQ(Ids(m, "---"), (std::vector<int32_t>{3, 4}));
    EXPECT_EQ(Ids(m, ""), std::vector<int32_t>{});
  }
}

TEST(UnigramModelTest, UnknownCharactersAndSkippedPieces) {
  std::vector<UnigramModel::Piece> pieces = {
      {"<unk>", 0, Kind::kSkip}, {"a", -1}, {"\xC3\xA9", -2}, {"ab", -1, Kind::kSkip}};
  UnigramModel m = UnigramModel::Build(pieces, 0, -2, UnigramModel::Arithmetic::kSentencePiece);
  // "b" is no piece (and "ab" is skipped): an unknown node of one character each.
  EXPECT_EQ(Ids(m, "ab\xC3\xA9\xE5\xBA\x8A"), (std::vector<int32_t>{1, 0, 2, 0}));
}

TEST(UnigramModelTest, UserDefinedPiecesWinOverNormalOnes) {
  // A user-defined piece scores 0.1 * (length - 1) (0.1 for "xy"), above any split into normal
  // pieces however close to 0 their scores are.
  std::vector<UnigramModel::Piece> pieces = {
      {"<unk>", 0, Kind::kSkip}, {"x", -1e-6f}, {"y", -1e-6f}, {"xy", -50, Kind::kUserDefined}};
  UnigramModel m = UnigramModel::Build(pieces, 0, -1, UnigramModel::Arithmetic::kSentencePiece);
  EXPECT_EQ(Ids(m, "xyx"), (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(Ids(m, "yxy"), (std::vector<int32_t>{2, 3}));
}

// Word by word (kSentencePiece, no piece with "▁" inside) equals the whole-text lattice, cached
// words included: ties in exact arithmetic that float rounding decides differently at different
// path scores ("a" + "b" and "ab" score the same), unknown characters, and texts long enough for
// the path score to be rebased several times. The whole-text model differs only by a piece with
// "▁" inside that never matches, which turns the word cut off.
TEST(UnigramModelTest, WordsEqualTheWholeText) {
#define STOKER_MARK "\xE2\x96\x81"
  const std::string mark = STOKER_MARK;
  std::vector<UnigramModel::Piece> pieces = {
      {"<unk>", 0, Kind::kSkip},
      {STOKER_MARK, -1.3f},
      {"a", -97.3f},
      {"b", -3.1f},
      {"ab", -97.3f - 3.1f},
      {STOKER_MARK "a", -98.6f},
      {"ba", -3.1f - 97.3f},
      {STOKER_MARK "ab", -99.9f},
      {"bab", -103.5f},
  };
  const UnigramModel words =
      UnigramModel::Build(pieces, 0, -103.5, UnigramModel::Arithmetic::kSentencePiece);
  pieces.push_back({"q" STOKER_MARK "q", -1.0f});
#undef STOKER_MARK
  const UnigramModel whole =
      UnigramModel::Build(pieces, 0, -103.5, UnigramModel::Arithmetic::kSentencePiece);
  std::mt19937 rng(48);
  const std::string parts[] = {mark, "a", "b", "ab", "c", mark + "ab"};
  for (int k = 0; k < 300; ++k) {
    std::string text;
    const size_t length = k % 3 == 0 ? 6000 : 40;  // 6000 bytes: ~1,500 pieces, rebased
    while (text.size() < length) text += parts[rng() % 6];
    for (int pass = 0; pass < 2; ++pass) {  // the second pass takes cached words
      ASSERT_EQ(Ids(words, text), Ids(whole, text)) << "text " << k << " pass " << pass;
    }
  }
}

}  // namespace
}  // namespace stoker
