// Private to shard_cache*.cc: the per-object state a ShardCache keeps, a pin, and a reserved
// temporary file. Guarded by ShardCache::mu_ unless said otherwise.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "cache/shard_cache.h"
#include "common/file_lock.h"
#include "storage/cancel.h"

namespace stoker::cache {

inline constexpr size_t kUnscheduled = std::numeric_limits<size_t>::max();

// The cancel check of FileLock::AcquireCancellable for the calling thread's storage requests
// (storage/cancel.h); empty for a thread with no CancelScope, which nothing can cancel.
inline std::function<bool()> StorageCancelCheck() {
  if (storage::CurrentCancelScope() == nullptr) return {};
  return [] { return storage::CancelRequested(); };
}

// The running kernel's boot id (/proc/sys/kernel/random/boot_id), read once; "" if unreadable.
const std::string& BootId();

struct ShardCache::Entry {
  CacheRequest request;  // the latest one seen for this uri
  std::string key;
  int pins = 0;                    // live CachedFiles of this process
  bool downloading = false;        // a thread of this process is downloading it
  uint64_t fetches = 0;            // downloads of it this process completed (a waiter's miss)
  bool local = false;              // this process saw it complete (the look-ahead skips it)
  bool passed = false;             // its last planned read has passed
  size_t position = kUnscheduled;  // in the current schedule
  uint64_t busy_generation = ~uint64_t{0};  // another process was downloading it then
  Status failed;                            // the look-ahead's failure, handed to the next Acquire
};

// A shared flock on the object's lock file keeps the file from eviction while the pin lives.
struct CachedFile::Pin {
  std::shared_ptr<ShardCache> cache;
  std::unique_ptr<FileLock> lock;
  std::string path;
  std::string uri;
  uint64_t size_bytes = 0;
  ~Pin() { cache->Release(uri); }
};

// A temporary file in DIR/tmp whose size is reserved. Removed on destruction unless published.
// fd < 0: no space could be reserved. Not thread-safe: one owner.
struct ShardCache::Space {
  int fd = -1;
  std::string path;
  Space() = default;
  Space(Space&& other) noexcept : fd(other.fd), path(std::move(other.path)) { other.fd = -1; }
  Space& operator=(Space&& other) noexcept {
    std::swap(fd, other.fd);
    std::swap(path, other.path);
    return *this;
  }
  ~Space();
  // Closes the file (reporting a late write error) and renames it to `target`, the rename under
  // a shared lock of `space_lock` (ShardCache::Reserve and Stats scan data/ and tmp/ under an
  // exclusive one: a rename between their two scans would make them miss the object).
  Status Publish(const std::string& target, bool fsync, const std::string& space_lock);
};

}  // namespace stoker::cache
