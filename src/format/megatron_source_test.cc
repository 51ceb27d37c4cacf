#include "format/megatron_source.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/megatron_writer.h"
#include "format/test_files.h"
#include "format/verify.h"
#include "stoker/token_source.h"

namespace stoker {
namespace {

using testing::ArrayBytes;
using testing::IdxBytes;
using testing::IdxBytesFor;

class MegatronSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    prefix_ = dir_->Join("p");
  }
  void Write(const std::string& idx, const std::string& bin) {
    ASSERT_TRUE(WriteFileAtomically(prefix_ + ".idx", idx).ok());
    ASSERT_TRUE(WriteFileAtomically(prefix_ + ".bin", bin).ok());
  }
  // Opens with full checks and expects kCorruption mentioning `file` and every needle.
  void ExpectCorrupt(const std::string& file, std::vector<std::string> needles) {
    auto r = MegatronSource::Open(prefix_, MegatronIndex::Checks::kFull);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
    needles.push_back(prefix_ + file);
    for (const auto& n : needles) {
      EXPECT_NE(r.status().message().find(n), std::string::npos)
          << "'" << n << "' not in: " << r.status().message();
    }
  }
  std::unique_ptr<TempDir> dir_;
  std::string prefix_;
};

// Every dtype code 1-10 reads back as the same ids.
TEST_F(MegatronSourceTest, ReadsEveryDTypeCode) {
  const std::vector<int64_t> ids = {0, 5, 100, 3, 7};
  for (int code = 1; code <= 10; ++code) {
    auto dtype = static_cast<TokenDType>(code);
    std::string bin;
    for (int64_t id : ids) {
      switch (dtype) {
        case TokenDType::kUint8:
          testing::AppendLE<uint8_t>(bin, id);
          break;
        case TokenDType::kInt8:
          testing::AppendLE<int8_t>(bin, id);
          break;
        case TokenDType::kInt16:
          testing::AppendLE<int16_t>(bin, id);
          break;
        case TokenDType::kInt32:
          testing::AppendLE<int32_t>(bin, id);
          break;
        case TokenDType::kInt64:
          testing::AppendLE<int64_t>(bin, id);
          break;
        case TokenDType::kFloat64:
          testing::AppendLE<double>(bin, id);
          break;
        case TokenDType::kFloat32:
          testing::AppendLE<float>(bin, id);
          break;
        case TokenDType::kUint16:
          testing::AppendLE<uint16_t>(bin, id);
          break;
        case TokenDType::kUint32:
          testing::AppendLE<uint32_t>(bin, id);
          break;
        case TokenDType::kUint64:
          testing::AppendLE<uint64_t>(bin, id);
          break;
      }
    }
    Write(IdxBytesFor(code, TokenDTypeSize(dtype), {2, 0, 3}), bin);
    auto src = MegatronSource::Open(prefix_, MegatronIndex::Checks::kFull);
    ASSERT_TRUE(src.ok()) << code << ": " << src.status().ToString();
    EXPECT_EQ((*src)->dtype(), dtype);
    EXPECT_EQ((*src)->num_documents(), 3u);
    EXPECT_EQ((*src)->num_tokens(), 5u);
    EXPECT_EQ((*src)->document_length(1), 0u);
    std::vector<int32_t> a(3);
    ASSERT_TRUE((*src)->Read(2, 0, 3, a.data()).ok());
    EXPECT_EQ(a, (std::vector<int32_t>{100, 3, 7})) << TokenDTypeName(dtype);
    std::vector<int64_t> b(1);
    ASSERT_TRUE((*src)->Read(0, 1, 1, b.data()).ok());
    EXPECT_EQ(b[0], 5);
    EXPECT_EQ((*src)->Read(0, 1, 2, b.data()).code(), StatusCode::kOutOfRange);
    EXPECT_EQ((*src)->Read(3, 0, 0, b.data()).code(), StatusCode::kOutOfRange);
    EXPECT_EQ((*src)->document_length(1000000), 0u);
  }
}

TEST_F(MegatronSourceTest, ValuesThatAreNotTokenIdsAreCorruption) {
  Write(IdxBytesFor(5, 8, {2}), ArrayBytes<int64_t>({1, int64_t{1} << 40}));
  auto src = MegatronSource::Open(prefix_, MegatronIndex::Checks::kFull);
  ASSERT_TRUE(src.ok());
  int64_t wide[2];
  EXPECT_TRUE((*src)->Read(0, 0, 2, wide).ok());
  int32_t narrow[2];
  Status s = (*src)->Read(0, 0, 2, narrow);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find(prefix_ + ".bin: at byte 8"), std::string::npos) << s.message();

  Write(IdxBytesFor(3, 2, {1}), ArrayBytes<int16_t>({-4}));
  src = MegatronSource::Open(prefix_, MegatronIndex::Checks::kFull);
  ASSERT_TRUE(src.ok());
  EXPECT_EQ((*src)->Read(0, 0, 1, wide).code(), StatusCode::kCorruption);

  Write(IdxBytesFor(7, 4, {1}), ArrayBytes<float>({2.5f}));
  src = MegatronSource::Open(prefix_, MegatronIndex::Checks::kFull);
  ASSERT_TRUE(src.ok());
  EXPECT_EQ((*src)->Read(0, 0, 1, wide).code(), StatusCode::kCorruption);
}

