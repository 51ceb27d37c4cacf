// BinLease: a remote shard's .bin read from its node-local cached copy, holding the copy's pin
// (cache/shard_cache.h) and a read-only mapping of it across reads instead of acquiring it per
// read (a lock, a stat, a meta file and an open per document piece). Reads of a held lease are
// served from the mapping: ViewAt hands out the mapped bytes in place (decoded straight from the
// page cache, as a local dataset's mapped .bin is), ReadAt copies them (no pread). A cached copy
// is never written once published (a download is renamed into place; eviction unlinks), so the
// mapping stays valid while held, even if the object is evicted meanwhile. A pin held by an idle
// reader would keep the cache from evicting the object, here and in other processes, and a budget
// smaller than the open shards could then stall: ReleaseIfIdle, called every few tens of
// milliseconds by the opener's reaper, lets go of a lease nobody has read through for `idle` (the
// mapping, then the pin); the next read acquires and maps it again (downloading it again if it was
// evicted meanwhile).
// Thread-safe: ReadAt and ViewAt from any number of threads (reads share the lease, and a view is
// used inside the shared hold, so the mapping outlives it); ReleaseIfIdle never blocks on them and
// never unmaps under a view.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <shared_mutex>
#include <string>

#include "cache/shard_cache.h"
#include "common/mapped_file.h"
#include "storage/byte_source.h"

namespace stoker {

class BinLease final : public ByteSource {
 public:
  // keep = false: the pin is taken and let go within each read (budgets of a few objects, where
  // held pins would make readers wait for the reaper); such reads are copies (pread), never views.
  BinLease(std::shared_ptr<cache::ShardCache> cache, cache::CacheRequest request, bool keep);
  BinLease(const BinLease&) = delete;
  BinLease& operator=(const BinLease&) = delete;

  const cache::CacheRequest& request() const { return request_; }
  const std::string& uri() const override { return request_.uri; }
  uint64_t size_bytes() const override { return request_.size; }
  // Up to `n` bytes at `offset` (fewer only at the object's end). Errors name the cached file
  // and the object's URI.
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override;
  // As ByteSource::ViewAt; with keep, `use` reads the mapping in place while holding the lease
  // shared (so `use` must not block on another read of this lease's release).
  Status ViewAt(uint64_t offset, size_t n, const char* what,
                FunctionRef<Status(const uint8_t* data)> use) const override;
  // With keep, prefetches the mapped bytes' first cache lines if the lease is held. No lock: a
  // prefetch never faults, even on a mapping let go meanwhile.
  void Prefetch(uint64_t offset, size_t n) const override;
  // Drops the mapping and the pin if no read went through the lease for `idle` and none is in
  // progress. Returns whether it did. A read is seen by the next call (the reaper's, every few
  // tens of milliseconds), so idle time counts from that call.
  bool ReleaseIfIdle(std::chrono::steady_clock::duration idle);

 private:
  // Marks the lease used since the last ReleaseIfIdle: a load, and a store only on the first
  // read after it (a clock read and a store per document piece cost a few percent of delivery).
  void Touch() const;
  // Acquires the cached copy (downloading it if needed) and maps it, unless already held.
  Status Take() const;

  const std::shared_ptr<cache::ShardCache> cache_;
  const cache::CacheRequest request_;
  const bool keep_;
  // shared: reads through the lease (views included); exclusive: taking or dropping it.
  mutable std::shared_mutex mu_;
  mutable cache::CachedFile file_;           // guarded by mu_
  mutable std::unique_ptr<MappedFile> map_;  // guarded by mu_; set exactly while file_ is valid
  mutable std::atomic<const uint8_t*> base_{nullptr};  // map_'s bytes, for Prefetch
  mutable std::atomic<bool> used_{false};              // a read since the last ReleaseIfIdle
  mutable int64_t last_use_ns_ = 0;  // guarded by mu_ (exclusive): when a read was last seen
};

}  // namespace stoker
