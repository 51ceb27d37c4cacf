// SentencePiece BPE models on stoker's engine: two small models trained with PyPI sentencepiece
// (the fuzzer's seeds), with the ids and decode that sentencepiece 0.2 gives (written down from
// it); which models are left to libsentencepiece. tests/python/test_bpe_sentencepiece.py
// compares whole corpora and the real Mistral 7B files.
#include "text/sentencepiece_bpe.h"

#include <gtest/gtest.h>

#include "common/file_util.h"

namespace stoker {
namespace {

std::string Seed(const std::string& name) {
  return std::string(STOKER_SOURCE_DIR) + "/fuzz/seeds/sentencepiece_model/" + name;
}

std::unique_ptr<BpeTokenizer> Open(const std::string& path, std::string* why) {
  Result<std::string> bytes = ReadFileToString(path);
  EXPECT_TRUE(bytes.ok());
  auto t = OpenSentencePieceBpe(*bytes, path, {}, why);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

std::vector<int32_t> Ids(const Tokenizer& t, std::string_view text) {
  std::vector<int32_t> ids;
  EXPECT_TRUE(t.Encode(text, &ids).ok());
  return ids;
}

std::string Text(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string out;
  EXPECT_TRUE(t.Decode(ids, &out).ok());
  return out;
}

TEST(SentencePieceBpeTest, ByteFallbackAndUserDefinedPieces) {
  std::string why;
  auto t = Open(Seed("bpe_byte_fallback.model"), &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->identity().kind, "sentencepiece");
  EXPECT_EQ(Ids(*t, "the quick  fox[X]jumps"),
            (std::vector<int32_t>{301, 308, 316, 303, 301, 328, 313, 327, 266, 260, 315, 302, 311,
                                  3, 270, 272}));
  EXPECT_EQ(Ids(*t, "  caf\u00e9 \u5e8a\u5e8a!"),
            (std::vector<int32_t>{260, 300, 301, 233, 190, 142, 233, 190, 142, 37}));
  EXPECT_EQ(Ids(*t, "\u2581x  "), (std::vector<int32_t>{260, 311, 260}));
  EXPECT_EQ(Text(*t, Ids(*t, "  caf\u00e9 \u5e8a\u5e8a!")), "  caf\u00e9 \u5e8a\u5e8a!");
  EXPECT_EQ(Text(*t, {260, 311, 260}), " x  ");
  EXPECT_EQ(Ids(*t, ""), std::vector<int32_t>{});
}

TEST(SentencePieceBpeTest, UnknownRunsAreOneUnkAndExtraSpacesGo) {
  std::string why;
  auto t = Open(Seed("bpe_unk.model"), &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(Ids(*t, "the quick  fox[X]jumps"),
            (std::vector<int32_t>{31, 38, 46, 33, 31, 58, 43, 57, 8, 31, 45, 32, 41, 0, 12, 14}));
  EXPECT_EQ(Ids(*t, "  caf\u00e9 \u5e8a\u5e8a!"),
            (std::vector<int32_t>{31, 40, 34, 45, 56, 31, 0}));
  EXPECT_EQ(Ids(*t, "\u2581x  "), (std::vector<int32_t>{31, 11}));
  EXPECT_EQ(Text(*t, {31, 40, 34, 45, 56, 31, 0}), "caf\u00e9  \u2047 ");
}

// text/sentencepiece_unigram.h encodes it.
TEST(SentencePieceBpeTest, UnigramIsNotForTheBpeEngine) {
  std::string why;
  auto t = Open(std::string(STOKER_SOURCE_DIR) + "/data/sample/sample.model", &why);
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(why, "not a BPE model");
}

TEST(SentencePieceBpeTest, NotAModelIsAnError) {
  std::string why;
  auto t = OpenSentencePieceBpe("\x0a\xff", "x.model", {}, &why);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("x.model"), std::string::npos);
}

TEST(SentencePieceBpeTest, AnEosThatIsNoPieceIsAnError) {
  const std::string path = Seed("bpe_byte_fallback.model");
  Result<std::string> bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  SentencePieceOptions options;
  options.eos = "<no such piece>";
  std::string why;
  auto t = OpenSentencePieceBpe(*bytes, path, options, &why);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  const std::string want = path +
                           ": the EOS '<no such piece>' is neither a piece of the "
                           "SentencePiece model nor an id";
  EXPECT_EQ(t.status().message(), want);
}

}  // namespace
}  // namespace stoker
