#include "storage/file_backend.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/temp_dir.h"

namespace stoker::storage {
namespace {

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(FileBackendTest, AbandonedWriterLeavesNoFileBehind) {
  auto dir = std::move(TempDir::Create("file-backend-").value());
  auto backend = NewFileBackend();
  {
    auto writer = std::move(backend->OpenForWrite(dir->Join("x.bin")).value());
    ASSERT_TRUE(writer->Append("partial").ok());
    EXPECT_EQ(Names(dir->path()).size(), 1u);  // the temporary file, under another name
  }
  EXPECT_TRUE(Names(dir->path()).empty());
}

TEST(FileBackendTest, WriteCreatesParentsAndAcceptsFileUris) {
  auto dir = std::move(TempDir::Create("file-backend-").value());
  auto backend = NewFileBackend();
  const std::string uri = "file://" + dir->Join("a/b/c.bin");
  ASSERT_TRUE(WriteAll(*backend, uri, "abc").ok());
  EXPECT_EQ(ReadAll(*backend, dir->Join("a/b/c.bin")).value(), "abc");
  EXPECT_EQ(Names(dir->Join("a/b")), std::vector<std::string>{"c.bin"});
  Result<std::vector<ObjectInfo>> listed = backend->List("file://" + dir->path() + "/a/");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].uri, uri);
}

TEST(FileBackendTest, RefusesOtherSchemesAndDirectories) {
  auto dir = std::move(TempDir::Create("file-backend-").value());
  auto backend = NewFileBackend();
  EXPECT_EQ(backend->Stat("s3://b/k").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(backend->Stat(dir->path()).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker::storage
