// LitData chunks built here byte by byte (docs/formats-reference.md §5.3 and §5.4); the files that
// litdata's own writer makes are tests/python/test_records_litdata.py.
#include "records/litdata_source.h"

#include <gtest/gtest.h>

#include <cstring>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "records/litdata_chunk.h"
#include "records/test_util.h"

namespace stoker {
namespace {

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// A chunk of items with absolute offsets.
std::string Chunk(const std::vector<std::string>& items) {
  uint32_t at = 4 + 4 * (static_cast<uint32_t>(items.size()) + 1);
  std::string out = U32(static_cast<uint32_t>(items.size())) + U32(at);
  for (const std::string& item : items) out += U32(at += static_cast<uint32_t>(item.size()));
  for (const std::string& item : items) out += item;
  return out;
}

// A PyTree item: u32 size per leaf, then the leaves.
std::string Item(const std::vector<std::string>& leaves) {
  std::string out;
  for (const std::string& l : leaves) out += U32(static_cast<uint32_t>(l.size()));
  for (const std::string& l : leaves) out += l;
  return out;
}

std::string Int64(int64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

const char* kTreeIndex =
    R"({"chunks": [{"chunk_bytes": 0, "chunk_size": 2, "dim": null, "filename": "chunk-0-0.bin"},
  {"chunk_bytes": 0, "chunk_size": 1, "dim": null, "filename": "chunk-0-1.zstd.bin"}],
 "config": {"chunk_bytes": 1000, "chunk_size": null, "compression": null, "data_format": ["int", "str", "no_header_numpy:5"],
  "data_spec": "[1, {\"type\": \"builtins.dict\", \"context\": \"[\\\"id\\\", \\\"text\\\", \\\"ids\\\"]\", \"children_spec\": [{\"type\": null, \"context\": null, \"children_spec\": []}, {\"type\": null, \"context\": null, \"children_spec\": []}, {\"type\": null, \"context\": null, \"children_spec\": []}]}]",
  "encryption": null, "item_loader": "PyTreeLoader"}})";

class LitDataTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::move(*TempDir::Create("stoker-litdata-")); }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(LitDataTest, TokensLoaderVectorFromFormatsMd) {
  // docs/formats-reference.md §5.4: int32 items [1,2,3] and [4,5].
  std::string chunk =
      Chunk({std::string("\1\0\0\0\2\0\0\0\3\0\0\0", 12), std::string("\4\0\0\0\5\0\0\0", 8)});
  ASSERT_EQ(chunk.substr(0, 16), std::string("\2\0\0\0\x10\0\0\0\x1c\0\0\0\x24\0\0\0", 16));
  testing_util::WriteBytes(dir_->Join("chunk-0-0.bin"), chunk);
  testing_util::WriteBytes(
      dir_->Join("index.json"),
      R"({"chunks": [{"chunk_bytes": 36, "chunk_size": 2, "dim": 5, "filename": "chunk-0-0.bin"}],
    "config": {"chunk_bytes": 67108864, "chunk_size": null, "compression": null, "data_format": ["no_header_numpy:2"],
    "data_spec": "[1, {\"type\": null, \"context\": null, \"children_spec\": []}]", "encryption": null, "item_loader": "TokensLoader"}})");
  EXPECT_EQ(DetectRecordFormat(dir_->path()), RecordFormat::kLitData);
  auto source = OpenRecordSource({dir_->path()});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto rows = testing_util::ReadAllRecords(**source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].Find("tokens")->ints, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ((*rows)[1].Find("tokens")->ints, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ((*rows)[1].offset_bytes, 28u);
}

TEST_F(LitDataTest, PyTreeLeavesByDictKeyAndWholeChunkZstd) {
  std::string ids("\x01\x00\xff\xff", 4);  // uint16 1, 65535
  testing_util::WriteBytes(dir_->Join("chunk-0-0.bin"),
                           Chunk({Item({Int64(7), "héllo", ids}), Item({Int64(-1), "", ""})}));
  testing_util::WriteBytes(dir_->Join("chunk-0-1.zstd.bin"),
                           testing_util::Zstd(Chunk({Item({Int64(9), "z", ""})})));
  testing_util::WriteBytes(dir_->Join("index.json"), kTreeIndex);
  auto shards = ExpandRecordShards({dir_->Join("index.json")}, RecordFormat::kAuto);
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_EQ(shards->size(), 2u);
  auto source = OpenRecordSource({dir_->path()});
  ASSERT_TRUE(source.ok());
  auto rows = testing_util::ReadAllRecords(**source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].Find("id")->ints, (std::vector<int64_t>{7}));
  EXPECT_EQ((*rows)[0].Find("text")->bytes, "héllo");
  EXPECT_EQ((*rows)[0].Find("text")->type, FieldType::kString);
  EXPECT_EQ((*rows)[0].Find("ids")->ints, (std::vector<int64_t>{1, 65535}));
  EXPECT_EQ((*rows)[1].Find("id")->ints, (std::vector<int64_t>{-1}));
  EXPECT_EQ((*rows)[1].Find("text")->bytes, "");
  EXPECT_EQ((*rows)[2].Find("text")->bytes, "z");
}

