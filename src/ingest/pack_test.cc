#include "ingest/pack.h"

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "ingest/pack_test_util.h"
#include "text/tokenizer.h"

namespace stoker {
namespace {

using testing::JsonlLine;
using testing::ReadDocuments;
using testing::ReadFile;
using testing::WriteFile;

const std::string kSampleDir = std::string(STOKER_SOURCE_DIR) + "/data/sample";

class PackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::move(*TempDir::Create("stoker-pack-"));
    bytes_ = std::move(*OpenTokenizer("bytes"));
  }
  PackOptions Options(std::vector<std::string> inputs, const std::string& out) {
    PackOptions o;
    o.inputs = std::move(inputs);
    o.output_dir = dir_->Join(out);
    return o;
  }
  // The expected documents: bytes tokens + EOS 256.
  static std::vector<int32_t> BytesDoc(const std::string& text) {
    std::vector<int32_t> ids(text.begin(), text.end());
    for (auto& id : ids) id &= 0xFF;
    ids.push_back(256);
    return ids;
  }
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Tokenizer> bytes_;
};

TEST_F(PackTest, BytesRoundTripUint16MixedInputsInOrder) {
  WriteFile(dir_->Join("in/a.jsonl"), JsonlLine("first doc") + "\n" + JsonlLine("второй 月"));
  WriteFile(dir_->Join("in/dir/z.txt"), "file z");
  WriteFile(dir_->Join("in/dir/b/y.txt"), "file y\nwith two lines");
  auto r = Pack(Options({dir_->Join("in/a.jsonl"), dir_->Join("in/dir")}, "out"), *bytes_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->manifest.dtype, TokenDType::kUint16);
  EXPECT_EQ(r->manifest.tokenizer.kind, "bytes");
  EXPECT_EQ(r->manifest.tokenizer.eos_id, 256);
  auto docs = ReadDocuments(dir_->Join("out"));
  EXPECT_EQ(docs, (std::vector<std::vector<int32_t>>{BytesDoc("first doc"), BytesDoc("второй 月"),
                                                     BytesDoc("file y\nwith two lines"),
                                                     BytesDoc("file z")}));
  EXPECT_EQ(r->manifest.counters.at("documents"), 4u);
}

TEST_F(PackTest, ForcedInt32RoundTrip) {
  WriteFile(dir_->Join("a.jsonl"), JsonlLine("int32 tokens") + JsonlLine("x"));
  PackOptions o = Options({dir_->Join("a.jsonl")}, "out");
  o.dtype = TokenDType::kInt32;
  auto r = Pack(o, *bytes_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->manifest.dtype, TokenDType::kInt32);
  EXPECT_EQ(r->manifest.shards[0].bin_bytes, (13u + 2u) * 4u);
  EXPECT_EQ(ReadDocuments(dir_->Join("out")),
            (std::vector<std::vector<int32_t>>{BytesDoc("int32 tokens"), BytesDoc("x")}));
}

TEST_F(PackTest, SentencePieceRoundTripMatchesTokenizer) {
  auto sp = OpenTokenizer(kSampleDir + "/sample.model");
  ASSERT_TRUE(sp.ok());
  auto r = Pack(Options({kSampleDir + "/corpus.jsonl"}, "out"), **sp);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->manifest.tokenizer.kind, "sentencepiece");
  EXPECT_EQ(r->manifest.tokenizer.vocab_size, 4000u);
  auto docs = ReadDocuments(dir_->Join("out"));
  ASSERT_EQ(docs.size(), 1040u);
  // Spot-check against direct encoding: the first poem and the last licence.
  std::vector<int32_t> first;
  ASSERT_TRUE(
      (*sp)
          ->Encode(
              "《感遇・其一》\n作者：张九龄\n兰叶春葳蕤，桂华秋皎洁。\n欣欣此生意，自尔为佳节。\n"
              "谁知林栖者，闻风坐相悦。\n草木有本心，何求美人折？",
              &first)
          .ok());
  first.push_back(2);
  EXPECT_EQ(docs[0], first);
  for (const auto& d : docs) EXPECT_EQ(d.back(), 2);
}

