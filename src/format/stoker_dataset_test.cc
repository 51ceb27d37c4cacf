#include "format/stoker_dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

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

// Sets STOKER_MAX_MAPPED_SHARDS for the scope of a test.
class ScopedShardBudget {
 public:
  explicit ScopedShardBudget(const char* value) { ::setenv(kName, value, 1); }
  ~ScopedShardBudget() { ::unsetenv(kName); }

 private:
  static constexpr const char* kName = "STOKER_MAX_MAPPED_SHARDS";
};

// Memory maps of this process whose file lies under `dir`.
int MapsUnder(const std::string& dir) {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find(dir) != std::string::npos;
  return n;
}

void ExpectEveryDocumentReads(const StokerDataset& ds) {
  std::vector<uint64_t> lengths(ds.num_documents() + 2);
  ds.DocumentLengths(0, lengths.size(), lengths.data());
  for (uint64_t d = 0; d < ds.num_documents(); ++d) {
    ASSERT_EQ(lengths[d], d + 1);
    ASSERT_EQ(ds.document_length(d), d + 1);
    std::vector<int64_t> got(d + 1);
    ASSERT_TRUE(ds.Read(d, 0, d + 1, got.data()).ok());
    for (uint64_t t = 0; t <= d; ++t) ASSERT_EQ(got[t], static_cast<int64_t>(d + t));
  }
  EXPECT_EQ(lengths[ds.num_documents()], 0u);
  EXPECT_EQ(lengths[ds.num_documents() + 1], 0u);
}

TEST_F(StokerDatasetTest, WithinTheBudgetEveryShardStaysMapped) {
  ScopedShardBudget budget("100");
  WriteDataset(dir_->path(), std::vector<int>(30, 2));
  auto ds = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_TRUE((*ds)->all_shards_mapped());
  EXPECT_EQ(MapsUnder(dir_->path()), 60);  // .bin and .idx of each
  ExpectEveryDocumentReads(**ds);
}

TEST_F(StokerDatasetTest, MoreShardsThanTheBudgetAreMappedOnDemand) {
  ScopedShardBudget budget("4");
  WriteDataset(dir_->path(), {2, 0, 3, 1, 2, 2, 0, 1, 2, 3, 1, 1, 2, 2, 1, 3, 2, 1, 2, 2});
  auto ds = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_FALSE((*ds)->all_shards_mapped());
  EXPECT_EQ((*ds)->num_shards(), 20u);
  EXPECT_LE(MapsUnder(dir_->path()), 8);
  ExpectEveryDocumentReads(**ds);
  ShardPool::Counters c = (*ds)->pool_counters();
  EXPECT_EQ(c.mapped, 4u);
  EXPECT_GE(c.opened, 16u);  // every non-empty shard past the first four was mapped on demand
  EXPECT_EQ(c.unmapped, c.opened);  // and as many were let go to stay within four
  EXPECT_LE(MapsUnder(dir_->path()), 8);
}

TEST_F(StokerDatasetTest, ConcurrentReadersOnDemandReadTheRightTokens) {
  ScopedShardBudget budget("3");
  WriteDataset(dir_->path(), std::vector<int>(24, 3));
  auto ds = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_FALSE((*ds)->all_shards_mapped());
  const StokerDataset& source = **ds;
  std::vector<std::thread> readers;
  std::vector<int> bad(6, 0);
  for (int r = 0; r < 6; ++r) {
    readers.emplace_back([&source, &bad, r] {
      for (uint64_t i = 0; i < 2000; ++i) {
        uint64_t d = (i * 7919 + r * 104729) % source.num_documents();
        std::vector<int32_t> got(d + 1);
        source.PrefetchIndex(d);
        if (!source.Read(d, 0, d + 1, got.data()).ok() || got[d] != static_cast<int32_t>(2 * d)) {
          ++bad[r];
        }
      }
    });
  }
  for (auto& t : readers) t.join();
  for (int r = 0; r < 6; ++r) EXPECT_EQ(bad[r], 0) << "reader " << r;
  EXPECT_LE((*ds)->pool_counters().mapped, 3u);
}

TEST_F(StokerDatasetTest, OpenDatasetsShareOneBudget) {
  ScopedShardBudget budget("40");  // the minimum share is 40 / 8 = 5 shards
  auto other = TempDir::Create();
  ASSERT_TRUE(other.ok());
  WriteDataset(dir_->path(), std::vector<int>(30, 1));
  WriteDataset((*other)->path(), std::vector<int>(30, 1));
  auto first = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE((*first)->all_shards_mapped());
  {
    auto second = StokerDataset::Open((*other)->path());
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    EXPECT_FALSE((*second)->all_shards_mapped());
    EXPECT_LE((*second)->pool_counters().mapped, 10u);  // what the first one left
    ExpectEveryDocumentReads(**second);
    auto third = StokerDataset::Open((*other)->path());
    ASSERT_TRUE(third.ok()) << third.status().ToString();
    EXPECT_EQ((*third)->pool_counters().mapped, 5u);  // the minimum share
  }
  first->reset();  // gives its share back
  auto again = StokerDataset::Open((*other)->path());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE((*again)->all_shards_mapped());
}

TEST_F(StokerDatasetTest, AShardThatVanishesIsTheErrorOfItsRead) {
  ScopedShardBudget budget("1");
  WriteDataset(dir_->path(), {1, 1, 1});
  auto ds = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_EQ(::unlink(dir_->Join("shard-2.idx").c_str()), 0);
  int32_t token[3];
  EXPECT_TRUE((*ds)->Read(0, 0, 1, token).ok());
  Status s = (*ds)->Read(2, 0, 3, token);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("missing shard 2"), std::string::npos) << s.ToString();
  EXPECT_TRUE((*ds)->Read(1, 0, 2, token).ok());
}

TEST_F(StokerDatasetTest, ABadShardBudgetIsRefused) {
  ScopedShardBudget budget("many");
  WriteDataset(dir_->path(), {1});
  ExpectOpenFails(StatusCode::kInvalidArgument, {"STOKER_MAX_MAPPED_SHARDS='many'"});
}

}  // namespace
}  // namespace stoker
