#include "format/verify.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/inspect.h"
#include "format/megatron_writer.h"
#include "format/stoker_dataset.h"
#include "format/test_files.h"

namespace stoker {
namespace {

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
  }
  // Two shards: documents of lengths 1, 2, 3 (tokens 1..) and 4, 0; vocab 50.
  Manifest WriteDataset() {
    Manifest m;
    m.tokenizer = {"bytes", "bytes", 50, 0, ""};
    std::vector<std::vector<int>> shards = {{1, 2, 3}, {4, 0}};
    for (size_t s = 0; s < shards.size(); ++s) {
      auto w = MegatronWriter::Create(dir_->Join("shard-" + std::to_string(s)), m.dtype);
      EXPECT_TRUE(w.ok());
      for (int len : shards[s]) {
        std::vector<int32_t> doc;
        for (int i = 1; i <= len; ++i) doc.push_back(i);
        EXPECT_TRUE((*w)->AddDocument(doc).ok());
      }
      auto info = (*w)->Finish();
      EXPECT_TRUE(info.ok());
      m.shards.push_back(*info);
    }
    EXPECT_TRUE(WriteManifest(dir_->path(), m).ok());
    return m;
  }
  VerifyReport Run(const std::string& path) {
    auto r = Verify(path, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : VerifyReport{};
  }
  static void ExpectProblem(const VerifyReport& r, std::vector<std::string> needles) {
    ASSERT_FALSE(r.ok());
    bool found = false;
    for (const auto& p : r.problems) {
      bool all = true;
      for (const auto& n : needles) all &= p.find(n) != std::string::npos;
      found |= all;
    }
    std::string joined;
    for (const auto& p : r.problems) joined += p + "\n";
    EXPECT_TRUE(found) << "no problem with all of the needles; problems:\n" << joined;
  }
  void Patch(const std::string& path, size_t offset, char byte) {
    std::string bytes = *ReadFileToString(path);
    bytes[offset] = byte;
    ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(VerifyTest, CleanDatasetPassesAndCountsEverything) {
  WriteDataset();
  ProgressReporter progress({.mode = ProgressReporter::Mode::kSilent});
  auto r = Verify(dir_->path(), &progress);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok()) << r->problems[0];
  EXPECT_EQ(r->format, "stoker");
  EXPECT_EQ(r->files, 4u);
  EXPECT_EQ(r->documents, 5u);
  EXPECT_EQ(r->tokens, 10u);
  EXPECT_EQ(progress.snapshot().items, 5u);
  EXPECT_EQ(progress.snapshot().bytes, progress.snapshot().total_bytes);
}

TEST_F(VerifyTest, ChecksumMismatchNamesTheShard) {
  WriteDataset();
  Patch(dir_->Join("shard-1.bin"), 0, 9);  // same size, different token
  ExpectProblem(Run(dir_->path()), {dir_->Join("shard-1.bin"), "checksum mismatch", "shard 1"});
}

TEST_F(VerifyTest, TokenOutsideVocabulary) {
  WriteDataset();
  Patch(dir_->Join("shard-0.bin"), 4, 60);
  ExpectProblem(Run(dir_->path()),
                {dir_->Join("shard-0.bin"), "at byte 4", "token id 60", "vocabulary size 50"});
}

TEST_F(VerifyTest, MissingShard) {
  WriteDataset();
  ASSERT_EQ(::unlink(dir_->Join("shard-0.idx").c_str()), 0);
  ExpectProblem(Run(dir_->path()), {dir_->Join("shard-0.idx"), "shard 0"});
}

TEST_F(VerifyTest, ManifestCountsDisagree) {
  Manifest m = WriteDataset();
  m.shards[0].tokens = 7;
  m.shards[0].bin_bytes = 14;
  ASSERT_TRUE(WriteManifest(dir_->path(), m).ok());
  VerifyReport r = Run(dir_->path());
  ExpectProblem(r, {dir_->Join("shard-0.idx"), "6 tokens but the manifest says 7"});
  ExpectProblem(r, {dir_->Join("shard-0.bin"), "size is 12 bytes but the manifest says 14"});
}

TEST_F(VerifyTest, CorruptIndexInsideDataset) {
  WriteDataset();
  // Sequence 1's pointer goes backwards: non-monotonic offsets.
  Patch(dir_->Join("shard-0.idx"), 34 + 12 + 8, 0);
  ExpectProblem(Run(dir_->path()), {dir_->Join("shard-0.idx"), "not monotonic"});
}

TEST_F(VerifyTest, OtherFormats) {
  std::string npy = dir_->Join("neg.npy");
  ASSERT_TRUE(
      WriteFileAtomically(
          npy, testing::NpyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }",
                                 testing::ArrayBytes<int16_t>({1, -2, 3})))
          .ok());
  ExpectProblem(Run(npy), {npy, "at byte 130", "token value -2"});

