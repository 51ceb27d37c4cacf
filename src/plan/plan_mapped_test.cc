// The plan over memory-mapped lengths (a length index) against the plan over lengths in memory,
// and the private memory the plan needs per document.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/length_index.h"
#include "format/test_files.h"
#include "plan/mapped_lengths.h"
#include "plan/plan_test_util.h"
#include "stoker/plan.h"

namespace stoker::plan {
namespace {

using testing::AsMapped;
using testing::MakeLengths;
using testing::MakePlan;

TEST(PlanMappedTest, MappedLengthsGiveTheSameRowsFingerprintAndStats) {
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    for (ShuffleMode shuffle : {ShuffleMode::kGlobal, ShuffleMode::kBlock, ShuffleMode::kNone}) {
      auto a = MakeLengths(3000, 40, 0.1, 9, 77);
      auto b = MakeLengths(1200, 90, 0.0, 1, 78);
      PlanOptions o;
      o.seq_len = 64;
      o.batch_size = 3;
      o.world_size = 5;
      o.shuffle = shuffle;
      o.pack = pack;
      o.bestfit_window = 100;
      o.seed = 11;
      for (int datasets : {1, 3}) {
        std::vector<PlanDataset> memory{{a, 2.0}}, mapped{{AsMapped(*a), 2.0}};
        if (datasets == 3) {
          memory.push_back({b, 1.0});
          memory.push_back({a, 0.5});
          mapped.push_back({AsMapped(*b), 1.0});
          mapped.push_back({AsMapped(*a), 0.5});
        }
        auto pm = MakePlan(memory, o);
        auto pp = MakePlan(mapped, o);
        ASSERT_TRUE(pm && pp);
        const std::string what = std::string(PackModeName(pack)) + "/" +
                                 std::string(ShuffleModeName(shuffle)) + "/" +
                                 std::to_string(datasets);
        EXPECT_EQ(pm->fingerprint(), pp->fingerprint()) << what;
        for (uint64_t epoch : {0, 1}) {
          ASSERT_EQ(pm->rows_in_epoch(epoch), pp->rows_in_epoch(epoch)) << what;
          std::vector<Row> rm, rp;
          ASSERT_TRUE(pm->GetRows(epoch, 0, pm->rows_in_epoch(epoch), &rm).ok());
          ASSERT_TRUE(pp->GetRows(epoch, 0, pp->rows_in_epoch(epoch), &rp).ok());
          EXPECT_TRUE(rm == rp) << what << " epoch " << epoch;
          PackingStats sm = pm->ComputePackingStats(epoch), sp = pp->ComputePackingStats(epoch);
          EXPECT_EQ(sm.real_tokens, sp.real_tokens);
          EXPECT_EQ(sm.documents_split, sp.documents_split);
        }
        auto state = pm->MakeState({1, 15});
        EXPECT_TRUE(pp->Restore(state).ok()) << "a checkpoint moves between the two";
      }
    }
  }
}

// The fingerprint of these lengths and options as the plan computed it before lengths could be
// mapped: checkpoints written then still restore.
TEST(PlanMappedTest, FingerprintIsUnchanged) {
  auto lengths = MakeLengths(1000, 30, 0.1, 4, 5);
  PlanOptions o;
  o.seq_len = 128;
  o.pack = PackMode::kBestFit;
  o.seed = 3;
  auto plan = MakePlan({{lengths, 1.0}}, o);
  auto mapped = MakePlan({{AsMapped(*lengths), 1.0}}, o);
  ASSERT_TRUE(plan && mapped);
  EXPECT_EQ(plan->fingerprint(), "9e57c97c33872640");
  EXPECT_EQ(mapped->fingerprint(), "9e57c97c33872640");
}

// A damaged chunk of a length index: opening reads nothing, the first batch that reads the chunk
// is one error naming the file and the chunk (and every later one too), and no bestfit count
// computed from it is cached for other processes.
TEST(PlanMappedTest, ADamagedChunkIsTheErrorOfTheBatchesNeverADifferentPlan) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(setenv("STOKER_CACHE_DIR", (*dir)->Join("cache").c_str(), 1), 0);
  ASSERT_EQ(setenv("STOKER_PLAN_CACHE_MIN_WINDOWS", "1", 1), 0);
  const std::string path = (*dir)->Join("d.stkidx");
  auto source = MakeLengths(50'000, 300, 0.01, 3, 9);
  ASSERT_TRUE(WriteLengthIndex(path, source->shard_first_document, source->document_lengths).ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(128 + 8 * 4 + 4 * 40'000 + 1);  // document 40,000: chunk 39
    f.put('\x7f');
  }
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit}) {
    auto index = LengthIndex::Open(path);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    auto lengths = std::make_shared<DatasetLengths>(LengthsFromIndex(*index, path));
    PlanOptions o;
    o.seq_len = 512;
    o.batch_size = 4;
    o.world_size = 2;
    o.pack = pack;
    auto plan = MakePlan({{lengths, 1.0}}, o);
    ASSERT_TRUE(plan);
    EXPECT_TRUE(lengths->status().ok()) << "Create reads no length";
    // Global shuffle: the first window's 4,096 documents fall in every chunk of 49.
    for (uint64_t step : {0, 1, 5}) {
      auto batch = plan->GetBatch(0, step, 1);
      ASSERT_FALSE(batch.ok()) << PackModeName(pack) << " step " << step;
      EXPECT_EQ(batch.status().code(), StatusCode::kCorruption);
      EXPECT_NE(batch.status().message().find(path), std::string::npos);
      EXPECT_NE(batch.status().message().find("length chunk 39 (documents 39936 to 40959)"),
                std::string::npos)
          << batch.status().message();
    }
    if (pack == PackMode::kBestFit) {
      plan->steps_per_epoch(0);
      EXPECT_TRUE(!std::filesystem::exists((*dir)->Join("cache")) ||
                  std::filesystem::is_empty((*dir)->Join("cache")))
          << "counts from a damaged chunk were cached";
    }
  }
  // The same count over a sound index is cached (so the check above is not vacuous).
  ASSERT_TRUE(WriteLengthIndex(path, source->shard_first_document, source->document_lengths).ok());
  auto index = LengthIndex::Open(path);
  ASSERT_TRUE(index.ok());
  PlanOptions o;
  o.seq_len = 512;
  o.pack = PackMode::kBestFit;
  auto plan =
      MakePlan({{std::make_shared<DatasetLengths>(LengthsFromIndex(*index, path)), 1.0}}, o);
  ASSERT_TRUE(plan);
  EXPECT_GT(plan->steps_per_epoch(0), 0u);
  EXPECT_FALSE(std::filesystem::is_empty((*dir)->Join("cache")));
  ASSERT_EQ(setenv("STOKER_CACHE_DIR", "off", 1), 0);
  ASSERT_EQ(unsetenv("STOKER_PLAN_CACHE_MIN_WINDOWS"), 0);
}

