// FileLock: an flock(2) lock on a file, held for as long as the object lives: the one file lock of
// stoker (the shard cache's objects and directory, the plan's totals). flock locks belong to the
// open file description, so they die with the process that holds them (a `kill -9` frees every lock
// at once) and two opens in one process conflict like two processes do. Lock files are never
// unlinked while in use: unlinking a lock file lets a second process lock a fresh inode under the
// same name. Not thread-safe: one owner.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "stoker/status.h"

namespace stoker {

enum class LockMode { kShared, kExclusive };

class FileLock {
 public:
  // Opens (creating if needed) `path` and locks it, waiting for a conflicting holder to let go.
  // `path` may be a directory (locked, not created). For locks held briefly (the directory's
  // set-up, stats.json, the budget's space.lock): the wait cannot be cancelled.
  static Result<std::unique_ptr<FileLock>> Acquire(const std::string& path, LockMode mode);
  // Like Acquire without waiting: null (not an error) when another holder conflicts.
  static Result<std::unique_ptr<FileLock>> TryAcquire(const std::string& path, LockMode mode);
  // Like Acquire, for a lock another process may hold for long (a whole download): the wait ends
  // with kCancelled (naming `path`) once `cancelled()` returns true. flock has no timeout and a
  // signal cannot wake one chosen thread without a race, so it polls a non-blocking flock,
  // sleeping 1 ms, then twice as long each time up to `max_sleep`, calling `cancelled` between
  // tries (a release is seen at most `max_sleep` late). An empty `cancelled` (nothing can cancel
  // the caller) blocks in flock. A caller already cancelled still takes a free lock.
  static Result<std::unique_ptr<FileLock>> AcquireCancellable(
      const std::string& path, LockMode mode, const std::function<bool()>& cancelled,
      std::chrono::milliseconds max_sleep = std::chrono::milliseconds(20));
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  FileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  enum class Wait { kNo, kBlock, kCancellable };
  static Result<std::unique_ptr<FileLock>> Lock(const std::string& path, LockMode mode, Wait wait,
                                                const std::function<bool()>& cancelled,
                                                std::chrono::milliseconds max_sleep);
  std::string path_;
  int fd_;
};

}  // namespace stoker
