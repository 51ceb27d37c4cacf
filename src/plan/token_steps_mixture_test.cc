// Steps counted in tokens over a scheduled mixture (token_steps_mixture.h): the windows cut the
// mixture's own merged rows (so each dataset is read exactly once per its own epoch, as the row
// plan reads it), equal microbatch counts on every rank, bit-exact and elastic resume, and a
// resume into an edited mixture that continues every dataset where it stopped.
#include "plan/token_steps_mixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "plan/plan_test_util.h"

namespace stoker {
namespace {

using plan::testing::MakeLengths;

using Served = std::vector<std::tuple<uint32_t, uint64_t, uint64_t, uint64_t>>;

struct Data {
  std::shared_ptr<const DatasetLengths> a = MakeLengths(900, 200, 0.0, 3, 21);
  std::shared_ptr<const DatasetLengths> b = MakeLengths(600, 300, 0.05, 1, 22);
  std::shared_ptr<const DatasetLengths> c = MakeLengths(700, 150, 0.0, 2, 23);
};
const Data& D() {
  static const Data d;
  return d;
}

PlanOptions Options(uint32_t world, uint32_t rank) {
  PlanOptions o;
  o.seq_len = 1024;
  o.world_size = world;
  o.rank = rank;
  o.seed = 5;
  o.tokens_per_step = 16 * 1024;
  o.microbatches = 2;
  o.max_tokens_per_microbatch = 1024;
  o.balance = BalanceMode::kAttention;
  o.step_cost = {1.0, 1.0 / 1024, 0.0};
  // b is left out of the second phase; the row plan's global batch is 16 rows, so the phase
  // change at row 160 is after the tenth step's worth of rows.
  o.phases = {{160, {0.5, 0.3, 0.2}, {}}, {UINT64_MAX, {0.6, 0.0, 0.4}, {}}};
  o.dataset_names = {"a", "b", "c"};
  return o;
}

std::vector<PlanDataset> Abc() { return {{D().a, 1}, {D().b, 1}, {D().c, 1}}; }

std::vector<std::shared_ptr<const MixtureTokenStepPlanner>> Ranks(
    uint32_t world, const PlanState* resume = nullptr, std::vector<PlanDataset> datasets = Abc(),
    PlanOptions (*options)(uint32_t, uint32_t) = Options, PlanPosition* start = nullptr) {
  std::vector<std::shared_ptr<const MixtureTokenStepPlanner>> out;
  for (uint32_t r = 0; r < world; ++r) {
    auto opened = OpenMixtureTokenSteps(datasets, options(world, r), resume);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return {};
    out.push_back(opened->planner);
    if (start != nullptr) *start = opened->start;
  }
  return out;
}

// Every rank's microbatches from `pos` for `steps` steps (all while in pos.epoch; 0: to the
// epoch's end), in (step, rank, microbatch) order; the position after them in *end.
Served Serve(const std::vector<std::shared_ptr<const MixtureTokenStepPlanner>>& ranks,
             PlanPosition pos, uint64_t steps, PlanPosition* end = nullptr) {
  Served out;
  const uint64_t epoch = pos.epoch;
  for (uint64_t s = 0; pos.epoch == epoch && (steps == 0 || s < steps); ++s) {
    std::vector<std::vector<Row>> per_rank(ranks.size());
    uint32_t microbatches = 0;
    const uint64_t from = pos.rows_consumed & 0xffff;  // a resume may start mid-step
    do {
      for (size_t r = 0; r < ranks.size(); ++r) {
        Batch b;
        EXPECT_TRUE(ranks[r]->BatchAt(pos, &b).ok());
        EXPECT_TRUE(b.figures.has_value());
        microbatches = b.figures->microbatches;
        EXPECT_EQ(ranks[r]->Advance(pos), ranks[0]->Advance(pos));
        per_rank[r].push_back(b.rows[0]);
      }
      pos = ranks[0]->Advance(pos);
    } while (pos.epoch == epoch && (pos.rows_consumed & 0xffff) != 0);
    for (const auto& rows : per_rank) {
      EXPECT_EQ(rows.size() + from, microbatches) << "every rank has the step's microbatches";
      for (const Row& row : rows) {
        for (const RowPiece& p : row.pieces)
          out.emplace_back(p.dataset, p.document, p.offset, p.length);
      }
    }
  }
  if (end != nullptr) *end = pos;
  return out;
}

Served Sorted(Served s) {
  std::sort(s.begin(), s.end());
  return s;
}

TEST(TokenStepsMixtureTest, WindowsCutTheMixturesOwnRowsOnEveryWorldSize) {
  // The row plan the token steps cut: its epoch's pieces, whatever the world size.
  auto rows = Plan::Create(Abc(), MixtureRowOptions(Options(1, 0)));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<Row> all;
  ASSERT_TRUE((*rows)->GetRows(0, 0, (*rows)->rows_in_epoch(0), &all).ok());
  Served want;
  for (const Row& row : all) {
    for (const RowPiece& p : row.pieces)
      want.emplace_back(p.dataset, p.document, p.offset, p.length);
  }
  bool b_in_second_phase = false;
  for (uint64_t g = 160; g < all.size(); ++g) {
    for (const RowPiece& p : all[g].pieces) b_in_second_phase |= p.dataset == 1;
  }
  EXPECT_FALSE(b_in_second_phase) << "the second phase leaves b out";
  for (uint32_t world : {1u, 3u, 8u}) {
    SCOPED_TRACE("world " + std::to_string(world));
    auto ranks = Ranks(world);
    ASSERT_EQ(ranks.size(), world);
    EXPECT_EQ(Sorted(Serve(ranks, ranks[0]->Normalize({0, 0}), 0)), Sorted(want));
  }
}

TEST(TokenStepsMixtureTest, ResumesBitExactlyAndAtAnotherWorldSizeExactlyOnce) {
  auto ranks = Ranks(3);
  PlanPosition pos = ranks[0]->Normalize({0, 0}), after;
  Serve(ranks, pos, 9, &after);  // across the phase change at row 160
  const Served rest = Serve(ranks, after, 6);
  // Mid-step: one microbatch further.
  const PlanPosition mid = ranks[0]->Advance(after);
  ASSERT_NE(mid.rows_consumed & 0xffff, 0u);
  const PlanState at_step = ranks[1]->MakeState(after), in_step = ranks[1]->MakeState(mid);
  EXPECT_FALSE(at_step.datasets.empty()) << "a mixture's state carries its cursors";
  PlanPosition start;
  auto again = Ranks(3, &at_step, Abc(), Options, &start);
  EXPECT_EQ(start, after);
  EXPECT_EQ(Serve(again, start, 6), rest);
  auto again_mid = Ranks(3, &in_step, Abc(), Options, &start);
  EXPECT_EQ(start, mid);
  EXPECT_EQ(Serve(again_mid, start, 3), Serve(ranks, mid, 3));
  // At another world size: the same documents, dealt to 5 ranks.
  auto wider = Ranks(5, &at_step, Abc(), Options, &start);
  EXPECT_EQ(Sorted(Serve(wider, start, 6)), Sorted(rest));
}

PlanOptions Edited(uint32_t world, uint32_t rank) {
  PlanOptions o = Options(world, rank);
  o.phases = {{UINT64_MAX, {0.4, 0.4, 0.2}, {}}};  // b back in, reweighted from the resume on
  return o;
}

TEST(TokenStepsMixtureTest, AnEditedMixtureContinuesEveryDatasetWhereItStopped) {
  auto ranks = Ranks(2);
  PlanPosition after;
  const Served before = Serve(ranks, ranks[0]->Normalize({0, 0}), 12, &after);
  const PlanState state = ranks[0]->MakeState(after);
  PlanPosition start;
  auto edited = Ranks(2, &state, Abc(), Edited, &start);
  ASSERT_EQ(edited.size(), 2u);
  EXPECT_NE(edited[0]->Fingerprint(), ranks[0]->Fingerprint());
  PlanPosition edited_end;
  const Served next = Serve(edited, start, 8, &edited_end);
  // Nothing served before is served again (no dataset finishes its epoch in this span), and b,
  // out of the second phase, is back.
  std::map<std::tuple<uint32_t, uint64_t>, std::vector<std::pair<uint64_t, uint64_t>>> seen;
  for (const Served* part : {&before, &next}) {
    for (const auto& [d, doc, off, len] : *part) seen[{d, doc}].push_back({off, len});
  }
  for (auto& [key, ranges] : seen) {
    std::sort(ranges.begin(), ranges.end());
    for (size_t k = 1; k < ranges.size(); ++k) {
      EXPECT_GE(ranges[k].first, ranges[k - 1].first + ranges[k - 1].second)
          << "dataset " << std::get<0>(key) << " document " << std::get<1>(key) << " repeated";
    }
  }
  EXPECT_TRUE(std::any_of(next.begin(), next.end(), [](auto& p) { return std::get<0>(p) == 1; }));
  // A checkpoint of the continued plan resumes it bit-exactly with the same edited mixture.
  PlanPosition mid_run;
  Serve(edited, start, 3, &mid_run);
  const PlanState later = edited[1]->MakeState(mid_run);
  auto resumed = Ranks(2, &later, Abc(), Edited, &start);
  EXPECT_EQ(start, mid_run);
  EXPECT_EQ(Serve(resumed, start, 5), Serve(edited, mid_run, 5));
}

PlanOptions OtherBudget(uint32_t world, uint32_t rank) {
  PlanOptions o = Edited(world, rank);
  o.tokens_per_step = 32 * 1024;
  return o;
}

TEST(TokenStepsMixtureTest, RefusesOtherTokenOptionsAndAnEditInTheMiddleOfAStep) {
  auto ranks = Ranks(2);
  const PlanPosition pos = ranks[0]->Normalize({0, 0});
  const PlanState at_step = ranks[0]->MakeState(pos);
  auto other = OpenMixtureTokenSteps(Abc(), OtherBudget(2, 0), &at_step);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("tokens_per_step (16384 in the checkpoint, 32768 here)"),
            std::string::npos)
      << other.status().ToString();
  const PlanState in_step = ranks[0]->MakeState(ranks[0]->Advance(pos));
  auto mid = OpenMixtureTokenSteps(Abc(), Edited(2, 0), &in_step);
  ASSERT_FALSE(mid.ok());
  EXPECT_NE(mid.status().message().find("in the middle of a step"), std::string::npos)
      << mid.status().ToString();
  // The same mixture resumes that checkpoint exactly.
  EXPECT_TRUE(OpenMixtureTokenSteps(Abc(), Options(2, 0), &in_step).ok());
}

}  // namespace
}  // namespace stoker