TEST_F(MegatronSourceTest, EmptyIdx) {
  Write("", "");
  ExpectCorrupt(".idx", {"at byte 0", "empty file"});
}

TEST_F(MegatronSourceTest, WrongMagic) {
  std::string idx = IdxBytesFor(8, 2, {3});
  idx[0] = 'X';
  Write(idx, ArrayBytes<uint16_t>({1, 2, 3}));
  ExpectCorrupt(".idx", {"at byte 0", "bad magic"});
}

TEST_F(MegatronSourceTest, WrongVersion) {
  std::string idx = IdxBytesFor(8, 2, {3});
  idx[9] = 2;
  Write(idx, ArrayBytes<uint16_t>({1, 2, 3}));
  ExpectCorrupt(".idx", {"at byte 9", "version 2"});
}

TEST_F(MegatronSourceTest, UnknownDTypeCode) {
  Write(IdxBytesFor(11, 2, {3}), ArrayBytes<uint16_t>({1, 2, 3}));
  ExpectCorrupt(".idx", {"at byte 17", "unknown dtype code 11"});
  Write(IdxBytesFor(0, 2, {3}), ArrayBytes<uint16_t>({1, 2, 3}));
  ExpectCorrupt(".idx", {"at byte 17", "unknown dtype code 0"});
}

TEST_F(MegatronSourceTest, TruncatedIdx) {
  std::string idx = IdxBytesFor(8, 2, {3, 4});
  Write(idx.substr(0, idx.size() - 5), ArrayBytes<uint16_t>({1, 2, 3, 4, 5, 6, 7}));
  ExpectCorrupt(".idx", {"truncated", "at byte " + std::to_string(idx.size() - 5)});
  Write(idx.substr(0, 20), "");
  ExpectCorrupt(".idx", {"truncated", "at byte 20"});
}

TEST_F(MegatronSourceTest, TrailingBytesInIdx) {
  std::string idx = IdxBytesFor(8, 2, {3});
  Write(idx + "xyz", ArrayBytes<uint16_t>({1, 2, 3}));  // 3 extra bytes: not the multimodal +N
  ExpectCorrupt(".idx", {"trailing bytes", "at byte " + std::to_string(idx.size())});
}

TEST_F(MegatronSourceTest, MultimodalIndexIsAccepted) {
  std::string idx = IdxBytesFor(8, 2, {3, 1}) + std::string("\0\1", 2);  // sequence_modes
  Write(idx, ArrayBytes<uint16_t>({1, 2, 3, 4}));
  auto src = MegatronSource::Open(prefix_, MegatronIndex::Checks::kFull);
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  EXPECT_TRUE((*src)->index().multimodal());
  EXPECT_EQ((*src)->num_tokens(), 4u);
}

TEST_F(MegatronSourceTest, TruncatedBin) {
  Write(IdxBytesFor(8, 2, {3, 4}), ArrayBytes<uint16_t>({1, 2, 3, 4, 5, 6}));
  ExpectCorrupt(".bin", {"truncated", "12 bytes"});
  // The cheap checks used for dataset shards catch it too.
  auto r = MegatronSource::Open(prefix_, MegatronIndex::Checks::kHeader);
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
}

TEST_F(MegatronSourceTest, PointerPastEndOfData) {
  // Sequence 0 points past the .bin while the last sequence is fine.
  Write(IdxBytes(8, {1, 1}, {100, 2}, {0, 2}), ArrayBytes<uint16_t>({1, 2}));
  ExpectCorrupt(".idx", {"sequence 0", "past the end of", "at byte 42"});
}

TEST_F(MegatronSourceTest, NonMonotonicOffsets) {
  Write(IdxBytes(8, {2, 2, 2}, {0, 8, 4}, {0, 3}), ArrayBytes<uint16_t>({1, 2, 3, 4, 5, 6}));
  ExpectCorrupt(".idx", {"not monotonic", "sequence 2", "at byte " + std::to_string(34 + 12 + 16)});
}

TEST_F(MegatronSourceTest, NegativeLength) {
  Write(IdxBytes(8, {-1, 2}, {0, 0}, {0, 2}), ArrayBytes<uint16_t>({1, 2}));
  ExpectCorrupt(".idx", {"negative length", "at byte 34"});
}

TEST_F(MegatronSourceTest, BadDocumentIndices) {
  Write(IdxBytes(8, {1, 1}, {0, 2}, {0, 2, 1, 2}), ArrayBytes<uint16_t>({1, 2}));
  ExpectCorrupt(".idx", {"document index 2 is 1", "at byte " + std::to_string(34 + 24 + 16)});
  Write(IdxBytes(8, {1, 1}, {0, 2}, {0, 1}), ArrayBytes<uint16_t>({1, 2}));
  ExpectCorrupt(".idx", {"last document index is 1, expected the sequence count 2"});
  Write(IdxBytes(8, {1, 1}, {0, 2}, {1, 2}), ArrayBytes<uint16_t>({1, 2}));
  ExpectCorrupt(".idx", {"document index 0 is 1"});
}

