#include "format/array_source.h"

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/npy_header.h"
#include "format/test_files.h"

namespace stoker {
namespace {

using testing::ArrayBytes;
using testing::LlmcBytes;
using testing::NpyBytes;

class ArraySourceTest : public ::testing::Test {
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
  template <typename T>
  static void ExpectStatus(const Result<T>& r, StatusCode code, std::vector<std::string> needles) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    for (const auto& n : needles) {
      EXPECT_NE(r.status().message().find(n), std::string::npos)
          << "'" << n << "' not in: " << r.status().message();
    }
  }
  static std::vector<int64_t> Doc(const TokenSource& src, uint64_t doc) {
    std::vector<int64_t> out(src.document_length(doc));
    Status s = src.Read(doc, 0, out.size(), out.data());
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(ArraySourceTest, NanoGpt) {
  std::string path = Write("train.bin", ArrayBytes<uint16_t>({1, 2, 50256, 65535}));
  auto src = ArraySource::OpenNanoGpt(path);
  ASSERT_TRUE(src.ok());
  EXPECT_EQ((*src)->format(), "nanogpt");
  EXPECT_EQ((*src)->num_documents(), 1u);
  EXPECT_EQ(Doc(**src, 0), (std::vector<int64_t>{1, 2, 50256, 65535}));
  int32_t two[2];
  ASSERT_TRUE((*src)->Read(0, 2, 2, two).ok());
  EXPECT_EQ(two[1], 65535);
}

TEST_F(ArraySourceTest, NanoGptBadSizes) {
  ExpectStatus(ArraySource::OpenNanoGpt(Write("odd.bin", "abc")), StatusCode::kCorruption,
               {"odd.bin", "at byte 2", "odd size 3"});
  ExpectStatus(ArraySource::OpenNanoGpt(Write("empty.bin", "")), StatusCode::kCorruption,
               {"empty.bin", "at byte 0", "empty file"});
}

TEST_F(ArraySourceTest, LlmcBothMagics) {
  auto v1 = ArraySource::OpenLlmc(
      Write("gpt2.bin", LlmcBytes(kLlmcMagicGpt2, 1, 3, ArrayBytes<uint16_t>({7, 8, 9}))));
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ((*v1)->dtype(), TokenDType::kUint16);
  EXPECT_EQ(Doc(**v1, 0), (std::vector<int64_t>{7, 8, 9}));
  auto v7 = ArraySource::OpenLlmc(
      Write("llama.bin", LlmcBytes(kLlmcMagicLlama3, 7, 2, ArrayBytes<uint32_t>({128000, 5}))));
  ASSERT_TRUE(v7.ok()) << v7.status().ToString();
  EXPECT_EQ((*v7)->dtype(), TokenDType::kUint32);
  EXPECT_EQ(Doc(**v7, 0), (std::vector<int64_t>{128000, 5}));
}

TEST_F(ArraySourceTest, LlmcBadHeaders) {
  ExpectStatus(ArraySource::OpenLlmc(Write(
                   "short.bin", LlmcBytes(kLlmcMagicGpt2, 1, 3, ArrayBytes<uint16_t>({7, 8})))),
               StatusCode::kCorruption, {"short.bin", "truncated", "3 tokens", "at byte 1028"});
  ExpectStatus(ArraySource::OpenLlmc(Write("ver.bin", LlmcBytes(kLlmcMagicGpt2, 7, 0, ""))),
               StatusCode::kCorruption, {"ver.bin", "at byte 4", "version 7"});
  ExpectStatus(ArraySource::OpenLlmc(Write("neg.bin", LlmcBytes(kLlmcMagicGpt2, 1, -1, ""))),
               StatusCode::kCorruption, {"neg.bin", "at byte 8"});
  ExpectStatus(ArraySource::OpenLlmc(Write("hdr.bin", std::string(100, '\0'))),
               StatusCode::kCorruption, {"hdr.bin", "1024-byte header"});
  ExpectStatus(ArraySource::OpenLlmc(Write("eval.bin", LlmcBytes(kLlmcMagicEval, 1, 0, ""))),
               StatusCode::kUnimplemented, {"eval.bin", "eval"});
}

TEST_F(ArraySourceTest, Npy1DAnd2D) {
  auto one = ArraySource::OpenNpy(
      Write("a.npy", NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }",
                              ArrayBytes<uint16_t>({4, 5, 6}))));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)->num_documents(), 1u);
  EXPECT_EQ(Doc(**one, 0), (std::vector<int64_t>{4, 5, 6}));

  // Keys in another order, double quotes, v2 header, int32 data: 2 documents of 3 tokens.
  auto two = ArraySource::OpenNpy(
      Write("b.npy", NpyBytes("{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<i4\"}",
                              ArrayBytes<int32_t>({1, 2, 3, 4, 5, 6}), 2)));
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ((*two)->num_documents(), 2u);
  EXPECT_EQ((*two)->num_tokens(), 6u);
  EXPECT_EQ(Doc(**two, 1), (std::vector<int64_t>{4, 5, 6}));

  // Fortran order: column-major, so document 0 is elements 0, 2, 4.
  auto fortran = ArraySource::OpenNpy(
      Write("f.npy", NpyBytes("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
                              ArrayBytes<uint8_t>({1, 4, 2, 5, 3, 6}), 3)));
  ASSERT_TRUE(fortran.ok()) << fortran.status().ToString();
  EXPECT_EQ(Doc(**fortran, 0), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Doc(**fortran, 1), (std::vector<int64_t>{4, 5, 6}));
  int32_t mid[2];
  ASSERT_TRUE((*fortran)->Read(1, 1, 2, mid).ok());
  EXPECT_EQ(mid[0], 5);
  EXPECT_EQ(mid[1], 6);
}