namespace stoker {
namespace {

// 8K tokens per step up to global row 64, a ramp to 32K at row 256, then 32K.
plan::StepBudget Ramp(uint64_t last = 32 * 1024) {
  return *plan::StepBudget::Create(
      {{64, 8 * 1024, 0}, {256, 8 * 1024, last}, {UINT64_MAX, last, 0}});
}

std::vector<std::shared_ptr<const MixtureTokenStepPlanner>> Scheduled(
    uint32_t world, const PlanState* resume = nullptr, plan::StepBudget budget = Ramp()) {
  std::vector<std::shared_ptr<const MixtureTokenStepPlanner>> out;
  for (uint32_t r = 0; r < world; ++r) {
    PlanOptions o = Options(world, r);
    o.tokens_per_step_schedule = budget.Text();
    auto opened = OpenMixtureTokenSteps(Abc(), o, resume);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return {};
    out.push_back(opened->planner);
  }
  return out;
}

TEST(TokenStepsMixtureTest, ABatchSizeScheduleSetsEachStepsTokensAndResumesAcrossItsChange) {
  auto ranks = Scheduled(2);
  ASSERT_EQ(ranks.size(), 2u);
  const plan::TokenSteps& steps = ranks[0]->steps();
  const uint64_t rows = ranks[0]->row_plan().rows_in_epoch(0);
  PlanPosition pos = ranks[0]->Normalize({0, 0});
  std::vector<PlanPosition> starts;
  uint64_t largest = 0;
  while (pos.epoch == 0) {
    Batch b;
    ASSERT_TRUE(ranks[0]->BatchAt(pos, &b).ok());
    const uint64_t first = pos.rows_consumed >> TokenStepPlanner::kMicrobatchBits;
    if (b.figures->microbatch == 0) {
      starts.push_back(pos);
      const uint64_t want = Ramp().TokensAt(first);
      EXPECT_EQ(steps.StepTokensAt(0, first), want);
      // Whole rows until the budget is reached: at most one row (1024 tokens) beyond it.
      if (ranks[0]->Advance(pos).epoch == 0 && first + 40 < rows) {
        EXPECT_GE(b.figures->global_tokens, want) << "row " << first;
        EXPECT_LT(b.figures->global_tokens, want + 1024) << "row " << first;
      }
      largest = std::max(largest, b.figures->global_tokens);
    }
    pos = ranks[0]->Advance(pos);
  }
  EXPECT_GE(largest, 32u * 1024) << "the schedule reached its last phase";
  ASSERT_GT(starts.size(), 12u);
  // A checkpoint before the change and one after it: each resumes bit-exactly.
  for (size_t k : {size_t{2}, size_t{10}}) {
    const PlanState state = ranks[1]->MakeState(starts[k]);
    EXPECT_NE(state.options.find("tokens_per_step_schedule=8192@64,8192..32768@256,32768"),
              std::string::npos)
        << state.options;
    auto again = Scheduled(2, &state);
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(Serve(again, starts[k], 6), Serve(ranks, starts[k], 6)) << "from step " << k;
  }
  // A checkpoint of another schedule, or of none, is refused naming it.
  const PlanState state = ranks[0]->MakeState(starts[3]);
  PlanOptions other_options = Options(2, 0);
  other_options.tokens_per_step_schedule = Ramp(16384).Text();
  auto other = OpenMixtureTokenSteps(Abc(), other_options, &state);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("tokens_per_step_schedule (8192@64,8192..32768@256,"
                                          "32768 in the checkpoint, 8192@64,8192..16384@256,16384 "
                                          "here)"),
            std::string::npos)
      << other.status().ToString();
  auto none = OpenMixtureTokenSteps(Abc(), Options(2, 0), &state);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("tokens_per_step_schedule"), std::string::npos)
      << none.status().ToString();
}

}  // namespace
}  // namespace stoker
