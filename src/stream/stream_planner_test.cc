// The streaming planner: exactly-once per epoch across ranks, equal steps, resume, the ids of
// `stoker pack`, shuffle quality.
#include "stream/stream_planner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;
using testing::WriteCorpus;

LoaderOptions PlannerOpts(uint32_t world, uint32_t rank, PackMode pack) {
  LoaderOptions o;
  o.batch_size = 2;
  o.seq_len = 64;
  o.world_size = world;
  o.rank = rank;
  o.seed = 11;
  o.pack = pack;
  o.bestfit_window = 16;
  return o;
}

StreamOptions SOpts(std::vector<std::string> inputs, uint64_t buffer) {
  StreamOptions s;
  s.inputs = std::move(inputs);
  s.shuffle_buffer = buffer;
  return s;
}

// Per document (shard, record): the token positions covered in epoch 0 by pieces from epoch 0.
struct PlannerCoverage {
  std::map<std::pair<uint32_t, uint64_t>, std::vector<int>> tokens;
  uint64_t repeated_pieces = 0;  // pieces of the next epoch's stream (the documented remainder)
};

void Cover(const std::vector<PackedRow>& rows, PlannerCoverage* c) {
  for (const PackedRow& row : rows) {
    for (const PackedPiece& p : row) {
      if (p.stream_epoch != 0) {
        ++c->repeated_pieces;
        continue;
      }
      std::vector<int>& t = c->tokens[{p.ref.shard, p.ref.record}];
      t.resize(p.tokens->size());
      for (uint64_t i = p.offset; i < p.offset + p.length; ++i) ++t[i];
    }
  }
}

// Regression: with num_workers = 0 the encode pool took every core of the node in every rank, so
// the 8 ranks of a node started 8x the cores in tokenizer threads. It now takes the loader's
// default, the node's cores / LOCAL_WORLD_SIZE.
TEST(StreamPlanner, EncodePoolDefaultsToTheCoresOfOneLocalRank) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (cores < 2) GTEST_SKIP() << "one hardware thread: every default is 1";
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {40, 40});
  ::setenv("LOCAL_WORLD_SIZE", std::to_string(cores).c_str(), 1);
  LoaderOptions lo = PlannerOpts(1, 0, PackMode::kConcat);
  lo.num_workers = 0;
  auto p = StreamPlanner::Create(SOpts(paths, 8), lo);
  ::unsetenv("LOCAL_WORLD_SIZE");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->encode_threads(), 1);
  lo.num_workers = 3;  // an explicit count is taken as given
  auto three = StreamPlanner::Create(SOpts(paths, 8), lo);
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  EXPECT_EQ((*three)->encode_threads(), 3);
}

// shuffle, block_shards and drop_last were silently ignored by streams: now refused, by name.
TEST(StreamPlanner, RefusesLoaderOptionsThatDoNotApplyToAStream) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {40});
  auto refused = [&](LoaderOptions lo, const std::string& name) {
    auto p = StreamPlanner::Create(SOpts(paths, 8), lo);
    ASSERT_FALSE(p.ok()) << name;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(name), std::string::npos) << p.status().message();
  };
  LoaderOptions lo = PlannerOpts(1, 0, PackMode::kConcat);
  lo.shuffle = ShuffleMode::kNone;
  refused(lo, "shuffle='none'");
  lo = PlannerOpts(1, 0, PackMode::kConcat);
  lo.block_shards = 16;
  refused(lo, "block_shards");
  lo = PlannerOpts(1, 0, PackMode::kConcat);
  lo.remainder = RemainderPolicy::kPad;
  refused(lo, "drop_last=False");
  EXPECT_TRUE(StreamPlanner::Create(SOpts(paths, 8), PlannerOpts(1, 0, PackMode::kConcat)).ok());
}

// One default for bestfit_window: the stream packs with the loader's (the plan's) window.
TEST(StreamPlanner, BestfitWindowIsTheLoaderOption) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {300});
  LoaderOptions lo = PlannerOpts(1, 0, PackMode::kBestFit);
  lo.bestfit_window = 2;
  auto two = StreamPlanner::Create(SOpts(paths, 8), lo);
  lo.bestfit_window = 64;
  auto many = StreamPlanner::Create(SOpts(paths, 8), lo);
  ASSERT_TRUE(two.ok() && many.ok());
  EXPECT_NE((*two)->fingerprint(), (*many)->fingerprint());
  EXPECT_EQ(LoaderOptions{}.bestfit_window, PlanOptions{}.bestfit_window);
}

