#include "format/manifest.h"

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/temp_dir.h"

namespace stoker {
namespace {

Manifest Sample() {
  Manifest m;
  m.tokenizer = {"sentencepiece", "sample.model", 8000, 2, "0123456789abcdef"};
  m.dtype = TokenDType::kUint16;
  m.shards.push_back(
      {"shard-00000", 10, 100, 200, 34 + 12 * 10 + 8 * 11, "00000000000000aa", "00000000000000bb"});
  m.shards.push_back(
      {"../other/shard-00000", 1, 3, 6, 34 + 12 + 16, "00000000000000cc", "00000000000000dd"});
  m.counters["invalid_utf8_replaced"] = 4;
  return m;
}

TEST(ManifestTest, RoundTripsThroughJson) {
  Manifest m = Sample();
  std::string json = m.ToJson();
  auto back = Manifest::Parse(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), json);
  EXPECT_EQ(back->total_documents(), 11u);
  EXPECT_EQ(back->total_tokens(), 103u);
  EXPECT_EQ(back->tokenizer.vocab_size, 8000u);
  EXPECT_EQ(back->tokenizer.eos_id, 2);
  EXPECT_EQ(back->shards[1].prefix, "../other/shard-00000");
  EXPECT_EQ(back->counters.at("invalid_utf8_replaced"), 4u);
  EXPECT_NE(json.find("\"format\": \"stoker-dataset\""), std::string::npos);
}

TEST(ManifestTest, WriteAndReadFromDirectory) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(ReadManifest((*dir)->path()).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(WriteManifest((*dir)->path(), Sample()).ok());
  auto m = ReadManifest((*dir)->path());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->shards.size(), 2u);
  EXPECT_EQ(*ListDirectory((*dir)->path()), std::vector<std::string>{"manifest.json"});
}

void ExpectCorrupt(const std::string& json, const std::string& needle) {
  auto r = Manifest::Parse(json, "/data/ds/manifest.json");
  ASSERT_FALSE(r.ok()) << "accepted: " << json;
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("/data/ds/manifest.json"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

TEST(ManifestTest, RejectsMalformedFiles) {
  std::string good = Sample().ToJson();
  ExpectCorrupt("", "invalid JSON");
  ExpectCorrupt("{\"format\": ", "at byte");
  ExpectCorrupt("[]", "must be an object");
  ExpectCorrupt(Replace(good, "\"version\": 1", "\"version\": 2"),
                "unsupported manifest version 2");
  ExpectCorrupt(Replace(good, "\"dtype\": \"uint16\"", "\"dtype\": \"int3\""), "int3");
  ExpectCorrupt(Replace(good, "\"tokens\": 100", "\"tokens\": -100"), "shards[0].tokens");
  ExpectCorrupt(Replace(good, "\"tokens\": 100", "\"tokens\": \"100\""), "non-negative integer");
  ExpectCorrupt(Replace(good, "\"bin_bytes\": 200", "\"bin_bytes\": 201"), "shards[0].bin_bytes");
  ExpectCorrupt(Replace(good, "\"00000000000000aa\"", "\"xyz\""), "shards[0].bin_xxh3");
  ExpectCorrupt(Replace(good, "\"prefix\": \"shard-00000\"", "\"prefix\": \"\""), "prefix");
  ExpectCorrupt(Replace(good, "\"documents\": 11", "\"documents\": 12"), "sum over shards");
  ExpectCorrupt(Replace(good, "\"format\": \"stoker-dataset\"", "\"format\": \"mds\""), "format");
  ExpectCorrupt(Replace(good, "\"shards\": [", "\"shardz\": ["), "'shards' is missing");
}

}  // namespace
}  // namespace stoker
