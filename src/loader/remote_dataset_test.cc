// A remote stoker dataset (format/stoker_dataset.h) on the memory backend, metered at the
// interface: opening and planning cost a constant number of requests whatever the shard count, no
// HEAD or LIST ever, and the reads give the tokens a local open gives. Here, not in format/,
// because it plans and loads the dataset as the loader does.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "common/file_util.h"
#include "common/hash.h"
#include "common/temp_dir.h"
#include "format/length_index.h"
#include "format/open_token_source.h"
#include "format/stoker_dataset.h"
#include "format/test_files.h"
#include "loader/remote_options.h"
#include "stoker/loader.h"
#include "stoker/plan.h"
#include "storage/memory_backend.h"
#include "storage/metering_backend.h"

namespace stoker {
namespace {

using storage::RequestKind;

// Document d of the dataset is d % 7 + 1 tokens, token t of it (d + t) % 50000.
struct RemoteFixture {
  std::shared_ptr<storage::Backend> memory = storage::NewMemoryBackend();
  storage::StorageMetrics metrics;
  std::shared_ptr<storage::Backend> metered;
  std::string uri = "s3://bucket/data/ds";
  uint64_t documents = 0;

  static int32_t Length(uint64_t d) { return static_cast<int32_t>(d % 7 + 1); }
  static uint16_t Token(uint64_t d, uint64_t t) { return static_cast<uint16_t>((d + t) % 50000); }

  // `docs_per_shard` documents in each of `shards` shards; with_index: a length index too.
  void Write(uint64_t shards, uint64_t docs_per_shard, bool with_index = true) {
    Manifest m;
    m.tokenizer = {"bytes", "bytes", 65536, 0, ""};
    m.dtype = TokenDType::kUint16;
    std::vector<uint64_t> first{0}, lengths;
    for (uint64_t s = 0; s < shards; ++s) {
      std::vector<int32_t> lens;
      std::vector<uint16_t> tokens;
      for (uint64_t i = 0; i < docs_per_shard; ++i, ++documents) {
        lens.push_back(Length(documents));
        lengths.push_back(lens.back());
        for (int32_t t = 0; t < lens.back(); ++t) tokens.push_back(Token(documents, t));
      }
      first.push_back(documents);
      const std::string idx = testing::IdxBytesFor(8, 2, lens);
      const std::string bin = testing::ArrayBytes(tokens);
      ShardInfo info;
      info.prefix = "../shards/s" + std::to_string(s);  // the layout a merge leaves
      info.documents = docs_per_shard;
      info.tokens = tokens.size();
      info.bin_bytes = bin.size();
      info.idx_bytes = idx.size();
      info.bin_xxh3 = Xxh3Hex(Xxh3(bin.data(), bin.size()));
      info.idx_xxh3 = Xxh3Hex(Xxh3(idx.data(), idx.size()));
      ASSERT_TRUE(
          storage::WriteAll(*memory, "s3://bucket/data/shards/s" + std::to_string(s) + ".idx", idx)
              .ok());
      ASSERT_TRUE(
          storage::WriteAll(*memory, "s3://bucket/data/shards/s" + std::to_string(s) + ".bin", bin)
              .ok());
      m.shards.push_back(info);
    }
    if (with_index) {
      auto dir = TempDir::Create();
      ASSERT_TRUE(dir.ok());
      const std::string path = (*dir)->Join("lengths.stkidx");
      auto h = WriteLengthIndex(path, first, lengths);
      ASSERT_TRUE(h.ok()) << h.status().ToString();
      auto bytes = ReadFileToString(path);
      ASSERT_TRUE(bytes.ok());
      ASSERT_TRUE(storage::WriteAll(*memory, uri + "/lengths.stkidx", *bytes).ok());
      m.length_index = LengthIndexInfo{"lengths.stkidx", h->file_bytes, h->num_documents,
                                       Xxh3Hex(h->arrays_xxh3)};
    }
    ASSERT_TRUE(storage::WriteAll(*memory, uri + "/manifest.json", m.ToJson()).ok());
    metered =
        storage::NewMeteringBackend(std::make_unique<storage::BackendWrapper>(
                                        std::unique_ptr<storage::Backend>(new Shared(memory))),
                                    &metrics);
  }

  uint64_t Count(RequestKind k) const { return metrics.Snapshot().requests[static_cast<int>(k)]; }

