// SentencePiece Unigram models on stoker's own encoder: the project's sample model (nmt_nfkc,
// byte fallback) with the ids and decode PyPI sentencepiece 0.2.3 gives (written down from it),
// the charsmap's rules, and the fields it refuses by name.
// tests/python/test_unigram_sentencepiece.py compares whole corpora on models of every variant.
#include "text/sentencepiece_unigram.h"

#include <gtest/gtest.h>

#include "common/file_util.h"

namespace stoker {
namespace {

const std::string kSample = std::string(STOKER_SOURCE_DIR) + "/data/sample/sample.model";

std::unique_ptr<SentencePieceUnigram> OpenSample(const SentencePieceOptions& options = {}) {
  Result<std::string> bytes = ReadFileToString(kSample);
  EXPECT_TRUE(bytes.ok());
  Result<SentencePieceModel> m = ParseSentencePieceModel(*bytes, kSample);
  EXPECT_TRUE(m.ok());
  auto t = SentencePieceUnigram::Open(*m, *bytes, kSample, options);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

std::vector<int32_t> UnigramIds(const Tokenizer& t, std::string_view text) {
  std::vector<int32_t> ids;
  EXPECT_TRUE(t.Encode(text, &ids).ok());
  return ids;
}

std::string UnigramText(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string out;
  EXPECT_TRUE(t.Decode(ids, &out).ok());
  return out;
}

TEST(SentencePieceUnigramTest, SampleModelIdsAndDecodeEqualSentencePiece) {
  auto t = OpenSample();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->vocab_size(), 4000u);
  EXPECT_EQ(t->eos_id(), 2);
  EXPECT_EQ(t->identity().kind, "sentencepiece");
  EXPECT_EQ(UnigramIds(*t, "  Hello   world  "),
            (std::vector<int32_t>{259, 3297, 283, 335, 1356, 618, 352, 335, 310}));
  // nmt_nfkc through the charsmap: the ligature, ½, the fullwidth A, e + U+0301, U+3000.
  EXPECT_EQ(
      UnigramIds(*t, "\ufb01 \u00bd \uff21 e\u0301 \u3000x"),
      (std::vector<int32_t>{725, 348, 542, 229, 132, 135, 1209, 355, 259, 198, 172, 259, 1501}));
  // Ties (runs of "<" and "-"), a run of unknown CJK, an emoji as its bytes.
  const std::string ties = "<<<<< ----- \u5e8a\u5e8a \U0001F600";
  EXPECT_EQ(UnigramIds(*t, ties),
            (std::vector<int32_t>{259, 3277, 3277, 3277, 3277, 3277, 538, 268, 268, 259, 1929, 1929,
                                  259, 243, 162, 155, 131}));
  EXPECT_EQ(UnigramIds(*t, ""), std::vector<int32_t>{});
  EXPECT_EQ(UnigramIds(*t, "   "), std::vector<int32_t>{});
  EXPECT_EQ(UnigramText(*t, UnigramIds(*t, ties)), ties);
  EXPECT_EQ(UnigramText(*t, UnigramIds(*t, "  Hello   world  ")), "Hello world");
  EXPECT_EQ(UnigramText(*t, {0, 1, 2, 259, 3277}),
            " \xE2\x81\x87  <");  // unk surface, control pieces
  std::string out;
  EXPECT_EQ(t->Decode(std::vector<int32_t>{4000}, &out).code(), StatusCode::kOutOfRange);
}

TEST(SentencePieceUnigramTest, BosFromOptions) {
  SentencePieceOptions options;
  options.add_bos = true;
  auto t = OpenSample(options);
  ASSERT_TRUE(t);
  EXPECT_EQ(UnigramIds(*t, "x"), (std::vector<int32_t>{1, 259, 1501}));
  EXPECT_EQ(t->identity().name, "sample.model add-bos");
}

TEST(SentencePieceUnigramTest, RefusesWhatItDoesNotReproduceByName) {
  Result<std::string> bytes = ReadFileToString(kSample);
  ASSERT_TRUE(bytes.ok());
  Result<SentencePieceModel> m = ParseSentencePieceModel(*bytes, kSample);
  ASSERT_TRUE(m.ok());
  SentencePieceModel denorm = *m;
  denorm.has_denormalizer = true;
  auto r = SentencePieceUnigram::Open(denorm, *bytes, "x.model", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x.model: denormalizer_spec.precompiled_charsmap"),
            std::string::npos)
      << r.status().ToString();
  SentencePieceModel word = *m;
  word.model_type = 3;
  r = SentencePieceUnigram::Open(word, *bytes, "x.model", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("trainer_spec.model_type 3"), std::string::npos);
  SentencePieceModel no_unk = *m;
  no_unk.pieces[0].type = SentencePieceModel::PieceType::kControl;
  r = SentencePieceUnigram::Open(no_unk, *bytes, "x.model", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("UNKNOWN"), std::string::npos);
  SentencePieceModel bad_map = *m;
  bad_map.precompiled_charsmap = "\xFF\xFF\xFF\x7F";
  r = SentencePieceUnigram::Open(bad_map, *bytes, "x.model", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("precompiled_charsmap"), std::string::npos);
}

}  // namespace
}  // namespace stoker
