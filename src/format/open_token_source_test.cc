#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/megatron_writer.h"
#include "format/test_files.h"
#include "stoker/token_source.h"

namespace stoker {
namespace {

using testing::ArrayBytes;

class OpenTokenSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
  }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = dir_->Join(name);
    EXPECT_TRUE(WriteFileAtomically(path, bytes).ok());
    return path;
  }
  std::string Format(const std::string& path) {
    auto r = OpenTokenSource(path);
    if (!r.ok()) return "error: " + r.status().ToString();
    return std::string((*r)->format());
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(OpenTokenSourceTest, DetectsEachFormat) {
  std::string prefix = dir_->Join("mega");
  {
    auto w = MegatronWriter::Create(prefix, TokenDType::kUint16);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddDocument(std::vector<int32_t>{1, 2}).ok());
    auto info = (*w)->Finish();
    ASSERT_TRUE(info.ok());
    ASSERT_TRUE(MakeDirectories(dir_->Join("ds")).ok());
    Manifest m;
    m.tokenizer = {"bytes", "bytes", 256, 0, ""};
    info->prefix = "../mega";
    m.shards.push_back(*info);
    ASSERT_TRUE(WriteManifest(dir_->Join("ds"), m).ok());
  }
  EXPECT_EQ(Format(prefix), "megatron");
  EXPECT_EQ(Format(prefix + ".bin"), "megatron");
  EXPECT_EQ(Format(prefix + ".idx"), "megatron");
  EXPECT_EQ(Format(dir_->Join("ds")), "stoker");
  EXPECT_EQ(Format(Write("train.bin", ArrayBytes<uint16_t>({1, 2}))), "nanogpt");
  EXPECT_EQ(Format(Write("fw.bin", testing::LlmcBytes(20240520, 1, 1, ArrayBytes<uint16_t>({9})))),
            "llmc");
  std::string npy = testing::NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }",
                                      ArrayBytes<uint16_t>({3}));
  EXPECT_EQ(Format(Write("x.npy", npy)), "npy");
  EXPECT_EQ(Format(Write("x.tokens", npy)), "npy");  // sniffed by magic
}

TEST_F(OpenTokenSourceTest, ClearErrors) {
  std::string missing = dir_->Join("nothing");
  EXPECT_EQ(Format(missing).find("error: not_found: " + missing), 0u) << Format(missing);
  ASSERT_TRUE(MakeDirectories(dir_->Join("emptydir")).ok());
  EXPECT_NE(Format(dir_->Join("emptydir")).find("without manifest.json"), std::string::npos);
  std::string idx_only = dir_->Join("half");
  Write("half.idx", testing::IdxBytesFor(8, 2, {1}));
  EXPECT_NE(Format(idx_only).find("half.bin: missing"), std::string::npos) << Format(idx_only);
  EXPECT_NE(Format(Write("notes.txt", "hello")).find("unknown token file format"),
            std::string::npos);
  EXPECT_NE(Format(Write("empty.bin", "")).find("empty file"), std::string::npos);
}

}  // namespace
}  // namespace stoker
