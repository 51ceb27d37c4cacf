#include "text/bpe_model.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace stoker {
namespace {

// A vocabulary of all 256 bytes plus the given multi-byte tokens, ranked by position.
std::vector<std::string> Vocab(std::initializer_list<const char*> extra) {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  for (const char* e : extra) v.push_back(e);
  return v;
}

std::vector<int32_t> Encode(const BpeModel& m, std::string_view s) {
  std::vector<int32_t> ids;
  m.EncodePiece(s, &ids);
  return ids;
}

// The textbook loop, as tiktoken writes it: the reference for the small and the heap merges.
std::vector<int32_t> NaiveRanks(const BpeModel& m, std::string_view s) {
  std::vector<std::string> parts;
  for (char c : s) parts.push_back(std::string(1, c));
  while (parts.size() > 1) {
    int32_t best = -1;
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      int32_t r = m.Find(parts[i] + parts[i + 1]);
      if (r >= 0 && (best < 0 || r < best)) best = r, at = i;
    }
    if (best < 0) break;
    parts[at] += parts[at + 1];
    parts.erase(parts.begin() + static_cast<ptrdiff_t>(at) + 1);
  }
  std::vector<int32_t> ids;
  for (const auto& p : parts) ids.push_back(m.Find(p));
  return ids;
}

TEST(BpeModelTest, RanksMergeLowestFirstLeftmostOnTies) {
  auto m = BpeModel::BuildFromRanks(Vocab({"ab", "bc", "abc", "aa"}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Encode(*m, "abc"), (std::vector<int32_t>{258}));       // ab, then ab+c
  EXPECT_EQ(Encode(*m, "aaa"), (std::vector<int32_t>{259, 'a'}));  // leftmost pair first
  EXPECT_EQ(Encode(*m, "xbc"), (std::vector<int32_t>{'x', 257}));
  EXPECT_EQ(Encode(*m, ""), (std::vector<int32_t>{}));
}

TEST(BpeModelTest, MergeListRanksPairsNotTokens) {
  // merges: (b,c)=0, (a,b)=1, (ab,c)=2: "abc" becomes a + bc although "abc" is a token.
  auto v = Vocab({"bc", "ab", "abc"});
  std::vector<BpeModel::Merge> merges = {
      {'b', 'c', 0, 256}, {'a', 'b', 1, 257}, {257, 'c', 2, 258}};
  auto m = BpeModel::Build(v, merges);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(Encode(*m, "abc"), (std::vector<int32_t>{'a', 256}));
  EXPECT_EQ(Encode(*m, "abd"), (std::vector<int32_t>{257, 'd'}));
}

TEST(BpeModelTest, MergeWhoseBytesDoNotConcatenateIsRejected) {
  auto v = Vocab({"xy"});
  auto m = BpeModel::Build(v, {{'a', 'b', 0, 256}});
  EXPECT_FALSE(m.ok());
}

TEST(BpeModelTest, RanksNeedEverySingleByte) {
  std::vector<std::string> v = {"a", "b", "ab"};
  auto m = BpeModel::BuildFromRanks(v);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("single byte"), std::string::npos);
}

TEST(BpeModelTest, SmallAndHeapMergesEqualTheTextbookLoop) {
  std::mt19937 rng(7);
  std::vector<std::string> extra_store;
  const char* alphabet = "abcd";
  for (int i = 0; i < 300; ++i) {
    std::string t;
    int len = 2 + static_cast<int>(rng() % 5);
    for (int k = 0; k < len; ++k) t += alphabet[rng() % 4];
    extra_store.push_back(t);
  }
  std::vector<std::string> v = Vocab({});
  for (auto& t : extra_store) v.push_back(t);
  auto m = BpeModel::BuildFromRanks(v);
  ASSERT_TRUE(m.ok());
  for (int n : {2, 5, 17, 47, 48, 49, 100, 1000}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::string s;
      for (int k = 0; k < n; ++k) s += alphabet[rng() % 4];
      ASSERT_EQ(Encode(*m, s), NaiveRanks(*m, s)) << s;
    }
  }
}