TEST_F(PackTest, OutputBytesDoNotDependOnThreads) {
  std::string jsonl;
  for (int i = 0; i < 3000; ++i)
    jsonl += JsonlLine("document " + std::to_string(i) + std::string(i % 97, 'x'));
  WriteFile(dir_->Join("in/a.jsonl"), jsonl);
  for (int i = 0; i < 300; ++i)
    WriteFile(dir_->Join("in/files/" + std::to_string(i)), std::string(i, 'f'));
  std::string reference_bin, reference_idx, reference_manifest;
  for (int threads : {1, 2, 8}) {
    PackOptions o = Options({dir_->Join("in")}, "out" + std::to_string(threads));
    o.threads = threads;
    o.batch_bytes = 4096;  // many small batches, so workers finish out of order
    o.shard_size_bytes = 64 << 10;
    auto r = Pack(o, *bytes_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_GT(r->manifest.shards.size(), 1u);
    std::string bin = ReadFile(o.output_dir + "/part-00000-00001.bin");
    std::string idx = ReadFile(o.output_dir + "/part-00000-00001.idx");
    std::string manifest = ReadFile(o.output_dir + "/manifest.json");
    if (threads == 1) {
      reference_bin = bin, reference_idx = idx, reference_manifest = manifest;
      continue;
    }
    EXPECT_EQ(bin, reference_bin) << threads;
    EXPECT_EQ(idx, reference_idx) << threads;
    EXPECT_EQ(manifest, reference_manifest) << threads;
  }
}

TEST_F(PackTest, LastBatchesShrinkAndTheOutputStaysTheSame) {
  // 1.5 MB in 256 KiB batches would be 6 items; towards the end the reader makes them smaller
  // (so the workers finish together): more items, each written in order, and the same bytes on
  // 1, 2 and 8 threads.
  std::string jsonl;
  for (int i = 0; jsonl.size() < (3u << 19); ++i) {
    jsonl += JsonlLine("doc " + std::to_string(i) + " " + std::string(200 + i % 300, 'a' + i % 26));
  }
  WriteFile(dir_->Join("big/a.jsonl"), jsonl);
  std::string reference;
  for (int threads : {1, 2, 8}) {
    PackOptions o = Options({dir_->Join("big")}, "big" + std::to_string(threads));
    o.threads = threads;
    uint64_t items = 0, last_done = 0;
    bool grows = true;
    o.on_progress = [&](const PackProgress& p) {
      ++items;
      grows = grows && p.disk_bytes_done > last_done;
      last_done = p.disk_bytes_done;
    };
    auto r = Pack(o, *bytes_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GT(items, 12u) << threads;
    EXPECT_TRUE(grows);
    EXPECT_EQ(last_done, jsonl.size());
    std::string bin = ReadFile(o.output_dir + "/part-00000-00000.bin");
    if (threads == 1) reference = bin;
    EXPECT_EQ(bin, reference) << threads;
  }
}

TEST_F(PackTest, ShardsCloseAtSizeWithoutSplittingDocuments) {
  std::string jsonl;
  for (int i = 0; i < 100; ++i) jsonl += JsonlLine(std::string(99, 'a' + i % 26));  // 100 tokens
  jsonl += JsonlLine(std::string(5000, 'L'));  // larger than a shard: a shard of its own
  WriteFile(dir_->Join("a.jsonl"), jsonl);
  PackOptions o = Options({dir_->Join("a.jsonl")}, "out");
  o.shard_size_bytes = 1000;  // 5 documents of 200 bytes
  auto r = Pack(o, *bytes_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->manifest.shards.size(), 21u);
  for (size_t s = 0; s < 20; ++s) {
    EXPECT_EQ(r->manifest.shards[s].documents, 5u);
    EXPECT_EQ(r->manifest.shards[s].bin_bytes, 1000u);
  }
  EXPECT_EQ(r->manifest.shards[20].documents, 1u);
  EXPECT_EQ(r->manifest.shards[20].prefix, "part-00000-00020");
  EXPECT_EQ(ReadDocuments(o.output_dir).size(), 101u);
}

}  // namespace
}  // namespace stoker
