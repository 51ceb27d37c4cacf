// Property tests of the plan over many world sizes, batch sizes, dataset sizes and modes.
#include "stoker/plan.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "plan/plan_test_util.h"

namespace stoker::plan {
namespace {

using testing::Coverage;
using testing::MakeLengths;
using testing::MakePlan;

// Every property test runs twice: over lengths in a vector and over a memory-mapped length index.
class PlanPropertyTest : public ::testing::TestWithParam<testing::LengthsBacking> {
 protected:
  void SetUp() override { testing::Backing() = GetParam(); }
  void TearDown() override { testing::Backing() = testing::LengthsBacking::kInMemory; }
};
INSTANTIATE_TEST_SUITE_P(Lengths, PlanPropertyTest,
                         ::testing::Values(testing::LengthsBacking::kInMemory,
                                           testing::LengthsBacking::kMapped),
                         [](const auto& info) {
                           return info.param == testing::LengthsBacking::kMapped ? "Mapped"
                                                                                 : "InMemory";
                         });

constexpr uint32_t kWorldSizes[] = {1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 31, 32, 61, 64};

struct Config {
  uint64_t docs;
  uint64_t seq_len;
  PlanOptions options;
  std::string Describe() const {
    return "docs=" + std::to_string(docs) + " seq_len=" + std::to_string(seq_len) +
           " W=" + std::to_string(options.world_size) + " B=" + std::to_string(options.batch_size) +
           " shuffle=" + std::string(ShuffleModeName(options.shuffle)) +
           " pack=" + std::string(PackModeName(options.pack)) +
           " remainder=" + std::string(RemainderPolicyName(options.remainder));
  }
};

std::vector<Config> RandomConfigs(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint64_t doc_counts[] = {1, 2, 5, 17, 100, 600};
  std::vector<Config> out;
  for (int i = 0; i < n; ++i) {
    Config c;
    c.docs = doc_counts[rng() % 6];
    c.seq_len = 1 + rng() % 100;
    c.options.seq_len = c.seq_len;
    c.options.world_size = kWorldSizes[rng() % std::size(kWorldSizes)];
    c.options.batch_size = 1 + rng() % 4;
    c.options.seed = rng();
    c.options.shuffle = static_cast<ShuffleMode>(rng() % 3);
    c.options.block_shards = 1 + rng() % 3;
    c.options.pack = static_cast<PackMode>(rng() % 3);
    c.options.bestfit_window = 1 + rng() % 64;
    c.options.remainder = static_cast<RemainderPolicy>(rng() % 2);
    out.push_back(c);
  }
  return out;
}

// Every rank's batches of one epoch, and the global rows the remainder policy dropped.
struct EpochRun {
  std::vector<std::vector<Batch>> per_rank;
  std::vector<Row> dropped;
};

EpochRun RunEpoch(const Plan& plan, uint64_t epoch, PlanPosition start) {
  EpochRun run;
  const PlanOptions& o = plan.options();
  run.per_rank.resize(o.world_size);
  for (uint32_t r = 0; r < o.world_size; ++r) {
    // Each rank walks on its own, as separate processes would.
    for (PlanPosition p = start; p.epoch == epoch && plan.steps_remaining(p) > 0;
         p = plan.Advance(p)) {
      auto batch = plan.GetBatchAt(p, r);
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok()) return run;
      run.per_rank[r].push_back(*batch);
    }
  }
  uint64_t used = start.rows_consumed + plan.steps_remaining(start) * plan.global_batch_rows();
  uint64_t rows = plan.rows_in_epoch(epoch);
  if (used < rows) EXPECT_TRUE(plan.GetRows(epoch, used, rows - used, &run.dropped).ok());
  return run;
}

TEST_P(PlanPropertyTest, ExactlyOnceEqualStepsAndRowsFit) {
  for (const Config& c : RandomConfigs(600, 1)) {
    SCOPED_TRACE(c.Describe());
    auto lengths = MakeLengths(c.docs, 1 + c.seq_len / 2.0, 0.15, 1 + c.docs % 7, c.options.seed);
    auto plan = MakePlan({{lengths, 1.0}}, c.options);
    ASSERT_TRUE(plan);
    const PlanOptions& o = c.options;
    for (uint64_t epoch = 0; epoch < 2; ++epoch) {
      EpochRun run = RunEpoch(*plan, epoch, {epoch, 0});
      Coverage cover, repeated;
      uint64_t steps = plan->steps_per_epoch(epoch);
      uint64_t rows = plan->rows_in_epoch(epoch);
      EXPECT_EQ(steps, o.remainder == RemainderPolicy::kDropLast
                           ? rows / plan->global_batch_rows()
                           : (rows + plan->global_batch_rows() - 1) / plan->global_batch_rows());
      for (const auto& batches : run.per_rank) {
        ASSERT_EQ(batches.size(), steps);  // the same number of steps on every rank
        for (const Batch& b : batches) {
          ASSERT_EQ(b.rows.size(), o.batch_size);
          for (const Row& row : b.rows) {
            ASSERT_LE(row.num_tokens(), o.seq_len);
            ASSERT_FALSE(row.pieces.empty());
            (row.repeated ? repeated : cover).Add(row);
          }
        }
      }
      cover.Add(run.dropped);
      uint64_t limit = o.pack == PackMode::kPad ? o.seq_len : UINT64_MAX;
      ASSERT_EQ(cover.CheckExactlyOnce(0, *lengths, limit), "") << "epoch " << epoch;
      if (o.remainder == RemainderPolicy::kDropLast)
        EXPECT_TRUE(run.per_rank[0].empty() || run.dropped.size() < plan->global_batch_rows());
    }
  }
}

TEST_P(PlanPropertyTest, PadRemainderRepeatsTheNextEpochsFirstRows) {
  PlanOptions o;
  o.seq_len = 16;
  o.world_size = 7;
  o.batch_size = 3;
  o.remainder = RemainderPolicy::kPad;
  auto lengths = MakeLengths(50, 10, 0.1, 3, 5);
  auto plan = MakePlan({{lengths, 1.0}}, o);
  uint64_t rows = plan->rows_in_epoch(0);
  ASSERT_NE(rows % 21, 0u) << "pick data whose last batch is incomplete";
  uint64_t last = plan->steps_per_epoch(0) - 1;
  std::vector<Row> next;
  ASSERT_TRUE(plan->GetRows(1, 0, 21 - rows % 21, &next).ok());
  size_t k = 0;
  for (uint32_t r = 0; r < 7; ++r) {
    Batch b = *plan->GetBatch(0, last, r);
    for (const Row& row : b.rows) {
      if (!row.repeated) continue;
      ASSERT_LT(k, next.size());
      Row want = next[k++];
      want.repeated = true;
      EXPECT_EQ(row, want);
    }
  }
  EXPECT_EQ(k, next.size());
}

TEST_P(PlanPropertyTest, DatasetSmallerThanOneGlobalBatch) {
  auto lengths = MakeLengths(3, 5, 0.0, 1, 9);
  PlanOptions o;
  o.seq_len = 64;
  o.world_size = 8;
  o.batch_size = 2;
  auto drop = MakePlan({{lengths, 1.0}}, o);
  EXPECT_EQ(drop->steps_per_epoch(0), 0u);
  EXPECT_EQ(drop->GetBatch(0, 0, 0).status().code(), StatusCode::kOutOfRange);
  o.remainder = RemainderPolicy::kPad;
  auto pad = MakePlan({{lengths, 1.0}}, o);
  ASSERT_EQ(pad->steps_per_epoch(0), 1u);
  Coverage cover;
  int real = 0;
  for (uint32_t r = 0; r < 8; ++r) {
    Batch b = *pad->GetBatch(0, 0, r);
    ASSERT_EQ(b.rows.size(), 2u);
    for (const Row& row : b.rows) {
      if (!row.repeated) {
        cover.Add(row);
        ++real;
      }
    }
  }
  EXPECT_EQ(real, static_cast<int>(pad->rows_in_epoch(0)));
  EXPECT_EQ(cover.CheckExactlyOnce(0, *lengths), "");
}

TEST_P(PlanPropertyTest, EpochsDifferAndSameSeedGivesSamePlan) {
  for (ShuffleMode mode : {ShuffleMode::kGlobal, ShuffleMode::kBlock}) {
    for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
      auto lengths = MakeLengths(500, 20, 0.05, 20, 4);
      PlanOptions o;
      o.seq_len = 64;
      o.shuffle = mode;
      o.pack = pack;
      o.block_shards = 2;
      o.seed = 1234;
      auto a = MakePlan({{lengths, 1.0}}, o);
      auto b = MakePlan({{lengths, 1.0}}, o);
      o.seed = 1235;
      auto c = MakePlan({{lengths, 1.0}}, o);
      std::vector<Row> a0, a1, b0, c0;
      ASSERT_TRUE(a->GetRows(0, 0, 40, &a0).ok());
      ASSERT_TRUE(a->GetRows(1, 0, 40, &a1).ok());
      ASSERT_TRUE(b->GetRows(0, 0, 40, &b0).ok());
      ASSERT_TRUE(c->GetRows(0, 0, 40, &c0).ok());
      EXPECT_EQ(a0, b0);
      EXPECT_NE(a0, a1);
      EXPECT_NE(a0, c0);
      EXPECT_EQ(a->fingerprint(), b->fingerprint());
      EXPECT_NE(a->fingerprint(), c->fingerprint());
    }
  }
}