TEST_F(LitDataTest, DamagedChunksAreCorruptionNamingTheChunk) {
  testing_util::WriteBytes(dir_->Join("index.json"), kTreeIndex);
  std::string good = Chunk({Item({Int64(7), "abc", ""})});
  std::string past_end = good;
  uint32_t big = 1000;
  std::memcpy(past_end.data() + 8, &big, 4);  // item 0 ends past the chunk
  testing_util::WriteBytes(dir_->Join("chunk-0-0.bin"), past_end);
  RecordShard shard{dir_->Join("chunk-0-0.bin"), RecordFormat::kLitData, 0, {}, -1};
  auto source = OpenRecordShard(shard);
  ASSERT_EQ(source.status().code(), StatusCode::kCorruption);
  EXPECT_NE(source.status().message().find("chunk-0-0.bin"), std::string::npos);
  EXPECT_NE(source.status().message().find("1000"), std::string::npos);
  // A leaf size that runs past its item.
  std::string item = Item({Int64(7), "abc", ""});
  uint32_t huge = 99;
  std::memcpy(item.data() + 4, &huge, 4);
  testing_util::WriteBytes(dir_->Join("chunk-0-0.bin"), Chunk({item}));
  auto bad_leaf = OpenRecordShard(shard);
  ASSERT_TRUE(bad_leaf.ok());
  auto rows = testing_util::ReadAllRecords(**bad_leaf);
  ASSERT_EQ(rows.status().code(), StatusCode::kCorruption);
  EXPECT_NE(rows.status().message().find("leaf 'text'"), std::string::npos)
      << rows.status().message();
  // Truncated offset table and framed prefix; encrypted datasets are refused by name.
  testing_util::WriteBytes(dir_->Join("chunk-0-0.bin"), U32(5) + U32(0));
  EXPECT_EQ(OpenRecordShard(shard).status().code(), StatusCode::kCorruption);
  testing_util::WriteBytes(dir_->Join("chunk-0-0.bin"), std::string("LDFZ01\0\0", 8) + U32(0));
  EXPECT_EQ(OpenRecordShard(shard).status().code(), StatusCode::kCorruption);  // framed, short
  std::string encrypted = kTreeIndex;
  encrypted.replace(encrypted.find("\"encryption\": null"), 18,
                    "\"encryption\": {\"algorithm\": \"fernet\"}");
  testing_util::WriteBytes(dir_->Join("index.json"), encrypted);
  EXPECT_EQ(ExpandRecordShards({dir_->path()}, RecordFormat::kAuto).status().code(),
            StatusCode::kUnimplemented);
}

TEST(LitDataLeafTest, TensorHeadersAreBigEndianAndTorchAliasesMatch) {
  Field f;
  // tensor: u32 BE dtype 15 (int32), u32 BE ndim 2, dims 1x2, then LE int32 data.
  std::string t = std::string("\0\0\0\x0f\0\0\0\x02\0\0\0\x01\0\0\0\x02", 16) +
                  std::string("\x05\0\0\0\xfe\xff\xff\xff", 8);
  ASSERT_TRUE(DecodeLitDataLeaf("tensor", t, &f).ok());
  EXPECT_EQ(f.ints, (std::vector<int64_t>{5, -2}));
  Field g;
  ASSERT_TRUE(DecodeLitDataLeaf("no_header_tensor:16", std::string("\x05\0\0\0", 4), &g).ok());
  EXPECT_EQ(g.ints, (std::vector<int64_t>{5}));
  Field h;
  EXPECT_EQ(DecodeLitDataLeaf("no_header_numpy:3", "abc", &h).code(), StatusCode::kCorruption);
  Field j;
  ASSERT_TRUE(DecodeLitDataLeaf("jpeg", "\xff\xd8", &j).ok());
  EXPECT_EQ(j.type, FieldType::kBytes);
}

}  // namespace
}  // namespace stoker
