#include "format/cached_bin_lease.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "common/clock.h"
#include "format/shard_source.h"

namespace stoker {
namespace {}  // namespace

BinLease::BinLease(std::shared_ptr<cache::ShardCache> cache, cache::CacheRequest request, bool keep)
    : cache_(std::move(cache)), request_(std::move(request)), keep_(keep) {}

BinLease::~BinLease() {
  if (fd_ >= 0) ::close(fd_);
}

void BinLease::Touch() { last_use_ns_.store(SteadyNowNs(), std::memory_order_relaxed); }

Result<size_t> BinLease::ReadAt(uint64_t offset, size_t n, char* out) {
  if (offset >= request_.size) return size_t{0};
  n = static_cast<size_t>(std::min<uint64_t>(n, request_.size - offset));
  for (;;) {
    {
      std::shared_lock<std::shared_mutex> reading(mu_);
      if (fd_ >= 0) {
        Touch();
        size_t done = 0;
        while (done < n) {
          const ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
          if (got < 0 && errno == EINTR) continue;
          if (got < 0) {
            return ErrnoStatus("read " + file_.path() + " at offset " +
                                   std::to_string(offset + done) + " (cached copy of " +
                                   request_.uri + ")",
                               errno);
          }
          if (got == 0) {
            return IOError(file_.path() + ": ends before offset " + std::to_string(offset + n) +
                           " (cached copy of " + request_.uri + ", " +
                           std::to_string(request_.size) + " bytes)");
          }
          done += static_cast<size_t>(got);
        }
        return n;
      }
    }
    if (!keep_) {
      STOKER_ASSIGN_OR_RETURN(cache::CachedFile file, cache_->Acquire(request_));
      STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> local, OpenFileSource(file.path()));
      Result<size_t> got = local->ReadAt(offset, n, out);
      if (!got.ok()) {
        return Status(got.status().code(),
                      got.status().message() + " (cached copy of " + request_.uri + ")");
      }
      return got;
    }
    std::unique_lock<std::shared_mutex> taking(mu_);
    if (fd_ >= 0) continue;  // another reader took it meanwhile
    STOKER_ASSIGN_OR_RETURN(cache::CachedFile file, cache_->Acquire(request_));
    const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return ErrnoStatus("open " + file.path() + " (cached copy of " + request_.uri + ")", errno);
    file_ = std::move(file);
    fd_ = fd;
    Touch();
  }
}

bool BinLease::ReleaseIfIdle(std::chrono::steady_clock::duration idle) {
  std::unique_lock<std::shared_mutex> l(mu_, std::try_to_lock);
  if (!l.owns_lock() || fd_ < 0) return false;
  const int64_t idle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(idle).count();
  if (SteadyNowNs() - last_use_ns_.load(std::memory_order_relaxed) < idle_ns) return false;
  ::close(fd_);
  fd_ = -1;
  file_ = cache::CachedFile();  // lets the pin go
  return true;
}

}  // namespace stoker