class StreamExactlyOnce : public ::testing::TestWithParam<std::tuple<uint32_t, PackMode>> {};

TEST_P(StreamExactlyOnce, EveryTokenAtMostOnceAcrossRanksAndEqualSteps) {
  const auto [world, pack] = GetParam();
  TempDir dir;
  // Uneven shard sizes; one empty shard.
  std::vector<std::string> paths = WriteCorpus(dir, {300, 17, 0, 120, 45, 9, 260});
  PlannerCoverage cov;
  uint64_t steps = 0;
  std::vector<std::shared_ptr<StreamPlanner>> planners;
  for (uint32_t r = 0; r < world; ++r) {
    auto p = StreamPlanner::Create(SOpts(paths, 50), PlannerOpts(world, r, pack));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    if (r == 0) steps = (*p)->steps_per_epoch(0);
    EXPECT_EQ((*p)->steps_per_epoch(0), steps) << "rank " << r;
    EXPECT_EQ((*p)->steps_per_epoch(1),
              planners.empty() ? (*p)->steps_per_epoch(1) : planners[0]->steps_per_epoch(1));
    for (uint64_t s = 0; s < steps; ++s) {
      auto rows = (*p)->RowsAt({0, s * 2 * world});
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      ASSERT_EQ(rows->size(), 2u);
      Cover(*rows, &cov);
    }
    planners.push_back(*p);
  }
  ASSERT_GT(steps, 0u);
  // Pre-scan: the number of documents, to measure the epoch-end remainder.
  uint64_t docs = 0, full = 0, tokens = 0, covered = 0;
  for (auto& [ref, t] : cov.tokens) {
    bool all = true;
    for (int n : t) {
      EXPECT_LE(n, 1) << "a token of shard " << ref.first << " record " << ref.second
                      << " was delivered twice in epoch 0";
      all = all && n == 1;
      covered += n;
    }
    full += all;
    tokens += t.size();
  }
  docs = 300 + 17 + 120 + 45 + 9 + 260;
  const uint64_t unseen = docs - cov.tokens.size();
  std::printf("W=%u pack=%d steps=%llu docs=%llu seen=%zu unseen=%llu repeated_pieces=%llu\n",
              world, static_cast<int>(pack), static_cast<unsigned long long>(steps),
              static_cast<unsigned long long>(docs), cov.tokens.size(),
              static_cast<unsigned long long>(unseen),
              static_cast<unsigned long long>(cov.repeated_pieces));
  // The remainder is bounded: what the other ranks have beyond the smallest rank's stream.
  EXPECT_LT(unseen, docs / 2);
  EXPECT_GT(full, 0u);
  (void)tokens;
  (void)covered;
}

INSTANTIATE_TEST_SUITE_P(Worlds, StreamExactlyOnce,
                         ::testing::Combine(::testing::Values(1u, 3u, 8u),
                                            ::testing::Values(PackMode::kConcat, PackMode::kBestFit,
                                                              PackMode::kPad)));

TEST(StreamPlanner, WorldOneEpochSeesEveryDocumentExceptTheLastPartialBatch) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {100, 37, 63});
  auto p = StreamPlanner::Create(SOpts(paths, 30), PlannerOpts(1, 0, PackMode::kPad)).value();
  ASSERT_EQ(p->steps_per_epoch(0), 100u);  // 200 documents, 2 rows a step, one row each
  PlannerCoverage cov;
  for (uint64_t s = 0; s < 100; ++s) Cover(p->RowsAt({0, s * 2}).value(), &cov);
  EXPECT_EQ(cov.tokens.size(), 200u);
  EXPECT_EQ(cov.repeated_pieces, 0u);
}

