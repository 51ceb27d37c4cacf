#include "common/file_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/temp_dir.h"

namespace stoker {
namespace {

TEST(FileUtilTest, AtomicWriteReplacesAndLeavesNoTemp) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  std::string path = (*dir)->Join("a.json");
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second, longer").ok());
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "second, longer");
  auto names = ListDirectory((*dir)->path());
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"a.json"});
}

// Writers of one path in several threads (or processes: the temporary name carries the pid) each
// have a temporary file of their own: the file is always one writer's whole text, never a mix, and
// no temporary file is left.
TEST(FileUtilTest, ConcurrentAtomicWritesOfOnePathNeverMix) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  const std::string path = (*dir)->Join("counts");
  std::vector<std::string> texts;
  for (int t = 0; t < 4; ++t) texts.push_back(std::string(100000 + t, static_cast<char>('a' + t)));
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (!WriteFileAtomically(path, texts[t], /*durable=*/i % 2 == 0).ok()) ++failures;
      }
    });
  }
  for (std::thread& w : writers) w.join();
  EXPECT_EQ(failures.load(), 0);
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(std::find(texts.begin(), texts.end(), *text), texts.end());
  EXPECT_EQ(ListDirectory((*dir)->path()).value(), std::vector<std::string>{"counts"});
}

TEST(FileUtilTest, AtomicWriteTargetKnowsOnlyItsOwnTemporaryNames) {
  EXPECT_EQ(AtomicWriteTarget("x.json.123-4.tmp"), "x.json");
  EXPECT_EQ(AtomicWriteTarget("/d/meta/k.json.9-0.tmp"), "/d/meta/k.json");
  EXPECT_EQ(AtomicWriteTarget("stats.json.tmp"), "");
  EXPECT_EQ(AtomicWriteTarget("x.json.12x-4.tmp"), "");
  EXPECT_EQ(AtomicWriteTarget("x.json.123-.tmp"), "");
  EXPECT_EQ(AtomicWriteTarget(".1-2.tmp"), "");
  EXPECT_EQ(AtomicWriteTarget("x.json"), "");
}

TEST(FileUtilTest, ReadMissingIsNotFoundAndNamesFile) {
  auto r = ReadFileToString("/nonexistent/stoker/x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/stoker/x"), std::string::npos);
}

// Files larger than a read, empty files, files whose size stat does not know (/proc), and the
// spare capacity asked for.
TEST(FileUtilTest, ReadsWholeFilesOfAnySizeWithSpareCapacity) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  std::string big(300000, 'x');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  for (const std::string& contents : {big, std::string()}) {
    std::string path = (*dir)->Join("f");
    ASSERT_TRUE(WriteFileAtomically(path, contents).ok());
    auto text = ReadFileToString(path, 64);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, contents);
    EXPECT_GE(text->capacity(), text->size() + 64);
  }
  auto proc = ReadFileToString("/proc/self/status");
  ASSERT_TRUE(proc.ok());
  EXPECT_NE(proc->find("Name:"), std::string::npos);
}

TEST(FileUtilTest, MakeDirectoriesAndListSorted) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  std::string deep = (*dir)->Join("x/y/z");
  ASSERT_TRUE(MakeDirectories(deep).ok());
  ASSERT_TRUE(MakeDirectories(deep).ok());  // idempotent
  EXPECT_TRUE(IsDirectory(deep));
  ASSERT_TRUE(WriteFileAtomically((*dir)->Join("x/b"), "").ok());
  ASSERT_TRUE(WriteFileAtomically((*dir)->Join("x/a"), "12345").ok());
  auto names = ListDirectory((*dir)->Join("x"));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "y"}));
  EXPECT_EQ(*FileSizeBytes((*dir)->Join("x/a")), 5u);
  EXPECT_FALSE(FileSizeBytes((*dir)->Join("x/y")).ok());
  // A file in the way of a directory is an error, not a silent success.
  EXPECT_FALSE(MakeDirectories((*dir)->Join("x/a/sub")).ok());
}

// WriteAll appends at the file offset, PwriteAll writes at its own; removing is OK when absent.
TEST(FileUtilTest, WritesAllAndRemovesIfPresent) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir.ok());
  const std::string path = (*dir)->Join("f");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(WriteAll(fd, "abcdef", path).ok());
  EXPECT_TRUE(PwriteAll(fd, "XY", 2, 1, path).ok());
  EXPECT_TRUE(WriteAll(fd, "g", path).ok());
  ::close(fd);
  EXPECT_EQ(*ReadFileToString(path), "aXYdefg");
  EXPECT_EQ(WriteAll(-1, "x", path).message().rfind("write " + path, 0), 0u);
  EXPECT_TRUE(RemoveFileIfPresent(path).ok());
  EXPECT_FALSE(PathExists(path));
  EXPECT_TRUE(RemoveFileIfPresent(path).ok());
  const Status busy = RemoveFileIfPresent((*dir)->path());  // a directory
  EXPECT_NE(busy.message().find((*dir)->path() + ": cannot remove"), std::string::npos);
}

TEST(FileUtilTest, PathPieces) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "/abs"), "/abs");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(DirName("x/y/z.bin"), "x/y");
  EXPECT_EQ(DirName("z.bin"), ".");
  EXPECT_EQ(DirName("/z"), "/");
  EXPECT_EQ(BaseName("x/y/z.bin"), "z.bin");
  EXPECT_EQ(BaseName("x/y/"), "y");
}

TEST(TempDirTest, RemovesContents) {
  std::string path;
  {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir.ok());
    path = (*dir)->path();
    ASSERT_TRUE(MakeDirectories((*dir)->Join("a/b")).ok());
    ASSERT_TRUE(WriteFileAtomically((*dir)->Join("a/b/c"), "x").ok());
  }
  EXPECT_FALSE(PathExists(path));
}

}  // namespace
}  // namespace stoker
