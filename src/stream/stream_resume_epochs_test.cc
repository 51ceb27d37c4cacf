// Multi-epoch resume of a stream (issue 26): at random steps in epochs 0-3, on W = 1, 3 and 8, a
// restored planner's rows equal the uninterrupted planner's to the end of epoch 3 (exact, on the
// same world); and an elastic resume at a random step of epochs 1-3 onto another world delivers no
// token of that epoch twice, leaves only the epoch-end remainder, and the epoch after is the new
// world's own.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "stream/elastic.h"
#include "stream/stream_planner.h"
#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;
using testing::WriteCorpus;

constexpr uint64_t kBatch = 2;
constexpr uint64_t kEpochs = 4;

std::shared_ptr<StreamPlanner> Open(const std::vector<std::string>& paths, uint32_t W, uint32_t r,
                                    PackMode pack) {
  StreamOptions so;
  so.inputs = paths;
  so.shuffle_buffer = 20;
  so.scan_cache_dir = "off";
  LoaderOptions lo;
  lo.batch_size = kBatch;
  lo.seq_len = 64;
  lo.world_size = W;
  lo.rank = r;
  lo.seed = 21;
  lo.pack = pack;
  lo.bestfit_window = 8;
  lo.num_workers = 1;
  auto p = StreamPlanner::Create(so, lo);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : nullptr;
}

// Pieces equal: the same document (reference, stream epoch, tokens) and token range.
bool SameRows(const std::vector<PackedRow>& a, const std::vector<PackedRow>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (size_t j = 0; j < a[i].size(); ++j) {
      const PackedPiece& x = a[i][j];
      const PackedPiece& y = b[i][j];
      if (!(x.ref == y.ref) || x.stream_epoch != y.stream_epoch || x.offset != y.offset ||
          x.length != y.length || *x.tokens != *y.tokens) {
        return false;
      }
    }
  }
  return true;
}

class StreamResumeEpochs : public ::testing::TestWithParam<std::tuple<uint32_t, PackMode>> {};

