// ShardCache: a node-local disk cache in front of a storage::Backend that downloads whole objects
// (shards) ahead of the plan, within a byte budget, and pins them while they are read.
//
// Look-ahead: Schedule() gives the objects the plan will read next, in order; download threads
// fetch them in that order while the budget allows. Acquire() blocks until the object is local
// and verified. Eviction frees, in this order: objects whose last planned read has Passed(), then
// objects this process has no plan for (oldest first), then the scheduled ones read furthest in
// the future. A look-ahead download never evicts an object scheduled before it; a pinned object is
// never evicted. Files are downloaded to a temporary name, checked (size, XXH3-64), then renamed.
// Several processes share one directory through per-object flock locks (see cache_layout.h and
// docs/cache.md): each object is downloaded once per node, and a crash leaves nothing behind that
// blocks or corrupts the next start.
// Thread-safe: every method may be called from any thread; a CachedFile is a plain value.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/cache_layout.h"
#include "cache/cache_stats.h"
#include "stoker/status.h"
#include "storage/backend.h"

namespace stoker::cache {

struct CacheOptions {
  std::string dir;                    // created if missing; refused if it holds foreign files
  uint64_t budget_bytes = 0;          // data plus downloads in progress never exceed it
  int download_threads = 8;           // look-ahead downloads at once (0: download only on Acquire)
  int max_refetch = 3;                // downloads repeated after a mismatch before giving up
  uint64_t chunk_bytes = 8 << 20;     // bytes per backend read (one ranged GET)
  int part_threads = 4;               // reads of one object in flight at once
  uint64_t largest_object_bytes = 0;  // when known: Open refuses a budget smaller than this
  // true: fdatasync each object before its rename (durable at once). false: rename at once and
  // tag the object with this boot's id; an object tagged by an earlier boot (a power loss may
  // have torn it) is re-hashed before first use (src/cache/README.md, "Durability"). No boot id:
  // fsync.
  bool fsync = false;
  // How often a waiter looks for space freed by other processes; at most this long between the
  // polls of a wait for another process's lock (file_lock.h) and between its cancel checks.
  uint32_t poll_ms = 20;
};

struct CacheRequest {
  std::string uri;
  uint64_t size = 0;     // bytes (as the manifest lists them)
  std::string checksum;  // expected XXH3-64 hex (the manifest's bin_xxh3); empty: size only
};

class ShardCache;

// A pinned, complete, verified local copy. While any copy of it lives, the file at path() is
// neither evicted nor replaced (it holds a shared flock on the object's lock file). Thread-safe.
class CachedFile {
 public:
  CachedFile() = default;
  bool valid() const { return pin_ != nullptr; }
  const std::string& path() const;
  const std::string& uri() const;
  uint64_t size_bytes() const;

 private:
  friend class ShardCache;

 public:
  struct Pin;  // defined in shard_cache.cc

 private:
  explicit CachedFile(std::shared_ptr<const Pin> pin) : pin_(std::move(pin)) {}
  std::shared_ptr<const Pin> pin_;
};

class ShardCache : public std::enable_shared_from_this<ShardCache> {
 public:
  friend struct CachedFile::Pin;
  // Opens or creates the cache in options.dir, removes stale temporary files, starts the
  // download threads. kInvalidArgument for a zero budget or one below largest_object_bytes;
  // kFailedPrecondition for a directory with foreign contents.
  static Result<std::shared_ptr<ShardCache>> Open(const CacheOptions& options,
                                                  std::shared_ptr<storage::Backend> source);
  // Aborts the look-ahead downloads in flight (inside their HTTP transfers, within about a
  // second, with no retry), removes their temporary files and joins the download threads.
  ~ShardCache();
  ShardCache(const ShardCache&) = delete;
  ShardCache& operator=(const ShardCache&) = delete;

