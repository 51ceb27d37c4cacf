// Steps counted in tokens on a stream (issue 45; docs/streaming.md, "Steps counted in tokens"):
// for W = 1, 3 and 8 ranks in one process, on a corpus of skewed shards and skewed document
// lengths, every rank takes the same number of steps and the same number of microbatches in each,
// no document is served twice (each served one whole), what is left is the epoch-end remainder,
// the step's global figures equal the sums over the ranks, and a restore at a random microbatch
// continues bitwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>

#include "stream/stream_planner.h"
#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;

constexpr uint64_t kTokensPerStep = 1200;
constexpr uint64_t kBudget = 96;

// JSONL files of the given document counts; document i's length is long-tailed (most of a few
// words, every 17th a long one, longer than a microbatch).
std::vector<std::string> WriteSkewedCorpus(const TempDir& dir, const std::vector<int>& counts) {
  std::vector<std::string> paths;
  for (size_t f = 0; f < counts.size(); ++f) {
    std::string body;
    for (int i = 0; i < counts[f]; ++i) {
      const int words = i % 17 == 0 ? 60 + (i * 13) % 90 : 1 + (i * 7 + int(f) * 3) % 12;
      std::string text;
      for (int w = 0; w < words; ++w)
        text += "w" + std::to_string(f) + "-" + std::to_string(i) + " ";
      body += "{\"text\": \"" + text + "\"}\n";
    }
    paths.push_back(dir.Write("part-" + std::to_string(f) + ".jsonl", body));
  }
  return paths;
}

LoaderOptions TokenStepOptions(uint32_t W, uint32_t r, BalanceMode balance) {
  LoaderOptions lo;
  lo.seq_len = 64;
  lo.world_size = W;
  lo.rank = r;
  lo.seed = 5;
  lo.num_workers = 1;
  lo.tokens_per_step = kTokensPerStep * W;
  lo.microbatches = 2;
  lo.max_tokens_per_microbatch = kBudget;
  lo.balance = balance;
  if (balance == BalanceMode::kAttention) lo.step_cost = {1.0, 0.01, 0.0};
  return lo;
}

std::shared_ptr<StreamPlanner> OpenTokenSteps(const std::vector<std::string>& paths,
                                              const LoaderOptions& lo) {
  StreamOptions so;
  so.inputs = paths;
  so.shuffle_buffer = 30;
  so.scan_cache_dir = "off";
  auto p = StreamPlanner::Create(so, lo);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : nullptr;
}

// One rank's walk of epoch 0: per step, its microbatch count, figures and pieces.
struct RankWalk {
  std::vector<uint32_t> microbatches;
  std::vector<StepFigures> figures;
  std::vector<std::vector<PackedRow>> rows;  // per step
};

RankWalk Walk(const StreamPlanner& p, uint64_t epoch) {
  RankWalk w;
  PlanPosition pos = p.Normalize({epoch, 0});
  while (pos.epoch == epoch) {
    Batch b;
    Status st = p.BatchAt(pos, &b);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) break;
    EXPECT_TRUE(b.figures.has_value());
    EXPECT_EQ(b.rows.size(), 1u);
    if (b.figures->microbatch == 0) {
      w.microbatches.push_back(b.figures->microbatches);
      StepFigures f = *b.figures;
      w.figures.push_back(f);
      auto rows = p.RowsAt(pos);
      EXPECT_TRUE(rows.ok());
      w.rows.push_back(rows.ok() ? *rows : std::vector<PackedRow>{});
    }
    EXPECT_EQ(b.figures->microbatch, pos.rows_consumed % (uint64_t{1} << 16));
    pos = p.Advance(pos);
  }
  return w;
}

class StreamTokenSteps : public ::testing::TestWithParam<std::tuple<uint32_t, BalanceMode>> {};

