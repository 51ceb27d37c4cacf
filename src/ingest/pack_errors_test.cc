// Bad inputs and bad output directories: one clear error naming the file (and line / offset).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

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

class PackErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::move(*TempDir::Create("stoker-pack-errors-"));
    bytes_ = std::move(*OpenTokenizer("bytes"));
  }
  Result<PackResult> PackFile(const std::string& name, const std::string& contents,
                              Utf8Policy utf8 = Utf8Policy::kReplace, bool skip_bad = false) {
    WriteFile(dir_->Join(name), contents);
    PackOptions o;
    o.inputs = {dir_->Join(name)};
    o.output_dir = dir_->Join("out");
    o.overwrite = true;
    o.encoder.utf8 = utf8;
    o.encoder.skip_bad_lines = skip_bad;
    return Pack(o, *bytes_);
  }
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Tokenizer> bytes_;
};

// "ok\n" + an invalid line at byte offset 27 (line 2); the bad byte is 12 bytes into it.
const std::string kInvalidUtf8Jsonl = JsonlLine("good line") + "{\"text\": \"bad \xFF byte\"}\n";

TEST_F(PackErrorsTest, InvalidUtf8FailNamesFileLineAndOffset) {
  auto r = PackFile("u.jsonl", kInvalidUtf8Jsonl, Utf8Policy::kFail);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  size_t line2 = JsonlLine("good line").size();
  EXPECT_THAT(r.status().message(), HasSubstr(dir_->Join("u.jsonl") + ":2"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("invalid UTF-8 at byte offset " + std::to_string(line2 + 14)));
  EXPECT_FALSE(PathExists(dir_->Join("out/manifest.json")));
}

TEST_F(PackErrorsTest, InvalidUtf8ReplaceRepairsAndCounts) {
  auto r = PackFile("u.jsonl", kInvalidUtf8Jsonl, Utf8Policy::kReplace);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->manifest.counters.at("invalid_utf8_replaced_documents"), 1u);
  EXPECT_EQ(r->manifest.counters.at("invalid_utf8_replacements"), 1u);
  auto docs = ReadDocuments(dir_->Join("out"));
  ASSERT_EQ(docs.size(), 2u);
  std::string expected = "bad \xEF\xBF\xBD byte";
  std::vector<int32_t> ids;
  for (unsigned char c : expected) ids.push_back(c);
  ids.push_back(256);
  EXPECT_EQ(docs[1], ids);
}

TEST_F(PackErrorsTest, InvalidUtf8SkipDropsTheDocumentAndCounts) {
  auto r = PackFile("u.jsonl", kInvalidUtf8Jsonl, Utf8Policy::kSkip);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->manifest.counters.at("invalid_utf8_skipped_documents"), 1u);
  EXPECT_EQ(r->manifest.total_documents(), 1u);
}

TEST_F(PackErrorsTest, InvalidUtf8InAPlainTextFile) {
  auto r = PackFile("t.txt", "abc\xC0\xAF", Utf8Policy::kFail);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(dir_->Join("t.txt") + ": invalid UTF-8 at byte offset 3"));
}

