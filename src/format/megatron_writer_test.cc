#include "format/megatron_writer.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/file_util.h"
#include "common/hash.h"
#include "common/temp_dir.h"
#include "format/megatron_index.h"

namespace stoker {
namespace {

std::string Bytes(std::initializer_list<int> v) {
  std::string s;
  for (int b : v) s.push_back(static_cast<char>(b));
  return s;
}

// docs/formats-reference.md §1.4: uint16, document 0 = [10,11,12], document 1 = sequences [20,21]
// and [22].
TEST(MegatronWriterTest, MatchesFormatsTestVectorByteForByte) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  std::string prefix = (*dir)->Join("tiny");
  auto w = MegatronWriter::Create(prefix, TokenDType::kUint16);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::vector<int32_t> d0 = {10, 11, 12}, d1 = {20, 21, 22};
  std::vector<int32_t> d1_lengths = {2, 1};
  ASSERT_TRUE((*w)->AddDocument(d0).ok());
  ASSERT_TRUE((*w)->AddDocument(d1, d1_lengths).ok());
  EXPECT_EQ((*w)->documents(), 2u);
  EXPECT_EQ((*w)->sequences(), 3u);
  auto info = (*w)->Finish();
  ASSERT_TRUE(info.ok()) << info.status().ToString();

  std::string expected_idx =
      Bytes({0x4d, 0x4d, 0x49, 0x44, 0x49, 0x44, 0x58, 0, 0}) +  // magic
      Bytes({1, 0, 0, 0, 0, 0, 0, 0}) +                          // version
      Bytes({8}) +                                               // dtype uint16
      Bytes({3, 0, 0, 0, 0, 0, 0, 0}) +                          // N
      Bytes({3, 0, 0, 0, 0, 0, 0, 0}) +                          // D + 1
      Bytes({3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0}) +              // lengths
      Bytes({0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0}) +
      Bytes({0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0});
  ASSERT_EQ(expected_idx.size(), 94u);
  std::string expected_bin = Bytes({0x0a, 0, 0x0b, 0, 0x0c, 0, 0x14, 0, 0x15, 0, 0x16, 0});
  EXPECT_EQ(*ReadFileToString(prefix + ".idx"), expected_idx);
  EXPECT_EQ(*ReadFileToString(prefix + ".bin"), expected_bin);

  EXPECT_EQ(info->prefix, "tiny");
  EXPECT_EQ(info->documents, 3u);  // sequences, as TokenSource counts them
  EXPECT_EQ(info->tokens, 6u);
  EXPECT_EQ(info->bin_bytes, 12u);
  EXPECT_EQ(info->idx_bytes, 94u);
  EXPECT_EQ(info->bin_xxh3, Xxh3Hex(Xxh3(expected_bin.data(), expected_bin.size())));
  EXPECT_EQ(info->idx_xxh3, Xxh3Hex(Xxh3(expected_idx.data(), expected_idx.size())));
  // No temporary files remain.
  EXPECT_EQ(*ListDirectory((*dir)->path()), (std::vector<std::string>{"tiny.bin", "tiny.idx"}));
}

TEST(MegatronWriterTest, Int32ShardParsesBackWithFullValidation) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  std::string prefix = (*dir)->Join("s");
  auto w = MegatronWriter::Create(prefix, TokenDType::kInt32);
  ASSERT_TRUE(w.ok());
  // Enough tokens to cross the 1 MiB write buffer several times, and an empty document.
  std::vector<int32_t> big(700000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int32_t>(i * 131 % 200000);
  ASSERT_TRUE((*w)->AddDocument(big).ok());
  ASSERT_TRUE((*w)->AddDocument(std::vector<int32_t>{}).ok());
  ASSERT_TRUE((*w)->AddDocument(std::vector<int32_t>{100000, 7}).ok());
  auto info = (*w)->Finish();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->bin_bytes, (700000u + 2u) * 4u);
  EXPECT_EQ(*Xxh3HexOfFile(prefix + ".bin"), info->bin_xxh3);
  EXPECT_EQ(*Xxh3HexOfFile(prefix + ".idx"), info->idx_xxh3);

  std::string idx = *ReadFileToString(prefix + ".idx");
  auto ix = MegatronIndex::Parse(reinterpret_cast<const uint8_t*>(idx.data()), idx.size(),
                                 prefix + ".idx", info->bin_bytes, prefix + ".bin",
                                 MegatronIndex::Checks::kFull);
  ASSERT_TRUE(ix.ok()) << ix.status().ToString();
  EXPECT_EQ(ix->dtype(), TokenDType::kInt32);
  EXPECT_EQ(ix->num_sequences(), 3u);
  EXPECT_EQ(ix->sequence_length(1), 0);
  EXPECT_EQ(ix->sequence_pointer(2), 700000 * 4);
}

TEST(MegatronWriterTest, RejectsTokensThatDoNotFitAndKeepsShardIntact) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  std::string prefix = (*dir)->Join("u");
  auto w = MegatronWriter::Create(prefix, TokenDType::kUint16);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->AddDocument(std::vector<int32_t>{1, 2}).ok());
  Status s = (*w)->AddDocument(std::vector<int32_t>{3, 65536});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("65536"), std::string::npos);
  EXPECT_EQ((*w)->AddDocument(std::vector<int32_t>{-1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*w)->AddDocument(std::vector<int32_t>{1, 2}, std::vector<int32_t>{1}).code(),
            StatusCode::kInvalidArgument);
  auto info = (*w)->Finish();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->documents, 1u);
  EXPECT_EQ(info->tokens, 2u);
  EXPECT_EQ(*FileSizeBytes(prefix + ".bin"), 4u);
}

TEST(MegatronWriterTest, RefusesFloatDTypes) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(MegatronWriter::Create((*dir)->Join("f"), TokenDType::kFloat32).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(MegatronWriterTest, AbandonedWriterLeavesNothing) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  {
    auto w = MegatronWriter::Create((*dir)->Join("gone"), TokenDType::kUint16);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddDocument(std::vector<int32_t>{1, 2, 3}).ok());
  }
  EXPECT_TRUE(ListDirectory((*dir)->path())->empty());
}

TEST(MegatronWriterTest, CreateInMissingDirectoryNamesThePath) {
  auto w = MegatronWriter::Create("/nonexistent-stoker-dir/shard", TokenDType::kUint16);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("create /nonexistent-stoker-dir/shard.bin."),
            std::string::npos)
      << w.status().ToString();
}

}  // namespace
}  // namespace stoker