TEST_P(PlanPropertyTest, NoShuffleKeepsSourceOrder) {
  auto lengths = MakeLengths(30, 10, 0.0, 1, 2);
  PlanOptions o;
  o.seq_len = 1000000;
  o.shuffle = ShuffleMode::kNone;
  o.pack = PackMode::kPad;
  auto plan = MakePlan({{lengths, 1.0}}, o);
  for (uint64_t r = 0; r < 30; ++r) EXPECT_EQ(plan->GetRow(3, r)->pieces[0].document, r);
}

TEST_P(PlanPropertyTest, BestFitNeverTruncatesADocumentThatFits) {
  auto lengths = MakeLengths(3000, 300, 0.05, 4, 8);
  PlanOptions o;
  o.seq_len = 512;
  o.pack = PackMode::kBestFit;
  o.bestfit_window = 500;
  auto plan = MakePlan({{lengths, 1.0}}, o);
  std::vector<Row> rows;
  ASSERT_TRUE(plan->GetRows(0, 0, plan->rows_in_epoch(0), &rows).ok());
  std::vector<int> pieces(3000, 0);
  for (const Row& row : rows) {
    for (const RowPiece& p : row.pieces) {
      ++pieces[p.document];
      uint64_t len = lengths->length(p.document);
      if (len <= o.seq_len) {
        EXPECT_EQ(p.offset, 0u);
        EXPECT_EQ(p.length, len);
      } else {
        EXPECT_EQ(p.offset % o.seq_len, 0u);  // split only into seq_len pieces
      }
    }
  }
  for (uint64_t d = 0; d < 3000; ++d) {
    uint64_t len = lengths->length(d);
    EXPECT_EQ(pieces[d], static_cast<int>((len + o.seq_len - 1) / o.seq_len)) << d;
  }
  PackingStats st = plan->ComputePackingStats(0);
  EXPECT_EQ(st.rows, rows.size());
  EXPECT_EQ(st.truncated_tokens, 0u);
  EXPECT_GE(st.real_token_share(), 0.95);
}

