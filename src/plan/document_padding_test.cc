// pad_each_document_to: the plan packs each piece's padded room, keeps every token exactly once,
// and a checkpoint of another padding is refused with a message naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/plan_test_util.h"
#include "stoker/plan.h"

namespace stoker::plan {
namespace {

using testing::Coverage;
using testing::MakeLengths;
using testing::MakePlan;

PlanOptions PaddedOptions(PackMode pack, uint64_t pad_to) {
  PlanOptions o;
  o.seq_len = 64;
  o.pack = pack;
  o.bestfit_window = 50;
  o.batch_size = 2;
  o.seed = 5;
  o.pad_each_document_to = pad_to;
  return o;
}

// Every row of epoch 0, after checking that each covers every token exactly once.
std::vector<Row> EpochRows(const Plan& plan, const DatasetLengths& lengths,
                           uint64_t limit = UINT64_MAX) {
  std::vector<Row> rows;
  EXPECT_TRUE(plan.GetRows(0, 0, plan.rows_in_epoch(0), &rows).ok());
  Coverage coverage;
  coverage.Add(rows);
  EXPECT_EQ(coverage.CheckExactlyOnce(0, lengths, limit), "");
  return rows;
}

uint64_t Room(const Row& row, uint64_t pad_to) {
  uint64_t room = 0;
  for (const RowPiece& p : row.pieces) room += PaddedLength(p.length, pad_to);
  return room;
}

TEST(DocumentPaddingTest, PaddedPiecesFitTheirRowsAndEveryTokenIsPlacedOnce) {
  auto lengths = MakeLengths(600, 20, 0.05, 3, 11);
  for (PackMode pack : {PackMode::kBestFit, PackMode::kPad}) {
    for (uint64_t m : {4u, 16u, 64u}) {
      auto plan = MakePlan({{lengths, 1.0}}, PaddedOptions(pack, m));
      ASSERT_NE(plan, nullptr);
      const uint64_t limit = pack == PackMode::kPad ? 64 : UINT64_MAX;
      uint64_t longest_room = 0;
      for (const Row& row : EpochRows(*plan, *lengths, limit)) {
        const uint64_t room = Room(row, m);
        EXPECT_LE(room, 64u) << "a padded row overflows (m=" << m << ")";
        longest_room = std::max(longest_room, room);
      }
      EXPECT_EQ(longest_room, 64u) << "rows are filled up to seq_len";
      // Padding costs rows: never fewer than the unpadded plan's.
      auto unpadded = MakePlan({{lengths, 1.0}}, PaddedOptions(pack, 0));
      EXPECT_GE(plan->rows_in_epoch(0), unpadded->rows_in_epoch(0));
    }
  }
}

TEST(DocumentPaddingTest, MaxDocumentsPerRowClosesRowsAndKeepsEveryToken) {
  auto lengths = MakeLengths(800, 6, 0.02, 2, 21);  // short documents: many would share a row
  for (uint64_t pad_to : {0u, 4u}) {
    PlanOptions o = PaddedOptions(PackMode::kBestFit, pad_to);
    auto unlimited = MakePlan({{lengths, 1.0}}, o);
    o.max_documents_per_row = 3;
    auto plan = MakePlan({{lengths, 1.0}}, o);
    ASSERT_NE(plan, nullptr);
    EXPECT_NE(plan->fingerprint(), unlimited->fingerprint());
    size_t most = 0;
    for (const Row& row : EpochRows(*plan, *lengths)) {
      most = std::max(most, row.pieces.size());
      EXPECT_LE(Room(row, pad_to), 64u);
    }
    EXPECT_EQ(most, 3u);
    EXPECT_GT(plan->rows_in_epoch(0), unlimited->rows_in_epoch(0));  // closed rows: more rows
  }
  PlanOptions concat = PaddedOptions(PackMode::kConcat, 0);
  concat.max_documents_per_row = 3;
  auto refused = Plan::Create({{lengths, 1.0}}, concat);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("max_documents_per_row=3 needs pack='bestfit'"),
            std::string::npos)
      << refused.status().message();
}

TEST(DocumentPaddingTest, OneAndZeroMeanNoPaddingAndKeepTheFingerprint) {
  auto lengths = MakeLengths(100, 20, 0, 1, 3);
  auto none = MakePlan({{lengths, 1.0}}, PaddedOptions(PackMode::kBestFit, 0));
  auto one = MakePlan({{lengths, 1.0}}, PaddedOptions(PackMode::kBestFit, 1));
  auto four = MakePlan({{lengths, 1.0}}, PaddedOptions(PackMode::kBestFit, 4));
  EXPECT_EQ(none->fingerprint(), one->fingerprint());
  EXPECT_NE(none->fingerprint(), four->fingerprint());
}

TEST(DocumentPaddingTest, BadPaddingIsRefusedSayingWhy) {
  auto lengths = MakeLengths(10, 20, 0, 1, 3);
  auto concat = Plan::Create({{lengths, 1.0}}, PaddedOptions(PackMode::kConcat, 4));
  ASSERT_FALSE(concat.ok());
  EXPECT_EQ(concat.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(concat.status().message().find("pad_each_document_to=4 needs pack='bestfit'"),
            std::string::npos)
      << concat.status().message();
  auto odd = Plan::Create({{lengths, 1.0}}, PaddedOptions(PackMode::kBestFit, 24));
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("seq_len that is a multiple of it (seq_len is 64)"),
            std::string::npos)
      << odd.status().message();
}

TEST(DocumentPaddingTest, ACheckpointOfAnotherPaddingIsRefusedNamingIt) {
  auto lengths = MakeLengths(200, 20, 0, 2, 9);
  auto plain = MakePlan({{lengths, 1.0}}, PaddedOptions(PackMode::kBestFit, 0));
  auto four = MakePlan({{lengths, 1.0}}, PaddedOptions(PackMode::kBestFit, 4));
  auto eight = MakePlan({{lengths, 1.0}}, PaddedOptions(PackMode::kBestFit, 8));
  const PlanPosition pos{0, 6};
  // Same padding: resumes where it was, also through JSON.
  auto same = four->Restore(PlanState::FromJson(four->MakeState(pos).ToJson()).value());
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(*same, pos);
  struct Case {
    const Plan* writer;
    const Plan* reader;
    std::string says;
  };
  for (const Case& c : {Case{four.get(), eight.get(),
                             "pad_each_document_to (4 in the checkpoint, "
                             "8 here)"},
                        Case{plain.get(), four.get(),
                             "pad_each_document_to (none in the "
                             "checkpoint, 4 here)"},
                        Case{four.get(), plain.get(),
                             "pad_each_document_to (4 in the checkpoint, "
                             "none here)"}}) {
    auto r = c.reader->Restore(PlanState::FromJson(c.writer->MakeState(pos).ToJson()).value());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace stoker::plan
