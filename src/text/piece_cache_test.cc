#include "text/piece_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stoker {
namespace {

// Every piece of every cacheable length, and for each one the pieces that differ from it in
// exactly one byte (at each position): a key that missed a byte would give two of them the same
// entry, and the lookup of one would return the other's ids.
std::vector<std::string> NearPieces() {
  std::vector<std::string> pieces;
  for (size_t len = 1; len <= PieceCache::kMaxBytes; ++len) {
    std::string base;
    for (size_t i = 0; i < len; ++i) base += static_cast<char>('a' + i);
    pieces.push_back(base);
    for (size_t i = 0; i < len; ++i) {
      std::string changed = base;
      changed[i] = 'Z';
      pieces.push_back(changed);
      changed[i] = '\xff';
      pieces.push_back(changed);
    }
  }
  return pieces;
}

TEST(PieceCacheTest, ALookupReturnsThePiecesOwnIdsOrMisses) {
  const std::vector<std::string> pieces = NearPieces();
  PieceCache cache;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int32_t ids[2] = {static_cast<int32_t>(i), static_cast<int32_t>(1000 + i)};
    cache.Insert(pieces[i], ids, 1 + i % 2);
  }
  size_t hits = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::vector<int32_t> got = {-7};  // a lookup appends
    if (!cache.Lookup(pieces[i], &got)) {
      EXPECT_EQ(got, std::vector<int32_t>{-7});
      continue;
    }
    ++hits;
    std::vector<int32_t> want = {-7, static_cast<int32_t>(i)};
    if (i % 2) want.push_back(static_cast<int32_t>(1000 + i));
    EXPECT_EQ(got, want) << "piece " << i << " (" << pieces[i].size() << " bytes)";
  }
  // A few hundred pieces in 32768 entries: nearly all of them are still there.
  EXPECT_GT(hits, pieces.size() * 9 / 10);
}

TEST(PieceCacheTest, LongPiecesAndTooManyIdsAreNotCached) {
  PieceCache cache;
  const std::string long_piece(PieceCache::kMaxBytes + 1, 'x');
  const int32_t ids[PieceCache::kMaxIds + 1] = {1, 2, 3, 4};
  cache.Insert(long_piece, ids, 1);
  cache.Insert("four", ids, PieceCache::kMaxIds + 1);
  std::vector<int32_t> got;
  EXPECT_FALSE(cache.Lookup(long_piece, &got));
  EXPECT_FALSE(cache.Lookup("four", &got));
  EXPECT_TRUE(got.empty());
  cache.Insert("four", ids, PieceCache::kMaxIds);
  ASSERT_TRUE(cache.Lookup("four", &got));
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 3}));
}

}  // namespace
}  // namespace stoker
