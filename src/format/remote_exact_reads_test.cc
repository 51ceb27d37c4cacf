// What a global shuffle over a remote dataset costs in requests (RemoteReads::kExact, as the
// loader chooses for --shuffle global): one ranged GET of exactly its bytes per document read,
// nothing kept, and without a cache the shard's whole .idx again each time the shard is reopened
// (the pool keeps max_open_shards shards open); through a cache, from disk. docs/cache.md and
// docs/storage.md say this.
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "format/stoker_dataset.h"
#include "format/test_dataset.h"
#include "storage/file_backend.h"
#include "storage/metering_backend.h"

namespace stoker {
namespace {

constexpr int kShards = 8;
constexpr int kDocs = 16;  // per shard

int Length(int d) { return 3 + d % 5; }

class RemoteDatasetExactReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir::Create("stoker-exact-reads-").value();
    ASSERT_TRUE(testing::WriteTestDataset(dir_->Join("ds"), kShards, kDocs, Length).ok());
    Open("");
  }
  void Open(const std::string& cache_dir) {
    RemoteDatasetOptions o;
    o.backend = storage::NewMeteringBackend(storage::NewFileBackend(), &metrics_);
    o.reads = RemoteReads::kExact;
    o.max_open_shards = 2;
    o.cache_dir = cache_dir;
    o.cache_size_bytes = 1 << 20;
    ds_ = StokerDataset::OpenRemote(dir_->Join("ds"), o).value();
  }
  uint64_t Gets() const {
    return metrics_.Snapshot().requests[static_cast<int>(storage::RequestKind::kGet)];
  }
  uint64_t BytesRead() const { return metrics_.Snapshot().bytes_read; }
  // Reads document d whole: the GETs and bytes it cost.
  std::pair<uint64_t, uint64_t> Read(int d) {
    const uint64_t gets = Gets(), bytes = BytesRead();
    std::vector<int32_t> out(Length(d));
    EXPECT_TRUE(ds_->Read(d, 0, out.size(), out.data()).ok()) << d;
    EXPECT_EQ(out, std::vector<int32_t>(Length(d), d % 200)) << d;
    return {Gets() - gets, BytesRead() - bytes};
  }
  uint64_t IdxBytes(int s) const { return ds_->manifest().shards[s].idx_bytes; }

  storage::StorageMetrics metrics_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<StokerDataset> ds_;
};

TEST_F(RemoteDatasetExactReadsTest, ADocumentIsOneGetOfExactlyItsBytesAndIsNotKept) {
  EXPECT_EQ(Read(0), std::make_pair(uint64_t{2}, IdxBytes(0) + 2 * Length(0)));  // .idx, then it
  for (int d = 1; d < kDocs; ++d) {
    EXPECT_EQ(Read(d), std::make_pair(uint64_t{1}, uint64_t(2 * Length(d)))) << d;
  }
  EXPECT_EQ(Read(3), std::make_pair(uint64_t{1}, uint64_t(2 * Length(3))));  // again: not kept
}

TEST_F(RemoteDatasetExactReadsTest, WithoutACacheAReopenedShardGetsItsIdxAgain) {
  // Round robin over more shards than stay open: every read reopens its shard.
  for (int round = 0; round < 2; ++round) {
    for (int s = 0; s < kShards; ++s) {
      const int d = s * kDocs + round;
      EXPECT_EQ(Read(d), std::make_pair(uint64_t{2}, IdxBytes(s) + 2 * Length(d))) << d;
    }
  }
}

// Through a cache the .idx files are kept on disk: a reopen costs only the document's GET.
TEST_F(RemoteDatasetExactReadsTest, ThroughACacheAReopenedShardReadsItsIdxFromDisk) {
  Open(dir_->Join("cache"));
  for (int s = 0; s < kShards; ++s) {
    EXPECT_EQ(Read(s * kDocs), std::make_pair(uint64_t{2}, IdxBytes(s) + 2 * Length(s * kDocs)));
  }
  for (int s = 0; s < kShards; ++s) {
    const int d = s * kDocs + 1;
    EXPECT_EQ(Read(d), std::make_pair(uint64_t{1}, uint64_t(2 * Length(d)))) << d;
  }
  EXPECT_TRUE(ds_->cached());
}

}  // namespace
}  // namespace stoker
