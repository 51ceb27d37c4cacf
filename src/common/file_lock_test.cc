// FileLock's waits. Two opens in one process conflict like two processes (flock locks belong to
// the open file description), so one thread here stands for the other process; the process tests
// (cache/shard_cache_process_test.cc) do the same with a real second process, cancelled through
// storage's CancelScope.
#include "common/file_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/temp_dir.h"

namespace stoker {
namespace {

TEST(FileLockTest, CancellingAWaitForAHeldLockEndsIt) {
  auto dir = TempDir::Create("stoker-file-lock-").value();
  const std::string path = dir->Join("x.lock");
  auto holder = FileLock::Acquire(path, LockMode::kExclusive).value();
  std::atomic<bool> stop{false};
  Status waited;
  std::thread waiter([&] {
    waited =
        FileLock::AcquireCancellable(path, LockMode::kShared, [&] { return stop.load(); }).status();
  });
  stop = true;
  waiter.join();
  EXPECT_EQ(waited.code(), StatusCode::kCancelled) << waited.ToString();
  EXPECT_NE(waited.message().find(path), std::string::npos);
  // The cancelled wait holds nothing: the holder's lock is still the only one, then none is.
  EXPECT_EQ(FileLock::TryAcquire(path, LockMode::kShared).value(), nullptr);
  holder.reset();
  EXPECT_NE(FileLock::TryAcquire(path, LockMode::kExclusive).value(), nullptr);
}

TEST(FileLockTest, ACancellableWaitTakesTheLockOnceItIsFree) {
  auto dir = TempDir::Create("stoker-file-lock-").value();
  const std::string path = dir->Join("x.lock");
  auto holder = FileLock::Acquire(path, LockMode::kShared).value();
  std::atomic<bool> stop{false};
  std::atomic<bool> locked{false};
  std::thread waiter([&] {
    auto lock =
        FileLock::AcquireCancellable(path, LockMode::kExclusive, [&] { return stop.load(); });
    ASSERT_TRUE(lock.ok()) << lock.status().ToString();
    ASSERT_NE(*lock, nullptr);
    locked = true;
  });
  EXPECT_FALSE(locked.load());  // it cannot have the lock while the shared one is held
  holder.reset();
  waiter.join();
  EXPECT_TRUE(locked.load());
}

TEST(FileLockTest, AnAlreadyCancelledThreadStillTakesAFreeLock) {
  auto dir = TempDir::Create("stoker-file-lock-").value();
  auto lock =
      FileLock::AcquireCancellable(dir->Join("x.lock"), LockMode::kExclusive, [] { return true; });
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  EXPECT_NE(*lock, nullptr);
}

TEST(FileLockTest, SharedLocksGoTogetherAndAnExclusiveOneWaitsForThem) {
  auto dir = TempDir::Create("stoker-file-lock-").value();
  const std::string path = dir->Join("x.lock");
  auto a = FileLock::Acquire(path, LockMode::kShared).value();
  auto b = FileLock::TryAcquire(path, LockMode::kShared).value();
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(FileLock::TryAcquire(path, LockMode::kExclusive).value(), nullptr);
  a.reset();
  b.reset();
  auto c = FileLock::TryAcquire(path, LockMode::kExclusive).value();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->path(), path);
  EXPECT_EQ(FileLock::TryAcquire(path, LockMode::kShared).value(), nullptr);
}

}  // namespace
}  // namespace stoker
