// TokenDecoder: tokenizers' decoder chain and SentencePiece's Decode on hand-made token lists
// (the differential tests against both libraries are in tests/python/test_bpe_sentencepiece.py).
#include "text/token_decoder.h"

#include <gtest/gtest.h>

namespace stoker {
namespace {

using K = TokenDecoder::Step::Kind;
using P = TokenDecoder::PieceKind;

std::string DecodeAll(const TokenDecoder& d, std::vector<std::string_view> tokens,
                      std::vector<int32_t> ids = {}) {
  if (ids.empty()) {
    for (size_t i = 0; i < tokens.size(); ++i) ids.push_back(static_cast<int32_t>(i));
  }
  std::string out;
  d.Decode(tokens, ids, &out);
  return out;
}

TEST(TokenDecoderTest, ByteFallbackValue) {
  EXPECT_EQ(ByteFallbackValue("<0x41>"), 0x41);
  EXPECT_EQ(ByteFallbackValue("<0xfF>"), 0xFF);
  EXPECT_EQ(ByteFallbackValue("<0x+7>"), 7);  // Rust's u8::from_str_radix takes a '+'
  EXPECT_EQ(ByteFallbackValue("<0x4G>"), -1);
  EXPECT_EQ(ByteFallbackValue("<0x411>"), -1);
}

TEST(TokenDecoderTest, LlamaChain) {
  TokenDecoder::Step strip{K::kStrip, " ", "", 1, 0};
  TokenDecoder d = TokenDecoder::Chain(
      {{K::kReplace, "\xE2\x96\x81", " "}, {K::kByteFallback}, {K::kFuse}, strip});
  EXPECT_EQ(DecodeAll(d, {"\xE2\x96\x81Hi", "<0xC3>", "<0xA9>", "\xE2\x96\x81x"}), "Hi\xC3\xA9 x");
  // An invalid byte run is one U+FFFD per byte token.
  EXPECT_EQ(DecodeAll(d, {"a", "<0xC3>", "<0x41>"}), "a\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(DecodeAll(d, {"\xE2\x96\x81\xE2\x96\x81", "a"}), " a");  // Strip removes one space
}

TEST(TokenDecoderTest, MetaspaceDropsEveryReplacementOfTheFirstToken) {
  TokenDecoder::Step m{K::kMetaspace, "\xE2\x96\x81"};
  TokenDecoder d = TokenDecoder::Chain({m, {K::kFuse}});
  EXPECT_EQ(DecodeAll(d, {"\xE2\x96\x81\xE2\x96\x81"
                          "a",
                          "\xE2\x96\x81"
                          "b"}),
            "a b");
  m.strip_first = false;
  EXPECT_EQ(DecodeAll(TokenDecoder::Chain({m}), {"\xE2\x96\x81"
                                                 "a"}),
            " a");
}

TEST(TokenDecoderTest, SentencePieceDecode) {
  // ids: 0 unk, 1 control, 2 "▁▁", 3 "▁a", 4 <0xE2>, 5 <0x41>
  TokenDecoder d = TokenDecoder::SentencePiece(
      {P::kUnknown, P::kControl, P::kNormal, P::kNormal, P::kByte, P::kByte}, " ?? ", true, false);
  std::vector<std::string_view> t = {"<unk>",
                                     "<s>",
                                     "\xE2\x96\x81\xE2\x96\x81",
                                     "\xE2\x96\x81"
                                     "a",
                                     "<0xE2>",
                                     "<0x41>"};
  auto run = [&](std::vector<int32_t> ids) {
    std::vector<std::string_view> tokens;
    for (int32_t id : ids) tokens.push_back(t[static_cast<size_t>(id)]);
    return DecodeAll(d, tokens, ids);
  };
  EXPECT_EQ(run({1, 3, 3}), "a a");  // control is invisible; the first ▁ is the dummy prefix
  EXPECT_EQ(run({2, 3}), "  a");     // only one ▁ is stripped
  EXPECT_EQ(run({0, 3}), " ??  a");  // unk's surface, then no strip
  EXPECT_EQ(run({4, 5, 3}),
            "\xEF\xBF\xBD"
            "A a");  // a bad byte is U+FFFD; text: no strip
}

}  // namespace
}  // namespace stoker