TEST_P(StreamTokenSteps, EqualMicrobatchesOnEveryRankAndEachDocumentAtMostOnce) {
  const auto [W, balance] = GetParam();
  TempDir dir;
  // Skewed shards: one holds most documents.
  const std::vector<std::string> paths = WriteSkewedCorpus(dir, {400, 30, 0, 90, 12, 150});
  std::vector<RankWalk> walks;
  uint64_t corpus_tokens = 0;
  std::map<std::tuple<uint64_t, uint32_t, uint64_t, uint64_t>, uint64_t> served;  // doc -> tokens
  std::map<std::tuple<uint64_t, uint32_t, uint64_t, uint64_t>, uint64_t> length_of;
  for (uint32_t r = 0; r < W; ++r) {
    std::shared_ptr<StreamPlanner> p = OpenTokenSteps(paths, TokenStepOptions(W, r, balance));
    ASSERT_TRUE(p);
    ASSERT_NE(p->token_steps(), nullptr);
    if (r == 0) {
      corpus_tokens = p->prescan_summary().tokens;
      auto batches = p->StepsPerEpoch(0);
      ASSERT_TRUE(batches.ok());
      EXPECT_GT(*batches, 0u);
    }
    walks.push_back(Walk(*p, 0));
    for (const auto& step : walks.back().rows) {
      for (const PackedRow& row : step) {
        uint64_t tokens = 0;
        for (const PackedPiece& piece : row) {
          tokens += piece.length;
          const auto key = std::make_tuple(piece.stream_epoch, piece.ref.shard, piece.ref.record,
                                           piece.ref.offset);
          served[key] += piece.length;
          length_of[key] = piece.tokens->size();
        }
        EXPECT_LE(tokens, kBudget);  // a microbatch within its budget
      }
    }
  }
  // Equal steps and equal microbatch counts per step on every rank.
  const size_t steps = walks[0].microbatches.size();
  ASSERT_GT(steps, 3u);
  for (uint32_t r = 1; r < W; ++r) {
    EXPECT_EQ(walks[r].microbatches, walks[0].microbatches) << "rank " << r;
  }
  // The global figures are the sums over the ranks, the same on every rank.
  uint64_t delivered = 0;
  for (size_t s = 0; s < steps; ++s) {
    uint64_t tokens = 0, trained = 0;
    EXPECT_GE(walks[0].microbatches[s], 2u);
    for (uint32_t r = 0; r < W; ++r) {
      const StepFigures& f = walks[r].figures[s];
      EXPECT_EQ(f.global_tokens, walks[0].figures[s].global_tokens);
      EXPECT_EQ(f.global_trained_tokens, walks[0].figures[s].global_trained_tokens);
      EXPECT_DOUBLE_EQ(f.step_imbalance, walks[0].figures[s].step_imbalance);
      EXPECT_TRUE(f.global_trained_known);
      uint64_t own = 0, l2 = 0;
      for (const PackedRow& row : walks[r].rows[s]) {
        for (const PackedPiece& piece : row) {
          own += piece.length;
          l2 += piece.length * piece.length;
          // Targets within the document: the last token of a document has none.
          trained += std::min<uint64_t>(piece.tokens->size(), piece.offset + piece.length + 1) -
                     (piece.offset + 1);
        }
      }
      EXPECT_EQ(f.step_tokens, own);
      EXPECT_EQ(f.step_sum_l2, l2);
      // A window of tokens reaches its budget; one of cost (balance='attention') comes closest
      // to the step's cost target instead (step_windows.h).
      if (balance != BalanceMode::kAttention) EXPECT_GE(own, kTokensPerStep);
      tokens += own;
    }
    EXPECT_EQ(walks[0].figures[s].global_tokens, tokens) << "step " << s;
    EXPECT_EQ(walks[0].figures[s].global_trained_tokens, trained) << "step " << s;
    EXPECT_GE(walks[0].figures[s].step_imbalance, 1.0);
    delivered += tokens;
  }
  // No document twice, and each served one whole.
  for (const auto& [key, tokens] : served) {
    EXPECT_EQ(std::get<0>(key), 0u);  // only epoch 0's documents
    EXPECT_EQ(tokens, length_of[key]);
  }
  // What is left is the epoch-end remainder: per rank less than two windows and the longest
  // document's overshoot per step (the deal balances ranks to within a document).
  ASSERT_GE(corpus_tokens, delivered);
  const uint64_t longest = 150 * 9 + 1;
  EXPECT_LE(corpus_tokens - delivered, W * (2 * kTokensPerStep + (steps + 2) * longest));
  std::printf(
      "[ stream token steps ] W=%u balance=%s: %zu steps, microbatches %u..%u, %llu of "
      "%llu tokens delivered (%.1f%%), imbalance of step 0 %.3f\n",
      W, std::string(BalanceModeName(balance)).c_str(), steps,
      *std::min_element(walks[0].microbatches.begin(), walks[0].microbatches.end()),
      *std::max_element(walks[0].microbatches.begin(), walks[0].microbatches.end()),
      static_cast<unsigned long long>(delivered), static_cast<unsigned long long>(corpus_tokens),
      100.0 * double(delivered) / double(corpus_tokens), walks[0].figures[0].step_imbalance);
}

