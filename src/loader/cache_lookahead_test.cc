// The look-ahead window (cache_lookahead.h) over a real plan of a remote stoker dataset (a local
// directory served through the file backend, which makes it remote: OpenRemote). Each expected
// list is derived from the plan's own batches and the manifest's shard sizes, with the test's own
// map from document to shard.
#include "loader/cache_lookahead.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/temp_dir.h"
#include "format/stoker_dataset.h"
#include "format/test_dataset.h"
#include "storage/file_backend.h"

namespace stoker {
namespace {

constexpr int kShards = 8;
constexpr int kDocsPerShard = 16;

using Sources = std::vector<std::shared_ptr<const TokenSource>>;

class CacheLookAheadTest : public ::testing::Test {
 protected:
  // kShards shards of kDocsPerShard documents; document d has 5 + d % 7 tokens.
  void SetUp() override {
    dir_ = TempDir::Create("stoker-lookahead-").value();
    ASSERT_TRUE(testing::WriteTestDataset(dir_->path(), kShards, kDocsPerShard, [](int d) {
                  return 5 + d % 7;
                }).ok());
    RemoteDatasetOptions remote;
    remote.backend = storage::NewFileBackend();
    auto ds = StokerDataset::OpenRemote(dir_->path(), remote);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    remote_ = std::move(ds).value();
    ASSERT_TRUE(remote_->remote());
    local_ = StokerDataset::Open(dir_->path()).value();
  }

  static std::unique_ptr<Plan> MakePlan(const Sources& sources, ShuffleMode shuffle,
                                        uint32_t rank = 1) {
    std::vector<PlanDataset> datasets;
    for (const auto& s : sources) {
      datasets.push_back(
          {std::make_shared<const DatasetLengths>(DatasetLengths::FromTokenSource(*s).value()),
           1.0});
    }
    PlanOptions o;
    o.seq_len = 16;
    o.batch_size = 2;
    o.world_size = 2;
    o.rank = rank;
    o.seed = 7;
    o.shuffle = shuffle;
    return Plan::Create(std::move(datasets), o).value();
  }

  static uint64_t ShardBytes(const StokerDataset& ds, uint64_t s) {
    return ds.manifest().shards[s].bin_bytes + ds.manifest().shards[s].idx_bytes;
  }

  // The shards of dataset `d` that `steps` steps of `rank` from `from` read, each once, in the
  // order first read, from the plan's batches.
  static std::vector<uint64_t> Expected(const Plan& plan, PlanPosition from, uint32_t rank,
                                        uint64_t steps, uint32_t d = 0) {
    std::vector<uint64_t> out;
    for (uint64_t i = 0; i < steps; ++i, from = plan.Advance(from)) {
      Result<Batch> batch = plan.GetBatchAt(from, rank);
      if (!batch.ok()) break;
      for (const Row& row : batch->rows) {
        for (const RowPiece& p : row.pieces) {
          const uint64_t shard = p.document / kDocsPerShard;
          if (p.dataset == d && std::find(out.begin(), out.end(), shard) == out.end()) {
            out.push_back(shard);
          }
        }
      }
    }
    return out;
  }

  Sources Remote() const { return {remote_}; }

  std::unique_ptr<TempDir> dir_;
  std::shared_ptr<const StokerDataset> remote_;
  std::shared_ptr<const StokerDataset> local_;
};

TEST_F(CacheLookAheadTest, ListsEachShardOnceInTheOrderFirstRead) {
  auto plan = MakePlan(Remote(), ShuffleMode::kGlobal);
  PlanPosition from;
  for (int skip = 0; skip < 3; ++skip, from = plan->Advance(from)) {
    for (uint64_t steps : {1, 4, 12}) {
      const std::vector<uint64_t> want = Expected(*plan, from, 1, steps);
      ASSERT_FALSE(want.empty());
      const auto got = ShardsAhead(*plan, Remote(), from, /*rank=*/1, steps);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0], want) << "from step " << skip << ", " << steps << " steps";
      EXPECT_EQ(std::set<uint64_t>(got[0].begin(), got[0].end()).size(), got[0].size());
    }
  }
  // A global shuffle reads the shards out of order: the list is not merely sorted.
  const std::vector<uint64_t> first = ShardsAhead(*plan, Remote(), {}, 1, 12)[0];
  EXPECT_FALSE(std::is_sorted(first.begin(), first.end()));
  // The other rank reads other rows.
  EXPECT_EQ(ShardsAhead(*plan, Remote(), {}, 0, 12)[0], Expected(*plan, {}, 0, 12));
}