struct BadNpy {
  std::string name;
  std::string bytes;
  StatusCode code;
  std::vector<std::string> needles;
};

TEST_F(ArraySourceTest, BadNpyHeaders) {
  const std::string ok_dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }";
  const std::string data = ArrayBytes<uint16_t>({1, 2});
  std::string huge_len = NpyBytes(ok_dict, data, 2);
  uint32_t big = kNpyMaxHeaderBytes + 1;
  std::memcpy(huge_len.data() + 8, &big, 4);
  std::string bad_version = NpyBytes(ok_dict, data);
  bad_version[6] = 4;
  std::vector<BadNpy> cases = {
      {"empty", "", StatusCode::kCorruption, {"empty file"}},
      {"magic", "\x93NUMPX\x01\x00", StatusCode::kCorruption, {"at byte 0", "bad magic"}},
      {"version", bad_version, StatusCode::kCorruption, {"at byte 6", "version 4.0"}},
      {"cap", huge_len, StatusCode::kCorruption, {"at byte 8", "over the limit"}},
      {"object",
       NpyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", data),
       StatusCode::kCorruption,
       {"pickle"}},
      {"bigendian",
       NpyBytes("{'descr': '>u2', 'fortran_order': False, 'shape': (2,), }", data),
       StatusCode::kCorruption,
       {"big-endian", "at byte 20"}},
      {"structured",
       NpyBytes("{'descr': [('a', '<u2')], 'fortran_order': False, 'shape': (2,), }", data),
       StatusCode::kCorruption,
       {"structured"}},
      {"string",
       NpyBytes("{'descr': '<U8', 'fortran_order': False, 'shape': (2,), }", data),
       StatusCode::kCorruption,
       {"not a token type"}},
      {"nokey",
       NpyBytes("{'descr': '<u2', 'shape': (2,), }", data),
       StatusCode::kCorruption,
       {"must have"}},
      {"junk",
       NpyBytes("{'descr': '<u2', 'fortran_order': Maybe, 'shape': (2,), }", data),
       StatusCode::kCorruption,
       {"expected True or False", "at byte 44"}},
      {"unterminated", NpyBytes("{'descr': '<u2", data), StatusCode::kCorruption, {"unterminated"}},
      {"truncated",
       NpyBytes(ok_dict, data.substr(0, 3)),
       StatusCode::kCorruption,
       {"truncated", "2 elements"}},
      {"trailing", NpyBytes(ok_dict, data + "x"), StatusCode::kCorruption, {"trailing bytes"}},
      {"after_dict",
       NpyBytes(ok_dict + std::string(" \0x", 3), data),
       StatusCode::kCorruption,
       {"at byte 69: bad .npy header: unexpected text after the header dict"}},
      {"3d",
       NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 2), }", data),
       StatusCode::kUnimplemented,
       {"3-dimensional"}},
      {"overflow",
       NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
                data),
       StatusCode::kCorruption,
       {"more data than can exist"}},
      {"header_cut",
       std::string("\x93NUMPY\x01\x00\x40\x00{'descr'", 17),
       StatusCode::kCorruption,
       {"truncated", "the header needs 74"}},
  };
  for (const BadNpy& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = Write(c.name + ".npy", c.bytes);
    auto r = ArraySource::OpenNpy(path);
    std::vector<std::string> needles = c.needles;
    needles.push_back(path);
    ExpectStatus(r, c.code, needles);
  }
}

}  // namespace
}  // namespace stoker
