// ShardCache shared by processes: this test binary runs itself as the other processes
// (ShardCacheChild.Run, skipped unless STOKER_CACHE_CHILD says what to do).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <thread>

#include "cache/cache_testing.h"
#include "cache/shard_cache.h"
#include "common/file_util.h"
#include "common/temp_dir.h"
#include "storage/cancel.h"
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

// Polls `done` every millisecond for up to 30 s.
template <typename F>
bool WaitUntil(F done) {
  for (int i = 0; i < 30000 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// A child process killed with SIGKILL (and reaped) when the test lets go of it.
struct KilledAtEnd {
  pid_t pid;
  void Kill() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      WaitChild(pid);
    }
    pid = -1;
  }
  ~KilledAtEnd() { Kill(); }
};

// Runs cache->Acquire(request) on a thread under a CancelScope; Cancel() sets its flag.
class CancellableReader {
 public:
  CancellableReader(std::shared_ptr<ShardCache> cache, CacheRequest request)
      : thread_([this, cache = std::move(cache), request = std::move(request)] {
          const storage::CancelScope scope(&stop_);
          Result<CachedFile> file = cache->Acquire(request);
          result_.set_value(file.ok() ? ReadFileToString(file->path()) : file.status());
        }) {}
  ~CancellableReader() { thread_.join(); }
  void Cancel() { stop_ = true; }
  // The bytes it read or its error; nullopt when it still waits after a minute (hung: the
  // caller then ends what it waits for, so that the thread can be joined).
  std::optional<Result<std::string>> Wait() {
    if (future_.wait_for(std::chrono::minutes(1)) != std::future_status::ready) return std::nullopt;
    return future_.get();
  }

 private:
  std::atomic<bool> stop_{false};
  std::promise<Result<std::string>> result_;
  std::future<Result<std::string>> future_ = result_.get_future();
  std::thread thread_;  // last: started once the members it uses exist
};

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
    return {"STOKER_CACHE_CHILD=" + mode, "STOKER_TEST_CACHE_DIR=" + cache_dir_,
            "STOKER_CACHE_SRC=" + src_, "STOKER_CACHE_OUT=" + out};
  }

  CacheOptions Options() const {
    CacheOptions options;
    options.dir = cache_dir_;
    options.budget_bytes = kObjectBytes * kObjects;
    options.download_threads = 0;
    options.fsync = false;
    options.poll_ms = 2;
    return options;
  }
  // Starts a child in `mode` and waits until it holds shard 0's lock (the file `ready` says so).
  pid_t SpawnHolder(const std::string& mode, const std::function<bool()>& ready) {
    pid_t child = SpawnChild(Vars(mode, dir_->Join(mode + ".out")));
    EXPECT_TRUE(WaitUntil(ready)) << "the child never took the lock";
    return child;
  }

  // A reader of shard 0, cancelled once it most likely waits for `holder`, ends with kCancelled
  // naming the object. A reader still waiting after a minute is freed by killing `holder`.
  void ExpectCancelledWhileWaiting(std::shared_ptr<ShardCache> cache, KilledAtEnd& holder) {
    Result<std::string> read = Internal("not read");
    {
      CancellableReader reader(std::move(cache), Request(src_, 0));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      reader.Cancel();
      std::optional<Result<std::string>> done = reader.Wait();
      if (!done.has_value()) holder.Kill();
      read = done.value_or(Internal("the reader's wait was not cancelled"));
    }
    EXPECT_EQ(read.status().code(), StatusCode::kCancelled) << read.status().ToString();
    EXPECT_NE(read.status().message().find(ObjectPath(src_, 0)), std::string::npos);
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

// A reader waiting for shard 0 while another process downloads it (its download never ends): the
// reader's cancellation ends the wait (kCancelled naming the object), it has read nothing, and
// once that process is killed a new cache on the directory cleans up and serves the object.
TEST_F(ShardCacheProcessTest, CancellingAReaderThatWaitsForAnotherProcesssDownload) {
  const std::string tmp = cache_dir_ + "/tmp";
  KilledAtEnd child{SpawnHolder("hang", [&] {
    Result<std::vector<std::string>> names = ListDirectory(tmp);
    return names.ok() && !names->empty();
  })};
  auto backend = std::make_shared<TestBackend>(storage::NewFileBackend());
  std::shared_ptr<ShardCache> cache = ShardCache::Open(Options(), backend).value();
  ExpectCancelledWhileWaiting(cache, child);
  EXPECT_EQ(backend->opens(ObjectPath(src_, 0)), 0);
  EXPECT_EQ(ListDirectory(tmp).value().size(), 1u);  // the other process's download, no more
  EXPECT_TRUE(ListDirectory(cache_dir_ + "/data").value().empty());
  cache.reset();
  child.Kill();

  cache = ShardCache::Open(Options(), backend).value();
  EXPECT_TRUE(ListDirectory(tmp).value().empty());
  Result<CachedFile> file = cache->Acquire(Request(src_, 0));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(ReadFileToString(file->path()).value(), ObjectBytes("shard0", kObjectBytes));
}

// Another process reads an older version of shard 0 (it holds a pin, a shared lock): a reader of
// the new version waits to replace it, and its cancellation ends that wait too, the old version
// left in place for its reader. Once that reader is gone the new version is downloaded.
TEST_F(ShardCacheProcessTest, CancellingAReaderThatWaitsToReplaceAnotherProcesssPin) {
  KilledAtEnd child{SpawnHolder("pin", [&] { return PathExists(dir_->Join("pin.out")); })};
  auto backend = std::make_shared<TestBackend>(storage::NewFileBackend());
  std::shared_ptr<ShardCache> cache = ShardCache::Open(Options(), backend).value();
  ExpectCancelledWhileWaiting(cache, child);
  EXPECT_EQ(backend->opens(ObjectPath(src_, 0)), 0);
  EXPECT_TRUE(ListDirectory(cache_dir_ + "/tmp").value().empty());
  EXPECT_EQ(ListDirectory(cache_dir_ + "/data").value().size(), 1u);  // the old version
  child.Kill();

  Result<CachedFile> file = cache->Acquire(Request(src_, 0));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(ReadFileToString(file->path()).value(), ObjectBytes("shard0", kObjectBytes));
  EXPECT_EQ(backend->opens(ObjectPath(src_, 0)), 1);
}

// A reader that can be cancelled but is not goes on when the process it waits for is killed in
// the middle of its download: it takes the lock, downloads the object and reads it.
TEST_F(ShardCacheProcessTest, AWaitingReaderGoesOnWhenTheDownloaderIsKilled) {
  KilledAtEnd child{SpawnHolder("hang", [&] {
    Result<std::vector<std::string>> names = ListDirectory(cache_dir_ + "/tmp");
    return names.ok() && !names->empty();
  })};
  auto backend = std::make_shared<TestBackend>(storage::NewFileBackend());
  std::shared_ptr<ShardCache> cache = ShardCache::Open(Options(), backend).value();
  Result<std::string> read = Internal("not read");
  {
    CancellableReader reader(cache, Request(src_, 0));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    child.Kill();
    read = reader.Wait().value_or(Internal("the reader still waits"));
  }
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, ObjectBytes("shard0", kObjectBytes));
  EXPECT_EQ(backend->opens(ObjectPath(src_, 0)), 1);
}