TEST_P(PlanPropertyTest, BestFitReachesNinetyNinePercentOnWebLikeLengths) {
  auto lengths = MakeLengths(20000, 400, 0.0, 1, 21);
  PlanOptions o;
  o.seq_len = 2048;
  o.pack = PackMode::kBestFit;
  auto plan = MakePlan({{lengths, 1.0}}, o);
  EXPECT_GE(plan->ComputePackingStats(0).real_token_share(), 0.99);
  o.pack = PackMode::kPad;
  auto pad = MakePlan({{lengths, 1.0}}, o);
  EXPECT_LT(pad->ComputePackingStats(0).real_token_share(), 0.5);
}

TEST_P(PlanPropertyTest, ConcatRowsAreFullExceptTheLast) {
  auto lengths = MakeLengths(777, 50, 0.2, 3, 6);
  PlanOptions o;
  o.seq_len = 128;
  auto plan = MakePlan({{lengths, 1.0}}, o);
  std::vector<Row> rows;
  ASSERT_TRUE(plan->GetRows(0, 0, plan->rows_in_epoch(0), &rows).ok());
  for (size_t i = 0; i + 1 < rows.size(); ++i) ASSERT_EQ(rows[i].num_tokens(), 128u);
  uint64_t total = 0;
  for (uint64_t d = 0; d < lengths->num_documents(); ++d) total += lengths->length(d);
  EXPECT_EQ(rows.back().num_tokens(), total - (rows.size() - 1) * 128);
  EXPECT_EQ(plan->GetRow(0, rows.size()).status().code(), StatusCode::kOutOfRange);
}

TEST_P(PlanPropertyTest, BlockShuffleStaysLocal) {
  // 40 shards of ~500 documents; block shuffles groups of 2 shards, so a window of 1,000
  // documents lies in at most 2 groups (4 shards) while a global shuffle touches nearly all.
  auto lengths = MakeLengths(20000, 20, 0.0, 40, 12);
  PlanOptions o;
  o.shuffle = ShuffleMode::kBlock;
  o.block_shards = 2;
  auto block = MakePlan({{lengths, 1.0}}, o);
  o.shuffle = ShuffleMode::kGlobal;
  auto global = MakePlan({{lengths, 1.0}}, o);
  ShuffleStats b = block->ComputeShuffleStats(0, 0), g = global->ComputeShuffleStats(0, 0);
  EXPECT_LE(b.mean_shards_per_window, 4.0);
  EXPECT_GT(g.mean_shards_per_window, 35.0);
  EXPECT_GT(g.mean_source_distance, 20000 / 4.0);  // uniform pairs: about N / 3
  EXPECT_EQ(b.documents, 20000u);
}

