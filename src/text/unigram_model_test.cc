// UnigramModel's Viterbi on hand-made vocabularies: ties go to the path whose last piece starts
// first, unknown characters, user-defined bonus, skipped pieces, and the two arithmetics.
#include "text/unigram_model.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace stoker
