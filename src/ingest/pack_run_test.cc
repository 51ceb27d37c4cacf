#include "ingest/pack_run.h"

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "ingest/pack_test_util.h"

namespace stoker {
namespace {

class PackRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::move(*TempDir::Create("stoker-pack-run-"));
    std::string jsonl;
    for (int i = 0; i < 20; ++i) jsonl += "{\"text\": \"document " + std::to_string(i) + "\"}\n";
    testing::WriteFile(dir_->Join("d.jsonl"), jsonl);
  }
  PackArgs Args(std::string format, std::string out) {
    PackArgs a;
    a.inputs = {dir_->Join("d.jsonl")};
    a.output = dir_->Join(out);
    a.format = std::move(format);
    a.num_workers = 2;
    a.task_index = 0;
    a.task_count = 1;
    return a;
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(PackRunTest, EachFormatWritesItsOutput) {
  auto stoker = RunPackArgs(Args("stoker", "s"));
  ASSERT_TRUE(stoker.ok()) << stoker.status().ToString();
  EXPECT_EQ(stoker->format, PackFormat::kStoker);
  ASSERT_TRUE(stoker->pack.has_value());
  EXPECT_FALSE(stoker->records.has_value());
  EXPECT_EQ(stoker->pack->manifest.total_documents(), 20u);
  EXPECT_EQ(stoker->output, dir_->Join("s"));

  auto tf = RunPackArgs(Args("tfrecord", "t"));
  ASSERT_TRUE(tf.ok()) << tf.status().ToString();
  ASSERT_TRUE(tf->pack.has_value() && tf->records.has_value());
  EXPECT_EQ(tf->records->records, 20u);
  EXPECT_EQ(tf->records->output_dir, dir_->Join("t/tfrecord"));
  EXPECT_TRUE(PathExists(dir_->Join("t/tfrecord/records.json")));

  auto wds = RunPackArgs(Args("webdataset", "w"));
  ASSERT_TRUE(wds.ok()) << wds.status().ToString();
  EXPECT_FALSE(wds->pack.has_value());
  ASSERT_TRUE(wds->records.has_value());
  EXPECT_EQ(wds->records->records, 1u);  // one file: one sample "d" with member "jsonl"
  EXPECT_TRUE(PathExists(dir_->Join("w/records.json")));
  EXPECT_EQ(RunPackArgs(Args("webdataset", "w")).status().code(), StatusCode::kAlreadyExists);
}

TEST_F(PackRunTest, BadFormatAndRemoteRecordOutputAreInvalidArguments) {
  auto bad = RunPackArgs(Args("parquet", "p"));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("webdataset"), std::string::npos);
  PackArgs remote = Args("webdataset", "x");
  remote.output = "http://host/prefix";  // read-only: refused by name
  EXPECT_EQ(RunPackArgs(remote).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(PathExists(dir_->Join("p")));
  EXPECT_EQ(ParsePackFormat("wds").value(), PackFormat::kWebDataset);
}

}  // namespace
}  // namespace stoker