TEST_F(CacheLookAheadTest, CoversAtLeastMinStepsAndAtMostMaxSteps) {
  auto plan = MakePlan(Remote(), ShuffleMode::kNone);
  // A byte budget already met: min_steps decides.
  ShardsAheadResult r = ShardsAheadWithin(*plan, Remote(), {}, 1, LookAhead{3, 5, 0});
  EXPECT_EQ(r.steps, 3u);
  EXPECT_EQ(r.shards[0], Expected(*plan, {}, 1, 3));
  // A byte budget never met: max_steps decides.
  r = ShardsAheadWithin(*plan, Remote(), {}, 1, LookAhead{3, 5, ~uint64_t{0}});
  EXPECT_EQ(r.steps, 5u);
  EXPECT_EQ(r.shards[0], Expected(*plan, {}, 1, 5));
  uint64_t bytes = 0;
  for (uint64_t s : r.shards[0]) bytes += ShardBytes(*remote_, s);
  EXPECT_EQ(r.bytes, bytes);
}

// Past min_steps the window stops at the first step whose shards reach the byte budget.
TEST_F(CacheLookAheadTest, StopsOnceTheShardsHoldTheByteBudget) {
  auto plan = MakePlan(Remote(), ShuffleMode::kNone);
  const uint64_t budget = ShardBytes(*remote_, 0) + ShardBytes(*remote_, 1) + 1;
  const ShardsAheadResult r = ShardsAheadWithin(*plan, Remote(), {}, 1, LookAhead{0, 1000, budget});
  // In source order a step reads less than a shard: the third shard is the one that reaches it.
  ASSERT_EQ(r.shards[0], (std::vector<uint64_t>{0, 1, 2}));
  ASSERT_GT(r.steps, 0u);
  EXPECT_EQ(r.bytes, budget - 1 + ShardBytes(*remote_, 2));
  EXPECT_EQ(r.shards[0], Expected(*plan, {}, 1, r.steps));
  EXPECT_EQ(Expected(*plan, {}, 1, r.steps - 1).size(), 2u);  // one step less: short of it
  // min_steps still holds when the budget is reached sooner.
  const ShardsAheadResult longer =
      ShardsAheadWithin(*plan, Remote(), {}, 1, LookAhead{r.steps + 20, 1000, budget});
  EXPECT_EQ(longer.steps, r.steps + 20);
  EXPECT_EQ(longer.shards[0], Expected(*plan, {}, 1, r.steps + 20));
}

// At the end of an epoch the window goes on into the next one (Plan::Advance), whose shuffle
// differs; from a position with no step left it is empty.
TEST_F(CacheLookAheadTest, EndsAtThePlansEnd) {
  auto plan = MakePlan(Remote(), ShuffleMode::kGlobal);
  const uint64_t steps = plan->steps_per_epoch(0);
  const PlanPosition past{0, plan->rows_in_epoch(0)};
  ASSERT_FALSE(plan->HasStep(past));
  const ShardsAheadResult none = ShardsAheadWithin(*plan, Remote(), past, 1, LookAhead{4, 8, 0});
  EXPECT_EQ(none.steps, 0u);
  EXPECT_TRUE(none.shards[0].empty());
  EXPECT_EQ(none.bytes, 0u);

  const PlanPosition last{0, (steps - 1) * plan->global_batch_rows()};
  const ShardsAheadResult across = ShardsAheadWithin(*plan, Remote(), last, 1, LookAhead{3, 3, 0});
  EXPECT_EQ(across.steps, 3u);
  EXPECT_EQ(across.shards[0], Expected(*plan, last, 1, 3));
  EXPECT_EQ(plan->Advance(last).epoch, 1u);
}

TEST_F(CacheLookAheadTest, SourcesThatAreNotRemoteGetEmptyLists) {
  // A mixture: the same data local (a directory), then remote.
  const Sources mixed{local_, remote_};
  auto plan = MakePlan(mixed, ShuffleMode::kGlobal);
  const ShardsAheadResult r = ShardsAheadWithin(*plan, mixed, {}, 1, LookAhead{12, 12, 0});
  ASSERT_EQ(r.shards.size(), 2u);
  ASSERT_FALSE(Expected(*plan, {}, 1, 12, /*d=*/0).empty());  // the local one is read too
  EXPECT_TRUE(r.shards[0].empty());
  EXPECT_EQ(r.shards[1], Expected(*plan, {}, 1, 12, /*d=*/1));
  uint64_t bytes = 0;
  for (uint64_t s : r.shards[1]) bytes += ShardBytes(*remote_, s);
  EXPECT_EQ(r.bytes, bytes);  // the local shards count for nothing

  // Local only: nothing to schedule, and no steps are looked at.
  const Sources local{local_};
  auto local_plan = MakePlan(local, ShuffleMode::kGlobal);
  EXPECT_TRUE(ShardsAhead(*local_plan, local, {}, 1, 12)[0].empty());
  EXPECT_EQ(ScheduleShardsAhead(*local_plan, local, {}, 1), 0u);
  EXPECT_FALSE(AnyCachedSource(local));
  EXPECT_FALSE(AnyCachedSource(Remote()));  // remote, but not through a cache
}

}  // namespace
}  // namespace stoker
