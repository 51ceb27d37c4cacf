// DocumentSkips: ids as `stoker trace` prints them, resolved against a plan's datasets, and the
// pieces of those documents taken out of rows; SkipDocumentsInState and the state round trip.
#include "plan/document_skips.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/plan_batch_planner.h"
#include "plan/plan_test_util.h"
#include "plan/state_edit.h"

namespace stoker {
namespace {

std::vector<ProvenanceDataset> TwoDatasets() {
  // web: shards of 3 and 2 documents; code: one shard of 4.
  return {
      ProvenanceDataset{"/data/web", {0, 3, 5}, {"/data/web/shard-0000", "/data/web/shard-0001"}},
      ProvenanceDataset{"/data/code", {0, 4}, {"/data/code/shard-0000"}}};
}

TEST(DocumentSkips, ResolvesIdsByNameShardAndRecord) {
  Result<DocumentSkips> s = DocumentSkips::Resolve(
      {"web:shard-0001:1", "/data/code:0:3", "web:1:1"}, {"web", "code"}, TwoDatasets());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->Contains(0, 4));  // shard 1 starts at document 3
  EXPECT_TRUE(s->Contains(1, 3));
  EXPECT_FALSE(s->Contains(0, 1));
  EXPECT_EQ(s->ids().size(), 3u);  // each id as given (two name the same document)

  Batch b;
  b.rows = {Row{{{0, 1, 0, 5}, {0, 4, 2, 3}, {1, 3, 0, 2}}, false}, Row{{{0, 2, 0, 8}}, false}};
  s->Filter(&b);
  ASSERT_EQ(b.rows[0].pieces.size(), 1u);
  EXPECT_EQ(b.rows[0].pieces[0].document, 1u);
  EXPECT_EQ(b.rows[1].pieces.size(), 1u);  // the other rows as planned
}

TEST(DocumentSkips, RefusesAnIdThatNamesNoDocument) {
  for (const char* id : {"web:shard-0001:2", "wiki:0:0", "web:7:0"}) {
    Result<DocumentSkips> s = DocumentSkips::Resolve({id}, {"web", "code"}, TwoDatasets());
    ASSERT_FALSE(s.ok()) << id;
    EXPECT_NE(s.status().message().find("no such document in the datasets (web (2 shards), "
                                        "code (1 shards))"),
              std::string::npos)
        << s.status().ToString();
  }
  Result<DocumentSkips> bad = DocumentSkips::Resolve({"web-3"}, {"web"}, TwoDatasets());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected DATASET:SHARD:RECORD"), std::string::npos);
}

TEST(SkipDocumentsInState, AddsTheIdsAndTheStateKeepsThem) {
  PlanState s;
  s.position = {0, 8};
  s.fingerprint = "abc";
  Result<std::string> out = SkipDocumentsInState(s.ToJson(), {"web:0:1", "web:0:1", "code:0:2"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  Result<PlanState> back = PlanState::FromJson(*out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->skip_documents, (std::vector<std::string>{"web:0:1", "code:0:2"}));
  EXPECT_EQ(PlanState::FromJson(back->ToJson())->skip_documents, back->skip_documents);
  EXPECT_FALSE(SkipDocumentsInState(s.ToJson(), {"web:0"}).ok());
  EXPECT_FALSE(SkipDocumentsInState(s.ToJson(), {}).ok());
  s.stream = "{}";
  EXPECT_FALSE(SkipDocumentsInState(s.ToJson(), {"web:0:1"}).ok());
}

TEST(DocumentSkips, ThePlannerLeavesThemOutOfBatchesAndKeepsThemInStates) {
  auto lengths = std::make_shared<DatasetLengths>();
  lengths->name = "/data/web";
  lengths->document_lengths.assign(8, 16);  // 4 full rows: every document planned
  lengths->shard_first_document = {0, 3, 8};
  PlanOptions o;
  o.seq_len = 32;
  o.batch_size = 1;
  std::shared_ptr<const Plan> plan(plan::testing::MakePlan({PlanDataset{lengths, 1.0}}, o));
  ASSERT_NE(plan, nullptr);
  Result<DocumentSkips> skips = DocumentSkips::Resolve({"web:1:0"}, {"/data/web"}, TwoDatasets());
  ASSERT_TRUE(skips.ok());
  PlanBatchPlanner planner(plan, 0, {}, {}, std::make_shared<const DocumentSkips>(*skips));
  PlanBatchPlanner plain(plan, 0);
  Batch batch, planned;
  uint64_t quarantined = 0;
  for (PlanPosition pos{0, 0}; pos.epoch == 0; pos = plan->Advance(pos)) {
    ASSERT_TRUE(planner.BatchAt(pos, &batch).ok());
    ASSERT_TRUE(plain.BatchAt(pos, &planned).ok());
    ASSERT_EQ(batch.rows.size(), planned.rows.size());
    for (size_t r = 0; r < batch.rows.size(); ++r) {
      std::vector<RowPiece> want;
      for (const RowPiece& p : planned.rows[r].pieces) {
        if (p.document == 3) {  // shard 1, record 0
          ++quarantined;
        } else {
          want.push_back(p);
        }
      }
      EXPECT_EQ(batch.rows[r].pieces, want);  // the planned row less its pieces
    }
  }
  EXPECT_GT(quarantined, 0u);
  PlanState state = planner.MakeState({0, 2});
  EXPECT_EQ(state.skip_documents, std::vector<std::string>{"web:1:0"});
  EXPECT_TRUE(planner.RestorePosition(state).ok());
  state.skip_documents.clear();
  Result<PlanPosition> other = planner.RestorePosition(state);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("the state quarantines 0 document(s) and this loader 1 "
                                          "others: open a new loader at the state"),
            std::string::npos)
      << other.status().ToString();
}

}  // namespace
}  // namespace stoker
