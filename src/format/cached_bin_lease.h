// BinLease: a remote shard's .bin read from its node-local cached copy, holding the copy's pin
// (cache/shard_cache.h) and an open descriptor across reads instead of acquiring it per read
// (a lock, a stat, a meta file and an open per document piece). A pin held by an idle reader
// would keep the cache from evicting the object, here and in other processes, and a budget
// smaller than the open shards could then stall: ReleaseIfIdle, called every few tens of
// milliseconds by the opener's reaper, lets go of a lease nobody has read through for `idle`; the
// next read acquires it again (downloading it again if it was evicted meanwhile).
// Thread-safe: ReadAt from any number of threads (reads share the lease); ReleaseIfIdle never
// blocks on them.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <shared_mutex>
#include <string>

#include "cache/shard_cache.h"

namespace stoker {

class BinLease {
 public:
  // keep = false: the pin is taken and let go within each read (budgets of a few objects, where
  // held pins would make readers wait for the reaper).
  BinLease(std::shared_ptr<cache::ShardCache> cache, cache::CacheRequest request, bool keep);
  ~BinLease();
  BinLease(const BinLease&) = delete;
  BinLease& operator=(const BinLease&) = delete;

  const cache::CacheRequest& request() const { return request_; }
  // Up to `n` bytes at `offset` (fewer only at the object's end). Errors name the cached file
  // and the object's URI.
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out);
  // Drops the pin and the descriptor if no read went through the lease for `idle` and none is in
  // progress. Returns whether it did.
  bool ReleaseIfIdle(std::chrono::steady_clock::duration idle);

 private:
  void Touch();

  const std::shared_ptr<cache::ShardCache> cache_;
  const cache::CacheRequest request_;
  const bool keep_;
  std::shared_mutex mu_;    // shared: reads through the lease; exclusive: taking or dropping it
  cache::CachedFile file_;  // guarded by mu_
  int fd_ = -1;             // guarded by mu_; >= 0 exactly while file_ is valid
  std::atomic<int64_t> last_use_ns_{0};  // steady clock
};

}  // namespace stoker
