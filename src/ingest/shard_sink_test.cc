#include "ingest/shard_sink.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "format/token_convert.h"
#include "ingest/pack_test_util.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

// Documents of 1..3000 tokens with ids below 60000 (so they fit uint16 as well as int32).
std::vector<std::vector<int32_t>> RandomDocuments(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int32_t>> docs(count);
  for (auto& d : docs) {
    d.resize(1 + rng() % 3000);
    for (int32_t& id : d) id = static_cast<int32_t>(rng() % 60000);
  }
  return docs;
}

// The documents through Add, one at a time, and through AddStored in random runs (stored as
// the dtype on the "encode thread"): the same shards, byte for byte, cut at the same places.
// The small shard size cuts shards in the middle of runs; the 1-token documents and a document
// larger than a shard cover the edge cases.
TEST(ShardSinkTest, StoredRunsWriteTheSameShardsAsOneDocumentAtATime) {
  for (TokenDType dtype : {TokenDType::kUint16, TokenDType::kInt32}) {
    const fs::path root = fs::path(::testing::TempDir()) / "shard_sink_stored";
    fs::remove_all(root);
    fs::create_directories(root / "one");
    fs::create_directories(root / "runs");
    std::vector<std::vector<int32_t>> docs = RandomDocuments(300, 7);
    docs.insert(docs.begin() + 100, std::vector<int32_t>(20000, 5));  // larger than a shard
    docs.push_back({1});
    const uint64_t shard_bytes = 16000 * TokenDTypeSize(dtype);

    ShardSink one((root / "one").string(), 0, dtype, shard_bytes);
    for (const auto& d : docs) ASSERT_TRUE(one.Add(d).ok());
    auto one_shards = one.Finish();
    ASSERT_TRUE(one_shards.ok()) << one_shards.status().ToString();

    ShardSink runs((root / "runs").string(), 0, dtype, shard_bytes);
    std::mt19937 rng(3);
    for (size_t first = 0; first < docs.size();) {
      const size_t last = std::min(docs.size(), first + rng() % 40);
      std::vector<int32_t> tokens;
      std::vector<uint64_t> lengths;
      for (size_t d = first; d < last; ++d) {
        tokens.insert(tokens.end(), docs[d].begin(), docs[d].end());
        lengths.push_back(docs[d].size());
      }
      std::vector<uint8_t> bytes(tokens.size() * TokenDTypeSize(dtype));
      StoreFittingTokens(tokens.data(), tokens.size(), dtype, bytes.data());
      ASSERT_TRUE(runs.AddStored(bytes, lengths).ok());
      first = last;
    }
    auto run_shards = runs.Finish();
    ASSERT_TRUE(run_shards.ok()) << run_shards.status().ToString();

    ASSERT_GT(one_shards->size(), 3u);
    ASSERT_EQ(run_shards->size(), one_shards->size());
    for (size_t s = 0; s < one_shards->size(); ++s) {
      const ShardInfo &a = (*one_shards)[s], &b = (*run_shards)[s];
      EXPECT_EQ(a.documents, b.documents) << s;
      EXPECT_EQ(a.tokens, b.tokens) << s;
      for (const char* ext : {".bin", ".idx"}) {
        EXPECT_EQ(testing::ReadFile((root / "one" / (a.prefix + ext)).string()),
                  testing::ReadFile((root / "runs" / (b.prefix + ext)).string()))
            << a.prefix << ext;
      }
    }
  }
}

TEST(ShardSinkTest, StoredBytesThatDisagreeWithTheLengthsAreRefused) {
  const fs::path root = fs::path(::testing::TempDir()) / "shard_sink_mismatch";
  fs::remove_all(root);
  fs::create_directories(root);
  ShardSink sink(root.string(), 0, TokenDType::kInt32, 1 << 20);
  std::vector<uint8_t> bytes(12);
  std::vector<uint64_t> lengths = {2, 2};
  Status st = sink.AddStored(bytes, lengths);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("4 tokens but 12 bytes"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace stoker
