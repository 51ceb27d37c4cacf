#include "ingest/merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "ingest/pack.h"
#include "ingest/pack_test_util.h"
#include "text/tokenizer.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using testing::JsonlLine;
using testing::ReadDocuments;
using testing::WriteFile;

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::move(*TempDir::Create("stoker-merge-"));
    bytes_ = std::move(*OpenTokenizer("bytes"));
    // Inputs of uneven sizes: three JSONL files and a directory of small files.
    for (int f = 0; f < 3; ++f) {
      std::string jsonl;
      for (int i = 0; i < 50 * (f + 1); ++i)
        jsonl += JsonlLine("f" + std::to_string(f) + " doc " + std::to_string(i));
      WriteFile(dir_->Join("in/j" + std::to_string(f) + ".jsonl"), jsonl);
    }
    for (int i = 0; i < 40; ++i)
      WriteFile(dir_->Join("in/small/" + std::to_string(i)), "small " + std::to_string(i));
  }
  Result<PackResult> PackTask(uint32_t index, uint32_t count, const std::string& out) {
    PackOptions o;
    o.inputs = {dir_->Join("in")};
    o.output_dir = dir_->Join(out);
    o.task_index = index;
    o.task_count = count;
    o.threads = 2;
    o.shard_size_bytes = 2000;
    return Pack(o, *bytes_);
  }
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Tokenizer> bytes_;
};

TEST_F(MergeTest, TaskSplitPlusMergeEqualsSingleTaskPack) {
  ASSERT_TRUE(PackTask(0, 1, "single").ok());
  const uint32_t kTasks = 5;
  std::vector<std::string> parts;
  for (uint32_t t = 0; t < kTasks; ++t) {
    auto r = PackTask(t, kTasks, "parts/" + std::to_string(t));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->manifest.counters.at("task_index"), t);
    parts.push_back(dir_->Join("parts/" + std::to_string(t)));
  }
  std::reverse(parts.begin(), parts.end());  // the task index, not the argument order, decides
  auto merged = Merge({parts, dir_->Join("merged"), false});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->shards.front().prefix, "../parts/0/part-00000-00000");
  EXPECT_EQ(merged->counters.at("merged_parts"), kTasks);
  EXPECT_EQ(merged->counters.count("task_index"), 0u);

  auto single = ReadDocuments(dir_->Join("single"));
  ASSERT_EQ(single.size(), 50u + 100u + 150u + 40u);
  EXPECT_EQ(ReadDocuments(dir_->Join("merged")), single);
  auto single_manifest = ReadManifest(dir_->Join("single"));
  EXPECT_EQ(merged->counters.at("input_bytes"), single_manifest->counters.at("input_bytes"));
}

TEST_F(MergeTest, MissingOrRepeatedTaskIsRefused) {
  ASSERT_TRUE(PackTask(0, 3, "p0").ok());
  ASSERT_TRUE(PackTask(2, 3, "p2").ok());
  auto missing = Merge({{dir_->Join("p0"), dir_->Join("p2")}, dir_->Join("m"), false});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("task 1 of 3 is missing"));
  auto twice =
      Merge({{dir_->Join("p0"), dir_->Join("p0"), dir_->Join("p2")}, dir_->Join("m"), false});
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("task 0 is given twice"));
  EXPECT_FALSE(PathExists(dir_->Join("m/manifest.json")));
}

TEST_F(MergeTest, DifferentTokenizersOrDtypesAreRefused) {
  ASSERT_TRUE(PackTask(0, 1, "a").ok());
  PackOptions o;
  o.inputs = {dir_->Join("in/j0.jsonl")};
  o.output_dir = dir_->Join("b");
  o.dtype = TokenDType::kInt32;
  ASSERT_TRUE(Pack(o, *bytes_).ok());
  auto r = Merge({{dir_->Join("a"), dir_->Join("b")}, dir_->Join("m"), false});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("int32"));

  auto sp = OpenTokenizer(std::string(STOKER_SOURCE_DIR) + "/data/sample/sample.model");
  ASSERT_TRUE(sp.ok());
  o.output_dir = dir_->Join("c");
  o.dtype.reset();
  ASSERT_TRUE(Pack(o, **sp).ok());
  auto t = Merge({{dir_->Join("a"), dir_->Join("c")}, dir_->Join("m"), false});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("sample.model"));
}

TEST_F(MergeTest, PartWithoutManifestOrShardIsRefused) {
  ASSERT_TRUE(MakeDirectories(dir_->Join("incomplete")).ok());
  auto r = Merge({{dir_->Join("incomplete")}, dir_->Join("m"), false});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("incomplete"));

  ASSERT_TRUE(PackTask(0, 1, "a").ok());
  ASSERT_EQ(::unlink(dir_->Join("a/part-00000-00001.idx").c_str()), 0);
  auto gone = Merge({{dir_->Join("a")}, dir_->Join("m"), false});
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.status().message(), HasSubstr("part-00000-00001.idx"));
}

TEST_F(MergeTest, ExistingOutputNeedsOverwrite) {
  ASSERT_TRUE(PackTask(0, 1, "a").ok());
  ASSERT_TRUE(Merge({{dir_->Join("a")}, dir_->Join("m"), false}).ok());
  auto again = Merge({{dir_->Join("a")}, dir_->Join("m"), false});
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(Merge({{dir_->Join("a")}, dir_->Join("m"), true}).ok());
  auto into_part = Merge({{dir_->Join("a")}, dir_->Join("a"), true});
  EXPECT_EQ(into_part.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