TEST_F(MegatronSourceTest, HugeCountsDoNotOverflow) {
  std::string idx = IdxBytesFor(8, 2, {1});
  uint64_t huge = ~0ULL / 4;
  std::memcpy(idx.data() + 18, &huge, 8);
  Write(idx, ArrayBytes<uint16_t>({1}));
  ExpectCorrupt(".idx", {"at byte 18", "sequence count"});
}

// OpenTokenSource checks a Megatron input in O(1) (header and section sizes); an entry far into
// the file that is wrong is kCorruption naming the .idx, the sequence and the byte when it is
// read, and `stoker verify` (Verify, a full pass) reports it too.
TEST_F(MegatronSourceTest, ABadEntryFarIntoTheIndexIsReportedWhenRead) {
  constexpr int kDocs = 10000;
  std::vector<int32_t> lengths(kDocs);
  for (int i = 0; i < kDocs; ++i) lengths[i] = 1 + i % 7;
  const std::string good = IdxBytesFor(8, 2, lengths);
  uint64_t tokens = 0;
  for (int32_t l : lengths) tokens += l;
  const std::string bin(2 * tokens, '\x01');
  const uint64_t pointers = 34 + 4 * kDocs;
  auto put64 = [](std::string* idx, uint64_t at, int64_t v) {
    std::memcpy(idx->data() + at, &v, 8);
  };
  auto get64 = [](const std::string& idx, uint64_t at) {
    int64_t v;
    std::memcpy(&v, idx.data() + at, 8);
    return v;
  };
  struct Case {
    std::string what;
    std::string idx;
    uint64_t bad_doc;
    std::vector<std::string> needles;
  };
  std::vector<Case> cases;
  {  // sequence 9000 starts inside sequence 8999
    std::string idx = good;
    put64(&idx, pointers + 8 * 9000, get64(idx, pointers + 8 * 8999));
    cases.push_back({"overlap",
                     idx,
                     9000,
                     {"sequence 9000", "before the end of sequence 8999", "not monotonic",
                      "at byte " + std::to_string(pointers + 8 * 9000)}});
  }
  {  // sequence 5000 points past the .bin
    std::string idx = good;
    put64(&idx, pointers + 8 * 5000, static_cast<int64_t>(bin.size()));
    cases.push_back({"past the end",
                     idx,
                     5000,
                     {"sequence 5000", "past the end of", ".bin",
                      "at byte " + std::to_string(pointers + 8 * 5000)}});
  }
  {  // sequence 7000's size runs into sequence 7001
    std::string idx = good;
    const int32_t big = 1000;
    std::memcpy(idx.data() + 34 + 4 * 7000, &big, 4);
    cases.push_back({"size", idx, 7000, {"sequence 7001", "before the end of sequence 7000"}});
  }
  for (const Case& c : cases) {
    Write(c.idx, bin);
    auto source = OpenTokenSource(prefix_ + ".idx");
    ASSERT_TRUE(source.ok()) << c.what << ": " << source.status().ToString();
    std::vector<int32_t> out(8);
    EXPECT_TRUE((*source)->Read(0, 0, 1, out.data()).ok()) << c.what;
    EXPECT_TRUE((*source)->Read(kDocs - 1, 0, 1, out.data()).ok()) << c.what;
    Status st = (*source)->Read(c.bad_doc, 0, 1, out.data());
    ASSERT_EQ(st.code(), StatusCode::kCorruption) << c.what;
    std::vector<std::string> needles = c.needles;
    needles.push_back(prefix_ + ".idx");
    for (const std::string& n : needles) {
      EXPECT_NE(st.message().find(n), std::string::npos)
          << c.what << ": '" << n << "' not in: " << st.message();
    }
    auto report = Verify(prefix_, nullptr);
    ASSERT_TRUE(report.ok());
    ASSERT_FALSE(report->problems.empty()) << c.what << ": verify found nothing";
    EXPECT_NE(report->problems[0].find(prefix_ + ".idx"), std::string::npos) << report->problems[0];
  }
  // The document index array is not read by a read; `stoker verify` checks it.
  std::string idx = good;
  put64(&idx, 34 + 12 * kDocs + 8 * 6000, 3);
  Write(idx, bin);
  ASSERT_TRUE(OpenTokenSource(prefix_).ok());
  auto report = Verify(prefix_, nullptr);
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->problems.empty());
  EXPECT_NE(report->problems[0].find("document index 6000 is 3"), std::string::npos)
      << report->problems[0];
}

TEST_F(MegatronSourceTest, MissingBinIsNotFound) {
  ASSERT_TRUE(WriteFileAtomically(prefix_ + ".idx", IdxBytesFor(8, 2, {1})).ok());
  auto r = MegatronSource::Open(prefix_, MegatronIndex::Checks::kFull);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(prefix_ + ".bin"), std::string::npos);
}

}  // namespace
}  // namespace stoker
