#include "format/record_token_source.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "records/test_util.h"

namespace stoker {
namespace {

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// A LitData TokensLoader chunk of int32 items (docs/formats-reference.md §5.3).
std::string TokenChunk(const std::vector<std::vector<int32_t>>& items) {
  uint32_t at = 4 + 4 * (static_cast<uint32_t>(items.size()) + 1);
  std::string out = U32(static_cast<uint32_t>(items.size())) + U32(at);
  for (const auto& item : items) out += U32(at += static_cast<uint32_t>(4 * item.size()));
  for (const auto& item : items) {
    out.append(reinterpret_cast<const char*>(item.data()), 4 * item.size());
  }
  return out;
}

const char* kIndex =
    R"({"chunks": [{"chunk_bytes": 0, "chunk_size": 2, "dim": 5, "filename": "chunk-0-0.bin"},
  {"chunk_bytes": 0, "chunk_size": 1, "dim": 3, "filename": "chunk-0-1.bin"}],
  "config": {"compression": null, "data_format": ["no_header_numpy:2"],
  "data_spec": "[1, {\"type\": null, \"context\": null, \"children_spec\": []}]", "encryption": null,
  "item_loader": "TokensLoader"}})";

TEST(RecordTokenSourceTest, LitDataItemsAreDocumentsAndChunksAreShards) {
  auto dir = std::move(*TempDir::Create("stoker-rts-"));
  testing_util::WriteBytes(dir->Join("chunk-0-0.bin"), TokenChunk({{1, 2, 3}, {4, 5}}));
  testing_util::WriteBytes(dir->Join("chunk-0-1.bin"), TokenChunk({{7, -1, 9}}));
  testing_util::WriteBytes(dir->Join("index.json"), kIndex);
  ASSERT_TRUE(IsRecordTokenDataset(dir->path()));
  auto opened = OpenTokenSource(dir->path());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const TokenSource& s = **opened;
  EXPECT_EQ(s.format(), "litdata");
  EXPECT_EQ(s.num_documents(), 3u);
  EXPECT_EQ(s.num_tokens(), 8u);
  EXPECT_EQ(s.document_length(1), 2u);
  EXPECT_EQ(s.num_shards(), 2u);
  EXPECT_EQ(s.shard_first_document(1), 2u);
  EXPECT_EQ(s.shard_first_document(2), 3u);
  int64_t wide[2];
  ASSERT_TRUE(s.Read(2, 1, 2, wide).ok());
  EXPECT_EQ(wide[0], -1);
  EXPECT_EQ(wide[1], 9);
  int32_t narrow[3];
  ASSERT_TRUE(s.Read(0, 0, 3, narrow).ok());
  EXPECT_EQ(narrow[2], 3);
  EXPECT_EQ(s.Read(1, 1, 2, narrow).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.Read(3, 0, 0, narrow).code(), StatusCode::kOutOfRange);
}

TEST(RecordTokenSourceTest, NamesTheFieldsWhenThereIsNoTokenColumn) {
  auto dir = std::move(*TempDir::Create("stoker-rts-"));
  std::string item = U32(3) + "abc";
  testing_util::WriteBytes(dir->Join("chunk-0-0.bin"), U32(1) + U32(12) + U32(19) + item);
  testing_util::WriteBytes(dir->Join("index.json"), R"({"chunks": [{"filename": "chunk-0-0.bin"}],
    "config": {"data_format": ["str"], "encryption": null, "item_loader": "PyTreeLoader",
    "data_spec": "[1, {\"type\": \"builtins.dict\", \"context\": \"[\\\"text\\\"]\", \"children_spec\": [{\"type\": null, \"context\": null, \"children_spec\": []}]}]"}})");
  auto opened = RecordTokenSource::Open(dir->path());
  ASSERT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(opened.status().message().find("text (string)"), std::string::npos)
      << opened.status().message();
}

}  // namespace
}  // namespace stoker