TEST_P(StreamTokenSteps, ARestoreAtARandomMicrobatchContinuesBitwise) {
  const auto [W, balance] = GetParam();
  TempDir dir;
  const std::vector<std::string> paths = WriteSkewedCorpus(dir, {400, 30, 0, 90, 12, 150});
  std::mt19937_64 rng(W * 3 + static_cast<int>(balance));
  const uint32_t r = W - 1;
  std::shared_ptr<StreamPlanner> a = OpenTokenSteps(paths, TokenStepOptions(W, r, balance));
  ASSERT_TRUE(a);
  // Every position of epochs 0 and 1.
  std::vector<PlanPosition> positions;
  for (PlanPosition pos = a->Normalize({0, 0}); pos.epoch < 2; pos = a->Advance(pos)) {
    positions.push_back(pos);
  }
  ASSERT_GT(positions.size(), 10u);
  for (int trial = 0; trial < 3; ++trial) {
    // A random position past the first step, preferably inside a step.
    size_t at = 1 + rng() % (positions.size() - 1);
    const PlanState state = a->MakeState(positions[at]);
    std::shared_ptr<StreamPlanner> b = OpenTokenSteps(paths, TokenStepOptions(W, r, balance));
    ASSERT_TRUE(b);
    auto restored = b->RestorePosition(state);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ(restored->epoch, positions[at].epoch);
    EXPECT_EQ(restored->rows_consumed, positions[at].rows_consumed);
    for (size_t i = at; i < std::min(positions.size(), at + 40); ++i) {
      Batch x, y;
      ASSERT_TRUE(a->BatchAt(positions[i], &x).ok());
      ASSERT_TRUE(b->BatchAt(positions[i], &y).ok());
      EXPECT_EQ(*x.figures, *y.figures);
      auto rx = a->RowsAt(positions[i]);
      auto ry = b->RowsAt(positions[i]);
      ASSERT_TRUE(rx.ok() && ry.ok());
      const PackedRow& px = (*rx)[x.figures->microbatch];
      const PackedRow& py = (*ry)[y.figures->microbatch];
      ASSERT_EQ(px.size(), py.size());
      for (size_t j = 0; j < px.size(); ++j) {
        EXPECT_TRUE(px[j].ref == py[j].ref);
        EXPECT_EQ(px[j].offset, py[j].offset);
        EXPECT_EQ(px[j].length, py[j].length);
        EXPECT_EQ(*px[j].tokens, *py[j].tokens);
      }
      EXPECT_EQ(b->Advance(positions[i]), a->Advance(positions[i]));
    }
    // The restored planner was read from `at` on; `a` keeps its own generators.
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, StreamTokenSteps,
                         ::testing::Combine(::testing::Values(1u, 3u, 8u),
                                            ::testing::Values(BalanceMode::kAttention,
                                                              BalanceMode::kNone)));

TEST(StreamTokenStepsOptions, RefusedWithoutAPrescanOrWithoutEveryRanksState) {
  TempDir dir;
  const std::vector<std::string> paths = WriteSkewedCorpus(dir, {100, 50});
  StreamOptions so;
  so.inputs = paths;
  so.scan_cache_dir = "off";
  so.steps_per_epoch = 5;
  auto p = StreamPlanner::Create(so, TokenStepOptions(2, 0, BalanceMode::kTokens));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("tokens_per_step needs the pre-scan"), std::string::npos)
      << p.status().ToString();
  std::shared_ptr<StreamPlanner> q =
      OpenTokenSteps(paths, TokenStepOptions(2, 0, BalanceMode::kTokens));
  ASSERT_TRUE(q);
  PlanState s = q->MakeState(q->Advance(q->Normalize({0, 0})));
  auto e = q->ElasticState({s, s, s});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("needs the state of every one of the 2 ranks"),
            std::string::npos)
      << e.status().ToString();
  LoaderOptions no_cost = TokenStepOptions(2, 0, BalanceMode::kAttention);
  no_cost.step_cost = {1.0, 0.0, 0.0};
  so.steps_per_epoch = 0;
  auto c = StreamPlanner::Create(so, no_cost);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("needs a cost with an attention term"), std::string::npos)
      << c.status().ToString();
  LoaderOptions too_big = TokenStepOptions(2, 0, BalanceMode::kTokens);
  too_big.tokens_per_step = 10'000'000;
  auto t = StreamPlanner::Create(so, too_big);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no full step of tokens_per_step / world_size"),
            std::string::npos)
      << t.status().ToString();
}

