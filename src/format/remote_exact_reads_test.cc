// What a global shuffle over a remote dataset costs in requests (RemoteReads::kExact, as the
// loader chooses for --shuffle global): one ranged GET of exactly its bytes per document read,
// nothing kept, and without a cache the shard's whole .idx again each time the shard is reopened
// (the pool keeps max_open_shards shards open); through a cache, from disk. docs/cache.md and
// docs/storage.md say this. And what the loader asks for under global shuffle
// (whole_shards_if_they_fit): whole shards through the cache when they all fit its budget, each
// fetched once and then read from disk; exact ranges when they do not.
#include <gtest/gtest.h>

#include "common/file_util.h"
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
  void Open(const std::string& cache_dir, uint64_t budget = 1 << 20, bool whole_if_fit = false,
            uint64_t keep_indexes_bytes = 0, uint64_t claimed = 0) {
    RemoteDatasetOptions o;
    o.keep_indexes_bytes = keep_indexes_bytes;
    o.budget_claimed_bytes = claimed;
    o.backend = storage::NewMeteringBackend(storage::NewFileBackend(), &metrics_);
    o.reads = RemoteReads::kExact;
    o.max_open_shards = 2;
    o.cache_dir = cache_dir;
    o.cache_size_bytes = budget;
    o.whole_shards_if_they_fit = whole_if_fit;
    ds_.reset();
    ds_ = StokerDataset::OpenRemote(dir_->Join("ds"), o).value();
  }
  uint64_t DatasetBytes() const {
    uint64_t n = 0;
    for (const ShardInfo& s : ds_->manifest().shards) n += s.bin_bytes + s.idx_bytes;
    return n;
  }
  // Every document once, in a fixed scattered order (as a global shuffle reads them).
  void ReadAllScattered() {
    for (int i = 0; i < kShards * kDocs; ++i) {
      const int d = (i * 37) % (kShards * kDocs);
      std::vector<int32_t> out(Length(d));
      ASSERT_TRUE(ds_->Read(d, 0, out.size(), out.data()).ok()) << d;
      ASSERT_EQ(out, std::vector<int32_t>(Length(d), d % 200)) << d;
    }
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

// With the .idx files within keep_indexes_bytes (as the loader asks), every shard stays open:
// each .idx is one GET, whatever the order, and every later read is its document's GET alone.
// Over the bound, the pool's max_open_shards again.
// What the read-ahead joins (loader/piece_prefetcher.h): documents of one open shard, read across
// with one GET of the bytes from the first piece to the last; never across shards, and never a
// shard that is not open (TokensBetween does no I/O).
TEST_F(RemoteDatasetExactReadsTest, NeighbouringDocumentsOfAnOpenShardAreOneGet) {
  uint64_t idx_total = 0;
  for (int s = 0; s < kShards; ++s) idx_total += IdxBytes(s);
  Open("", 1 << 20, false, /*keep_indexes_bytes=*/idx_total);
  EXPECT_EQ(ds_->TokensBetween(0, Length(0), 2, 1), std::nullopt);  // shard 0 is not open yet
  Read(0);
  EXPECT_EQ(ds_->TokensBetween(0, Length(0), 1, 0), 0u);
  EXPECT_EQ(ds_->TokensBetween(0, 1, 2, 1), uint64_t(Length(0) - 1 + Length(1) + 1));
  EXPECT_EQ(ds_->TokensBetween(kDocs - 1, 0, kDocs, 0), std::nullopt);  // another shard
  // From token 1 of document 0 to token 2 of document 3, the documents between included.
  const uint64_t count = Length(0) - 1 + Length(1) + Length(2) + 2;
  std::vector<int32_t> want;
  for (int d = 0; d <= 3; ++d) {
    for (int k = d == 0 ? 1 : 0; k < (d == 3 ? 2 : Length(d)); ++k) want.push_back(d % 200);
  }
  ASSERT_EQ(want.size(), count);
  const uint64_t gets = Gets(), bytes = BytesRead();
  std::vector<int32_t> got(count);
  ASSERT_TRUE(ds_->ReadSpan(0, 1, count, got.data()).ok());
  EXPECT_EQ(got, want);
  EXPECT_EQ(Gets() - gets, 1u);
  EXPECT_EQ(BytesRead() - bytes, 2 * count);
  // Past the end of the shard's .bin: an error naming the document, the token and the .bin, and
  // no request.
  const uint64_t gets_before_error = Gets();
  got.resize(1000);
  const Status past = ds_->ReadSpan(kDocs - 1, 0, 1000, got.data());
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange) << past.ToString();
  EXPECT_NE(past.message().find("1000 tokens from token 0 of document " +
                                std::to_string(kDocs - 1) + " run past the end of "),
            std::string::npos)
      << past.ToString();
  EXPECT_NE(past.message().find(".bin"), std::string::npos) << past.ToString();
  EXPECT_EQ(Gets(), gets_before_error);
}

