#include "common/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace stoker {
namespace {

// flock(fd, op), repeated on EINTR: 0 or an errno.
int FlockOnce(int fd, int op) {
  while (::flock(fd, op) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

}  // namespace

Result<std::unique_ptr<FileLock>> FileLock::Lock(const std::string& path, LockMode mode, Wait wait,
                                                 const std::function<bool()>& cancelled,
                                                 std::chrono::milliseconds max_sleep) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EISDIR) fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path + ": cannot open lock file", errno);
  const int op = mode == LockMode::kShared ? LOCK_SH : LOCK_EX;
  // Nothing can cancel this wait: it may block in flock.
  if (wait == Wait::kCancellable && !cancelled) wait = Wait::kBlock;
  int err = FlockOnce(fd, wait == Wait::kBlock ? op : op | LOCK_NB);
  std::chrono::milliseconds sleep(1);
  while (wait == Wait::kCancellable && err == EWOULDBLOCK) {
    if (cancelled()) {
      ::close(fd);
      return Cancelled(path + ": cancelled while waiting for its lock");
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::max(max_sleep, std::chrono::milliseconds(1)));
    err = FlockOnce(fd, op | LOCK_NB);
  }
  if (err != 0) {
    ::close(fd);
    if (wait == Wait::kNo && err == EWOULDBLOCK) return std::unique_ptr<FileLock>();
    return ErrnoStatus(path + ": cannot lock", err);
  }
  return std::unique_ptr<FileLock>(new FileLock(path, fd));
}

Result<std::unique_ptr<FileLock>> FileLock::Acquire(const std::string& path, LockMode mode) {
  return Lock(path, mode, Wait::kBlock, {}, {});
}

Result<std::unique_ptr<FileLock>> FileLock::TryAcquire(const std::string& path, LockMode mode) {
  return Lock(path, mode, Wait::kNo, {}, {});
}

Result<std::unique_ptr<FileLock>> FileLock::AcquireCancellable(
    const std::string& path, LockMode mode, const std::function<bool()>& cancelled,
    std::chrono::milliseconds max_sleep) {
  return Lock(path, mode, Wait::kCancellable, cancelled, max_sleep);
}

FileLock::~FileLock() { ::close(fd_); }  // closing the last descriptor releases the lock

}  // namespace stoker