// The other process of the tests above.
TEST(ShardCacheChild, Run) {
  const std::string mode = Env("STOKER_CACHE_CHILD");
  if (mode.empty()) GTEST_SKIP() << "run by ShardCacheProcessTest in a child process";
  const std::string src = Env("STOKER_CACHE_SRC");
  if (mode == "pin") {  // reads an older version of shard 0 and keeps its pin until killed
    std::shared_ptr<storage::Backend> old_version = storage::NewMemoryBackend();
    const std::string old_bytes = ObjectBytes("old0", kObjectBytes);
    ASSERT_TRUE(storage::WriteAll(*old_version, ObjectPath(src, 0), old_bytes).ok());
    CacheOptions options;
    options.dir = Env("STOKER_TEST_CACHE_DIR");
    options.budget_bytes = kObjectBytes * 64;
    options.download_threads = 0;
    options.fsync = false;
    auto cache = ShardCache::Open(options, old_version);
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    Result<CachedFile> pin =
        (*cache)->Acquire({ObjectPath(src, 0), old_bytes.size(), Xxh3Of(old_bytes)});
    ASSERT_TRUE(pin.ok()) << pin.status().ToString();
    std::ofstream(Env("STOKER_CACHE_OUT")) << "pinned\n";
    std::this_thread::sleep_for(std::chrono::minutes(2));  // killed long before
    return;
  }
  storage::FaultOptions slow;
  slow.latency_ms = 2;  // so that the two processes overlap
  auto backend =
      std::make_shared<TestBackend>(storage::NewFaultBackend(storage::NewFileBackend(), slow));
  if (mode == "hang") backend->Block(ObjectPath(src, 0));
  CacheOptions options;
  options.dir = Env("STOKER_TEST_CACHE_DIR");
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
  std::ofstream(Env("STOKER_CACHE_OUT")) << backend->order().size() << " " << stats.downloads << " "
                                         << stats.hits << " " << stats.misses << "\n";
}

}  // namespace
}  // namespace stoker::cache
