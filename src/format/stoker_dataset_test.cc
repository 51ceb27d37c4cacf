#include "format/stoker_dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/megatron_writer.h"

namespace stoker {
namespace {

// Writes a dataset of shards with the given documents per shard; document d of the whole dataset
// is [d, d+1, ..., 2d] (d+1 tokens), so contents are easy to check.
Manifest WriteDataset(const std::string& dir, const std::vector<int>& docs_per_shard) {
  Manifest m;
  m.tokenizer = {"bytes", "bytes", 256, 0, ""};
  m.dtype = TokenDType::kUint16;
  int doc = 0;
  for (size_t s = 0; s < docs_per_shard.size(); ++s) {
    std::string prefix = JoinPath(dir, "shard-" + std::to_string(s));
    auto w = MegatronWriter::Create(prefix, m.dtype);
    EXPECT_TRUE(w.ok());
    for (int i = 0; i < docs_per_shard[s]; ++i, ++doc) {
      std::vector<int32_t> tokens;
      for (int t = doc; t <= 2 * doc; ++t) tokens.push_back(t);
      EXPECT_TRUE((*w)->AddDocument(tokens).ok());
    }
    auto info = (*w)->Finish();
    EXPECT_TRUE(info.ok());
    m.shards.push_back(*info);
  }
  EXPECT_TRUE(WriteManifest(dir, m).ok());
  return m;
}

class StokerDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
  }
  void ExpectOpenFails(StatusCode code, std::vector<std::string> needles) {
    auto r = StokerDataset::Open(dir_->path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    for (const auto& n : needles) {
      EXPECT_NE(r.status().message().find(n), std::string::npos)
          << "'" << n << "' not in: " << r.status().message();
    }
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(StokerDatasetTest, MapsGlobalDocumentsAcrossShardsIncludingEmptyOnes) {
  WriteDataset(dir_->path(), {3, 0, 0, 2, 1});
  auto ds = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->format(), "stoker");
  EXPECT_EQ((*ds)->num_shards(), 5u);
  EXPECT_EQ((*ds)->num_documents(), 6u);
  EXPECT_EQ((*ds)->num_tokens(), 1u + 2 + 3 + 4 + 5 + 6);
  EXPECT_EQ((*ds)->shard_first_document(3), 3u);
  EXPECT_EQ((*ds)->shard_first_document(5), 6u);
  for (uint64_t d = 0; d < 6; ++d) {
    ASSERT_EQ((*ds)->document_length(d), d + 1);
    std::vector<int32_t> got(d + 1);
    ASSERT_TRUE((*ds)->Read(d, 0, d + 1, got.data()).ok());
    for (uint64_t t = 0; t <= d; ++t) EXPECT_EQ(got[t], static_cast<int32_t>(d + t));
  }
  int64_t x;
  EXPECT_EQ((*ds)->document_length(6), 0u);  // a broken precondition reads nothing
  EXPECT_EQ((*ds)->Read(6, 0, 1, &x).code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*ds)->Read(5, 6, 1, &x).code(), StatusCode::kOutOfRange);
}

TEST_F(StokerDatasetTest, MissingShardIsNamed) {
  WriteDataset(dir_->path(), {1, 1});
  ASSERT_EQ(::unlink(dir_->Join("shard-1.bin").c_str()), 0);
  ExpectOpenFails(StatusCode::kNotFound, {dir_->Join("shard-1.bin"), "missing shard 1"});
}

TEST_F(StokerDatasetTest, ManifestCountsDisagreeWithShard) {
  Manifest m = WriteDataset(dir_->path(), {2, 3});
  m.shards[1].documents = 4;
  ASSERT_TRUE(WriteManifest(dir_->path(), m).ok());
  ExpectOpenFails(StatusCode::kCorruption,
                  {dir_->Join("shard-1.idx"), "document count is 3", "says 4", "manifest.json"});
}

TEST_F(StokerDatasetTest, ManifestSizesDisagreeWithShard) {
  Manifest m = WriteDataset(dir_->path(), {2});
  m.shards[0].tokens += 1;
  m.shards[0].bin_bytes += 2;
  ASSERT_TRUE(WriteManifest(dir_->path(), m).ok());
  ExpectOpenFails(StatusCode::kCorruption, {dir_->Join("shard-0.bin"), "size in bytes"});
}

TEST_F(StokerDatasetTest, ManifestDTypeDisagreesWithShard) {
  Manifest m = WriteDataset(dir_->path(), {2});
  m.dtype = TokenDType::kInt16;  // same item size, different type
  ASSERT_TRUE(WriteManifest(dir_->path(), m).ok());
  ExpectOpenFails(StatusCode::kCorruption, {"dtype is uint16", "says int16"});
}

TEST_F(StokerDatasetTest, NoManifestAndCorruptManifest) {
  ExpectOpenFails(StatusCode::kNotFound, {"manifest.json"});
  ASSERT_TRUE(WriteFileAtomically(dir_->Join("manifest.json"), "{\"format\": 3").ok());
  ExpectOpenFails(StatusCode::kCorruption, {dir_->Join("manifest.json"), "at byte"});
}

}  // namespace
}  // namespace stoker
