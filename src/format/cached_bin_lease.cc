#include "format/cached_bin_lease.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "common/clock.h"

namespace stoker {

BinLease::BinLease(std::shared_ptr<cache::ShardCache> cache, cache::CacheRequest request, bool keep)
    : cache_(std::move(cache)), request_(std::move(request)), keep_(keep) {}

void BinLease::Touch() const {
  if (!used_.load(std::memory_order_relaxed)) used_.store(true, std::memory_order_relaxed);
}

Status BinLease::Take() const {
  std::unique_lock<std::shared_mutex> taking(mu_);
  if (map_ != nullptr) return Status::OK();  // another reader took it meanwhile
  STOKER_ASSIGN_OR_RETURN(cache::CachedFile file, cache_->Acquire(request_));
  Result<std::unique_ptr<MappedFile>> map = MappedFile::Open(file.path());
  if (!map.ok()) return map.status().WithContext("cached copy of " + request_.uri);
  if ((*map)->size() != request_.size) {
    return IOError(file.path() + ": " + std::to_string((*map)->size()) + " bytes but " +
                   std::to_string(request_.size) + " expected (cached copy of " + request_.uri +
                   ")");
  }
  file_ = std::move(file);
  map_ = std::move(*map);
  base_.store(map_->data(), std::memory_order_relaxed);
  last_use_ns_ = SteadyNowNs();
  return Status::OK();
}

Result<size_t> BinLease::ReadAt(uint64_t offset, size_t n, char* out) const {
  if (offset >= request_.size) return size_t{0};
  n = static_cast<size_t>(std::min<uint64_t>(n, request_.size - offset));
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
  for (;;) {
    {
      std::shared_lock<std::shared_mutex> reading(mu_);
      if (map_ != nullptr) {
        Touch();
        std::memcpy(out, map_->data() + offset, n);
        return n;
      }
    }
    STOKER_RETURN_IF_ERROR(Take());
  }
}

Status BinLease::ViewAt(uint64_t offset, size_t n, const char* what,
                        FunctionRef<Status(const uint8_t* data)> use) const {
  if (!keep_ || offset > request_.size || n > request_.size - offset) {
    return ByteSource::ViewAt(offset, n, what, use);  // a copy, or the truncation error
  }
  for (;;) {
    {
      std::shared_lock<std::shared_mutex> reading(mu_);
      if (map_ != nullptr) {
        Touch();
        return use(map_->data() + offset);
      }
    }
    STOKER_RETURN_IF_ERROR(Take());
  }
}

void BinLease::Prefetch(uint64_t offset, size_t n) const {
  if (!keep_ || offset >= request_.size) return;
  const uint8_t* base = base_.load(std::memory_order_relaxed);
  if (base == nullptr) return;
  // The first lines: the hardware prefetcher follows on from there (as MegatronSource's).
  const uint8_t* p = base + offset;
  const uint64_t end = std::min<uint64_t>({request_.size - offset, n, 256});
  for (uint64_t at = 0; at < end; at += 64) __builtin_prefetch(p + at);
}

bool BinLease::ReleaseIfIdle(std::chrono::steady_clock::duration idle) {
  std::unique_lock<std::shared_mutex> l(mu_, std::try_to_lock);
  if (!l.owns_lock() || map_ == nullptr) return false;
  const int64_t idle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(idle).count();
  const int64_t now = SteadyNowNs();
  if (used_.exchange(false, std::memory_order_relaxed)) last_use_ns_ = now;
  if (now - last_use_ns_ < idle_ns) return false;
  base_.store(nullptr, std::memory_order_relaxed);
  map_.reset();
  file_ = cache::CachedFile();  // lets the pin go
  return true;
}

}  // namespace stoker
