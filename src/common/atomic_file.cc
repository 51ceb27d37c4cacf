#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "common/file_util.h"

namespace stoker {

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(std::string path, bool durable) {
  static std::atomic<uint64_t> counter{0};
  std::string temp = path + "." + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1, std::memory_order_relaxed)) + ".tmp";
  int fd;
  do {
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus("create " + temp, errno);
  return std::unique_ptr<AtomicFile>(new AtomicFile(std::move(path), std::move(temp), fd, durable));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

Status AtomicFile::Append(std::string_view bytes) {
  if (fd_ < 0) return FailedPrecondition(temp_ + ": write after close");
  return WriteAll(fd_, bytes, temp_);
}

Status AtomicFile::Fail(Status status) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
  return status;
}

Status AtomicFile::Close() {
  if (fd_ < 0) return Status::OK();
  if (durable_ && ::fsync(fd_) != 0) return Fail(ErrnoStatus("fsync " + temp_, errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return Fail(ErrnoStatus("close " + temp_, errno));
  return Status::OK();
}

Status AtomicFile::Commit() {
  if (committed_) return FailedPrecondition(path_ + ": committed twice");
  STOKER_RETURN_IF_ERROR(Close());
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    return Fail(ErrnoStatus("rename " + temp_ + " to " + path_, errno));
  }
  committed_ = true;
  return durable_ ? FsyncDirectory(DirName(path_)) : Status::OK();
}

}  // namespace stoker