TEST(StreamPlanner, GivenStepsPerEpochContinueIntoTheNextEpochsStream) {
  // 60 documents, pad, 2 rows a step: 30 steps exist; 50 are asked for. Steps 30.. take the
  // documents of the next epoch's stream (marked stream_epoch 1), and epoch 1 starts afresh.
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {35, 25});
  StreamOptions so = SOpts(paths, 8);
  so.steps_per_epoch = 50;
  auto p = StreamPlanner::Create(so, PlannerOpts(1, 0, PackMode::kPad)).value();
  EXPECT_EQ(p->steps_per_epoch(0), 50u);
  PlannerCoverage cov;
  uint64_t from_next = 0;
  for (uint64_t s = 0; s < 50; ++s) {
    const std::vector<PackedRow> rows = p->RowsAt({0, s * 2}).value();
    for (const PackedRow& row : rows) from_next += row[0].stream_epoch == 1;
    Cover(rows, &cov);
  }
  EXPECT_EQ(cov.tokens.size(), 60u);  // every document of epoch 0 once
  EXPECT_EQ(from_next, 40u);          // and 40 rows from the next epoch's stream
  const std::vector<PackedRow> next = p->RowsAt({1, 0}).value();
  EXPECT_EQ(next[0][0].stream_epoch, 1u);
}

TEST(StreamPlanner, IdsAreTheTokenizersIdsOfEveryDocument) {
  // With pack=pad and rows longer than any document, each row is one whole document: the
  // multiset of rows must equal the multiset of (bytes tokenizer) encodings of the lines + EOS.
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {40, 24});  // 64 documents: 32 full steps
  LoaderOptions o = PlannerOpts(1, 0, PackMode::kPad);
  o.seq_len = 1024;
  auto p = StreamPlanner::Create(SOpts(paths, 16), o).value();
  std::multiset<std::vector<int32_t>> got, want;
  for (uint64_t s = 0; s < p->steps_per_epoch(0); ++s) {
    const std::vector<PackedRow> rows = p->RowsAt({0, s * 2}).value();
    for (const PackedRow& row : rows) {
      ASSERT_EQ(row.size(), 1u);
      got.insert(*row[0].tokens);
    }
  }
  for (int f = 0; f < 2; ++f) {
    for (int i = 0; i < (f == 0 ? 40 : 24); ++i) {
      std::string t = testing::DocText(f, i);
      std::vector<int32_t> ids(t.begin(), t.end());
      ids.push_back(256);
      want.insert(ids);
    }
  }
  EXPECT_EQ(got, want);
}

TEST(StreamPlanner, ShuffleBufferBreaksAdjacencyOfASortedInput) {
  // 30,000 documents in order; a buffer of 10,000. Statistic: the share of consecutive outputs
  // that were neighbours in the input (1.0 without a buffer).
  TempDir dir;
  std::string body;
  const int n = 30000;
  for (int i = 0; i < n; ++i) body += "{\"text\": \"" + std::to_string(i) + "\"}\n";
  std::vector<std::string> paths{dir.Write("sorted.jsonl", body)};
  auto share = [&](uint64_t buffer) {
    LoaderOptions o = PlannerOpts(1, 0, PackMode::kPad);
    o.batch_size = 1000;
    o.seq_len = 8;
    StreamOptions so = SOpts(paths, buffer);
    so.split_factor = 1;
    auto p = StreamPlanner::Create(so, o).value();
    std::vector<uint64_t> order;
    for (uint64_t s = 0; s < p->steps_per_epoch(0); ++s) {
      const std::vector<PackedRow> rows = p->RowsAt({0, s * 1000}).value();
      for (const PackedRow& row : rows) order.push_back(row[0].ref.record);
    }
    uint64_t adjacent = 0;
    for (size_t i = 1; i < order.size(); ++i) {
      adjacent += (order[i] == order[i - 1] + 1 || order[i] + 1 == order[i - 1]);
    }
    return static_cast<double>(adjacent) / (order.size() - 1);
  };
  const double none = share(1), buffered = share(10000);
  std::printf("adjacent share: buffer 1 = %.4f, buffer 10000 = %.5f\n", none, buffered);
  EXPECT_GT(none, 0.99);
  EXPECT_LT(buffered, 0.01);
}

}  // namespace
}  // namespace stoker::stream