  // Replaces the look-ahead: the objects the plan reads next, in reading order.
  void Schedule(std::vector<CacheRequest> upcoming);
  // Blocks until the object is local and verified, downloading it here if nobody is; waits for
  // space (back-pressure) while the budget is held by pinned objects. kInvalidArgument when the
  // object is larger than the whole budget; kCorruption naming the uri after max_refetch
  // mismatching downloads; the backend's error otherwise; kCancelled once the calling thread's
  // requests are cancelled (storage/cancel.h: a loader being closed), its download aborted or
  // its wait for another thread's or process's download of the object ended.
  Result<CachedFile> Acquire(const CacheRequest& request);
  // The plan's last read of `uri` has passed: it is the first to be evicted.
  void Passed(const std::string& uri);
  // This process's counters, the budget and the bytes the directory uses now (two directory
  // scans under the space lock).
  CacheStats Stats() const;
  // This process's counters and the budget alone (used_bytes 0): no I/O.
  CacheStats Counters() const;
  // Adds the counters not yet written to DIR/stats.json (also done after every 16 look-ahead
  // downloads, after each download on Acquire, every 64 hits, and at destruction).
  Status FlushStats();

  // Whether a reader of this process is waiting for space (back-pressure): holders of idle pins
  // should let them go now (format/cached_bin_lease.h).
  bool WaitingForSpace() const { return space_waiters_.load(std::memory_order_relaxed) > 0; }

  // For tests and tools: blocks until every look-ahead thread has looked for work since the
  // last change (a Schedule, a Passed, a release, a download's end) and found none, so the
  // look-ahead has done all it will do until something changes. Returns at once without
  // look-ahead threads, or once the cache is being destroyed.
  void WaitLookAheadIdle();

  const CacheOptions& options() const { return options_; }

 private:
  struct Entry;
  struct Space;
  enum class Priority { kLookAhead, kDemand };
  enum class Outcome { kDone, kPresent, kNoSpace, kBusy };  // kPresent: found complete

  ShardCache(CacheOptions options, std::shared_ptr<storage::Backend> source, CacheLayout layout);
  Entry& EntryFor(const CacheRequest& request);  // mu_ held
  // Complete, matching `request`, and either synced or published in this boot.
  bool IsComplete(const std::string& key, const CacheRequest& request) const;
  // Holding the object's exclusive lock: re-hashes an object published unsynced in an earlier
  // boot; true when it is intact (it is then marked synced), false when it is not that case.
  Result<bool> ReverifyEarlierBoot(const std::string& key, const CacheRequest& request);
  Result<Outcome> Download(const CacheRequest& request, Priority priority, size_t position);
  Result<Space> Reserve(const std::string& key, uint64_t size, Priority priority, size_t position,
                        const std::string& uri);
  Status EvictFor(const std::vector<StoredObject>& objects, uint64_t need, uint64_t* used,
                  Priority priority, size_t position);
  void Release(const std::string& uri);
  void DownloadLoop(size_t worker);
  bool NextLookAhead(CacheRequest* request, size_t* position);  // mu_ held
  void Count(uint64_t CacheStats::*counter, uint64_t n);

  const CacheOptions options_;
  const std::shared_ptr<storage::Backend> source_;
  const CacheLayout layout_;

  mutable std::mutex mu_;
  std::condition_variable changed_;  // a download ended, a pin was released, a plan changed
  std::condition_variable idle_;     // a look-ahead thread found nothing to do
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;  // by uri; guarded by mu_
  std::unordered_map<std::string, Entry*> by_key_;                   // guarded by mu_
  std::vector<std::string> schedule_;                                // guarded by mu_
  uint64_t generation_ = 0;  // bumped on every change that may free space; guarded by mu_
  uint64_t blocked_generation_ = ~uint64_t{0};  // look-ahead found no space at this generation
  bool stop_ = false;                           // guarded by mu_
  std::atomic<bool> cancel_{false};    // set at destruction: downloads stop after their part
  std::atomic<int> space_waiters_{0};  // demand downloads waiting for space now
  CacheStats counts_;                  // this process's totals; guarded by mu_
  CacheStats unflushed_;               // not yet in stats.json; guarded by mu_
  // Per look-ahead thread: the generation_ at which it last found nothing to do; guarded by mu_.
  std::vector<uint64_t> idle_at_;
  std::vector<std::thread> workers_;
};

}  // namespace stoker::cache
