#include "loader/planned_dataset.h"

#include <gtest/gtest.h>

#include "loader/loader_test_util.h"

namespace stoker::loader {
namespace {

// Lengths 2, 6, 9 and 7: with seq_len 5 the last three are long. The mask of document 2 is
// trained from token 7 on (past a head of 5), of document 3 from token 3.
testing::MaskedSource LongChats() {
  return testing::MaskedSource(
      {{1, 2}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 5, 6, 7}},
      {{0, 1}, {0, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 1, 1}, {0, 0, 0, 1, 1, 1, 1}});
}

std::vector<uint64_t> All(const DatasetLengths& l) {
  std::vector<uint64_t> v;
  for (uint64_t d = 0; d < l.num_documents(); ++d) v.push_back(l.length(d));
  return v;
}

TEST(ChatLengthsTest, AutoDropsLongChatDocumentsAndSplitsText) {
  testing::MaskedSource chats = LongChats();
  MemoryTokenSource text("text", {{1, 2}, {1, 2, 3, 4, 5, 6}});
  LongDocumentCounts c;
  Result<DatasetLengths> l = PlannedLengths(*chats.Lengths(), chats, LongDocuments::kAuto, 5, &c);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(All(*l), (std::vector<uint64_t>{2, 0, 0, 0}));
  EXPECT_EQ(c.dropped, 3u);
  l = PlannedLengths(*text.Lengths(), text, LongDocuments::kAuto, 5, &c);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(All(*l), (std::vector<uint64_t>{2, 6}));
  EXPECT_EQ(c.dropped + c.truncated, 0u);
}

TEST(ChatLengthsTest, TruncateKeepsHeadsWithATrainedTarget) {
  testing::MaskedSource chats = LongChats();
  LongDocumentCounts c;
  Result<DatasetLengths> l =
      PlannedLengths(*chats.Lengths(), chats, LongDocuments::kTruncate, 5, &c);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  // Document 2's head (targets 1..5) has no trained token: left out.
  EXPECT_EQ(All(*l), (std::vector<uint64_t>{2, 5, 0, 5}));
  EXPECT_EQ(c.truncated, 3u);
  EXPECT_EQ(c.untrained, 1u);
  // Trained targets: doc0 [1,2) = 1; doc1 [1,6) = 5; doc3 [1,6) = 3.
  Result<uint64_t> trained = CountTrainedTargets(*l, chats);
  ASSERT_TRUE(trained.ok());
  EXPECT_EQ(*trained, 9u);
}

TEST(ChatLengthsTest, PoliciesHaveTheirCommandLineNames) {
  for (LongDocuments p : {LongDocuments::kAuto, LongDocuments::kSplit, LongDocuments::kDrop,
                          LongDocuments::kTruncate}) {
    Result<LongDocuments> back = ParseLongDocuments(LongDocumentsName(p));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
  }
  EXPECT_FALSE(ParseLongDocuments("chop").ok());
}

}  // namespace
}  // namespace stoker::loader
