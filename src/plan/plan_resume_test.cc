// Checkpoints: exact resume, elastic resume across world sizes, fingerprints, state JSON.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "plan/plan_test_util.h"
#include "stoker/plan.h"

namespace stoker::plan {
namespace {

using testing::Coverage;
using testing::MakeLengths;
using testing::MakePlan;

PlanOptions Options(PackMode pack, uint32_t world, uint64_t batch, uint32_t rank = 0) {
  PlanOptions o;
  o.seq_len = 48;
  o.pack = pack;
  o.bestfit_window = 40;
  o.world_size = world;
  o.batch_size = batch;
  o.rank = rank;
  o.seed = 77;
  return o;
}

TEST(PlanResumeTest, ResumeAtRandomStepsEqualsTheUninterruptedPlan) {
  std::mt19937_64 rng(5);
  auto lengths = MakeLengths(400, 30, 0.1, 5, 3);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    for (RemainderPolicy rem : {RemainderPolicy::kDropLast, RemainderPolicy::kPad}) {
      PlanOptions o = Options(pack, 3, 2);
      o.remainder = rem;
      auto whole = MakePlan({{lengths, 1.0}}, o);
      // The uninterrupted stream over three epochs, rank by rank.
      std::vector<std::vector<Batch>> want(3);
      PlanPosition p{0, 0};
      std::vector<PlanPosition> positions;
      while (p.epoch < 3) {
        positions.push_back(p);
        for (uint32_t r = 0; r < 3; ++r) want[r].push_back(*whole->GetBatchAt(p, r));
        p = whole->Advance(p);
      }
      for (int trial = 0; trial < 10; ++trial) {
        size_t at = rng() % positions.size();
        // The checkpoint travels as JSON into a plan built from scratch.
        std::string text = whole->MakeState(positions[at]).ToJson();
        auto state = PlanState::FromJson(text);
        ASSERT_TRUE(state.ok()) << state.status().ToString();
        auto fresh = MakePlan({{lengths, 1.0}}, o);
        auto pos = fresh->Restore(*state);
        ASSERT_TRUE(pos.ok()) << pos.status().ToString();
        for (size_t i = at; i < positions.size(); ++i) {
          ASSERT_EQ(*pos, positions[i]);
          for (uint32_t r = 0; r < 3; ++r) {
            Batch b = *fresh->GetBatchAt(*pos, r);
            ASSERT_EQ(b.rows, want[r][i].rows) << "step " << i << " rank " << r;
          }
          pos = fresh->Advance(*pos);
        }
      }
    }
  }
}

TEST(PlanResumeTest, ElasticResumeStaysExactlyOnce) {
  const uint32_t worlds[] = {1, 2, 3, 5, 7, 8, 13, 16, 31, 64};
  std::mt19937_64 rng(17);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    auto lengths = MakeLengths(900, 25, 0.1, 6, 100 + static_cast<int>(pack));
    for (int trial = 0; trial < 40; ++trial) {
      uint32_t w1 = worlds[rng() % std::size(worlds)], w2 = worlds[rng() % std::size(worlds)];
      uint64_t b1 = 1 + rng() % 3, b2 = 1 + rng() % 3;
      SCOPED_TRACE("W " + std::to_string(w1) + "x" + std::to_string(b1) + " -> " +
                   std::to_string(w2) + "x" + std::to_string(b2));
      auto before = MakePlan({{lengths, 1.0}}, Options(pack, w1, b1));
      auto after = MakePlan({{lengths, 1.0}}, Options(pack, w2, b2));
      Coverage cover;
      PlanPosition p{0, 0};
      uint64_t steps = before->steps_per_epoch(0);
      uint64_t stop = steps ? rng() % steps : 0;
      for (uint64_t s = 0; s < stop; ++s, p = before->Advance(p)) {
        for (uint32_t r = 0; r < w1; ++r) cover.Add(before->GetBatchAt(p, r)->rows);
      }
      auto restored = after->Restore(PlanState::FromJson(before->MakeState(p).ToJson()).value());
      ASSERT_TRUE(restored.ok()) << restored.status().ToString();
      p = *restored;
      ASSERT_EQ(p.epoch, 0u);
      for (; p.epoch == 0 && after->steps_remaining(p) > 0; p = after->Advance(p)) {
        for (uint32_t r = 0; r < w2; ++r) cover.Add(after->GetBatchAt(p, r)->rows);
      }
      // What the new world size drops at the end of the epoch (drop_last).
      uint64_t consumed =
          restored->rows_consumed + after->steps_remaining(*restored) * after->global_batch_rows();
      std::vector<Row> dropped;
      ASSERT_TRUE(after->GetRows(0, consumed, after->rows_in_epoch(0) - consumed, &dropped).ok());
      cover.Add(dropped);
      uint64_t limit = pack == PackMode::kPad ? 48 : UINT64_MAX;
      ASSERT_EQ(cover.CheckExactlyOnce(0, *lengths, limit), "");
    }
  }
}