TEST_P(StreamResumeEpochs, ARestoreAtRandomStepsOfEpochs0To3ContinuesBitwise) {
  const auto [W, pack] = GetParam();
  TempDir dir;
  const std::vector<std::string> paths = WriteCorpus(dir, {200, 30, 0, 120, 60, 15, 90});
  std::mt19937_64 rng(W * 7 + static_cast<int>(pack));
  for (uint32_t r = 0; r < W; ++r) {
    std::shared_ptr<StreamPlanner> a = Open(paths, W, r, pack);
    ASSERT_TRUE(a);
    // The uninterrupted rows, and the states at three random steps of random epochs.
    std::vector<PlanPosition> positions;
    std::vector<std::vector<PackedRow>> rows;
    std::map<size_t, PlanState> states;  // index into positions -> state before it
    std::set<size_t> chosen;
    uint64_t total = 0;
    for (uint64_t e = 0; e < kEpochs; ++e) total += a->steps_per_epoch(e);
    ASSERT_GT(total, 8u);
    while (chosen.size() < 3) chosen.insert(1 + rng() % (total - 1));
    for (uint64_t e = 0; e < kEpochs; ++e) {
      for (uint64_t s = 0; s < a->steps_per_epoch(e); ++s) {
        const PlanPosition pos{e, s * kBatch * W};
        if (chosen.count(positions.size())) states[positions.size()] = a->MakeState(pos);
        positions.push_back(pos);
        Result<std::vector<PackedRow>> got = a->RowsAt(pos);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        rows.push_back(*got);
      }
    }
    for (const auto& [at, state] : states) {
      std::shared_ptr<StreamPlanner> b = Open(paths, W, r, pack);
      ASSERT_TRUE(b);
      Result<PlanPosition> pos = b->RestorePosition(state);
      ASSERT_TRUE(pos.ok()) << pos.status().ToString();
      ASSERT_EQ(*pos, positions[at]);
      for (size_t i = at; i < positions.size(); ++i) {
        Result<std::vector<PackedRow>> got = b->RowsAt(positions[i]);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_TRUE(SameRows(*got, rows[i]))
            << "W=" << W << " rank " << r << " resumed at epoch " << positions[at].epoch << " step "
            << positions[at].rows_consumed / (kBatch * W) << ": differs at epoch "
            << positions[i].epoch << " step " << positions[i].rows_consumed / (kBatch * W);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, StreamResumeEpochs,
                         ::testing::Combine(::testing::Values(1u, 3u, 8u),
                                            ::testing::Values(PackMode::kConcat,
                                                              PackMode::kBestFit)));

class StreamElasticEpochs
    : public ::testing::TestWithParam<std::tuple<std::pair<uint32_t, uint32_t>, PackMode>> {};

TEST_P(StreamElasticEpochs, AnElasticResumeInEpochs1To3LosesNothingAndRepeatsNothing) {
  const auto [worlds, pack] = GetParam();
  const auto [W, W2] = worlds;
  TempDir dir;
  const std::vector<std::string> paths = WriteCorpus(dir, {200, 30, 0, 120, 60, 15, 90});
  const uint64_t docs = 200 + 30 + 120 + 60 + 15 + 90;
  std::mt19937_64 rng(W * 100 + W2 * 10 + static_cast<int>(pack));
  const uint64_t E = 1 + rng() % 3;
  std::vector<std::shared_ptr<StreamPlanner>> old_world, new_world;
  for (uint32_t r = 0; r < W; ++r) old_world.push_back(Open(paths, W, r, pack));
  const uint64_t steps = old_world[0]->steps_per_epoch(E);
  ASSERT_GT(steps, 4u);
  const uint64_t k = 2 + rng() % (steps - 3);
  // Per document (file, byte offset) of stream epoch E: how often each token was delivered.
  std::map<std::pair<std::string, uint64_t>, std::vector<int>> cov;
  auto cover = [&](const StreamPlanner& p, const std::vector<PackedRow>& rows) {
    for (const PackedRow& row : rows) {
      for (const PackedPiece& piece : row) {
        if (piece.stream_epoch != E) continue;
        std::vector<int>& t = cov[{(*p.ShardsOf(E))[piece.ref.shard].path, piece.ref.offset}];
        t.resize(piece.tokens->size());
        for (uint64_t i = piece.offset; i < piece.offset + piece.length; ++i) ++t[i];
      }
    }
  };
  std::vector<PlanState> states;
  for (const auto& p : old_world) {
    for (uint64_t s = 0; s < k; ++s) cover(*p, p->RowsAt({E, s * kBatch * W}).value());
    states.push_back(p->MakeState({E, k * kBatch * W}));
  }
  for (uint32_t r = 0; r < W2; ++r) {
    std::shared_ptr<StreamPlanner> p = Open(paths, W2, r, pack);
    Result<PlanState> mine = p->ElasticState(states);
    ASSERT_TRUE(mine.ok()) << mine.status().ToString();
    ASSERT_TRUE(p->RestorePosition(*mine).ok());
    new_world.push_back(p);
  }
  const uint64_t steps2 = new_world[0]->steps_per_epoch(E);
  ASSERT_GE(steps2, k);
  for (const auto& p : new_world) {
    EXPECT_EQ(p->steps_per_epoch(E), steps2);
    for (uint64_t s = k; s < steps2; ++s) cover(*p, p->RowsAt({E, s * kBatch * W2}).value());
  }
  uint64_t twice = 0, partial = 0;
  for (const auto& [doc, t] : cov) {
    bool missing = false;
    for (int n : t) {
      twice += n > 1;
      missing = missing || n == 0;
    }
    partial += missing;
  }
  const uint64_t unseen = docs - cov.size();
  std::printf("W %u -> %u pack %d at epoch %llu step %llu of %llu: %llu never, %llu partly\n", W,
              W2, static_cast<int>(pack), static_cast<unsigned long long>(E),
              static_cast<unsigned long long>(k), static_cast<unsigned long long>(steps2),
              static_cast<unsigned long long>(unseen), static_cast<unsigned long long>(partial));
  EXPECT_EQ(twice, 0u) << "tokens of epoch " << E << " delivered twice";
  EXPECT_LE(unseen + partial, docs / 8);
  // The epoch after is the new world's own.
  for (uint32_t r = 0; r < W2; ++r) {
    std::shared_ptr<StreamPlanner> fresh = Open(paths, W2, r, pack);
    EXPECT_TRUE(
        SameRows(new_world[r]->RowsAt({E + 1, 0}).value(), fresh->RowsAt({E + 1, 0}).value()))
        << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Worlds, StreamElasticEpochs,
    ::testing::Combine(::testing::Values(std::make_pair(3u, 8u), std::make_pair(8u, 3u),
                                         std::make_pair(1u, 3u), std::make_pair(3u, 1u)),
                       ::testing::Values(PackMode::kConcat, PackMode::kBestFit)));

}  // namespace
}  // namespace stoker::stream
