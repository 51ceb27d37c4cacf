#include "text/vocab_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stoker {
namespace {

TEST(VocabIndexTest, FindsWhatWasInsertedAndRefusesAKeyTwice) {
  VocabIndex index;
  EXPECT_EQ(index.Find("a"), -1);  // empty: no table yet
  EXPECT_TRUE(index.Insert("a", 7));
  EXPECT_TRUE(index.Insert("", 3));  // the empty key is a key
  EXPECT_TRUE(index.Insert(std::string_view("a\0b", 3), 9));
  EXPECT_FALSE(index.Insert("a", 8));
  EXPECT_EQ(index.Find("a"), 7);  // the first id stays
  EXPECT_EQ(index.Find(""), 3);
  EXPECT_EQ(index.Find(std::string_view("a\0b", 3)), 9);
  EXPECT_EQ(index.Find("a\0"), 7);  // a C string: "a"
  EXPECT_EQ(index.Find("b"), -1);
  EXPECT_EQ(index.size(), 3u);
}

// 300k keys that share prefixes and lengths (as a vocabulary's do) grow the table many times;
// every key keeps its id, and near misses (a byte more, a byte less, one byte changed) miss.
TEST(VocabIndexTest, ManyKeysSurviveGrowingAndNearMissesMiss) {
  std::vector<std::string> keys;
  for (int i = 0; i < 300000; ++i) keys.push_back("\xC4\xA0tok" + std::to_string(i));
  VocabIndex index;
  for (size_t i = 0; i < keys.size(); ++i)
    ASSERT_TRUE(index.Insert(keys[i], static_cast<int32_t>(i)));
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(index.Find(keys[i]), static_cast<int32_t>(i)) << keys[i];
    ASSERT_EQ(index.Find(keys[i] + "x"), -1);
    ASSERT_EQ(index.Find(std::string_view(keys[i]).substr(1)), -1);
    std::string changed = keys[i];
    changed.back() = 'z';
    ASSERT_EQ(index.Find(changed), -1);
  }
  EXPECT_EQ(index.size(), keys.size());
}

TEST(VocabIndexTest, BatchedLookupsFindTheSameIds) {
  VocabIndex index;
  const std::vector<std::string> keys = {"he", "ll", "hell", "", "\xC4\xA0the"};
  for (size_t i = 0; i < keys.size(); ++i)
    ASSERT_TRUE(index.Insert(keys[i], static_cast<int32_t>(i)));
  std::vector<uint64_t> hashes;
  for (const std::string& k : keys) {
    hashes.push_back(VocabIndex::Hash(k));
    index.Prefetch(hashes.back());
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(index.FindHashed(keys[i], hashes[i]), static_cast<int32_t>(i));
  }
  EXPECT_EQ(index.FindHashed("hel", VocabIndex::Hash("hel")), -1);
  VocabIndex empty;
  empty.Prefetch(hashes[0]);  // no table yet: nothing to prefetch, nothing found
  EXPECT_EQ(empty.FindHashed("he", hashes[0]), -1);
}

}  // namespace
}  // namespace stoker