  // Holds a shared backend (the memory objects) as a unique one for the decorators.
  struct Shared : storage::BackendWrapper {
    explicit Shared(std::shared_ptr<storage::Backend> b)
        : storage::BackendWrapper(nullptr), b_(std::move(b)) {}
    Result<storage::ObjectInfo> Stat(const std::string& u) const override { return b_->Stat(u); }
    Result<std::vector<storage::ObjectInfo>> List(const std::string& p) const override {
      return b_->List(p);
    }
    Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& u) const override {
      return b_->OpenForRead(u);
    }
    Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& u,
                                                            uint64_t n) const override {
      return b_->OpenForReadWithSize(u, n);
    }
    Result<std::unique_ptr<storage::Writer>> OpenForWrite(const std::string& u) const override {
      return b_->OpenForWrite(u);
    }
    std::shared_ptr<storage::Backend> b_;
  };
};

TEST(RemoteDatasetTest, OpeningAndPlanningTenThousandShardsCostsThreeRequests) {
  RemoteFixture f;
  f.Write(10000, 2);
  RemoteDatasetOptions o;
  o.backend = f.metered;
  auto ds = StokerDataset::OpenRemote(f.uri, o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->num_shards(), 10000u);
  EXPECT_EQ((*ds)->num_documents(), 20000u);
  // The manifest (its size, then its bytes) and the length index (size from the manifest).
  EXPECT_EQ(f.Count(RequestKind::kHead), 1u);
  EXPECT_EQ(f.Count(RequestKind::kGet), 2u);
  // Planning: every length and shard boundary, then a few batches: still nothing per shard.
  auto lengths = (*ds)->Lengths();
  ASSERT_TRUE(lengths.ok());
  PlanOptions po;
  po.seq_len = 16;
  po.batch_size = 4;
  po.world_size = 64;
  po.rank = 63;
  auto plan =
      Plan::Create({{std::make_shared<const DatasetLengths>(std::move(*lengths)), 1.0}}, po);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (uint64_t step = 0; step < 5; ++step) ASSERT_TRUE((*plan)->GetBatch(0, step, 63).ok());
  for (uint64_t d = 0; d < 20000; d += 997) {
    EXPECT_EQ((*ds)->document_length(d), static_cast<uint64_t>(RemoteFixture::Length(d)));
  }
  EXPECT_EQ(f.Count(RequestKind::kHead), 1u);
  EXPECT_EQ(f.Count(RequestKind::kGet), 2u);
  EXPECT_EQ(f.Count(RequestKind::kList), 0u);
}

void ExpectDocument(const TokenSource& src, uint64_t d) {
  std::vector<int32_t> got(RemoteFixture::Length(d));
  ASSERT_TRUE(src.Read(d, 0, got.size(), got.data()).ok()) << d;
  for (size_t t = 0; t < got.size(); ++t) ASSERT_EQ(got[t], RemoteFixture::Token(d, t)) << d;
}

