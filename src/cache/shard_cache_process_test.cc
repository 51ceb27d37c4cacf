// ShardCache shared by processes: this test binary runs itself as the other processes
// (ShardCacheChild.Run, skipped unless STOKER_CACHE_CHILD says what to do).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "cache/cache_testing.h"
#include "cache/shard_cache.h"
#include "common/file_util.h"
#include "common/temp_dir.h"
#include "storage/fault_backend.h"
#include "storage/file_backend.h"

extern char** environ;

namespace stoker::cache {
namespace {

using testing::ObjectBytes;
using testing::TestBackend;
using testing::Xxh3Of;

constexpr size_t kObjectBytes = 1 << 16;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string ObjectPath(const std::string& src, int i) {
  return src + "/shard_" + std::to_string(i) + ".bin";
}

CacheRequest Request(const std::string& src, int i) {
  const std::string bytes = ObjectBytes("shard" + std::to_string(i), kObjectBytes);
  return {ObjectPath(src, i), bytes.size(), Xxh3Of(bytes)};
}

// Starts this test binary as a child that runs ShardCacheChild.Run with `vars` added to the
// environment.
pid_t SpawnChild(const std::vector<std::string>& vars) {
  std::vector<std::string> env_strings = vars;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", filter = "--gtest_filter=ShardCacheChild.Run";
  char* argv[] = {exe.data(), filter.data(), nullptr};
  pid_t pid = -1;
  EXPECT_EQ(::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()), 0);
  return pid;
}

int WaitChild(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ShardCacheProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir::Create("stoker-cache-proc-").value();
    src_ = dir_->Join("src");
    cache_dir_ = dir_->Join("cache");
    ASSERT_TRUE(MakeDirectories(src_).ok());
    for (int i = 0; i < kObjects; ++i) {
      ASSERT_TRUE(WriteFileAtomically(ObjectPath(src_, i),
                                      ObjectBytes("shard" + std::to_string(i), kObjectBytes))
                      .ok());
    }
  }
  std::vector<std::string> Vars(const std::string& mode, const std::string& out) {
    return {"STOKER_CACHE_CHILD=" + mode, "STOKER_CACHE_DIR=" + cache_dir_,
            "STOKER_CACHE_SRC=" + src_, "STOKER_CACHE_OUT=" + out};
  }

  static constexpr int kObjects = 12;
  std::unique_ptr<TempDir> dir_;
  std::string src_, cache_dir_;
};

// Two processes read every object (in opposite orders, with look-ahead on, through a slow
// source): each object is downloaded once in all, counted at each process's backend.
TEST_F(ShardCacheProcessTest, TwoProcessesDownloadEachObjectOnce) {
  pid_t a = SpawnChild(Vars("forward", dir_->Join("a.out")));
  pid_t b = SpawnChild(Vars("reverse", dir_->Join("b.out")));
  ASSERT_EQ(WaitChild(a), 0);
  ASSERT_EQ(WaitChild(b), 0);
  uint64_t opens = 0, downloads = 0, acquires = 0;
  for (const char* out : {"a.out", "b.out"}) {
    std::ifstream in(dir_->Join(out));
    uint64_t o = 0, d = 0, h = 0, m = 0;
    ASSERT_TRUE(in >> o >> d >> h >> m) << out;
    opens += o;
    downloads += d;
    acquires += h + m;
  }
  EXPECT_EQ(opens, static_cast<uint64_t>(kObjects));
  EXPECT_EQ(downloads, static_cast<uint64_t>(kObjects));
  EXPECT_EQ(acquires, 2u * kObjects);
  CacheStats total = ReadStatsFile(CacheLayout::Open(cache_dir_, false).value()).value();
  EXPECT_EQ(total.downloads, static_cast<uint64_t>(kObjects));
  EXPECT_EQ(total.hits + total.misses, 2u * kObjects);
}

// A process killed with SIGKILL in the middle of a download leaves a temporary file and nothing
// else: its lock died with it, the next start removes the file and downloads the object.
TEST_F(ShardCacheProcessTest, KilledMidDownloadLeavesNothingThatBlocks) {
  pid_t child = SpawnChild(Vars("hang", dir_->Join("hang.out")));
  const std::string tmp = cache_dir_ + "/tmp";
  for (int i = 0; i < 30000; ++i) {  // until the download has started (its temp file exists)
    Result<std::vector<std::string>> names = ListDirectory(tmp);
    if (names.ok() && !names->empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Result<std::vector<std::string>> names = ListDirectory(tmp);
  const bool started = names.ok() && !names->empty();
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  WaitChild(child);
  ASSERT_TRUE(started) << "the child never started its download";
  ASSERT_FALSE(ListDirectory(tmp).value().empty());  // the leftover the next start must handle
  EXPECT_TRUE(ListDirectory(cache_dir_ + "/data").value().empty());

  CacheOptions options;
  options.dir = cache_dir_;
  options.budget_bytes = kObjectBytes * kObjects;
  options.download_threads = 0;
  options.fsync = false;
  auto cache = ShardCache::Open(options, storage::NewFileBackend());
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  EXPECT_TRUE(ListDirectory(tmp).value().empty());
  Result<CachedFile> file = (*cache)->Acquire(Request(src_, 0));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(ReadFileToString(file->path()).value(), ObjectBytes("shard0", kObjectBytes));
}

// The other process of the tests above.
TEST(ShardCacheChild, Run) {
  const std::string mode = Env("STOKER_CACHE_CHILD");
  if (mode.empty()) GTEST_SKIP() << "run by ShardCacheProcessTest in a child process";
  const std::string src = Env("STOKER_CACHE_SRC");
  storage::FaultOptions slow;
  slow.latency_ms = 2;  // so that the two processes overlap
  auto backend = std::make_shared<TestBackend>(
      storage::NewFaultBackend(storage::NewFileBackend(), slow));
  if (mode == "hang") backend->Block(ObjectPath(src, 0));
  CacheOptions options;
  options.dir = Env("STOKER_CACHE_DIR");
  options.budget_bytes = kObjectBytes * 64;
  options.download_threads = mode == "hang" ? 0 : 2;
  options.fsync = false;
  options.poll_ms = 2;
  auto cache = ShardCache::Open(options, backend);
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  std::vector<int> order;
  for (int i = 0; i < 12; ++i) order.push_back(mode == "reverse" ? 11 - i : i);
  if (mode == "hang") order.resize(1);  // blocks in the download until killed
  std::vector<CacheRequest> plan;
  for (int i : order) plan.push_back(Request(src, i));
  (*cache)->Schedule(plan);
  for (int i : order) {
    Result<CachedFile> file = (*cache)->Acquire(Request(src, i));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_EQ(ReadFileToString(file->path()).value(),
              ObjectBytes("shard" + std::to_string(i), kObjectBytes));
  }
  CacheStats stats = (*cache)->Stats();
  std::ofstream(Env("STOKER_CACHE_OUT")) << backend->order().size() << " " << stats.downloads
                                         << " " << stats.hits << " " << stats.misses << "\n";
}

}  // namespace
}  // namespace stoker::cache
