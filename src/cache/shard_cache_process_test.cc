// ShardCache shared by processes: this test binary runs itself as the other processes
// (ShardCacheChild.Run, skipped unless STOKER_CACHE_CHILD says what to do).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
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
#include "storage/cancel_testing.h"
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

// A child process of the tests below: this test binary running ShardCacheChild.Run, with two
// pipes to its parent. It writes a byte on `ready` when it has done what the test waits for (no
// polling), and reads `hold` until the parent closes it or dies (so no child outlives its test).
struct Child {
  pid_t pid = -1;
  int ready = -1;  // the parent's read end
  int hold = -1;   // the parent's write end
};

// Starts this test binary as a child that runs ShardCacheChild.Run with `vars` added to the
// environment.
Child SpawnChild(const std::vector<std::string>& vars) {
  int ready[2], hold[2];
  EXPECT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(hold, O_CLOEXEC), 0);
  // The child's ends are inherited (the parent's stay close-on-exec, so no other child holds
  // them): STOKER_CACHE_READY_FD and STOKER_CACHE_HOLD_FD name them.
  ::fcntl(ready[1], F_SETFD, 0);
  ::fcntl(hold[0], F_SETFD, 0);
  std::vector<std::string> env_strings = vars;
  env_strings.push_back("STOKER_CACHE_READY_FD=" + std::to_string(ready[1]));
  env_strings.push_back("STOKER_CACHE_HOLD_FD=" + std::to_string(hold[0]));
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", filter = "--gtest_filter=ShardCacheChild.Run";
  char* argv[] = {exe.data(), filter.data(), nullptr};
  Child child;
  EXPECT_EQ(::posix_spawn(&child.pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()), 0);
  ::close(ready[1]);
  ::close(hold[0]);
  child.ready = ready[0];
  child.hold = hold[1];
  return child;
}

// Waits for the child's ready byte: false when the child ended (or closed the pipe) without
// sending it, or after a minute (it hangs).
bool WaitReady(const Child& child) {
  pollfd p{child.ready, POLLIN, 0};
  if (::poll(&p, 1, 60'000) != 1) return false;
  char byte;
  return ::read(child.ready, &byte, 1) == 1;
}

int WaitChild(Child& child) {
  int status = 0;
  EXPECT_EQ(::waitpid(child.pid, &status, 0), child.pid);
  for (int* fd : {&child.ready, &child.hold}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// In the child: the fd its parent passed in `name`.
int ChildFd(const char* name) { return std::atoi(Env(name).c_str()); }

// In the child: tells the parent it is ready.
void SendReady() {
  const char byte = 1;
  EXPECT_EQ(::write(ChildFd("STOKER_CACHE_READY_FD"), &byte, 1), 1);
}

// In the child: blocks until the parent closes the hold pipe or dies.
void WaitForParentToLetGo() {
  char byte;
  while (::read(ChildFd("STOKER_CACHE_HOLD_FD"), &byte, 1) > 0 || errno == EINTR) {
  }
}

// A child process killed with SIGKILL (and reaped) when the test lets go of it.
struct KilledAtEnd {
  Child child;
  void Kill() {
    if (child.pid > 0) {
      ::kill(child.pid, SIGKILL);
      WaitChild(child);
    }
    child.pid = -1;
  }
  ~KilledAtEnd() { Kill(); }
};

// Runs cache->Acquire(request) on a thread under a CancelScope; Cancel() sets its flag, and
// WaitUntilWaiting() returns once the thread has looked at the flag (storage/cancel_testing.h):
// it then waits for another process's lock, where the first look is made.
class CancellableReader {
 public:
  CancellableReader(std::shared_ptr<ShardCache> cache, CacheRequest request)
      : thread_([this, cache = std::move(cache), request = std::move(request)] {
          const storage::CancelScope scope(cancel_.flag(), cancel_.hook());
          Result<CachedFile> file = cache->Acquire(request);
          result_.set_value(file.ok() ? ReadFileToString(file->path()) : file.status());
        }) {}
  ~CancellableReader() { thread_.join(); }
  bool WaitUntilWaiting() { return cancel_.WaitChecks(1); }
  void Cancel() { cancel_.Cancel(); }
  // The bytes it read or its error; nullopt when it still waits after a minute (hung: the
  // caller then ends what it waits for, so that the thread can be joined).
  std::optional<Result<std::string>> Wait() {
    if (future_.wait_for(std::chrono::minutes(1)) != std::future_status::ready) return std::nullopt;
    return future_.get();
  }

 private:
  storage::testing::CheckedCancel cancel_;
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
  // Starts a child in `mode` and waits until it holds shard 0's lock (it says so on its pipe).
  Child SpawnHolder(const std::string& mode) {
    Child child = SpawnChild(Vars(mode, dir_->Join(mode + ".out")));
    EXPECT_TRUE(WaitReady(child)) << "the child never took the lock";
    return child;
  }

  // A reader of shard 0, cancelled once it waits for `holder`, ends with kCancelled naming the
  // object. A reader still waiting after a minute is freed by killing `holder`.
  void ExpectCancelledWhileWaiting(std::shared_ptr<ShardCache> cache, KilledAtEnd& holder) {
    Result<std::string> read = Internal("not read");
    {
      CancellableReader reader(std::move(cache), Request(src_, 0));
      EXPECT_TRUE(reader.WaitUntilWaiting());
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
  Child a = SpawnChild(Vars("forward", dir_->Join("a.out")));
  Child b = SpawnChild(Vars("reverse", dir_->Join("b.out")));
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
  Child child = SpawnChild(Vars("hang", dir_->Join("hang.out")));
  const std::string tmp = cache_dir_ + "/tmp";
  const bool started = WaitReady(child);  // its download has started: its temp file exists
  ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
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
  KilledAtEnd child{SpawnHolder("hang")};
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
  KilledAtEnd child{SpawnHolder("pin")};
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
  KilledAtEnd child{SpawnHolder("hang")};
  auto backend = std::make_shared<TestBackend>(storage::NewFileBackend());
  std::shared_ptr<ShardCache> cache = ShardCache::Open(Options(), backend).value();
  Result<std::string> read = Internal("not read");
  {
    CancellableReader reader(cache, Request(src_, 0));
    EXPECT_TRUE(reader.WaitUntilWaiting());  // it waits for the child's lock
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
    SendReady();
    WaitForParentToLetGo();  // killed before, in the tests
    return;
  }
  storage::FaultOptions slow;
  slow.latency_ms = 2;  // so that the two processes overlap
  auto backend =
      std::make_shared<TestBackend>(storage::NewFaultBackend(storage::NewFileBackend(), slow));
  std::thread tell_parent;  // hang: says when the download has started, ends it at the end
  if (mode == "hang") {
    backend->Block(ObjectPath(src, 0));
    tell_parent = std::thread([&backend] {
      backend->WaitBlocked();
      SendReady();
      WaitForParentToLetGo();  // killed before, in the tests
      backend->Unblock();
    });
  }
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
  if (tell_parent.joinable()) tell_parent.join();
  CacheStats stats = (*cache)->Stats();
  std::ofstream(Env("STOKER_CACHE_OUT")) << backend->order().size() << " " << stats.downloads << " "
                                         << stats.hits << " " << stats.misses << "\n";
}

}  // namespace
}  // namespace stoker::cache
