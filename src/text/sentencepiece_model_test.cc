// The protobuf reader of SentencePiece models: fields it needs, defaults where they are absent,
// fields it skips, and one error (never a crash or an over-read) for malformed bytes.
#include "text/sentencepiece_model.h"

#include <gtest/gtest.h>

#include <cstring>

namespace stoker {
namespace {

std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
std::string Key(uint32_t field, uint32_t wire) { return Varint((field << 3) | wire); }
std::string Len(uint32_t field, const std::string& body) {
  return Key(field, 2) + Varint(body.size()) + body;
}
std::string Int(uint32_t field, int64_t v) {
  return Key(field, 0) + Varint(static_cast<uint64_t>(v));
}
std::string Piece(const std::string& text, float score, int type) {
  uint32_t bits;
  std::memcpy(&bits, &score, 4);
  std::string f = Key(2, 5) + std::string(reinterpret_cast<const char*>(&bits), 4);
  return Len(1, Len(1, text) + f + (type == 1 ? "" : Int(3, type)));
}

TEST(SentencePieceModelTest, ReadsPiecesTrainerAndNormalizer) {
  std::string bytes =
      Piece("<unk>", 0, 2) +
      Piece(
          "\xE2\x96\x81"
          "a",
          -1.5f, 1) +
      Len(2, Int(3, 2) + Int(35, 1) + Int(42, 7) + Int(43, -1) + Len(1, "skip") + Len(44, "?")) +
      Len(3, Len(1, "identity") + Int(3, 0) + Int(4, 0)) + Int(99, 5);
  auto m = ParseSentencePieceModel(bytes, "m.model");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->pieces.size(), 2u);
  EXPECT_EQ(m->pieces[0].type, SentencePieceModel::PieceType::kUnknown);
  EXPECT_EQ(m->pieces[1].piece,
            "\xE2\x96\x81"
            "a");
  EXPECT_EQ(m->pieces[1].score, -1.5f);
  EXPECT_EQ(m->pieces[1].type, SentencePieceModel::PieceType::kNormal);
  EXPECT_EQ(m->model_type, 2);
  EXPECT_TRUE(m->byte_fallback);
  EXPECT_EQ(m->eos_id, 7);
  EXPECT_EQ(m->pad_id, -1);
  EXPECT_EQ(m->bos_id, 1);  // the proto's default
  EXPECT_EQ(m->unk_surface, "?");
  EXPECT_EQ(m->normalizer_name, "identity");
  EXPECT_FALSE(m->add_dummy_prefix);
  EXPECT_FALSE(m->remove_extra_whitespaces);
  EXPECT_TRUE(m->escape_whitespaces);  // default
  EXPECT_TRUE(m->precompiled_charsmap.empty());
}

TEST(SentencePieceModelTest, DefaultsWithoutSpecs) {
  auto m = ParseSentencePieceModel(Piece("a", 0, 1), "m");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->model_type, 1);
  EXPECT_TRUE(m->add_dummy_prefix);
  EXPECT_TRUE(m->remove_extra_whitespaces);
  EXPECT_EQ(m->unk_surface, " \xE2\x81\x87 ");
}

TEST(SentencePieceModelTest, MalformedBytesAreOneError) {
  const std::string good = Piece("ab", 0, 1) + Len(2, Int(3, 2));
  for (size_t n = 1; n < good.size(); ++n) {  // every truncation
    auto m = ParseSentencePieceModel(good.substr(0, n), "m.model");
    if (!m.ok()) {
      EXPECT_NE(m.status().message().find("m.model: not a valid SentencePiece model"),
                std::string::npos);
    }
  }
  EXPECT_FALSE(ParseSentencePieceModel("", "m").ok());                        // no pieces
  EXPECT_FALSE(ParseSentencePieceModel(Key(1, 2) + Varint(1000), "m").ok());  // length
  EXPECT_FALSE(ParseSentencePieceModel(Key(1, 3), "m").ok());                 // a group
  EXPECT_FALSE(ParseSentencePieceModel(Len(1, Int(3, 9)), "m").ok());         // piece type
  EXPECT_FALSE(ParseSentencePieceModel(std::string(11, '\xFF'), "m").ok());   // varint
  EXPECT_FALSE(ParseSentencePieceModel(Piece("a", 0, 1) + Len(2, Key(3, 2)), "m").ok());
}

}  // namespace
}  // namespace stoker
