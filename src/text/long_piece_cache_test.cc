// LongPieceCache: pieces of up to 64 bytes come back with their ids; a piece pushed out of its
// set, a longer piece or too many ids are misses, never wrong ids.
#include "text/long_piece_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stoker {
namespace {

TEST(LongPieceCacheTest, HitsOnlyTheSameBytes) {
  LongPieceCache c;
  const std::string a(30, 'a'), b = std::string(29, 'a') + "b";
  const int32_t ids[] = {1, 2, 3};
  std::vector<int32_t> out;
  EXPECT_FALSE(c.Lookup(a, &out));
  c.Insert(a, ids, 3);
  ASSERT_TRUE(c.Lookup(a, &out));
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 3}));
  out.clear();
  EXPECT_FALSE(c.Lookup(b, &out));
  const std::string big(65, 'x');
  c.Insert(big, ids, 1);
  EXPECT_FALSE(c.Lookup(big, &out));
  const std::vector<int32_t> many(LongPieceCache::kMaxIds + 1, 7);
  c.Insert(b, many.data(), many.size());
  EXPECT_FALSE(c.Lookup(b, &out));
  EXPECT_TRUE(out.empty());
}

TEST(LongPieceCacheTest, EveryPieceOfManyReadsBackOrMisses) {
  LongPieceCache c;
  for (int i = 0; i < 20000; ++i) {
    const std::string p = "piece number " + std::to_string(i) + " of many";
    const int32_t id = i;
    c.Insert(p, &id, 1);
  }
  for (int i = 0; i < 20000; ++i) {
    std::vector<int32_t> out;
    if (c.Lookup("piece number " + std::to_string(i) + " of many", &out)) {
      EXPECT_EQ(out, std::vector<int32_t>{i});
    }
  }
}

// Two ways a set: two pieces that share a set are both kept; a third drops the older of them.
TEST(LongPieceCacheTest, APieceSharingItsSetWithAnotherKeepsItsPlace) {
  std::vector<std::string> same;  // three pieces of one set
  const std::string first = "the first piece of seventeen+ bytes";
  for (int i = 0; same.size() < 2; ++i) {
    std::string p = "another piece, number " + std::to_string(i);
    if (LongPieceCache::Set(p) == LongPieceCache::Set(first)) same.push_back(p);
  }
  LongPieceCache c;
  const int32_t ids[] = {1, 2, 3};
  c.Insert(first, ids, 1);
  c.Insert(same[0], ids + 1, 1);
  std::vector<int32_t> out;
  ASSERT_TRUE(c.Lookup(first, &out));
  ASSERT_TRUE(c.Lookup(same[0], &out));
  c.Insert(same[1], ids + 2, 1);
  EXPECT_FALSE(c.Lookup(first, &out));
  ASSERT_TRUE(c.Lookup(same[0], &out));
  ASSERT_TRUE(c.Lookup(same[1], &out));
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 2, 3}));
}

TEST(LongPieceCacheTest, ANewOwnerStartsEmpty) {
  const std::string p(20, 'z');
  const int32_t id = 5;
  LongPieceCache::ForThread(1)->Insert(p, &id, 1);
  std::vector<int32_t> out;
  EXPECT_TRUE(LongPieceCache::ForThread(1)->Lookup(p, &out));
  EXPECT_FALSE(LongPieceCache::ForThread(2)->Lookup(p, &out));
}

}  // namespace
}  // namespace stoker