TEST_P(PlanPropertyTest, ConcurrentCallsAgreeWithSequentialOnes) {
  auto lengths = MakeLengths(20000, 30, 0.05, 10, 13);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    PlanOptions o;
    o.seq_len = 256;
    o.pack = pack;
    o.bestfit_window = 64;
    o.world_size = 4;
    o.batch_size = 2;
    auto plan = MakePlan({{lengths, 1.0}}, o);
    uint64_t steps = plan->steps_per_epoch(0);
    std::vector<std::vector<Batch>> got(4);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < 4; ++r) {
      // Ranks walk from different ends so the lazily extended layouts and caches are contended.
      threads.emplace_back([&, r] {
        for (uint64_t i = 0; i < steps; ++i) {
          uint64_t s = r % 2 ? steps - 1 - i : i;
          got[r].push_back(*plan->GetBatch(0, s, r));
        }
      });
    }
    for (auto& t : threads) t.join();
    auto fresh = MakePlan({{lengths, 1.0}}, o);
    for (uint32_t r = 0; r < 4; ++r) {
      for (uint64_t i = 0; i < steps; ++i) {
        uint64_t s = r % 2 ? steps - 1 - i : i;
        ASSERT_EQ(got[r][i].rows, fresh->GetBatch(0, s, r)->rows);
      }
    }
  }
}

TEST_P(PlanPropertyTest, LazyLayoutsAgreeWithCountedOnes) {
  // A plan that walks by Advance packs windows only as it goes; one that counts its steps first
  // packs the whole epoch. They must give the same stream, for every mode and remainder.
  auto lengths = MakeLengths(5000, 40, 0.1, 5, 31);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    for (RemainderPolicy rem : {RemainderPolicy::kDropLast, RemainderPolicy::kPad}) {
      PlanOptions o;
      o.seq_len = 100;
      o.pack = pack;
      o.bestfit_window = 100;
      o.world_size = 3;
      o.batch_size = 5;
      o.remainder = rem;
      auto counted = MakePlan({{lengths, 1.0}}, o);
      auto lazy = MakePlan({{lengths, 1.0}}, o);
      uint64_t steps = counted->steps_per_epoch(0);
      PlanPosition p{0, 0};
      uint64_t walked = 0;
      for (; p.epoch == 0; p = lazy->Advance(p), ++walked) {
        ASSERT_LT(walked, steps);
        ASSERT_EQ(lazy->GetBatchAt(p, 2)->rows, counted->GetBatch(0, walked, 2)->rows);
      }
      EXPECT_EQ(walked, steps);
    }
  }
}

TEST(PlanTest, CreateRejectsBadOptions) {
  auto lengths = MakeLengths(10, 5, 0.0, 1, 1);
  PlanOptions o;
  o.seq_len = 0;
  EXPECT_EQ(Plan::Create({{lengths, 1.0}}, o).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.rank = 1;
  EXPECT_EQ(Plan::Create({{lengths, 1.0}}, o).status().code(), StatusCode::kInvalidArgument);
  o = {};
  EXPECT_EQ(Plan::Create({{lengths, 0.0}}, o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Plan::Create({}, o).status().code(), StatusCode::kInvalidArgument);
  auto empty = std::make_shared<DatasetLengths>();
  empty->name = "empty";
  empty->document_lengths = {0, 0};
  auto st = Plan::Create({{empty, 1.0}}, o).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'empty'"), std::string::npos) << st.message();
  auto bad_shards = std::make_shared<DatasetLengths>(*lengths);
  bad_shards->shard_first_document = {0, 5};
  EXPECT_EQ(Plan::Create({{bad_shards, 1.0}}, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(PlanTest, ModeNamesRoundTrip) {
  for (auto m : {ShuffleMode::kGlobal, ShuffleMode::kBlock, ShuffleMode::kNone}) {
    EXPECT_EQ(*ParseShuffleMode(ShuffleModeName(m)), m);
  }
  for (auto m : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    EXPECT_EQ(*ParsePackMode(PackModeName(m)), m);
  }
  EXPECT_EQ(*ParseRemainderPolicy("drop_last"), RemainderPolicy::kDropLast);
  auto bad = ParsePackMode("best");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("concat, bestfit, pad"), std::string::npos);
}

}  // namespace
}  // namespace stoker::plan
