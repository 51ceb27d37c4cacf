#include "ingest/record_inputs.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "ingest/pack.h"
#include "ingest/pack_records.h"
#include "ingest/pack_test_util.h"
#include "records/tar_writer.h"
#include "records/tf_example.h"
#include "records/tfrecord.h"
#include "text/bytes_tokenizer.h"

namespace stoker {
namespace {

std::string Tar(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string tar;
  for (const auto& [name, data] : members) {
    tar += TarMemberHeader(name, data.size()) + data + TarPadding(data.size());
  }
  return tar + TarEnd(tar.size());
}

Field Bytes(std::string name, std::string value) {
  Field f;
  f.name = std::move(name);
  f.bytes = std::move(value);
  return f;
}

Field Ints(std::string name, std::vector<int64_t> values) {
  Field f;
  f.name = std::move(name);
  f.type = FieldType::kInt;
  f.ints = std::move(values);
  return f;
}

class RecordInputsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::move(*TempDir::Create("stoker-record-inputs-")); }
  Result<PackResult> PackThem(std::vector<std::string> inputs, std::string field, std::string out,
                              bool skip = false) {
    PackOptions o;
    o.inputs = std::move(inputs);
    o.output_dir = dir_->Join(out);
    o.encoder.text_field = std::move(field);
    o.encoder.skip_bad_lines = skip;
    o.threads = 2;
    return Pack(o, tokenizer_);
  }
  std::unique_ptr<TempDir> dir_;
  BytesTokenizer tokenizer_;
};

TEST_F(RecordInputsTest, PacksTarTextAndTfRecordTokensLikeJsonl) {
  testing::WriteFile(
      dir_->Join("a.tar"),
      Tar({{"k1.txt", "hello"}, {"k1.cls", "1"}, {"k2.txt", "world"}, {"k3.cls", "3"}}));
  testing::WriteFile(dir_->Join("t.tfrecord"),
                     FrameTfRecord(EncodeTfExample({Ints("ids", {104, 105})})));
  testing::WriteFile(
      dir_->Join("d.jsonl"),
      testing::JsonlLine("hello") + testing::JsonlLine("world") + testing::JsonlLine("hi"));
  auto files =
      ExpandPackInputs({dir_->Join("a.tar"), dir_->Join("d.jsonl")}, PackInputFormat::kAuto);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].kind, InputKind::kRecords);
  EXPECT_EQ((*files)[1].kind, InputKind::kJsonl);

  // k3 has no txt: an error by default, a counted skip with --bad-lines skip.
  auto failed = PackThem({dir_->Join("a.tar")}, "txt", "fail");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("a.tar record 2 (key 'k3'"), std::string::npos)
      << failed.status().message();
  auto tar = PackThem({dir_->Join("a.tar")}, "txt", "tar", /*skip=*/true);
  ASSERT_TRUE(tar.ok()) << tar.status().ToString();
  EXPECT_EQ(tar->counters.bad_lines_skipped, 1u);
  auto tf = PackThem({dir_->Join("t.tfrecord")}, "ids", "tf");
  ASSERT_TRUE(tf.ok()) << tf.status().ToString();
  auto jsonl = PackThem({dir_->Join("d.jsonl")}, "text", "jsonl");
  ASSERT_TRUE(jsonl.ok()) << jsonl.status().ToString();
  auto expected = testing::ReadDocuments(dir_->Join("jsonl"));
  auto from_tar = testing::ReadDocuments(dir_->Join("tar"));
  auto from_tf = testing::ReadDocuments(dir_->Join("tf"));
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(from_tar, std::vector(expected.begin(), expected.begin() + 2));
  EXPECT_EQ(from_tf, std::vector(expected.begin() + 2, expected.end()));
}

TEST_F(RecordInputsTest, CorruptShardIsAnErrorOrACountedSkip) {
  std::string tar = Tar({{"k1.txt", "hello"}, {"k2.txt", "world"}});
  tar[512 + 512 + 3] ^= 1;  // the second header's name: a bad checksum
  testing::WriteFile(dir_->Join("bad.tar"), tar);
  testing::WriteFile(dir_->Join("good.tar"), Tar({{"g.txt", "fine"}}));
  auto failed = PackThem({dir_->Join("bad.tar"), dir_->Join("good.tar")}, "txt", "fail");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kCorruption);
  EXPECT_NE(failed.status().message().find("bad.tar: bad tar header checksum at byte offset 1024"),
            std::string::npos)
      << failed.status().message();
  auto skipped = PackThem({dir_->Join("bad.tar"), dir_->Join("good.tar")}, "txt", "skip", true);
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_EQ(skipped->counters.corrupt_shards_skipped, 1u);
  // Only "fine": sample k1 was still open (more of its members could follow) when the next
  // header turned out corrupt, so it goes with the rest of the shard.
  EXPECT_EQ(skipped->counters.documents, 1u);
}

TEST_F(RecordInputsTest, TokenIdsOutsideTheVocabularyAreAnError) {
  testing::WriteFile(dir_->Join("t.tfrecord"),
                     FrameTfRecord(EncodeTfExample({Ints("ids", {1, 70000}), Bytes("k", "x")})));
  auto r = PackThem({dir_->Join("t.tfrecord")}, "ids", "out");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("token 70000 at position 1"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(ParsePackInputFormat("csv").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RecordInputsTest, WebDatasetWriterGroupsFilesByKeyIntoShards) {
  for (int i = 0; i < 6; ++i) {
    testing::WriteFile(dir_->Join("src/" + std::to_string(i) + ".txt"), std::string(600, 'a' + i));
    testing::WriteFile(dir_->Join("src/" + std::to_string(i) + ".cls"), std::to_string(i));
  }
  testing::WriteFile(dir_->Join("src/NOEXT"), "skipped");
  auto r = PackWebDataset({dir_->Join("src")}, dir_->Join("wds"), 2048, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records, 6u);
  EXPECT_EQ(r->files_read, 12u);
  EXPECT_EQ(r->files_skipped, 1u);
  EXPECT_GT(r->output_files, 1u);
  auto shards = ExpandRecordShards({dir_->Join("wds")}, RecordFormat::kWebDataset);
  ASSERT_TRUE(shards.ok());
  uint64_t samples = 0;
  for (const RecordShard& s : *shards) {
    auto src = OpenRecordShard(s);
    ASSERT_TRUE(src.ok());
    while (true) {
      auto rec = (*src)->Next();
      ASSERT_TRUE(rec.ok()) << rec.status().ToString();
      if (!*rec) break;
      EXPECT_EQ((*rec)->fields.size(), 2u);  // a sample never spans shards
      ++samples;
    }
  }
  EXPECT_EQ(samples, 6u);
  EXPECT_EQ(PackWebDataset({dir_->Join("src")}, dir_->Join("wds"), 2048, false).status().code(),
            StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace stoker
