#include "common/hash.h"

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/temp_dir.h"

namespace stoker {
namespace {

TEST(HashTest, KnownAnswers) {
  // Reference values from the xxhsum tool (xxhsum -H3) of the same inputs.
  EXPECT_EQ(Xxh3Hex(Xxh3("", 0)), "2d06800538d394c2");
  EXPECT_EQ(Xxh3Hex(0x1234), "0000000000001234");
}

TEST(HashTest, StreamingEqualsOneShot) {
  std::string data(100000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + 3);
  Xxh3Hasher h;
  h.Update(data.data(), 10);
  h.Update(data.data() + 10, 0);
  h.Update(data.data() + 10, data.size() - 10);
  EXPECT_EQ(h.Digest(), Xxh3(data.data(), data.size()));
  EXPECT_NE(h.Digest(), Xxh3(data.data(), data.size() - 1));
}

TEST(HashTest, FileHashMatchesBufferAndEmptyFile) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFileAtomically((*dir)->Join("f"), "hello stoker").ok());
  ASSERT_TRUE(WriteFileAtomically((*dir)->Join("empty"), "").ok());
  EXPECT_EQ(*Xxh3HexOfFile((*dir)->Join("f")), Xxh3Hex(Xxh3("hello stoker", 12)));
  EXPECT_EQ(*Xxh3HexOfFile((*dir)->Join("empty")), "2d06800538d394c2");
  EXPECT_EQ(Xxh3HexOfFile((*dir)->Join("missing")).status().code(), StatusCode::kNotFound);
}

TEST(HashTest, HexShape) {
  EXPECT_TRUE(IsXxh3Hex("2d06800538d394c2"));
  EXPECT_FALSE(IsXxh3Hex("2D06800538D394C2"));
  EXPECT_FALSE(IsXxh3Hex("2d06800538d394c"));
}

}  // namespace
}  // namespace stoker