TEST(BpeModelTest, RanksFoundOnManyThreadsEqualOneThread) {
  // 20,000 tokens: enough that BuildFromRanks splits the ids over 4 threads.
  std::mt19937 rng(11);
  const char* alphabet = "abcdefgh";
  std::vector<std::string> v = Vocab({});
  std::set<std::string> seen;
  while (v.size() < 20000) {
    std::string t;
    int len = 2 + static_cast<int>(rng() % 7);
    for (int k = 0; k < len; ++k) t += alphabet[rng() % 8];
    if (seen.insert(t).second) v.push_back(t);
  }
  auto one = BpeModel::BuildFromRanks(v, 1);
  auto four = BpeModel::BuildFromRanks(v, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  for (int trial = 0; trial < 200; ++trial) {
    std::string s;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 80); k < n; ++k) s += alphabet[rng() % 8];
    ASSERT_EQ(Encode(*four, s), Encode(*one, s)) << s;
    ASSERT_EQ(Encode(*four, s), NaiveRanks(*four, s)) << s;
  }
}

TEST(BpeModelTest, DuplicateTokensKeepTheLowestIdOnManyThreads) {
  // Every token appears three times, far apart (so different threads index the copies): Find
  // answers the first id of each, on 1 and 8 threads, and the ranks merge the same.
  std::vector<std::string> v = Vocab({});
  std::vector<std::string> words;
  std::mt19937 rng(5);
  std::set<std::string> seen;
  while (words.size() < 12000) {
    std::string t;
    for (int k = 0, n = 2 + static_cast<int>(rng() % 6); k < n; ++k) t += "abcdef"[rng() % 6];
    if (seen.insert(t).second) words.push_back(t);
  }
  for (int copy = 0; copy < 3; ++copy) v.insert(v.end(), words.begin(), words.end());
  v.push_back("a");  // a second single byte: byte_ids keep the first
  auto one = BpeModel::BuildFromRanks(v, 1);
  auto eight = BpeModel::BuildFromRanks(v, 8);
  ASSERT_TRUE(one.ok() && eight.ok());
  for (size_t i = 0; i < words.size(); ++i) {
    ASSERT_EQ(one->Find(words[i]), static_cast<int32_t>(256 + i)) << words[i];
    ASSERT_EQ(eight->Find(words[i]), static_cast<int32_t>(256 + i)) << words[i];
  }
  EXPECT_EQ(eight->Find("a"), 'a');
  EXPECT_EQ(eight->Find("abcabcabcabc"), -1);
  for (int trial = 0; trial < 200; ++trial) {
    std::string s;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 60); k < n; ++k) s += "abcdef"[rng() % 6];
    ASSERT_EQ(Encode(*eight, s), Encode(*one, s)) << s;
    ASSERT_EQ(Encode(*eight, s), NaiveRanks(*eight, s)) << s;  // the copies never merge
  }
}

TEST(BpeModelTest, TokenBytesHoldEveryIdIncludingEmptyOnes) {
  std::vector<std::string> v = Vocab({"ab", "", "abc"});
  TokenBytes t(v);
  ASSERT_EQ(t.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(t[i], v[i]) << i;
  auto m = BpeModel::BuildFromRanks(std::move(t), 2);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->token_bytes(258), "abc");
  EXPECT_EQ(m->token_bytes(257), "");
  EXPECT_EQ(m->Find(""), -1);
  EXPECT_EQ(Encode(*m, "abc"), (std::vector<int32_t>{258}));
}

TEST(BpeModelTest, UnknownBytesBecomeUnkOrVanish) {
  std::vector<std::string> v = {"a", "b", "ab", "<unk>"};
  auto m = BpeModel::Build(v, {{0, 1, 0, 2}});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(Encode(*m,
                   "a\xff"
                   "b"),
            (std::vector<int32_t>{2}));  // dropped: a and b merge
  m->set_unk(3, true);
  EXPECT_EQ(Encode(*m,
                   "a\xff\xfe"
                   "b"),
            (std::vector<int32_t>{0, 3, 1}));
  m->set_unk(3, false);
  EXPECT_EQ(Encode(*m, "\xff\xfe"), (std::vector<int32_t>{3, 3}));
}

}  // namespace
}  // namespace stoker
