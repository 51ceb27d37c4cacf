#include "records/byte_stream.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/temp_dir.h"
#include "records/test_util.h"

namespace stoker {
namespace {

using testing_util::Gzip;
using testing_util::Zstd;

class ByteStreamTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::move(*TempDir::Create("stoker-bytestream-")); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = dir_->Join(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static std::string Payload() {
    std::string s;
    for (int i = 0; i < 20000; ++i) s += "{\"text\": \"line " + std::to_string(i) + " 月\"}\n";
    return s;
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(ByteStreamTest, DecompressesByExtension) {
  const std::string data = Payload();
  for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"a.jsonl", data},
                                    {"a.jsonl.gz", Gzip(data)},
                                    {"a.jsonl.zst", Zstd(data)}}) {
    std::string out;
    ASSERT_TRUE(ReadAllDecompressed(Write(name, bytes), &out).ok()) << name;
    EXPECT_EQ(out, data) << name;
  }
}

TEST_F(ByteStreamTest, ConcatenatedGzipMembersAndZstdFramesAreOneStream) {
  std::string out;
  ASSERT_TRUE(ReadAllDecompressed(Write("c.gz", Gzip("first\n") + Gzip("second\n")), &out).ok());
  EXPECT_EQ(out, "first\nsecond\n");
  ASSERT_TRUE(ReadAllDecompressed(Write("c.zst", Zstd("first\n") + Zstd("second\n")), &out).ok());
  EXPECT_EQ(out, "first\nsecond\n");
}

TEST_F(ByteStreamTest, TruncatedCompressedDataIsCorruptionNamingFileAndOffset) {
  const std::string data = Payload();
  for (const auto& [name, bytes] :
       {std::pair<std::string, std::string>{"t.gz", Gzip(data)}, {"t.zst", Zstd(data)}}) {
    std::string path = Write(name, bytes.substr(0, bytes.size() / 2));
    std::string out;
    Status st = ReadAllDecompressed(path, &out);
    ASSERT_EQ(st.code(), StatusCode::kCorruption) << name << ": " << st.ToString();
    EXPECT_NE(st.message().find(path), std::string::npos);
    EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("offset " + std::to_string(bytes.size() / 2)), std::string::npos)
        << st.message();
  }
}

TEST_F(ByteStreamTest, GarbageCompressedDataIsCorruption) {
  std::string out;
  Status gz = ReadAllDecompressed(Write("g.gz", "this is not gzip at all"), &out);
  EXPECT_EQ(gz.code(), StatusCode::kCorruption) << gz.ToString();
  Status zst = ReadAllDecompressed(Write("g.zst", "this is not zstd at all"), &out);
  EXPECT_EQ(zst.code(), StatusCode::kCorruption) << zst.ToString();
  EXPECT_NE(zst.message().find("g.zst"), std::string::npos);
}

TEST_F(ByteStreamTest, MissingFileIsNotFound) {
  auto s = OpenByteStream(dir_->Join("absent.jsonl"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("absent.jsonl"), std::string::npos);
}

TEST_F(ByteStreamTest, CompressionSuffixes) {
  EXPECT_EQ(CompressionFromName("a/b.jsonl.zst"), Compression::kZstd);
  EXPECT_EQ(CompressionFromName("b.txt.gz"), Compression::kGzip);
  EXPECT_EQ(CompressionFromName("b.gzip"), Compression::kNone);
  EXPECT_EQ(StripCompressionSuffix("x.jsonl.zstd"), "x.jsonl");
}

TEST_F(ByteStreamTest, SniffsCompressionFromTheFirstBytes) {
  EXPECT_EQ(SniffCompression(Gzip("x")), Compression::kGzip);
  EXPECT_EQ(SniffCompression(testing_util::Zlib("x")), Compression::kGzip);
  EXPECT_EQ(SniffCompression(Zstd("x")), Compression::kZstd);
  EXPECT_EQ(SniffCompression(std::string("\x05\0\0\0", 4)), Compression::kNone);
  EXPECT_EQ(SniffCompression(""), Compression::kNone);
}

TEST_F(ByteStreamTest, SourceStreamStartsAtAnOffsetAndDecompresses) {
  std::string z = Zstd("payload");
  auto stream = OpenSourceStream(MemorySource("mem", "junk" + z), Compression::kZstd, 4);
  std::string out(16, '\0');
  auto n = ReadFully(*stream, out.data(), out.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(out.substr(0, *n), "payload");
}

}  // namespace
}  // namespace stoker
