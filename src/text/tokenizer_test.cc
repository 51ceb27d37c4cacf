#include "text/tokenizer.h"

#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "text/bytes_tokenizer.h"

namespace stoker {
namespace {

const std::string kSampleModel = std::string(STOKER_SOURCE_DIR) + "/data/sample/sample.model";

TEST(BytesTokenizerTest, EncodesUtf8Bytes) {
  auto t = OpenTokenizer("bytes");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::vector<int32_t> ids = {7};
  ASSERT_TRUE((*t)->Encode("A月", &ids).ok());
  EXPECT_EQ(ids, (std::vector<int32_t>{7, 65, 0xE6, 0x9C, 0x88}));
  EXPECT_EQ((*t)->vocab_size(), 257u);
  EXPECT_EQ((*t)->eos_id(), 256);
  EXPECT_EQ((*t)->identity().kind, "bytes");
  EXPECT_TRUE((*t)->identity().checksum.empty());
}

TEST(SentencePieceTokenizerTest, MatchesSentencePieceLibrary) {
  auto t = OpenTokenizer(kSampleModel);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->vocab_size(), 4000u);
  EXPECT_EQ((*t)->eos_id(), 2);
  EXPECT_EQ((*t)->identity().kind, "sentencepiece");
  EXPECT_EQ((*t)->identity().name, "sample.model");
  EXPECT_EQ((*t)->identity().checksum.size(), 16u);

  sentencepiece::SentencePieceProcessor reference;
  ASSERT_TRUE(reference.Load(kSampleModel).ok());
  const std::string text = "床前明月光，疑是地上霜。 Вол без рога. The GNU General Public License";
  std::vector<int> expected;
  ASSERT_TRUE(reference.Encode(text, &expected).ok());
  std::vector<int32_t> ids;
  ASSERT_TRUE((*t)->Encode(text, &ids).ok());
  EXPECT_EQ(ids, std::vector<int32_t>(expected.begin(), expected.end()));
  for (int32_t id : ids) EXPECT_LT(static_cast<uint64_t>(id), (*t)->vocab_size());
}

// One instance shared by many threads gives each thread the single-threaded answer.
TEST(SentencePieceTokenizerTest, SharedInstanceEncodesConcurrently) {
  auto t = OpenTokenizer(kSampleModel);
  ASSERT_TRUE(t.ok());
  const std::string text = "兰叶春葳蕤，桂华秋皎洁。 This program is free software.";
  std::vector<int32_t> expected;
  ASSERT_TRUE((*t)->Encode(text, &expected).ok());
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 200; ++k) {
        std::vector<int32_t> ids;
        if (!(*t)->Encode(text, &ids).ok() || ids != expected) ++mismatches[i];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(OpenTokenizerTest, MissingModelNamesTheFile) {
  auto t = OpenTokenizer("/nonexistent/dir/m.model");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("/nonexistent/dir/m.model"), std::string::npos);
}

TEST(OpenTokenizerTest, GarbageModelIsInvalidArgument) {
  auto path = std::filesystem::temp_directory_path() / "stoker_text_garbage.model";
  std::ofstream(path) << "this is not a protobuf";
  auto t = OpenTokenizer(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("not a valid SentencePiece model"), std::string::npos);
}

TEST(OpenTokenizerTest, MissingTokenizerJsonNamesTheFile) {
  auto t = OpenTokenizer("some/dir/tokenizer.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("some/dir/tokenizer.json"), std::string::npos);
}

TEST(OpenTokenizerTest, UnknownSpecIsInvalidArgument) {
  auto t = OpenTokenizer("gpt2");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