// Another world size: at an epoch's start the new world starts the epoch as a fresh loader of its
// own (nothing of it was read, so exactly once holds); inside an epoch it is refused, naming the
// step.
TEST(StreamTokenStepsOptions, AnElasticResumeAtAnEpochsStartIsAFreshEpochOnTheNewWorld) {
  TempDir dir;
  const std::vector<std::string> paths = WriteSkewedCorpus(dir, {300, 50, 120});
  auto options = [](uint32_t W, uint32_t r) {
    LoaderOptions lo = TokenStepOptions(W, r, BalanceMode::kAttention);
    lo.tokens_per_step = 2 * kTokensPerStep;  // the same on both worlds
    return lo;
  };
  std::vector<std::shared_ptr<StreamPlanner>> old_world;
  for (uint32_t r = 0; r < 2; ++r) old_world.push_back(OpenTokenSteps(paths, options(2, r)));
  ASSERT_TRUE(old_world[0] && old_world[1]);
  std::shared_ptr<StreamPlanner> resumed = OpenTokenSteps(paths, options(3, 1));
  std::shared_ptr<StreamPlanner> fresh = OpenTokenSteps(paths, options(3, 1));
  ASSERT_TRUE(resumed && fresh);
  // Inside epoch 0 (after its first step): refused.
  std::vector<PlanState> mid, start;
  for (const auto& p : old_world) {
    PlanPosition pos = p->Normalize({0, 0});
    while (pos.rows_consumed >> 16 == 0) pos = p->Advance(pos);
    mid.push_back(p->MakeState(pos));
    while (pos.epoch == 0) pos = p->Advance(pos);  // epoch 0's end: epoch 1's start
    start.push_back(p->MakeState(pos));
  }
  auto refused = resumed->ElasticState(mid);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("at an epoch's start (these states are at step 1 of "
                                            "epoch 0)"),
            std::string::npos)
      << refused.status().ToString();
  auto state = resumed->ElasticState(start);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto at = resumed->RestorePosition(*state);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(at->epoch, 1u);
  EXPECT_EQ(at->rows_consumed, 0u);
  // Epoch 1 on the new world is the fresh loader's epoch 1, piece for piece.
  const RankWalk a = Walk(*resumed, 1), b = Walk(*fresh, 1);
  ASSERT_GT(a.rows.size(), 1u);
  EXPECT_EQ(a.microbatches, b.microbatches);
  for (size_t s = 0; s < std::min(a.rows.size(), b.rows.size()); ++s) {
    EXPECT_EQ(a.figures[s], b.figures[s]);
    ASSERT_EQ(a.rows[s].size(), b.rows[s].size());
    for (size_t m = 0; m < a.rows[s].size(); ++m) {
      ASSERT_EQ(a.rows[s][m].size(), b.rows[s][m].size());
      for (size_t i = 0; i < a.rows[s][m].size(); ++i) {
        EXPECT_TRUE(a.rows[s][m][i].ref == b.rows[s][m][i].ref);
        EXPECT_EQ(a.rows[s][m][i].offset, b.rows[s][m][i].offset);
        EXPECT_EQ(a.rows[s][m][i].length, b.rows[s][m][i].length);
      }
    }
  }
}

// A rank whose stream reads other documents than the pre-scan (here: a file rewritten after it,
// the same size, its documents' lengths swapped in pairs) fails naming the step, instead of
// reporting global figures or microbatch counts the other ranks do not share.
TEST(StreamTokenStepsOptions, AStreamThatReadsOtherLengthsThanItsPrescanFails) {
  TempDir dir;
  auto line = [](char c, int n) { return "{\"text\": \"" + std::string(n, c) + "\"}\n"; };
  std::string before, after;
  for (int i = 0; i < 200; ++i) {
    before += line('a', 10) + line('b', 300);
    after += line('a', 300) + line('b', 10);
  }
  const std::string path = dir.Write("pairs.jsonl", before);
  std::shared_ptr<StreamPlanner> p =
      OpenTokenSteps({path}, TokenStepOptions(1, 0, BalanceMode::kTokens));
  ASSERT_TRUE(p);
  dir.Write("pairs.jsonl", after);
  Batch b;
  Status st = p->BatchAt(p->Normalize({0, 0}), &b);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("where the pre-scan has"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace stoker::stream
