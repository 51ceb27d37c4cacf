#include "ingest/task_plan.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/temp_dir.h"
#include "ingest/task_receipt.h"
#include "storage/file_backend.h"

namespace stoker {
namespace {

InputFile File(std::string path, uint64_t size) {
  InputFile f;
  f.path = std::move(path);
  f.size_bytes = size;
  return f;
}

TaskPlan Plan(uint32_t tasks, std::vector<PlannedInput> files) {
  TaskPlan p;
  p.task_count = tasks;
  p.arguments = {"in"};
  p.files = std::move(files);
  return p;
}

TEST(TaskPlanTest, SlicesAreContiguousAndBalancedByBytesNotCount) {
  // One large file and nine small ones: by bytes the large one is a task of its own.
  std::vector<PlannedInput> files = {{"big", 900}};
  for (int i = 0; i < 9; ++i) files.push_back({"s" + std::to_string(i), 100});
  TaskPlan p = Plan(2, files);
  EXPECT_EQ(p.Slice(0).first, 0u);
  EXPECT_EQ(p.Slice(0).last, 1u);
  EXPECT_EQ(p.Slice(1).first, 1u);
  EXPECT_EQ(p.Slice(1).last, 10u);
  // A pure function of (plan, index, count): the same after a JSON round trip.
  Result<TaskPlan> again = TaskPlan::Parse(p.ToJson(), "plan");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (uint32_t t = 0; t < 2; ++t) {
    EXPECT_EQ(again->Slice(t).first, p.Slice(t).first);
    EXPECT_EQ(again->Slice(t).last, p.Slice(t).last);
  }
  EXPECT_EQ(again->total_bytes(), 1800u);
  EXPECT_EQ(again->checksum.size(), 16u);
}

TEST(TaskPlanTest, ApplyLeavesOutNewFilesAndRefusesChangedOnes) {
  TaskPlan p = Plan(2, {{"a", 10}, {"b", 20}});
  Result<std::vector<InputFile>> files =
      ApplyTaskPlan({File("new", 5), File("b", 20), File("a", 10)}, p);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "a");  // plan order
  EXPECT_EQ((*files)[1].path, "b");
  Result<std::vector<InputFile>> changed = ApplyTaskPlan({File("a", 11), File("b", 20)}, p);
  EXPECT_EQ(changed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(changed.status().message().find("a: planned input changed size"), std::string::npos);
  Result<std::vector<InputFile>> gone = ApplyTaskPlan({File("a", 10)}, p);
  EXPECT_NE(gone.status().message().find("b: planned input"), std::string::npos);
}

TEST(TaskPlanTest, TheFirstPlanIsRecordedAndAnotherJobIsRefused) {
  std::unique_ptr<TempDir> dir = std::move(*TempDir::Create("stoker-task-plan-"));
  std::unique_ptr<storage::Backend> backend = storage::NewFileBackend();
  int listed = 0;
  auto list = [&](std::vector<PlannedInput> files) {
    return [&listed, files]() -> Result<std::vector<PlannedInput>> {
      ++listed;
      return files;
    };
  };
  TaskPlan want = Plan(3, {});
  Result<TaskPlan> first = ReadOrWriteTaskPlan(*backend, dir->path(), want, list({{"a", 1}}));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Later tasks read the recorded plan: a file that appeared meanwhile is not in it.
  Result<TaskPlan> later =
      ReadOrWriteTaskPlan(*backend, dir->path(), want, list({{"a", 1}, {"new", 2}}));
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(listed, 1);
  EXPECT_EQ(later->files.size(), 1u);
  EXPECT_EQ(later->checksum, first->checksum);
  TaskPlan other = Plan(4, {});
  Result<TaskPlan> refused = ReadOrWriteTaskPlan(*backend, dir->path(), other, list({}));
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("task count 3, not 4"), std::string::npos);
}

TEST(TaskReceiptTest, RoundTrips) {
  TaskReceipt r;
  r.task_index = 3;
  r.task_count = 8;
  r.plan_checksum = "0123456789abcdef";
  r.options_json = R"({"format":"stoker","shard_size_bytes":1024})";
  r.inputs = {{"a.jsonl", 10, "00000000000000ff"}};
  r.manifest.tokenizer = {"bytes", "bytes", 257, 256, ""};
  r.manifest.shards.push_back(
      {"part-00003-00000", 2, 10, 20, 58, "0000000000000001", "0000000000000002"});
  Result<TaskReceipt> back = TaskReceipt::Parse(r.ToJson(), "receipt");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), r.ToJson());
  EXPECT_EQ(back->options_json, r.options_json);
  EXPECT_FALSE(TaskReceipt::Parse("{}", "receipt").ok());
}

}  // namespace
}  // namespace stoker
