// Bad input on the streaming path: a shard that disappears mid-epoch, a truncated .zst, a record
// shard cut short. One clear error naming the file, or a counted skip under on_error "skip";
// never a hang, and the step count (fixed at open) is kept.
#include <gtest/gtest.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>

#include "stream/stream_planner.h"
#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;
using testing::WriteCorpus;

LoaderOptions Opts(ErrorPolicy policy) {
  LoaderOptions o;
  o.batch_size = 2;
  o.seq_len = 32;
  o.seed = 9;
  o.pack = PackMode::kConcat;
  o.on_error = policy;
  o.num_workers = 2;
  return o;
}

StreamOptions BadInputStreamOpts(std::vector<std::string> inputs) {
  StreamOptions s;
  s.inputs = std::move(inputs);
  s.shuffle_buffer = 8;
  return s;
}

// Every step of epoch 0; the first error, if any.
Status ReadEpoch(const StreamPlanner& p) {
  const uint64_t steps = p.steps_per_epoch(0);
  for (uint64_t s = 0; s < steps; ++s) {
    Result<std::vector<PackedRow>> rows = p.RowsAt({0, s * 2});
    if (!rows.ok()) return rows.status();
  }
  return Status::OK();
}

TEST(StreamBadInput, AShardThatDisappearsAfterOpenIsNamedOrSkipped) {
  for (ErrorPolicy policy : {ErrorPolicy::kFail, ErrorPolicy::kSkip}) {
    TempDir dir;
    std::vector<std::string> paths = WriteCorpus(dir, {80, 80, 80, 80, 80, 80, 80, 80});
    auto p = StreamPlanner::Create(BadInputStreamOpts(paths), Opts(policy));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ASSERT_GT((*p)->steps_per_epoch(0), 0u);
    std::filesystem::remove(paths[3]);  // after the pre-scan, before it is read
    Status s = ReadEpoch(**p);
    if (policy == ErrorPolicy::kFail) {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.message().find("part-3.jsonl"), std::string::npos) << s.ToString();
    } else {
      // Its rank runs short and continues into the next epoch's stream: the steps stay.
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  }
}

TEST(StreamBadInput, EveryShardGoneUnderSkipIsAnErrorNotAHang) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {80, 80});
  auto p = StreamPlanner::Create(BadInputStreamOpts(paths), Opts(ErrorPolicy::kSkip));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const std::string& f : paths) std::filesystem::remove(f);
  Status s = ReadEpoch(**p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("found no document"), std::string::npos) << s.ToString();
}

std::string Compress(const std::string& body) {
  std::string z(ZSTD_compressBound(body.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), body.data(), body.size(), 3));
  return z;
}

TEST(StreamBadInput, TruncatedZstdNamesTheFileOrIsACountedSkip) {
  TempDir dir;
  std::vector<std::string> paths = WriteCorpus(dir, {60});
  std::string body;
  for (int i = 0; i < 3000; ++i) body += "{\"text\": \"zst line " + std::to_string(i) + "\"}\n";
  const std::string z = Compress(body);
  paths.push_back(dir.Write("t.jsonl.zst", z.substr(0, z.size() / 2)));
  auto failed = StreamPlanner::Create(BadInputStreamOpts(paths), Opts(ErrorPolicy::kFail));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("t.jsonl.zst"), std::string::npos)
      << failed.status().ToString();
  auto p = StreamPlanner::Create(BadInputStreamOpts(paths), Opts(ErrorPolicy::kSkip));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(ReadEpoch(**p).ok());
}

TEST(StreamBadInput, AShardTruncatedAfterOpenFailsNamingItNotHangs) {
  // The pre-scan saw the whole .zst; then it is cut: the read fails naming the file.
  TempDir dir;
  std::string body;
  for (int i = 0; i < 3000; ++i) body += "{\"text\": \"zst line " + std::to_string(i) + "\"}\n";
  const std::string z = Compress(body);
  const std::string path = dir.Write("t.jsonl.zst", z);
  auto p = StreamPlanner::Create(BadInputStreamOpts({path}), Opts(ErrorPolicy::kFail));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  dir.Write("t.jsonl.zst", z.substr(0, z.size() / 3));
  Status s = ReadEpoch(**p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t.jsonl.zst"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace stoker::stream
