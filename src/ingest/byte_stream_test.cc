#include "ingest/byte_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <fstream>

#include "common/temp_dir.h"
#include "ingest/line_reader.h"

namespace stoker {
namespace {

std::string Gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // +16: gzip wrapper
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

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

TEST_F(ByteStreamTest, LineReaderNumbersLinesAndTracksOffsets) {
  // A line longer than the reader's 1 MiB buffer, and a last line without '\n'.
  std::string long_line(3 << 20, 'x');
  std::string data = "a\n\n" + long_line + "\nlast";
  auto stream = OpenByteStream(Write("l.jsonl.zst", Zstd(data)));
  ASSERT_TRUE(stream.ok());
  LineReader reader(std::move(*stream));
  std::string line;
  std::vector<std::pair<std::string, uint64_t>> seen;
  while (true) {
    auto more = reader.Next(&line);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    seen.emplace_back(line.size() > 10 ? "long" : line, reader.line_offset_bytes());
    EXPECT_EQ(reader.line_number(), seen.size());
  }
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], (std::pair<std::string, uint64_t>{"a", 0}));
  EXPECT_EQ(seen[1], (std::pair<std::string, uint64_t>{"", 2}));
  EXPECT_EQ(seen[2], (std::pair<std::string, uint64_t>{"long", 3}));
  EXPECT_EQ(seen[3], (std::pair<std::string, uint64_t>{"last", 4 + long_line.size()}));
}

}  // namespace
}  // namespace stoker
