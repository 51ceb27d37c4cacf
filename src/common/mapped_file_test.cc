#include "common/mapped_file.h"

#include <gtest/gtest.h>

#include <cstring>

#include "common/file_util.h"
#include "common/temp_dir.h"

namespace stoker {
namespace {

TEST(MappedFileTest, MapsContents) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFileAtomically((*dir)->Join("f"), "abcdef").ok());
  auto f = MappedFile::Open((*dir)->Join("f"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ((*f)->size(), 6u);
  EXPECT_EQ(std::memcmp((*f)->data(), "abcdef", 6), 0);
  EXPECT_EQ((*f)->path(), (*dir)->Join("f"));
}

TEST(MappedFileTest, EmptyFileHasSizeZero) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFileAtomically((*dir)->Join("e"), "").ok());
  auto f = MappedFile::Open((*dir)->Join("e"), MappedFile::Access::kSequential);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->size(), 0u);
  EXPECT_NE((*f)->data(), nullptr);
}

TEST(MappedFileTest, MissingAndDirectoryFail) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  auto missing = MappedFile::Open((*dir)->Join("nope"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  EXPECT_EQ(MappedFile::Open((*dir)->path()).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