TEST_F(PackErrorsTest, BadJsonLineNamesFileAndLine) {
  auto r =
      PackFile("j.jsonl", JsonlLine("fine") + "{\"text\": \"unterminated\n" + JsonlLine("more"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr(dir_->Join("j.jsonl") + ":2 (byte offset "));
  EXPECT_THAT(r.status().message(), HasSubstr("invalid JSON"));
}

TEST_F(PackErrorsTest, MissingAndNonStringTextField) {
  auto missing = PackFile("m.jsonl", "{\"content\": \"x\"}\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(dir_->Join("m.jsonl") + ":1"));
  EXPECT_THAT(missing.status().message(), HasSubstr("missing text field 'text'"));
  auto number = PackFile("n.jsonl", "{\"text\": 42}\n");
  ASSERT_FALSE(number.ok());
  EXPECT_THAT(number.status().message(), HasSubstr("field 'text' is a number, not a string"));
  auto array = PackFile("a.jsonl", "[1, 2]\n");
  ASSERT_FALSE(array.ok());
  EXPECT_THAT(array.status().message(), HasSubstr("not a JSON object"));
}

TEST_F(PackErrorsTest, BadLinesSkipCountsThem) {
  auto r =
      PackFile("s.jsonl", JsonlLine("kept") + "not json\n{\"other\": 1}\n" + JsonlLine("kept 2"),
               Utf8Policy::kReplace, /*skip_bad=*/true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->manifest.counters.at("bad_lines_skipped"), 2u);
  EXPECT_EQ(r->manifest.total_documents(), 2u);
}

TEST_F(PackErrorsTest, CorruptCompressedInputNamesTheFile) {
  auto r = PackFile("c.jsonl.zst", "definitely not zstd");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr(dir_->Join("c.jsonl.zst")));
}

TEST_F(PackErrorsTest, UnreadableInputNamesTheFile) {
  // Root reads files whatever their mode, so as root use a file whose read() fails: /proc/self/mem
  // is a regular file and reading its offset 0 (unmapped) gives EIO.
  std::string path = dir_->Join("secret.txt");
  if (geteuid() == 0) {
    path = "/proc/self/mem";
  } else {
    WriteFile(path, "x");
    ::chmod(path.c_str(), 0);
  }
  PackOptions o;
  o.inputs = {path};
  o.output_dir = dir_->Join("out");
  auto r = Pack(o, *bytes_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(path));
  EXPECT_FALSE(PathExists(dir_->Join("out/manifest.json")));
}

TEST_F(PackErrorsTest, EmptyInputsAreAnError) {
  ASSERT_TRUE(MakeDirectories(dir_->Join("empty_dir")).ok());
  PackOptions o;
  o.inputs = {dir_->Join("empty_dir")};
  o.output_dir = dir_->Join("out");
  auto r = Pack(o, *bytes_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no input files"));
  auto blank = PackFile("blank.jsonl", "\n\n{\"text\": \"\"}\n");
  ASSERT_FALSE(blank.ok());
  EXPECT_THAT(blank.status().message(), HasSubstr("no documents"));
  EXPECT_FALSE(PathExists(dir_->Join("out/manifest.json")));
}

TEST_F(PackErrorsTest, ExistingDatasetNeedsOverwrite) {
  ASSERT_TRUE(PackFile("a.txt", "first").ok());
  PackOptions o;
  o.inputs = {dir_->Join("a.txt")};
  o.output_dir = dir_->Join("out");
  auto again = Pack(o, *bytes_);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr("--overwrite"));
  // Stale temporary files and shards of an interrupted run are cleaned on --overwrite.
  WriteFile(dir_->Join("out/part-00000-00007.bin.tmp"), "junk");
  WriteFile(dir_->Join("out/part-00000-00009.bin"), "orphan");
  WriteFile(dir_->Join("out/notes.txt"), "user file");
  o.overwrite = true;
  ASSERT_TRUE(Pack(o, *bytes_).ok());
  EXPECT_FALSE(PathExists(dir_->Join("out/part-00000-00007.bin.tmp")));
  EXPECT_FALSE(PathExists(dir_->Join("out/part-00000-00009.bin")));
  EXPECT_TRUE(PathExists(dir_->Join("out/notes.txt")));
  EXPECT_EQ(ReadDocuments(dir_->Join("out")).size(), 1u);
}

// The replaced shards are moved into out/.stoker-replaced and deleted while the new dataset is
// written; when Pack returns they are gone, and so is what a crashed pack left in that folder.
TEST_F(PackErrorsTest, OverwriteDeletesTheReplacedShardsBeforeItReturns) {
  std::string jsonl;
  for (int i = 0; i < 300; ++i) jsonl += JsonlLine("document " + std::to_string(i));
  PackOptions o;
  WriteFile(dir_->Join("d.jsonl"), jsonl);
  o.inputs = {dir_->Join("d.jsonl")};
  o.output_dir = dir_->Join("out");
  o.shard_size_bytes = 1000;  // several shards
  ASSERT_TRUE(Pack(o, *bytes_).ok());
  auto before = ListDirectory(dir_->Join("out"));
  ASSERT_TRUE(before.ok());
  const size_t shards = std::count_if(before->begin(), before->end(), [](const std::string& n) {
    return n.starts_with("part-") && n.ends_with(".bin");
  });
  ASSERT_GT(shards, 2u);
  WriteFile(dir_->Join("out/.stoker-replaced/part-00000-00042.bin"), "left by a crash");
  WriteFile(dir_->Join("d.jsonl"), JsonlLine("one document now"));
  o.overwrite = true;
  o.shard_size_bytes = 1 << 20;
  auto r = Pack(o, *bytes_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(PathExists(dir_->Join("out/.stoker-replaced")));
  auto after = ListDirectory(dir_->Join("out"));
  ASSERT_TRUE(after.ok());
  for (const std::string& n : *after) {
    EXPECT_FALSE(n.starts_with("part-") && n != "part-00000-00000.bin" &&
                 n != "part-00000-00000.idx")
        << n << " of the replaced dataset is still there";
  }
  auto docs = ReadDocuments(dir_->Join("out"));
  ASSERT_EQ(docs.size(), 1u);
}

TEST_F(PackErrorsTest, FailedPackLeavesNoShardsAndNoManifest) {
  std::string jsonl;
  for (int i = 0; i < 200; ++i) jsonl += JsonlLine(std::string(100, 'k'));
  jsonl += "broken\n";
  WriteFile(dir_->Join("f.jsonl"), jsonl);
  PackOptions o;
  o.inputs = {dir_->Join("f.jsonl")};
  o.output_dir = dir_->Join("out");
  o.shard_size_bytes = 1000;
  o.batch_bytes = 500;
  ASSERT_FALSE(Pack(o, *bytes_).ok());
  auto names = ListDirectory(dir_->Join("out"));
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty()) << (*names)[0];
}

TEST_F(PackErrorsTest, OutputInsideAnInputDirectoryIsRefused) {
  WriteFile(dir_->Join("in/a.txt"), "a");
  PackOptions o;
  o.inputs = {dir_->Join("in")};
  o.output_dir = dir_->Join("in/out");
  auto r = Pack(o, *bytes_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("inside input directory"));
}

TEST_F(PackErrorsTest, MissingTokenizerJsonNamesTheFile) {
  auto t = OpenTokenizer(dir_->Join("tok/tokenizer.json"));
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("tok/tokenizer.json"), std::string::npos);
}

}  // namespace
}  // namespace stoker