TEST(PlanResumeTest, FingerprintMismatchIsAnErrorUnlessForced) {
  auto lengths = MakeLengths(100, 10, 0.0, 1, 1);
  auto other_lengths = MakeLengths(100, 10, 0.0, 1, 2);
  PlanOptions o = Options(PackMode::kConcat, 2, 2);
  auto plan = MakePlan({{lengths, 1.0}}, o);
  PlanState state = plan->MakeState({0, 8});

  auto different_data = MakePlan({{other_lengths, 1.0}}, o);
  auto r = different_data->Restore(state);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("fingerprint"), std::string::npos);
  auto forced = different_data->Restore(state, /*force=*/true);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(*forced, (PlanPosition{0, 8}));

  EXPECT_NE(r.status().message().find(": the dataset differs (its documents, lengths or shards"),
            std::string::npos)
      << r.status().ToString();
  // A one-dataset checkpoint names the option that differs, with both values.
  struct Change {
    void (*apply)(PlanOptions&);
    const char* named;
  };
  for (const Change& change :
       {Change{+[](PlanOptions& x) { x.seq_len += 1; },
               ": seq_len (48 in the checkpoint, 49 here)"},
        Change{+[](PlanOptions& x) { x.seed += 1; }, ": seed (77 in the checkpoint, 78 here)"},
        Change{+[](PlanOptions& x) { x.shuffle = ShuffleMode::kNone; },
               ": shuffle (global in the checkpoint, none here)"},
        Change{+[](PlanOptions& x) { x.pack = PackMode::kPad; },
               ": pack (concat in the checkpoint, pad here)"}}) {
    PlanOptions changed = o;
    change.apply(changed);
    const Status refused = MakePlan({{lengths, 1.0}}, changed)->Restore(state).status();
    EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.message().find(std::string(change.named) + " differ"), std::string::npos)
        << refused.ToString();
  }
  // So does a mixture that is given a one-dataset checkpoint written with other options.
  PlanOptions reseeded = o;
  reseeded.seed += 1;
  const Status into_mixture =
      MakePlan({{lengths, 1.0}, {other_lengths, 1.0}}, reseeded)->ContinueFrom(state).status();
  EXPECT_NE(into_mixture.message().find("the options it was written with (seed (77 in the "
                                        "checkpoint, 78 here) differ)"),
            std::string::npos)
      << into_mixture.ToString();
  // World size, batch size and remainder are not part of it (elastic resume).
  PlanOptions elastic = Options(PackMode::kConcat, 7, 3);
  elastic.remainder = RemainderPolicy::kPad;
  EXPECT_TRUE(MakePlan({{lengths, 1.0}}, elastic)->Restore(state).ok());
  // A position past the end of the epoch is refused.
  PlanState too_far = plan->MakeState({0, plan->rows_in_epoch(0) + 1});
  EXPECT_EQ(plan->Restore(too_far).status().code(), StatusCode::kFailedPrecondition);
}

