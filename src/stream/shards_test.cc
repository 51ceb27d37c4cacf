#include "stream/shards.h"

#include <gtest/gtest.h>

#include <set>

#include "stream/shard_reader.h"
#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;
using testing::WriteCorpus;

TEST(StreamShards, SplitsOneFileIntoRangesThatReadEveryLineOnce) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {500});
  Result<std::vector<StreamShard>> shards = MakeShards(paths, 24);
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  EXPECT_EQ(shards->size(), 24u);
  std::unique_ptr<Tokenizer> tok = OpenTokenizer("bytes").value();
  ShardReader reader(&*shards, tok.get(), {});
  std::multiset<uint64_t> offsets;
  uint64_t docs = 0;
  for (uint32_t s = 0; s < shards->size(); ++s) {
    ASSERT_TRUE(reader.Open(s, 0, 0).ok());
    RawItem item;
    while (reader.NextRaw(&item).value()) {
      EXPECT_GE(item.ref.offset, (*shards)[s].begin);
      EXPECT_LT(item.ref.offset, (*shards)[s].end);
      offsets.insert(item.ref.offset);
      ++docs;
    }
  }
  EXPECT_EQ(docs, 500u);
  EXPECT_EQ(std::set<uint64_t>(offsets.begin(), offsets.end()).size(), 500u);
}

TEST(StreamShards, NoSplitWhenThereAreEnoughFiles) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {3, 4, 5});
  EXPECT_EQ(MakeShards(paths, 3).value().size(), 3u);
  EXPECT_GT(MakeShards(paths, 8).value().size(), 3u);
}

TEST(StreamShards, DealsEveryShardToExactlyOneRankAndReshufflesPerEpoch) {
  std::vector<StreamShard> shards(37);
  for (size_t i = 0; i < shards.size(); ++i) shards[i].end = 100 + 13 * i;
  for (uint32_t w : {1u, 3u, 8u}) {
    auto dealt = DealShards(shards, 7, 0, w);
    std::multiset<uint32_t> all;
    for (const auto& r : dealt) all.insert(r.begin(), r.end());
    EXPECT_EQ(all.size(), shards.size());
    EXPECT_EQ(std::set<uint32_t>(all.begin(), all.end()).size(), shards.size());
    EXPECT_EQ(dealt, DealShards(shards, 7, 0, w));
  }
  EXPECT_NE(DealShards(shards, 7, 0, 3), DealShards(shards, 7, 1, 3));
}

}  // namespace
}  // namespace stoker::stream
