#include "cmd_cache.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cache/shard_cache.h"
#include "common/temp_dir.h"
#include "storage/memory_backend.h"

namespace stoker::cli {
namespace {

// Runs the command with its output in a temporary file; returns (exit code, output).
std::pair<int, std::string> RunCache(const std::string& dir, bool json, bool clear) {
  std::FILE* out = std::tmpfile();
  const int code = RunCacheCommand(dir, json, clear, out);
  std::rewind(out);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), out)) > 0;) text.append(buf, n);
  std::fclose(out);
  return {code, text};
}

TEST(CacheCommand, ShowsAndClearsACache) {
  auto dir = TempDir::Create("stoker-cache-cli-").value();
  std::shared_ptr<storage::Backend> source = storage::NewMemoryBackend();
  ASSERT_TRUE(storage::WriteAll(*source, "s3://b/shard-0.bin", std::string(5000, 'x')).ok());
  {
    cache::CacheOptions options;
    options.dir = dir->Join("cache");
    options.budget_bytes = 200 << 10;
    options.download_threads = 0;
    auto cache = cache::ShardCache::Open(options, source).value();
    ASSERT_TRUE(cache->Acquire({"s3://b/shard-0.bin", 5000, ""}).ok());
    ASSERT_TRUE(cache->Acquire({"s3://b/shard-0.bin", 5000, ""}).ok());
  }
  auto [code, text] = RunCache(dir->Join("cache"), /*json=*/true, /*clear=*/false);
  ASSERT_EQ(code, 0);
  nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["budget_bytes"], 200u << 10);
  EXPECT_EQ(j["used_bytes"], 5000u);
  EXPECT_EQ(j["objects"][0]["uri"], "s3://b/shard-0.bin");
  EXPECT_EQ(j["hits"], 1u);
  EXPECT_EQ(j["misses"], 1u);
  EXPECT_DOUBLE_EQ(j["hit_rate"].get<double>(), 0.5);

  std::tie(code, text) = RunCache(dir->Join("cache"), false, false);
  EXPECT_EQ(code, 0);
  EXPECT_NE(text.find("hit rate 50.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("200 KiB budget"), std::string::npos) << text;

  std::tie(code, text) = RunCache(dir->Join("cache"), true, /*clear=*/true);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(nlohmann::json::parse(text)["removed_objects"], 1u);
  std::tie(code, text) = RunCache(dir->Join("cache"), true, false);
  EXPECT_EQ(nlohmann::json::parse(text)["objects"].size(), 0u);
}

TEST(CacheCommand, ANonCacheIsAnError) {
  auto dir = TempDir::Create("stoker-cache-cli-").value();
  EXPECT_EQ(RunCache(dir->Join("missing"), false, false).first, 2);
  EXPECT_EQ(RunCache(dir->path(), false, false).first, 2);  // empty: no cache here
}

}  // namespace
}  // namespace stoker::cli
