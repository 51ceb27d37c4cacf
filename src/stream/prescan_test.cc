// The cached pre-scan: a scan written once gives the same lengths as reading the data, for whole
// files and for byte-range shards cut from them; a changed file or another tokenizer setting is
// not served from a stale scan; nothing is written beside the data unless asked.
#include "stream/prescan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;
using testing::WriteCorpus;

std::shared_ptr<StreamContext> Context(const std::vector<std::string>& paths, uint64_t min_shards,
                                       bool skip = false) {
  auto ctx = std::make_shared<StreamContext>();
  ctx->shards = MakeShards(paths, min_shards).value();
  ctx->tokenizer = OpenTokenizer("bytes").value();
  ctx->config.reader.encoder.skip_bad_lines = skip;
  return ctx;
}

PrescanOptions Read(const std::string& dir) {
  PrescanOptions o;
  o.cache_dir = dir;
  return o;
}

PrescanOptions Write(const std::string& dir, bool beside = false) {
  PrescanOptions o = Read(dir);
  o.write = true;
  o.write_beside = beside;
  return o;
}

TEST(Prescan, AWrittenScanServesWholeFilesAndByteRanges) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {300, 0, 45, 120});
  const std::string cache = dir.File("cache");
  PrescanSummary written;
  auto fresh = PrescanShards(*Context(paths, 1), Write(cache), &written);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(written.written.size(), 4u);
  EXPECT_EQ(written.documents, 465u);
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().string().find(".stoker-scan"), std::string::npos) << e.path();
  }
  // Whole files, from the cache.
  PrescanSummary again;
  auto cached = PrescanShards(*Context(paths, 1), Read(cache), &again);
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(again.files_from_cache, 4u);
  EXPECT_EQ(*cached, *fresh);
  // Byte ranges (32 shards wanted): the cache's offsets cut them as the reader does.
  auto ctx = Context(paths, 32);
  ASSERT_GT(ctx->shards.size(), 20u);
  PrescanSummary ranges;
  auto from_cache = PrescanShards(*ctx, Read(cache), &ranges);
  auto from_data = PrescanShards(*ctx, Read(""));
  ASSERT_TRUE(from_cache.ok() && from_data.ok());
  EXPECT_EQ(ranges.files_from_cache, 4u);
  EXPECT_EQ(*from_cache, *from_data);
}

TEST(Prescan, AChangedFileOrOtherOptionsAreNotServedFromAStaleScan) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {50, 60});
  const std::string cache = dir.File("cache");
  ASSERT_TRUE(PrescanShards(*Context(paths, 1), Write(cache)).ok());
  // Another reader option (bad lines skipped): another identity.
  PrescanSummary s;
  ASSERT_TRUE(PrescanShards(*Context(paths, 1, /*skip=*/true), Read(cache), &s).ok());
  EXPECT_EQ(s.files_from_cache, 0u);
  // A file that grew.
  std::ofstream(paths[1], std::ios::app) << "{\"text\": \"one more\"}\n";
  PrescanSummary t;
  auto got = PrescanShards(*Context(paths, 1), Read(cache), &t);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(t.files_from_cache, 1u);
  EXPECT_EQ((*got)[1].size(), 61u);
}

TEST(Prescan, BesideTheDataOnlyWhenAsked) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {20});
  ASSERT_TRUE(PrescanShards(*Context(paths, 1), Write("", /*beside=*/true)).ok());
  EXPECT_TRUE(std::filesystem::exists(dir.File(".part-0.jsonl.stoker-scan")));
  PrescanSummary s;
  ASSERT_TRUE(PrescanShards(*Context(paths, 1), Read(""), &s).ok());
  EXPECT_EQ(s.files_from_cache, 1u);
  // The directory as input: the hidden scan file is not taken for a document.
  PrescanSummary d;
  ASSERT_TRUE(PrescanShards(*Context({dir.path().string()}, 1), Read(""), &d).ok());
  EXPECT_EQ(d.files, 1u);
  EXPECT_EQ(d.files_from_cache, 1u);
  EXPECT_FALSE(PrescanShards(*Context(paths, 1), Write("")).ok());  // no cache dir to write to
}

}  // namespace
}  // namespace stoker::stream
