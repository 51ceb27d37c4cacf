// Edits on resume (Plan::ContinueFrom, docs/plan.md "Edits on resume"): a checkpoint loaded into
// an edited mixture continues every dataset where it stopped, checked at token level.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "plan/plan_test_util.h"
#include "stoker/plan.h"

namespace stoker::plan {
namespace {

using testing::Coverage;
using testing::MakeLengths;
using testing::MakePlan;

std::shared_ptr<const DatasetLengths> Named(std::shared_ptr<const DatasetLengths> l,
                                            const std::string& name) {
  auto copy = std::make_shared<DatasetLengths>(*l);
  copy->name = name;
  return copy;
}

PlanOptions ContinueOptions(PackMode pack) {
  PlanOptions o;
  o.seq_len = 64;
  o.pack = pack;
  o.bestfit_window = 32;
  return o;
}

// The rows of global rows [g0, g1) of `plan` whose dataset is `k` (the plan's index) and that
// come from epoch `e` of that dataset's own order, added to *cover (as dataset `as`).
void Collect(const Plan& plan, uint64_t g0, uint64_t g1, uint32_t k, uint64_t e, Coverage* cover) {
  const uint64_t epoch_rows = plan.rows_in_epoch(0);
  for (uint64_t g = g0; g < g1; ++g) {
    auto row = plan.GetRow(g / epoch_rows, g % epoch_rows);
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    if (row->pieces.empty() || row->pieces[0].dataset != k) continue;
    if (plan.DatasetEpochOfRow(g / epoch_rows, g % epoch_rows) != e) continue;
    Row r = *row;
    for (RowPiece& p : r.pieces) p.dataset = 0;
    cover->Add(r);
  }
}

uint64_t GlobalRowOf(const Plan& plan, const PlanPosition& pos) {
  return pos.epoch * plan.rows_in_epoch(0) + pos.rows_consumed;
}

class PlanContinueTest : public ::testing::TestWithParam<PackMode> {};

TEST_P(PlanContinueTest, AReweightedRemovedAndAddedMixtureContinuesEveryDatasetExactlyOnce) {
  auto a = Named(MakeLengths(200, 40, 0.0, 3, 1), "a"),
       b = Named(MakeLengths(120, 40, 0.0, 2, 2), "b"),
       c = Named(MakeLengths(150, 40, 0.0, 2, 3), "c");
  const PlanOptions o = ContinueOptions(GetParam());
  auto p1 = MakePlan({{a, 1}, {b, 1}}, o);
  const uint64_t g1 = 97;  // mid-epoch for both
  const PlanState s1 = p1->MakeState({0, g1});
  ASSERT_EQ(s1.datasets.size(), 2u);
  auto round_trip = PlanState::FromJson(s1.ToJson());
  ASSERT_TRUE(round_trip.ok()) << round_trip.status().ToString();
  EXPECT_EQ(round_trip->datasets, s1.datasets);
  const uint64_t a_epoch = s1.datasets[0].epoch, b_epoch = s1.datasets[1].epoch;

  // Edit 1: a reweighted, b removed, c added (c first: indexes change, orders must not).
  auto p2_base = MakePlan({{c, 1}, {a, 3}}, o);
  auto continued = p2_base->ContinueFrom(round_trip.value());
  ASSERT_TRUE(continued.ok()) << continued.status().ToString();
  const Plan& p2 = *continued->plan;
  EXPECT_NE(continued->summary.find("'b': removed"), std::string::npos) << continued->summary;
  EXPECT_NE(continued->summary.find("'c': added"), std::string::npos) << continued->summary;
  EXPECT_EQ(GlobalRowOf(p2, continued->position), g1);  // training continues from the same step
  // Rows before the checkpoint are not part of the continued plan.
  EXPECT_FALSE(p2.GetRow(0, 0).ok());
  // a's current epoch: what p1 gave before g1 plus what p2 gives after, exactly once.
  const uint64_t g2 = g1 + 900;
  Coverage a_cover;
  Collect(*p1, 0, g1, 0, a_epoch, &a_cover);
  Collect(p2, g1, g2, 1, a_epoch, &a_cover);
  EXPECT_EQ(a_cover.CheckExactlyOnce(0, *a), "");
  // c starts at its epoch 0, and completes it exactly once.
  Coverage c_cover;
  Collect(p2, g1, g2, 0, 0, &c_cover);
  EXPECT_EQ(c_cover.CheckExactlyOnce(0, *c), "");

  // Edit 2: b comes back; it continues its epoch where it stopped at g1.
  const PlanState s2 = p2.MakeState({g2 / p2.rows_in_epoch(0), g2 % p2.rows_in_epoch(0)});
  ASSERT_TRUE(s2.origin.has_value());
  EXPECT_EQ(s2.origin->dormant.size(), 1u);
  auto p3_base = MakePlan({{a, 1}, {b, 1}, {c, 1}}, o);
  auto p3 = p3_base->ContinueFrom(s2);
  ASSERT_TRUE(p3.ok()) << p3.status().ToString();
  EXPECT_NE(p3->summary.find("'b': continues its epoch " + std::to_string(b_epoch)),
            std::string::npos)
      << p3->summary;
  Coverage b_cover;
  Collect(*p1, 0, g1, 1, b_epoch, &b_cover);
  Collect(*p3->plan, g2, g2 + 1500, 1, b_epoch, &b_cover);
  EXPECT_EQ(b_cover.CheckExactlyOnce(0, *b), "");
}

TEST_P(PlanContinueTest, AStateOfAContinuedPlanResumesItExactly) {
  auto a = Named(MakeLengths(200, 40, 0.0, 3, 4), "a"),
       b = Named(MakeLengths(90, 40, 0.0, 2, 5), "b");
  const PlanOptions o = ContinueOptions(GetParam());
  auto p1 = MakePlan({{a, 1}, {b, 1}}, o);
  auto p2 = MakePlan({{a, 1}, {b, 4}}, o)->ContinueFrom(p1->MakeState({0, 50}));
  ASSERT_TRUE(p2.ok()) << p2.status().ToString();
  const uint64_t epoch_rows = p2->plan->rows_in_epoch(0);
  const PlanPosition at{(50 + 333) / epoch_rows, (50 + 333) % epoch_rows};
  const PlanState s = p2->plan->MakeState(at);
  // A new process: the same edited mixture, a fresh plan, the continued plan's checkpoint.
  auto again = MakePlan({{a, 1}, {b, 4}}, o)->ContinueFrom(s);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->plan->fingerprint(), p2->plan->fingerprint());
  EXPECT_EQ(again->position, at);
  std::vector<Row> want, got;
  ASSERT_TRUE(p2->plan->GetRows(at.epoch, at.rows_consumed, 40, &want).ok());
  ASSERT_TRUE(again->plan->GetRows(at.epoch, at.rows_consumed, 40, &got).ok());
  EXPECT_EQ(got, want);
}

TEST_P(PlanContinueTest, ADatasetGrownByAppendedShardsFinishesItsEpochThenReadsEverything) {
  auto old_a = MakeLengths(200, 40, 0.0, 3, 6);
  auto grown = std::make_shared<DatasetLengths>(*old_a);
  auto extra = MakeLengths(80, 40, 0.0, 1, 7);
  for (uint64_t d = 0; d < extra->num_documents(); ++d) {
    grown->document_lengths.push_back(extra->length(d));
  }
  grown->shard_first_document.push_back(grown->document_lengths.size());
  grown->name = "a";
  auto a = Named(old_a, "a"), b = Named(MakeLengths(100, 40, 0.0, 2, 8), "b");
  const PlanOptions o = ContinueOptions(GetParam());
  auto p1 = MakePlan({{a, 1}, {b, 1}}, o);
  const PlanState s = p1->MakeState({0, 120});
  const uint64_t e = s.datasets[0].epoch;
  auto p2 =
      MakePlan({{std::shared_ptr<const DatasetLengths>(grown), 1}, {b, 1}}, o)->ContinueFrom(s);
  ASSERT_TRUE(p2.ok()) << p2.status().ToString();
  EXPECT_NE(p2->summary.find("'a': grown from 200 to 280 documents"), std::string::npos)
      << p2->summary;
  // The rest of epoch e is the old documents' (exactly once with what p1 gave); epoch e + 1 reads
  // all 280 exactly once.
  Coverage rest, next;
  Collect(*p1, 0, 120, 0, e, &rest);
  Collect(*p2->plan, 120, 120 + 2500, 0, e, &rest);
  Collect(*p2->plan, 120, 120 + 2500, 0, e + 1, &next);
  EXPECT_EQ(rest.CheckExactlyOnce(0, *old_a), "");
  EXPECT_EQ(next.CheckExactlyOnce(0, *grown), "");
}

TEST_P(PlanContinueTest, RandomEditSequencesReadEveryDatasetEpochExactlyOnce) {
  // A pool of named datasets; each run segment plans a random subset (at least two) with random
  // weights and phases, continues the previous segment's checkpoint, and runs a random number of
  // rows. Per (dataset, its own epoch), the rows gathered over all segments must cover every
  // token exactly once for each epoch that was finished.
  const PlanOptions o = ContinueOptions(GetParam());
  std::vector<std::shared_ptr<const DatasetLengths>> pool;
  for (uint64_t i = 0; i < 4; ++i) {
    pool.push_back(
        Named(MakeLengths(40 + 50 * i, 40, 0.05, 1 + i, 20 + i), "d" + std::to_string(i)));
  }
  std::mt19937_64 rng(GetParam() == PackMode::kConcat ? 1 : 2);
  for (int trial = 0; trial < 6; ++trial) {
    std::map<std::pair<std::string, uint64_t>, Coverage> cover;
    std::map<std::string, uint64_t> last_epoch;
    std::optional<PlanState> state;
    std::vector<std::shared_ptr<const DatasetLengths>> prev;
    uint64_t g = 0;
    for (int segment = 0; segment < 4; ++segment) {
      std::vector<PlanDataset> ds;
      std::vector<std::shared_ptr<const DatasetLengths>> chosen;
      for (auto& l : pool) {
        if (rng() % 3 != 0) chosen.push_back(l);
      }
      while (chosen.size() < 2) chosen.push_back(pool[chosen.size()]);
      std::shuffle(chosen.begin(), chosen.end(), rng);
      for (auto& l : chosen) ds.push_back({l, 0.2 + static_cast<double>(rng() % 10)});
      PlanOptions po = o;
      if (rng() % 2 == 0) {
        po.phases = {{g + 1 + rng() % 200, {}, {}}, {UINT64_MAX, {}, {}}};
        for (auto& p : po.phases) {
          for (size_t k = 0; k < ds.size(); ++k)
            p.weights.push_back(static_cast<double>(rng() % 4));
          p.weights[rng() % ds.size()] = 1;
        }
      }
      auto base = MakePlan(ds, po);
      ASSERT_NE(base, nullptr);
      std::unique_ptr<Plan> plan;
      if (!state) {
        plan = std::move(base);
      } else {
        auto c = base->ContinueFrom(*state);
        ASSERT_TRUE(c.ok()) << c.status().ToString();
        plan = std::move(c->plan);
        ASSERT_EQ(GlobalRowOf(*plan, c->position), g);
      }
      const uint64_t rows = 1 + rng() % 600, epoch_rows = plan->rows_in_epoch(0);
      for (uint64_t r = g; r < g + rows; ++r) {
        auto row = plan->GetRow(r / epoch_rows, r % epoch_rows);
        ASSERT_TRUE(row.ok()) << row.status().ToString();
        if (row->pieces.empty()) continue;
        const std::string& name = chosen[row->pieces[0].dataset]->name;
        const uint64_t e = plan->DatasetEpochOfRow(r / epoch_rows, r % epoch_rows);
        Row copy = *row;
        for (RowPiece& p : copy.pieces) p.dataset = 0;
        cover[{name, e}].Add(copy);
        last_epoch[name] = std::max(last_epoch[name], e);
      }
      g += rows;
      state = plan->MakeState({g / epoch_rows, g % epoch_rows});
      auto json = PlanState::FromJson(state->ToJson());
      ASSERT_TRUE(json.ok());
      state = *json;
    }
    for (const auto& [key, c] : cover) {
      if (key.second >= last_epoch[key.first]) continue;  // not finished
      const DatasetLengths* l = nullptr;
      for (auto& p : pool) {
        if (p->name == key.first) l = p.get();
      }
      const uint64_t limit = o.pack == PackMode::kPad ? o.seq_len : UINT64_MAX;
      EXPECT_EQ(c.CheckExactlyOnce(0, *l, limit), "")
          << "trial " << trial << " dataset " << key.first << " epoch " << key.second;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Packs, PlanContinueTest,
                         ::testing::Values(PackMode::kConcat, PackMode::kBestFit),
                         [](const auto& info) { return std::string(PackModeName(info.param)); });

TEST(PlanContinueRefusals, ChangedDatasetsAndChangedOptionsAreRefusedSayingWhy) {
  auto a = Named(MakeLengths(200, 40, 0.0, 3, 9), "a"),
       b = Named(MakeLengths(100, 40, 0.0, 2, 10), "b");
  auto p1 = MakePlan({{a, 1}, {b, 1}}, ContinueOptions(PackMode::kConcat));
  const PlanState s = p1->MakeState({0, 60});
  // a's existing documents changed (not an append): refused.
  auto changed = std::make_shared<DatasetLengths>(*a);
  changed->document_lengths[3] += 1;
  auto r = MakePlan({{changed, 1}, {b, 1}}, ContinueOptions(PackMode::kConcat))->ContinueFrom(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dataset 'a' changed since the checkpoint"),
            std::string::npos)
      << r.status().ToString();
  // Another seq_len: every row differs.
  PlanOptions longer = ContinueOptions(PackMode::kConcat);
  longer.seq_len = 128;
  r = MakePlan({{a, 1}, {b, 2}}, longer)->ContinueFrom(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.status().message().find(
          "the checkpoint's seq_len (64 in the checkpoint, 128 here) differ from this plan's"),
      std::string::npos)
      << r.status().ToString();
  // The same plan's own check names the option too; a state without them says what it can.
  PlanOptions other_seed = ContinueOptions(PackMode::kConcat);
  other_seed.seed = 5;
  auto restored = MakePlan({{a, 1}, {b, 1}}, other_seed)->Restore(s);
  ASSERT_FALSE(restored.ok());
  EXPECT_NE(restored.status().message().find(": seed (0 in the checkpoint, 5 here) differ"),
            std::string::npos)
      << restored.status().ToString();
  PlanState old = p1->MakeState({0, 60});
  old.options.clear();
  r = MakePlan({{a, 1}, {b, 2}}, longer)->ContinueFrom(old);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("seq_len, seed, shuffle or pack options differ"),
            std::string::npos)
      << r.status().ToString();
}

TEST(PlanContinueRefusals, AChangedDatasetIsRefusedHoweverItsPathIsSpelled) {
  // The mixture's names ("web", "code") identify the datasets; the paths are spelled differently
  // on resume (a mixture file in another folder). "web" changed: refused, never "added".
  auto web = Named(MakeLengths(200, 40, 0.0, 3, 13), "data/web"),
       code = Named(MakeLengths(100, 40, 0.0, 2, 14), "data/code");
  PlanOptions o = ContinueOptions(PackMode::kConcat);
  o.dataset_names = {"web", "code"};
  const PlanState s = MakePlan({{web, 1}, {code, 1}}, o)->MakeState({0, 60});
  EXPECT_EQ(s.datasets[0].name, "web");
  auto changed = std::make_shared<DatasetLengths>(*Named(web, "../x/../data/web"));
  changed->document_lengths[3] += 1;
  auto code2 = Named(code, "../x/../data/code");
  auto r = MakePlan({{changed, 1}, {code2, 1}}, o)->ContinueFrom(s);
  ASSERT_FALSE(r.ok()) << r->summary;
  EXPECT_NE(r.status().message().find("dataset 'web' changed since the checkpoint"),
            std::string::npos)
      << r.status().ToString();
  // Unchanged, the same spelling question: continued, by name.
  auto same = MakePlan({{Named(web, "../x/../data/web"), 2}, {code2, 1}}, o)->ContinueFrom(s);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_NE(same->summary.find("dataset 'web': continues its epoch 0"), std::string::npos)
      << same->summary;
}

TEST(PlanContinueSingle, AOneDatasetRunGainsASecondDataset) {
  auto a = Named(MakeLengths(200, 40, 0.0, 3, 11), "a"),
       b = Named(MakeLengths(100, 40, 0.0, 2, 12), "b");
  const PlanOptions o = ContinueOptions(PackMode::kBestFit);
  auto single = MakePlan({{a, 1}}, o);
  const PlanPosition at{1, 40};  // epoch 1 of a, 40 rows in
  auto p2 = MakePlan({{a, 1}, {b, 1}}, o)->ContinueFrom(single->MakeState(at));
  ASSERT_TRUE(p2.ok()) << p2.status().ToString();
  EXPECT_NE(p2->summary.find("'a': continues its epoch 1 at row 40"), std::string::npos)
      << p2->summary;
  Coverage cover;
  std::vector<Row> before;
  ASSERT_TRUE(single->GetRows(1, 0, 40, &before).ok());
  cover.Add(before);
  const uint64_t g = GlobalRowOf(*p2->plan, p2->position);
  Collect(*p2->plan, g, g + 800, 0, 1, &cover);
  EXPECT_EQ(cover.CheckExactlyOnce(0, *a), "");
}

}  // namespace
}  // namespace stoker::plan
