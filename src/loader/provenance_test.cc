#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "loader/memory_token_source.h"
#include "plan/plan_provenance.h"

namespace stoker::loader {
namespace {

std::shared_ptr<const DatasetLengths> Lengths(std::vector<uint64_t> lengths,
                                              std::vector<uint64_t> shards) {
  auto out = std::make_shared<DatasetLengths>();
  out->document_lengths = std::move(lengths);
  out->shard_first_document = std::move(shards);
  return out;
}

// Every piece of every row, for both ranks and many steps of a 2-dataset mixture: its shard holds
// its document, its record is the document's index in that shard, and the token range and row
// position are the row's.
TEST(ProvenanceTest, PiecesMapToShardRecordAndTokenRange) {
  const std::vector<uint64_t> a_shards{0, 3, 3, 10};  // shard 1 is empty
  auto a = Lengths({5, 9, 0, 30, 2, 7, 11, 4, 13, 6}, a_shards);
  auto b = Lengths({40, 3, 8, 21, 5}, {0, 5});
  ProvenanceMap map({{"data/a", a_shards, {"data/a/s0", "data/a/s1", "data/a/s2"}},
                     {"data/b", {0, 5}, {"data/b.bin"}}});
  PlanOptions o;
  o.seq_len = 16;
  o.batch_size = 2;
  o.world_size = 2;
  o.pack = PackMode::kBestFit;
  o.bestfit_window = 4;
  auto plan = Plan::Create({{a, 1.0}, {b, 1.0}}, o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::set<std::pair<uint32_t, uint64_t>> shards_seen;
  for (uint64_t step = 0; step < 12; ++step) {
    for (uint32_t rank = 0; rank < 2; ++rank) {
      auto batch = (*plan)->GetBatch(0, step, rank);
      if (!batch.ok()) break;
      auto p = map.Explain(*batch);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      EXPECT_EQ(p->step, step);
      EXPECT_EQ(p->rank, rank);
      ASSERT_EQ(p->rows.size(), batch->rows.size());
      for (size_t r = 0; r < batch->rows.size(); ++r) {
        const Row& row = batch->rows[r];
        ASSERT_EQ(p->rows[r].pieces.size(), row.pieces.size());
        EXPECT_EQ(p->rows[r].repeated, row.repeated);
        uint64_t at = 0;
        for (size_t k = 0; k < row.pieces.size(); ++k) {
          const RowPiece& want = row.pieces[k];
          const PieceProvenance& got = p->rows[r].pieces[k];
          const std::vector<uint64_t>& first =
              want.dataset == 0 ? a_shards : std::vector<uint64_t>{0, 5};
          EXPECT_EQ(got.dataset, want.dataset);
          EXPECT_EQ(got.source, want.dataset == 0 ? "data/a" : "data/b");
          EXPECT_EQ(got.document, want.document);
          ASSERT_LT(got.shard + 1, first.size());
          EXPECT_LE(first[got.shard], want.document);
          EXPECT_LT(want.document, first[got.shard + 1]) << "an empty shard holds nothing";
          EXPECT_EQ(got.record, want.document - first[got.shard]);
          EXPECT_EQ(got.shard_path,
                    want.dataset == 0 ? "data/a/s" + std::to_string(got.shard) : "data/b.bin");
          EXPECT_EQ(got.offset, want.offset);
          EXPECT_EQ(got.length, want.length);
          EXPECT_EQ(got.row_offset, at);
          EXPECT_FALSE(got.key.has_value());
          EXPECT_FALSE(got.byte_offset.has_value());
          at += want.length;
          shards_seen.insert({got.dataset, got.shard});
        }
      }
    }
  }
  EXPECT_TRUE(shards_seen.count({0, 0}) && shards_seen.count({0, 2}) && shards_seen.count({1, 0}));
}

TEST(ProvenanceTest, ADocumentOutsideTheMapIsAnError) {
  ProvenanceMap map({{"d", {0, 4}, {"d"}}});
  Batch batch;
  batch.rows.push_back(Row{{RowPiece{0, 4, 0, 1}}, false});
  EXPECT_EQ(map.Explain(batch).status().code(), StatusCode::kInvalidArgument);
  batch.rows[0].pieces[0] = RowPiece{1, 0, 0, 1};
  EXPECT_EQ(map.Explain(batch).status().code(), StatusCode::kInvalidArgument);
}

TEST(ProvenanceTest, JsonNamesEveryFieldAndASourceIsOneShard) {
  MemoryTokenSource source("mem", {{1, 2, 3}, {4, 5}});
  ProvenanceDataset d = ProvenanceDataset::FromSource(source);
  EXPECT_EQ(d.path, "mem");
  EXPECT_EQ(d.shard_first_document, (std::vector<uint64_t>{0, 2}));
  EXPECT_EQ(d.shard_paths, (std::vector<std::string>{"mem"}));
  Batch batch;
  batch.position = {3, 40};
  batch.step = 5;
  batch.rank = 1;
  batch.rows.push_back(Row{{RowPiece{0, 1, 1, 1}, RowPiece{0, 0, 0, 3}}, true});
  auto p = ProvenanceMap({d}).Explain(batch);
  ASSERT_TRUE(p.ok());
  auto j = nlohmann::json::parse(p->ToJson());
  EXPECT_EQ(j["epoch"], 3);
  EXPECT_EQ(j["rows_consumed"], 40);
  EXPECT_EQ(j["step"], 5);
  EXPECT_EQ(j["rank"], 1);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["repeated"], true);
  const auto& second = j["rows"][0]["pieces"][1];
  EXPECT_EQ(second["source"], "mem");
  EXPECT_EQ(second["document"], 0);
  EXPECT_EQ(second["record"], 0);
  EXPECT_EQ(second["offset"], 0);
  EXPECT_EQ(second["length"], 3);
  EXPECT_EQ(second["row_offset"], 1);
  EXPECT_TRUE(second["key"].is_null());
  EXPECT_FALSE(second.contains("byte_offset"));
}

}  // namespace
}  // namespace stoker::loader
