#include "ingest/input_plan.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/temp_dir.h"

namespace stoker {
namespace {

class InputPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::move(*TempDir::Create("stoker-plan-")); }
  std::string Write(const std::string& rel, const std::string& bytes) {
    std::string path = dir_->Join(rel);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(InputPlanTest, WalksDirectoriesSortedSkippingHiddenNames) {
  Write("d/b.txt", "b");
  Write("d/a/z.txt", "z");
  Write("d/a.jsonl.zst", "");
  Write("d/.hidden", "h");
  Write("d/.git/config", "c");
  Write("d/c/d.ndjson", "{}");
  std::string single = Write("single.txt", "single");
  auto files = ExpandInputs({single, dir_->Join("d")});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  std::vector<std::string> names;
  for (const auto& f : *files) names.push_back(f.path.substr(dir_->path().size() + 1));
  // Command-line order first, then the directory's files sorted bytewise by path.
  EXPECT_EQ(names, (std::vector<std::string>{"single.txt", "d/a.jsonl.zst", "d/a/z.txt", "d/b.txt",
                                             "d/c/d.ndjson"}));
  EXPECT_EQ((*files)[1].kind, InputKind::kJsonl);
  EXPECT_EQ((*files)[2].kind, InputKind::kText);
  EXPECT_EQ((*files)[4].kind, InputKind::kJsonl);
  EXPECT_EQ((*files)[0].size_bytes, 6u);
}

TEST_F(InputPlanTest, MissingInputIsNotFound) {
  auto files = ExpandInputs({dir_->Join("nope.jsonl")});
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kNotFound);
  EXPECT_NE(files.status().message().find("nope.jsonl"), std::string::npos);
}

TEST(SliceForTaskTest, SlicesAreContiguousCoverEverythingAndBalanceBytes) {
  std::vector<InputFile> files;
  for (int i = 0; i < 50; ++i)
    files.push_back({"f" + std::to_string(i), uint64_t(i % 7) * 100, InputKind::kText});
  for (uint32_t count : {1u, 2u, 3u, 8u, 50u, 64u}) {
    size_t next = 0;
    for (uint32_t t = 0; t < count; ++t) {
      TaskSlice s = SliceForTask(files, t, count);
      EXPECT_EQ(s.first, next) << "task " << t << " of " << count;
      EXPECT_LE(s.first, s.last);
      next = s.last;
    }
    EXPECT_EQ(next, files.size()) << count;
  }
  // Two tasks over equal-sized files split them in the middle.
  std::vector<InputFile> equal(10, InputFile{"x", 100, InputKind::kText});
  EXPECT_EQ(SliceForTask(equal, 0, 2).last, 5u);
}

TEST(SliceForTaskTest, TrailingEmptyFilesBelongToTheLastTask) {
  std::vector<InputFile> files = {{"a", 10, InputKind::kText}, {"b", 0, InputKind::kText}};
  EXPECT_EQ(SliceForTask(files, 1, 2).last, 2u);
  std::vector<InputFile> empty(4, InputFile{"e", 0, InputKind::kText});
  EXPECT_EQ(SliceForTask(empty, 1, 2).first, 2u);
  EXPECT_EQ(SliceForTask(empty, 1, 2).last, 4u);
}

class TaskEnvTest : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }
  static void Clear() {
    for (const char* v : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
                          "RANK", "WORLD_SIZE"}) {
      unsetenv(v);
    }
  }
};

TEST_F(TaskEnvTest, DefaultsToOneTask) {
  auto t = TaskFromEnvironment();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->index, 0u);
  EXPECT_EQ(t->count, 1u);
}

TEST_F(TaskEnvTest, SlurmArrayRelativeToMinWinsOverRank) {
  setenv("SLURM_ARRAY_TASK_ID", "5", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "8", 1);
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "4", 1);
  auto t = TaskFromEnvironment();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->index, 4u);
  EXPECT_EQ(t->count, 8u);
}

TEST_F(TaskEnvTest, RankAndWorldSize) {
  setenv("RANK", "3", 1);
  setenv("WORLD_SIZE", "4", 1);
  auto t = TaskFromEnvironment();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->index, 3u);
  EXPECT_EQ(t->source, "RANK");
}

TEST_F(TaskEnvTest, MalformedOrOutOfRangeIsAnError) {
  setenv("RANK", "x1", 1);
  setenv("WORLD_SIZE", "4", 1);
  EXPECT_EQ(TaskFromEnvironment().status().code(), StatusCode::kInvalidArgument);
  setenv("RANK", "4", 1);
  EXPECT_EQ(TaskFromEnvironment().status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