  std::string good = dir_->Join("train.bin");
  ASSERT_TRUE(WriteFileAtomically(good, testing::ArrayBytes<uint16_t>({1, 2, 3})).ok());
  VerifyReport r = Run(good);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.format, "nanogpt");
  EXPECT_EQ(r.tokens, 3u);

  ASSERT_TRUE(WriteFileAtomically(dir_->Join("m.idx"), testing::IdxBytesFor(8, 2, {4})).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_->Join("m.bin"), "abc").ok());
  ExpectProblem(Run(dir_->Join("m")), {dir_->Join("m.bin"), "truncated"});
}

TEST_F(VerifyTest, MissingPathIsAnError) {
  auto r = Verify(dir_->Join("nope"), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(InspectTest, SummaryAndHistogram) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  auto w = MegatronWriter::Create((*dir)->Join("s"), TokenDType::kUint16);
  ASSERT_TRUE(w.ok());
  for (int len : {0, 1, 2, 3, 4, 100}) {
    ASSERT_TRUE((*w)->AddDocument(std::vector<int32_t>(len, 7)).ok());
  }
  auto info = (*w)->Finish();
  ASSERT_TRUE(info.ok());
  Manifest m;
  m.tokenizer = {"sentencepiece", "sample.model", 8000, 2, ""};
  m.shards.push_back(*info);
  ASSERT_TRUE(WriteManifest((*dir)->path(), m).ok());
  auto ds = StokerDataset::Open((*dir)->path());
  ASSERT_TRUE(ds.ok());
  InspectSummary s = Inspect(**ds);
  EXPECT_EQ(s.documents, 6u);
  EXPECT_EQ(s.tokens, 110u);
  EXPECT_EQ(s.min_length, 0u);
  EXPECT_EQ(s.max_length, 100u);
  EXPECT_NEAR(s.mean_length, 110.0 / 6, 1e-9);
  // [0,0]=1, [1,1]=1, [2,3]=2, [4,7]=1, [8,15]=0, [16,31]=0, [32,63]=0, [64,127]=1
  ASSERT_EQ(s.histogram.size(), 8u);
  EXPECT_EQ(s.histogram[2].min_length, 2u);
  EXPECT_EQ(s.histogram[2].max_length, 3u);
  EXPECT_EQ(s.histogram[2].documents, 2u);
  EXPECT_EQ(s.histogram[5].documents, 0u);
  EXPECT_EQ(s.histogram[7].min_length, 64u);
  EXPECT_NE(s.ToJson().find("\"vocab_size\": 8000"), std::string::npos);
  EXPECT_NE(s.ToText().find("sentencepiece sample.model, vocab 8,000, eos 2"), std::string::npos)
      << s.ToText();
  EXPECT_EQ(*DocumentToJson(**ds, 3), "[7,7,7]");
  EXPECT_EQ(*DocumentToJson(**ds, 0), "[]");
  EXPECT_EQ(DocumentToJson(**ds, 6).status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace stoker