// Many threads reading the lengths of one index at once (as loader workers and the parallel
// bestfit count do): every chunk ends up verified, the damaged one is reported (TSan runs this).
TEST(PlanMappedTest, ConcurrentReadersShareTheChunkChecks) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  const std::string path = (*dir)->Join("c.stkidx");
  std::vector<uint64_t> lengths(20'000);
  for (size_t d = 0; d < lengths.size(); ++d) lengths[d] = d % 101;
  ASSERT_TRUE(WriteLengthIndex(path, {0, lengths.size()}, lengths).ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(128 + 16 + 4 * 17'000);  // chunk 16
    f.put('\x01');
  }
  auto index = LengthIndex::Open(path);
  ASSERT_TRUE(index.ok());
  const DatasetLengths mapped = LengthsFromIndex(*index, path);
  std::vector<std::thread> threads;
  std::atomic<uint64_t> sum{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      uint64_t local = 0;
      for (uint64_t i = 0; i < lengths.size(); ++i) {
        local += mapped.length((i * 7919 + t) % lengths.size());
      }
      sum += local;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_GT(sum.load(), 0u);
  EXPECT_EQ((*index)->chunk_verifier()->chunks_verified(), 20u);
  EXPECT_EQ(mapped.status().code(), StatusCode::kCorruption);
  EXPECT_NE(mapped.status().message().find("length chunk 16"), std::string::npos);
}

// A Megatron input opens in O(1); the totals it needs a pass for (the fingerprint's hash, here)
// are computed when first asked for, cached, and read from the cache by the next process; the plan
// over its mapped sizes equals the plan over the same lengths in memory; a negative size is one
// error naming the .idx and the byte. (Before lazy totals this test expected the pass at open.)
TEST(PlanMappedTest, MegatronTotalsAreCountedOnceThenCached) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(setenv("STOKER_CACHE_DIR", (*dir)->Join("cache").c_str(), 1), 0);
  const std::string cache = (*dir)->Join("cache/plan");  // the cache root's plan/
  auto memory = MakeLengths(2'600'000, 20, 0.05, 1, 21);
  std::vector<int32_t> sizes(memory->document_lengths.begin(), memory->document_lengths.end());
  uint64_t tokens = 0, nonempty = 0;
  for (uint64_t l : memory->document_lengths) {
    tokens += l;
    nonempty += l > 0;
  }
  const std::string prefix = (*dir)->Join("m");
  std::string idx = stoker::testing::IdxBytesFor(8, 2, sizes);
  ASSERT_TRUE(WriteFileAtomically(prefix + ".idx", idx).ok());
  ASSERT_TRUE(WriteFileAtomically(prefix + ".bin", "").ok());
  std::filesystem::resize_file(prefix + ".bin", 2 * tokens);  // sparse: only lengths are read
  auto totals_files = [&] {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(cache)) {
      if (e.path().extension() == ".totals") out.push_back(e.path());
    }
    return out;
  };
  PlanOptions o;
  o.seq_len = 256;
  o.batch_size = 2;
  o.world_size = 3;
  o.pack = PackMode::kBestFit;
  auto in_memory = MakePlan({{memory, 1.0}}, o);
  ASSERT_TRUE(in_memory);
  for (int run = 0; run < 3; ++run) {
    if (run == 2) {  // a damaged cache file is recounted, never used
      for (const std::string& file : totals_files()) {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(48);
        f.put('\x55');
      }
    }
    auto source = OpenTokenSource(prefix);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    auto lengths = DatasetLengths::FromTokenSource(**source);
    ASSERT_TRUE(lengths.ok()) << lengths.status().ToString();
    ASSERT_TRUE(lengths->totals.has_value());
    EXPECT_EQ(lengths->totals->tokens, tokens);
    // From the cache after the first run's fingerprint; before it, known only when asked for.
    EXPECT_EQ(lengths->totals->length_hash.has_value(), run == 1) << "run " << run;
    auto mapped_lengths = std::make_shared<DatasetLengths>(std::move(*lengths));
    auto mapped = MakePlan({{mapped_lengths, 1.0}}, o);
    ASSERT_TRUE(mapped);
    EXPECT_EQ(mapped->fingerprint(), in_memory->fingerprint()) << "run " << run;
    EXPECT_EQ(totals_files().size(), 1u) << "one totals file";
    PlanOptions pad = o;
    pad.pack = PackMode::kPad;
    auto padded = MakePlan({{mapped_lengths, 1.0}}, pad);
    ASSERT_TRUE(padded);
    EXPECT_EQ(padded->rows_in_epoch(0), nonempty) << "pad: a row per non-empty document";
    if (run == 0) {
      for (uint64_t step : {0, 7, 300}) {
        auto a = mapped->GetBatch(0, step, 2), b = in_memory->GetBatch(0, step, 2);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_TRUE(a->rows == b->rows) << "step " << step;
      }
    }
  }
  // A negative size far into the array: its chunk's check names it when the plan reads it (the
  // plan would read it as 0), and no batch after that is given out.
  const int32_t negative = -5;
  std::memcpy(idx.data() + 34 + 4 * 2'500'000, &negative, 4);
  ASSERT_TRUE(WriteFileAtomically(prefix + ".idx", idx).ok());
  auto source = OpenTokenSource(prefix);
  ASSERT_TRUE(source.ok());
  auto lengths = DatasetLengths::FromTokenSource(**source);
  ASSERT_TRUE(lengths.ok()) << "open is O(1): the size is checked when read";
  ASSERT_NE(lengths->mapped.verifier, nullptr);
  Status all = lengths->mapped.verifier->VerifyAll();
  EXPECT_EQ(all.code(), StatusCode::kCorruption);
  EXPECT_NE(all.message().find(prefix + ".idx"), std::string::npos);
  EXPECT_NE(all.message().find("sequence 2500000 has negative length -5"), std::string::npos)
      << all.message();
  EXPECT_NE(all.message().find("at byte " + std::to_string(34 + 4 * 2'500'000)), std::string::npos);
  auto broken = MakePlan({{std::make_shared<DatasetLengths>(std::move(*lengths)), 1.0}}, o);
  ASSERT_TRUE(broken);
  auto batch = broken->GetBatch(0, 0, 0);
  EXPECT_EQ(batch.status().code(), StatusCode::kCorruption) << "every batch after the failure";
  ASSERT_EQ(setenv("STOKER_CACHE_DIR", "off", 1), 0);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STOKER_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STOKER_SANITIZED 1
#endif
#endif

// Private (anonymous) resident memory of this process, from /proc/self/status.
uint64_t RssAnonBytes() {
  std::ifstream f("/proc/self/status");
  std::string key;
  uint64_t kb = 0;
  while (f >> key) {
    if (key == "RssAnon:") {
      f >> kb;
      return kb * 1024;
    }
    f.ignore(1 << 20, '\n');
  }
  return 0;
}

// A memory bound on an algorithmic property (not a time): planning a 20 M-document dataset from a
// mapped length index keeps private memory far below one 8-byte integer per document.
TEST(PlanMappedTest, PrivateMemoryStaysFarBelowEightBytesPerDocument) {
#ifdef STOKER_SANITIZED
  GTEST_SKIP() << "sanitizer shadow memory makes RssAnon meaningless";
#endif
  constexpr uint64_t kDocs = 20'000'000;
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  const std::string path = (*dir)->Join("big.stkidx");
  {
    std::vector<uint64_t> shards{0};
    for (uint64_t s = 1; s <= 20; ++s) shards.push_back(s * kDocs / 20);
    auto w = LengthIndexWriter::Create(path, shards);
    ASSERT_TRUE(w.ok());
    std::vector<uint64_t> chunk(1 << 16);
    uint64_t x = 12345;
    for (uint64_t d = 0; d < kDocs; d += chunk.size()) {
      for (uint64_t& l : chunk) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        l = (x >> 33) % 2000;  // some empty, some longer than a row
      }
      ASSERT_TRUE((*w)->Add(chunk.data(), std::min<uint64_t>(chunk.size(), kDocs - d)).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const uint64_t before = RssAnonBytes();
  ASSERT_GT(before, 0u);
  uint64_t peak = before;
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    auto index = LengthIndex::Open(path);
    ASSERT_TRUE(index.ok());
    auto lengths = std::make_shared<DatasetLengths>(LengthsFromIndex(*index, path));
    PlanOptions o;
    o.seq_len = 1024;
    o.batch_size = 8;
    o.world_size = 1024;
    o.rank = 517;
    o.pack = pack;
    auto plan = MakePlan({{lengths, 1.0}}, o);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->fingerprint().size(), 16u);
    for (uint64_t step : {0, 1, 1000}) ASSERT_TRUE(plan->GetBatch(0, step, 517).ok());
    if (pack != PackMode::kBestFit) EXPECT_GT(plan->steps_per_epoch(0), 0u);
    auto resumed = plan->GetBatchAt({0, 500'001}, 3);
    ASSERT_TRUE(resumed.ok());
    peak = std::max(peak, RssAnonBytes());
  }
  EXPECT_LT(peak - before, kDocs) << "private memory grew by " << (peak - before) / 1e6
                                  << " MB for " << kDocs << " documents";
}

}  // namespace
}  // namespace stoker::plan