TEST(RemoteDatasetTest, ReadsOpenAShardOnFirstUseWithoutAHead) {
  for (RemoteReads reads : {RemoteReads::kParts, RemoteReads::kExact}) {
    RemoteFixture f;
    f.Write(6, 50);
    RemoteDatasetOptions o;
    o.backend = f.metered;
    o.reads = reads;
    o.part_bytes = 64;  // several parts per shard
    o.max_open_shards = 2;
    auto ds = StokerDataset::OpenRemote(f.uri, o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    const uint64_t gets_at_open = f.Count(RequestKind::kGet);
    for (uint64_t d = 0; d < 50; ++d) ExpectDocument(**ds, d);  // shard 0 only
    const uint64_t gets = f.Count(RequestKind::kGet) - gets_at_open;
    // The .idx, then each part once (kParts) or each document once (kExact).
    const uint64_t bin_bytes = 0 + [&] {
      uint64_t n = 0;
      for (uint64_t d = 0; d < 50; ++d) n += 2 * RemoteFixture::Length(d);
      return n;
    }();
    EXPECT_EQ(gets, 1 + (reads == RemoteReads::kParts ? (bin_bytes + 63) / 64 : 50));
    // Every shard, from several threads at once, through a pool of two.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (uint64_t d = t; d < 300; d += 4) ExpectDocument(**ds, d);
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(f.Count(RequestKind::kHead), 1u);  // the manifest's only
    EXPECT_EQ(f.Count(RequestKind::kList), 0u);
  }
}

// Through the node-local cache: block shuffle and source order (kParts) download whole shards
// once and read them from disk; global shuffle (kExact) caches only the .idx files and reads each
// document by a ranged GET of its bytes. No HEAD for any shard either way.
TEST(RemoteDatasetTest, TheCacheHoldsWholeShardsOrUnderExactReadsOnlyTheIndexes) {
  for (RemoteReads reads : {RemoteReads::kParts, RemoteReads::kExact}) {
    RemoteFixture f;
    f.Write(4, 50);
    auto dir = TempDir::Create("stoker-remote-cache-");
    ASSERT_TRUE(dir.ok());
    RemoteDatasetOptions o;
    o.backend = f.metered;
    o.reads = reads;
    o.cache_dir = (*dir)->Join("cache");
    o.cache_size_bytes = 1 << 20;
    for (int run = 0; run < 2; ++run) {  // the second run finds the cache warm
      auto ds = StokerDataset::OpenRemote(f.uri, o);
      ASSERT_TRUE(ds.ok()) << ds.status().ToString();
      ASSERT_TRUE((*ds)->cached());
      const uint64_t gets_at_open = f.Count(RequestKind::kGet);
      for (uint64_t d = 0; d < 200; d += 3) ExpectDocument(**ds, d);
      const uint64_t gets = f.Count(RequestKind::kGet) - gets_at_open;
      const uint64_t read = (200 + 2) / 3;
      if (reads == RemoteReads::kParts) {
        EXPECT_EQ(gets, run == 0 ? 8u : 0u) << run;  // 4 .idx + 4 .bin, once
      } else {
        EXPECT_EQ(gets, (run == 0 ? 4u : 0u) + read) << run;  // .idx once, a GET per document
      }
    }
    auto data = ListDirectory((*dir)->Join("cache/data"));
    ASSERT_TRUE(data.ok());
    size_t bins = 0, idxs = 0;
    for (const std::string& name : *data) {
      bins += name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
      idxs += name.size() > 4 && name.compare(name.size() - 4, 4, ".idx") == 0;
    }
    EXPECT_EQ(idxs, 4u);
    EXPECT_EQ(bins, reads == RemoteReads::kParts ? 4u : 0u);
    EXPECT_EQ(f.Count(RequestKind::kHead), 2u);  // the manifest's, once per open
  }
}

// Readers hold a cached .bin's pin across reads (a lease), let go when idle: with a budget of
// 16 or 4 objects (4: the least that leases are held for) and 24 shards kept open, reading the
// shards in turn evicts idle ones each time and never stalls for good. A budget of one .bin and
// one .idx takes the pin within each read.
TEST(RemoteDatasetTest, IdleCachedShardsLetGoOfTheirPinsForASmallBudget) {
  for (uint64_t objects : {16, 4, 1}) {
    RemoteFixture f;
    f.Write(24, 5);
    RemoteDatasetOptions o;
    o.backend = f.metered;
    auto plain = StokerDataset::OpenRemote(f.uri, o);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    uint64_t bin = 0, idx = 0;
    for (uint64_t s = 0; s < 24; ++s) {
      bin = std::max(bin, (*plain)->shard_ref(s).info->bin_bytes);
      idx = std::max(idx, (*plain)->shard_ref(s).info->idx_bytes);
    }
    auto dir = TempDir::Create("stoker-remote-lease-");
    ASSERT_TRUE(dir.ok());
    o.cache_dir = (*dir)->Join("cache");
    o.cache_size_bytes = objects * std::max(bin, idx) + (objects == 1 ? idx : 0);
    o.max_open_shards = 24;  // every shard stays open (and its lease alive) throughout
    auto ds = StokerDataset::OpenRemote(f.uri, o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    for (int round = 0; round < 2; ++round) {
      for (uint64_t s = 0; s < 24; ++s) {
        for (uint64_t d = s * 5; d < s * 5 + 5; d += 2) ExpectDocument(**ds, d);
      }
    }
  }
}

TEST(RemoteDatasetTest, OpenTokenSourceServesRemoteDatasetsAndNamesTheObjectAtFault) {
  RemoteFixture f;
  f.Write(3, 4);
  RemoteDatasetOptions o;
  o.backend = f.metered;
  auto src = OpenTokenSource(f.uri + "/", o);
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  EXPECT_EQ((*src)->path(), f.uri);
  ExpectDocument(**src, 11);
  // A damaged index is refused by its checksum, naming the object and the manifest.
  ASSERT_TRUE(storage::WriteAll(*f.memory, "s3://bucket/data/shards/s1.idx",
                                std::string(testing::IdxBytesFor(8, 2, {9, 9, 9, 9})))
                  .ok());
  std::vector<int32_t> out(2);
  Status st = (*src)->Read(5, 0, 1, out.data());
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("s3://bucket/data/shards/s1.idx"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("manifest.json"), std::string::npos) << st.message();
  auto none = OpenTokenSource("s3://bucket/nothing-here", o);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("s3://bucket/nothing-here/manifest.json"),
            std::string::npos);
  auto npy = OpenTokenSource("s3://bucket/x.npy", o);
  EXPECT_EQ(npy.status().code(), StatusCode::kInvalidArgument);
}

TEST(RemoteDatasetTest, WithoutALengthIndexPlanningReadsTheShards) {
  RemoteFixture f;
  f.Write(4, 3, /*with_index=*/false);
  RemoteDatasetOptions o;
  o.backend = f.metered;
  auto ds = StokerDataset::OpenRemote(f.uri, o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(f.Count(RequestKind::kGet), 1u);
  std::vector<uint64_t> lengths(12);
  (*ds)->DocumentLengths(0, 12, lengths.data());
  for (uint64_t d = 0; d < 12; ++d) EXPECT_EQ(lengths[d], uint64_t(RemoteFixture::Length(d)));
  EXPECT_EQ(f.Count(RequestKind::kGet), 1u + 4u);  // one .idx per shard
}

// The backend opener, counting the opens of each shard and telling a waiting test about them.
class CountingOpener final : public ShardOpener {
 public:
  explicit CountingOpener(std::shared_ptr<const ShardOpener> inner) : inner_(std::move(inner)) {}
  Result<std::shared_ptr<const TokenSource>> Open(const ShardRef& shard) const override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++opens_[shard.index];
      ++total_;
    }
    cv_.notify_all();
    return inner_->Open(shard);
  }
  std::map<uint64_t, int> opens() const {
    std::lock_guard<std::mutex> lock(mu_);
    return opens_;
  }
  // Whether an open past the first `seen` comes within `wait`.
  bool OpensPast(uint64_t seen, std::chrono::milliseconds wait) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, wait, [&] { return total_ > seen; });
  }
  uint64_t total() const {
    std::lock_guard<std::mutex> lock(mu_);
    return total_;
  }

 private:
  std::shared_ptr<const ShardOpener> inner_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::map<uint64_t, int> opens_;
  mutable uint64_t total_ = 0;
};