TEST_F(RemoteDatasetExactReadsTest, IndexesWithinTheirBoundStayInMemory) {
  uint64_t idx_total = 0;
  for (int s = 0; s < kShards; ++s) idx_total += IdxBytes(s);
  Open("", 1 << 20, false, /*keep_indexes_bytes=*/idx_total);
  for (int round = 0; round < 3; ++round) {
    for (int s = 0; s < kShards; ++s) {
      const int d = s * kDocs + round;
      const uint64_t idx = round == 0 ? IdxBytes(s) : 0;
      EXPECT_EQ(Read(d), std::make_pair(uint64_t{round == 0 ? 2u : 1u}, idx + 2 * Length(d))) << d;
    }
  }
  Open("", 1 << 20, false, /*keep_indexes_bytes=*/idx_total - 1);
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

// The dataset fits the budget: whole shards through the cache. Each .bin and .idx is one GET
// (each is smaller than a download part), every document is then read from disk, and a second
// pass (a later epoch) or a second open on the same cache makes no request at all.
TEST_F(RemoteDatasetExactReadsTest, WholeShardsWhenEveryShardFitsTheBudget) {
  const std::string cache = dir_->Join("cache");
  Open(cache, 1 << 20, /*whole_if_fit=*/true);
  ASSERT_LE(DatasetBytes(), uint64_t{1} << 20);
  EXPECT_EQ(ds_->remote_reads(), RemoteReads::kParts);
  EXPECT_EQ(ds_->storage_stats().whole_shard_datasets, 1u);
  EXPECT_EQ(ds_->storage_stats().ranged_datasets, 0u);
  const uint64_t at_open = Gets();
  ReadAllScattered();
  EXPECT_EQ(Gets() - at_open, uint64_t{2 * kShards});
  const uint64_t after_first = Gets();
  ReadAllScattered();
  EXPECT_EQ(Gets(), after_first);
  Open(cache, 1 << 20, /*whole_if_fit=*/true);
  const uint64_t reopened = Gets();
  ReadAllScattered();
  EXPECT_EQ(Gets(), reopened);
}

// A mixture's datasets share one cache: a dataset fits only in what the others read whole through
// it left of the budget.
TEST_F(RemoteDatasetExactReadsTest, WholeShardsOnlyInTheBudgetOtherDatasetsLeave) {
  const uint64_t bytes = DatasetBytes();
  Open(dir_->Join("cache"), 2 * bytes, true, 0, /*claimed=*/bytes);
  EXPECT_EQ(ds_->remote_reads(), RemoteReads::kParts);
  Open(dir_->Join("cache"), 2 * bytes, true, 0, /*claimed=*/bytes + 1);
  EXPECT_EQ(ds_->remote_reads(), RemoteReads::kExact);
  EXPECT_EQ(ds_->storage_stats().ranged_cache_budget, 2 * bytes);
}

// A budget of a quarter of the dataset: exact ranges (only the .idx files cached), one GET per
// document, and the counters name the mode, the dataset's bytes and the budget.
TEST_F(RemoteDatasetExactReadsTest, RangedReadsWhenTheShardsExceedTheBudget) {
  const uint64_t bytes = DatasetBytes();
  Open(dir_->Join("cache"), bytes / 4, /*whole_if_fit=*/true);
  EXPECT_EQ(ds_->remote_reads(), RemoteReads::kExact);
  const StorageStats st = ds_->storage_stats();
  EXPECT_EQ(st.ranged_datasets, 1u);
  EXPECT_EQ(st.ranged_bytes, bytes);
  EXPECT_EQ(st.ranged_cache_budget, bytes / 4);
  EXPECT_EQ(st.whole_shard_datasets, 0u);
  const uint64_t at_open = Gets();
  ReadAllScattered();
  // A GET per document, and the .idx files again as the small budget evicts them; no .bin kept.
  EXPECT_GE(Gets() - at_open, uint64_t{kShards * kDocs});
  auto data = ListDirectory(dir_->Join("cache/data"));
  ASSERT_TRUE(data.ok());
  for (const std::string& name : *data) EXPECT_EQ(name.find(".bin"), std::string::npos) << name;
}

}  // namespace
}  // namespace stoker
