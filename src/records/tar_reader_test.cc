#include "records/tar_reader.h"

#include <gtest/gtest.h>

#include <cstring>

#include "records/tar_writer.h"
#include "records/test_util.h"

namespace stoker {
namespace {

std::string Member(std::string_view name, std::string_view data) {
  return TarMemberHeader(name, data.size()) + std::string(data) + TarPadding(data.size());
}

std::string Finish(std::string tar) { return tar + TarEnd(tar.size()); }

// Re-computes the checksum of the header block at `at` after a test edited it.
void Rechecksum(std::string* tar, size_t at) {
  char* h = tar->data() + at;
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(h[i]);
  std::snprintf(h + 148, 7, "%06o", sum);
}

Result<std::vector<TarMember>> ReadAll(const std::string& bytes, Compression c = Compression::kNone) {
  TarReader reader(OpenSourceStream(MemorySource("t.tar", bytes), c), "t.tar");
  std::vector<TarMember> out;
  while (true) {
    STOKER_ASSIGN_OR_RETURN(std::optional<TarMember> m, reader.Next());
    if (!m) return out;
    out.push_back(std::move(*m));
  }
}

TEST(TarReaderTest, ReadsUstarPaxLongAndUnicodeNames) {
  std::string long_name = "dir/" + std::string(150, 'n') + ".txt";
  std::string tar = Finish(Member("a.txt", "alpha") + Member(long_name, std::string(700, 'x')) +
                           Member("ключ.txt", "") + Member("b.bin", "beta"));
  auto members = ReadAll(tar);
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  ASSERT_EQ(members->size(), 4u);
  EXPECT_EQ((*members)[0].name, "a.txt");
  EXPECT_EQ((*members)[0].data, "alpha");
  EXPECT_EQ((*members)[1].name, long_name);
  EXPECT_EQ((*members)[1].data, std::string(700, 'x'));
  EXPECT_EQ((*members)[2].name, "ключ.txt");
  EXPECT_EQ((*members)[2].data, "");
  EXPECT_EQ((*members)[3].data, "beta");
  EXPECT_EQ((*members)[3].header_offset, tar.find("b.bin"));
}

TEST(TarReaderTest, GnuLongNamesPrefixBase256AndSkippedTypes) {
  std::string name(120, 'g');
  std::string tar = TarHeaderBlock("dir/", 0, '5');  // a directory entry
  tar += TarHeaderBlock("././@LongLink", name.size() + 1, 'L') + name + '\0' +
         TarPadding(name.size() + 1);
  size_t gnu = tar.size();
  tar += TarHeaderBlock(name.substr(0, 100), 3, '0') + "abc" + TarPadding(3);
  std::memcpy(&tar[gnu + 257], "ustar  \0", 8);  // old GNU magic
  // A base-256 size field.
  std::memset(&tar[gnu + 124], 0, 12);
  tar[gnu + 124] = static_cast<char>(0x80);
  tar[gnu + 135] = 3;
  Rechecksum(&tar, gnu);
  size_t pre = tar.size();
  tar += TarHeaderBlock("file.txt", 2, '0') + "hi" + TarPadding(2);
  std::memcpy(&tar[pre + 345], "some/prefix", 11);
  Rechecksum(&tar, pre);
  tar += TarHeaderBlock("link", 0, '2');
  auto members = ReadAll(Finish(tar));
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].name, name);
  EXPECT_EQ((*members)[0].data, "abc");
  EXPECT_EQ((*members)[1].name, "some/prefix/file.txt");
}

TEST(TarReaderTest, GlobalPaxHeaderAppliesToLaterMembers) {
  std::string rec = "20 path=renamed.txt\n";
  std::string tar = TarHeaderBlock("pax_global_header", rec.size(), 'g') + rec +
                    TarPadding(rec.size()) + Member("orig.txt", "x");
  auto members = ReadAll(Finish(tar));
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].name, "renamed.txt");
}

TEST(TarReaderTest, CompressedArchives) {
  std::string tar = Finish(Member("a.txt", "alpha"));
  for (auto [bytes, c] : {std::pair{testing_util::Gzip(tar), Compression::kGzip},
                          std::pair{testing_util::Zstd(tar), Compression::kZstd}}) {
    auto members = ReadAll(bytes, c);
    ASSERT_TRUE(members.ok()) << members.status().ToString();
    ASSERT_EQ(members->size(), 1u);
    EXPECT_EQ((*members)[0].data, "alpha");
  }
}

TEST(TarReaderTest, CorruptionNamesFileAndOffset) {
  std::string good = Finish(Member("a.txt", "alpha") + Member("b.txt", "beta"));
  size_t second = 1024;
  std::string bad_sum = good;
  bad_sum[second + 10] ^= 1;
  Status st = ReadAll(bad_sum).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("t.tar: bad tar header checksum at byte offset 1024"),
            std::string::npos) << st.message();

  st = ReadAll(good.substr(0, second + 100)).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("truncated tar header"), std::string::npos) << st.message();

  st = ReadAll(good.substr(0, second + 512 + 2)).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("truncated member data"), std::string::npos) << st.message();

  EXPECT_EQ(ReadAll("").status().code(), StatusCode::kCorruption);
  std::string huge = TarHeaderBlock("h.txt", 077777777777ull, '0');
  EXPECT_EQ(ReadAll(huge).status().code(), StatusCode::kCorruption);
}

TEST(TarReaderTest, UnsafeNamesAreErrors) {
  for (std::string name : {"/etc/passwd", "../up.txt", "a/../../b.txt", "a/.."}) {
    Status st = ReadAll(Finish(Member(name, "x"))).status();
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << name;
    EXPECT_NE(st.message().find("unsafe member name"), std::string::npos) << st.message();
  }
  EXPECT_FALSE(IsUnsafeMemberName("./a..b/c.txt"));
  EXPECT_TRUE(ReadAll(Finish(Member("./ok..txt", "x"))).ok());
}

}  // namespace
}  // namespace stoker
