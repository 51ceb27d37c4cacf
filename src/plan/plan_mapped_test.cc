// The plan over memory-mapped lengths (a length index) against the plan over lengths in memory,
// and the private memory the plan needs per document.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "format/length_index.h"
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
    auto lengths = std::make_shared<DatasetLengths>();
    const LengthIndexHeader& h = (*index)->header();
    lengths->mapped = {reinterpret_cast<const uint8_t*>((*index)->lengths()), h.num_documents,
                       MappedLengths::Element::kUint32, *index};
    lengths->totals = LengthTotals{h.total_tokens, h.nonempty_documents, h.length_hash};
    for (uint64_t s = 0; s <= h.num_shards; ++s) {
      lengths->shard_first_document.push_back((*index)->shard_first_document(s));
    }
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
