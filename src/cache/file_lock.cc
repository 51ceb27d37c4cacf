#include "cache/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace stoker::cache {

Result<std::unique_ptr<FileLock>> FileLock::Lock(const std::string& path, LockMode mode,
                                                 bool wait) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EISDIR) fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path + ": cannot open lock file", errno);
  const int op = (mode == LockMode::kShared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB);
  int rc;
  do {
    rc = ::flock(fd, op);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    ::close(fd);
    if (!wait && err == EWOULDBLOCK) return std::unique_ptr<FileLock>();
    return ErrnoStatus(path + ": cannot lock", err);
  }
  return std::unique_ptr<FileLock>(new FileLock(path, fd));
}

Result<std::unique_ptr<FileLock>> FileLock::Acquire(const std::string& path, LockMode mode) {
  return Lock(path, mode, /*wait=*/true);
}

Result<std::unique_ptr<FileLock>> FileLock::TryAcquire(const std::string& path, LockMode mode) {
  return Lock(path, mode, /*wait=*/false);
}

FileLock::~FileLock() { ::close(fd_); }  // closing the last descriptor releases the lock

}  // namespace stoker::cache
