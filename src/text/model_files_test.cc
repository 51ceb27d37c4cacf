#include "text/model_files.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker {
namespace {

TEST(SniffTokenizerFormatTest, TellsTheFormatsApartByContent) {
  EXPECT_EQ(SniffTokenizerFormat("{\"version\": \"1.0\"}"), TokenizerFormat::kTokenizerJson);
  EXPECT_EQ(SniffTokenizerFormat("\xEF\xBB\xBF\n  {"), TokenizerFormat::kTokenizerJson);
  // Llama 3's original/tokenizer.model: tiktoken lines under a SentencePiece-like name.
  EXPECT_EQ(SniffTokenizerFormat("IQ== 0\nIg== 1\n"), TokenizerFormat::kTiktoken);
  EXPECT_EQ(SniffTokenizerFormat("IQ== 0\r\n"), TokenizerFormat::kTiktoken);
  EXPECT_EQ(SniffTokenizerFormat("ISIjJCUmJyg= 1234"), TokenizerFormat::kTiktoken);  // cut head
  // A SentencePiece ModelProto starts with its first `pieces` entry (field 1, wire type 2).
  EXPECT_EQ(SniffTokenizerFormat(std::string("\x0a\x0b\x0a\x05<unk>\x15\x00\x00\x00\x00", 14)),
            TokenizerFormat::kSentencePiece);
}

TEST(SniffTokenizerFormatTest, UnknownForWhatIsNoneOfThem) {
  EXPECT_EQ(SniffTokenizerFormat(""), TokenizerFormat::kUnknown);
  EXPECT_EQ(SniffTokenizerFormat("hello world\n"), TokenizerFormat::kUnknown);
  EXPECT_EQ(SniffTokenizerFormat("IQ== x\n"), TokenizerFormat::kUnknown);    // no rank
  EXPECT_EQ(SniffTokenizerFormat("IQ=  0\n"), TokenizerFormat::kUnknown);    // base64 length 3
  EXPECT_EQ(SniffTokenizerFormat("IQ== 0 1\n"), TokenizerFormat::kUnknown);  // a third field
}

TEST(TokenizerConfigTest, ReadsTokensAsStringsOrAddedTokenObjects) {
  // DeepSeek-V3 writes its tokens as AddedToken objects.
  Result<TokenizerConfig> c = ParseTokenizerConfig(
      R"({"add_bos_token": true, "add_eos_token": false,
          "bos_token": {"__type": "AddedToken", "content": "<｜begin▁of▁sentence｜>"},
          "eos_token": {"__type": "AddedToken", "content": "<｜end▁of▁sentence｜>"},
          "pad_token": null, "model_max_length": 16384})",
      "cfg");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->eos_token, "<｜end▁of▁sentence｜>");
  EXPECT_EQ(c->bos_token, "<｜begin▁of▁sentence｜>");
  EXPECT_EQ(c->add_bos_token, true);
  EXPECT_EQ(c->add_eos_token, false);

  c = ParseTokenizerConfig(R"({"eos_token": "</s>", "bos_token": null})", "cfg");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->eos_token, "</s>");
  EXPECT_FALSE(c->bos_token.has_value());
  EXPECT_FALSE(c->add_bos_token.has_value());
}

TEST(TokenizerConfigTest, ErrorsNameTheFileAndField) {
  Result<TokenizerConfig> c = ParseTokenizerConfig(R"({"eos_token": 7})", "dir/cfg.json");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("dir/cfg.json: eos_token"), std::string::npos);
  c = ParseTokenizerConfig(R"({"add_bos_token": "yes"})", "cfg");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("add_bos_token"), std::string::npos);
  c = ParseTokenizerConfig("{", "cfg");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("not valid JSON"), std::string::npos);
  // nlohmann throws out_of_range (not parse_error) for this one; found by model_files_fuzzer.
  c = ParseTokenizerConfig("5e1002", "cfg");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace stoker