// Block shuffle through a loader with the pool a loader gives a remote dataset (room for two
// blocks): each shard is opened once in the epoch, and non-persistent workers fetch nothing of
// the next epoch until its first batch is asked for (they used to start it as soon as the end was
// delivered, and the request counts of tests/python/test_remote_datasets.py grew with it).
TEST(RemoteDatasetTest, BlockShuffleOpensEachShardOncePerEpochAndNothingPastItsEnd) {
  RemoteFixture f;
  f.Write(16, 40);
  LoaderOptions lo;
  lo.seq_len = 16;
  lo.batch_size = 4;
  lo.num_workers = 2;
  lo.pin_memory = false;
  lo.shuffle = ShuffleMode::kBlock;
  lo.block_shards = 4;
  lo.persistent_workers = false;
  RemoteDatasetOptions o = RemoteOptionsFor(lo);
  ASSERT_EQ(o.max_open_shards, 8u);
  o.backend = f.metered;
  auto counting = std::make_shared<CountingOpener>(
      NewBackendShardOpener(f.metered, RemoteReads::kParts, o.part_bytes));
  o.opener = counting;
  auto ds = StokerDataset::OpenRemote(f.uri, o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::shared_ptr<const TokenSource> source(std::move(*ds));
  auto loader = Loader::Open({LoaderDataset{"", source, 1.0}}, lo);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  size_t steps = 0;
  while (true) {
    auto b = (*loader)->Next();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    if (!b->has_value()) break;
    ++steps;
  }
  ASSERT_GT(steps, 20u);
  std::map<uint64_t, int> epoch0 = counting->opens();
  EXPECT_EQ(epoch0.size(), 16u);
  for (const auto& [shard, n] : epoch0) EXPECT_EQ(n, 1) << "shard " << shard;
  // The end is delivered: nothing reads on until the next epoch's first batch is asked for.
  const uint64_t seen = counting->total();
  EXPECT_FALSE(counting->OpensPast(seen, std::chrono::milliseconds(300)))
      << "a shard of epoch 1 was opened before its first batch was asked for";
  auto first = (*loader)->Next();
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status().ToString();
  EXPECT_EQ((**first).epoch(), 1u);
  EXPECT_GT(counting->total(), seen);  // epoch 1 starts in a shard that epoch 0 let go
}

}  // namespace
}  // namespace stoker