TEST(PlanResumeTest, StateJsonRoundTripAndErrors) {
  PlanState s;
  s.position = {3, 12345678901ULL};
  s.fingerprint = "0123456789abcdef";
  s.world_size = 8;
  s.batch_size = 4;
  auto back = PlanState::FromJson(s.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->position, s.position);
  EXPECT_EQ(back->fingerprint, s.fingerprint);
  EXPECT_EQ(back->world_size, 8u);
  // A Loader's state_dict (docs/checkpoint-format.md) reads as the plan state it holds.
  auto wrapped = PlanState::FromJson(R"({"format":"stoker-loader-state","version":1,)"
                                     R"("plan_state":)" +
                                     s.ToJson() + "}");
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  EXPECT_EQ(wrapped->position, s.position);
  EXPECT_EQ(PlanState::FromJson("{").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanState::FromJson("[1,2]").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanState::FromJson(R"({"format":"stoker-plan-state","version":1})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanState::FromJson(R"({"format":"stoker-plan-state","version":99,"epoch":0,)"
                                R"("rows_consumed":0,"fingerprint":"x"})")
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(PlanState::FromJson(R"({"format":"stoker-plan-state","version":1,"epoch":-1,)"
                                R"("rows_consumed":0,"fingerprint":"x"})")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(PlanResumeTest, MangledStatesAreRefusedOrHarmless) {
  auto a = MakeLengths(300, 20, 0.1, 2, 8), b = MakeLengths(100, 20, 0.0, 1, 9);
  PlanOptions o = Options(PackMode::kBestFit, 4, 2);
  auto plan = MakePlan({{a, 2.0}, {b, 1.0}}, o);
  const std::string good = plan->MakeState({1, 8}).ToJson();
  std::mt19937_64 rng(23);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = good;
    for (int m = 0, n = 1 + rng() % 4; m < n; ++m) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(at, 1, "0123456789-e.\"{}[],:"[rng() % 20]);
          break;
      }
      if (text.empty()) text = "{";
    }
    auto state = PlanState::FromJson(text);
    if (!state.ok()) continue;
    ++parsed;
    // Whatever parsed (e.g. a changed epoch digit) is restored or refused. (A far epoch of a
    // mixture is closed-form: MixtureTest.RandomAccessFarIntoTheStreamIsExact.)
    auto pos = plan->Restore(*state, /*force=*/true);
    if (pos.ok() && plan->steps_remaining(*pos) > 0) EXPECT_TRUE(plan->GetBatchAt(*pos, 3).ok());
  }
  EXPECT_GT(parsed, 0);
}

// A state's options text is the table's InState rows (plan_options_table.cc), and it is the
// text states have always held for the same options: a checkpoint's text compares key by key.
TEST(PlanResumeTest, StateOptionsTextIsTheTablesAndKeepsItsOldForm) {
  auto lengths = MakeLengths(400, 30, 0.05, 4, 9);
  auto state_text = [&](const PlanOptions& o) {
    return MakePlan({{lengths, 1.0}}, o)->MakeState({0, 0}).options;
  };
  PlanOptions o = Options(PackMode::kConcat, 2, 2);
  EXPECT_EQ(state_text(o), "seq_len=48 seed=77 shuffle=global pack=concat");
  o.shuffle = ShuffleMode::kBlock;
  o.block_shards = 2;
  o.pack = PackMode::kBestFit;
  o.pad_each_document_to = 4;
  o.max_documents_per_row = 3;
  EXPECT_EQ(state_text(o),
            "seq_len=48 seed=77 shuffle=block block_shards=2 pack=bestfit bestfit_window=40 "
            "pad_each_document_to=4 max_documents_per_row=3");
  o.pad_each_document_to = 1;  // the same as none
  EXPECT_EQ(state_text(o).find("pad_each"), std::string::npos);
}

}  // namespace
}  // namespace stoker::plan
