#include "records/record_source.h"

#include <gtest/gtest.h>

#include "common/atomic_file_test_util.h"
#include "common/file_util.h"
#include "common/temp_dir.h"
#include "records/record_file_sink.h"
#include "records/tar_writer.h"
#include "records/test_util.h"
#include "records/tf_example.h"
#include "records/tfrecord.h"

namespace stoker {
namespace {

std::string Tar(const std::string& key, const std::string& text) {
  std::string name = key + ".txt";
  std::string tar = TarMemberHeader(name, text.size()) + text + TarPadding(text.size());
  return tar + TarEnd(tar.size());
}

class RecordSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::move(*TempDir::Create("stoker-records-")); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = dir_->Join(name);
    CheckOk(MakeDirectories(DirName(path)));
    testing_util::WriteBytes(path, bytes);
    return path;
  }
  static void CheckOk(const Status& st) { ASSERT_TRUE(st.ok()) << st.ToString(); }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(RecordSourceTest, DetectsFormatsByName) {
  EXPECT_EQ(DetectRecordFormat("a/x.tar"), RecordFormat::kWebDataset);
  EXPECT_EQ(DetectRecordFormat("x.tar.gz"), RecordFormat::kWebDataset);
  EXPECT_EQ(DetectRecordFormat("x.tgz"), RecordFormat::kWebDataset);
  EXPECT_EQ(DetectRecordFormat("x.tar.zst"), RecordFormat::kWebDataset);
  EXPECT_EQ(DetectRecordFormat("x.tfrecord.gz"), RecordFormat::kTfRecord);
  EXPECT_EQ(DetectRecordFormat("train-00003-of-00128"), RecordFormat::kTfRecord);
  EXPECT_EQ(DetectRecordFormat("d/index.json"), RecordFormat::kMds);
  EXPECT_EQ(DetectRecordFormat("x.jsonl"), RecordFormat::kAuto);
  EXPECT_EQ(ParseRecordFormat("wds").value(), RecordFormat::kWebDataset);
  EXPECT_EQ(ParseRecordFormat("csv").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RecordSourceTest, ExpandsBracesAndDirectoriesInOrderAndChainsShards) {
  for (int i = 0; i < 3; ++i)
    Write("s-" + std::to_string(i) + ".tar", Tar("k" + std::to_string(i), "t"));
  Write("dir/b/2.tfrecord", FrameTfRecord(EncodeTfExample({})));
  Write("dir/a.tfrecord", FrameTfRecord(EncodeTfExample({})) + FrameTfRecord(EncodeTfExample({})));
  Write("dir/ignored.txt", "x");
  auto shards =
      ExpandRecordShards({dir_->Join("s-{2..0}.tar"), dir_->Join("dir")}, RecordFormat::kAuto);
  ASSERT_FALSE(shards.ok());  // a directory without index.json has no format of its own
  shards = ExpandRecordShards({dir_->Join("dir")}, RecordFormat::kTfRecord);
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_EQ((*shards)[0].path, dir_->Join("dir/a.tfrecord"));
  auto source = OpenRecordSource({dir_->Join("s-{2..0}.tar")});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto records = testing_util::ReadAllRecords(**source);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  std::vector<std::string> keys;
  for (const Record& r : *records) keys.push_back(r.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"k2", "k1", "k0"}));
  EXPECT_EQ(ExpandRecordShards({dir_->Join("s-{5..6}.tar")}, RecordFormat::kAuto).status().code(),
            StatusCode::kNotFound);
}

TEST_F(RecordSourceTest, FileSinkWritesAtomicallyWithAManifest) {
  RecordFileSink sink(dir_->Join("out"), "part", ".bin");
  ASSERT_TRUE(sink.Append("abc").ok());
  sink.CountRecord();
  EXPECT_EQ(testing_util::AtomicTempFilesOf(dir_->Join("out/part-000000.bin")).size(), 1u);
  EXPECT_FALSE(PathExists(dir_->Join("out/part-000000.bin")));
  ASSERT_TRUE(sink.Close().ok());
  ASSERT_TRUE(sink.Append("defg").ok());
  ASSERT_TRUE(sink.Finish("records.json", "test", R"({"extra": 1})").ok());
  EXPECT_TRUE(testing_util::AtomicTempFilesOf(dir_->Join("out/part-000000.bin")).empty());
  EXPECT_TRUE(testing_util::AtomicTempFilesOf(dir_->Join("out/part-000001.bin")).empty());
  auto manifest = ReadFileToString(dir_->Join("out/records.json"));
  ASSERT_TRUE(manifest.ok());
  EXPECT_NE(manifest->find(R"("name": "part-000001.bin")"), std::string::npos) << *manifest;
  EXPECT_NE(manifest->find(R"("extra": 1)"), std::string::npos);
  ASSERT_EQ(sink.files().size(), 2u);
  EXPECT_EQ(sink.files()[1].size_bytes, 4u);
  sink.RemoveAll();
  EXPECT_FALSE(PathExists(dir_->Join("out/part-000000.bin")));
}

}  // namespace
}  // namespace stoker
