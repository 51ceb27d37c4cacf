// ShardPool: the shards of a dataset too large to keep mapped, mapped on demand (or the shards of
// a remote dataset, opened on demand through a ShardOpener).
//
// At most `capacity` shards stay mapped; acquiring another maps it and unmaps the least recently
// used one. A reader's handle keeps its shard mapped until the reader drops it, so a shard is never
// unmapped under a read (for that moment the pool may hold more than `capacity`, by at most the
// number of readers). Shards are mapped outside the lock, so readers of mapped shards never wait
// for another thread's mmap; readers of a shard being opened wait for that one open. A pool whose
// capacity holds every shard never unmaps one, so Kept hands out an open shard with no lock and no
// reference count (a cached remote dataset read epoch after epoch: four workers taking one mutex
// per document piece cost about a tenth of its delivery).
// Thread-safe: Acquire and Kept may be called from many threads at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "stoker/token_source.h"

namespace stoker {

class ShardPool {
 public:
  using Shard = std::shared_ptr<const TokenSource>;
  // Opens shard `s` (maps it and checks it); called outside the pool's lock.
  using Opener = std::function<Result<Shard>(uint64_t s)>;

  // `capacity` >= 1.
  ShardPool(uint64_t num_shards, uint64_t capacity, Opener open);

  // Shard `s` (< num_shards), mapped; the error of mapping it if that fails.
  Result<Shard> Acquire(uint64_t s);
  // Keeps an already open shard if there is room (Open checks every shard once; the first ones
  // it opens need not be mapped twice).
  void Offer(uint64_t s, Shard shard);
  // Shard `s` if it is open and the pool keeps every shard it opens (capacity >= num_shards);
  // null otherwise (then Acquire it). Valid while the pool lives.
  const TokenSource* Kept(uint64_t s) const {
    return keeps_all_ ? kept_[s].load(std::memory_order_acquire) : nullptr;
  }

  struct Counters {
    uint64_t mapped = 0;    // shards the pool holds now
    uint64_t opened = 0;    // shards mapped by Acquire since the pool was made
    uint64_t unmapped = 0;  // shards let go to make room
    uint64_t waited = 0;    // Acquire calls that waited for another thread's open of their shard
  };
  Counters counters() const;
  uint64_t capacity() const { return capacity_; }

 private:
  // Makes `s` the most recently used; requires mu_ and slots_[s].
  void TouchLocked(uint64_t s);
  // Inserts `shard` as `s`, moving the shards it displaces into `unmapped`; requires mu_.
  void InsertLocked(uint64_t s, Shard shard, std::vector<Shard>* unmapped);

  const uint64_t capacity_;
  const bool keeps_all_;  // capacity_ >= the number of shards: nothing is ever unmapped
  const Opener open_;
  // keeps_all_: slots_[s].get() once `s` is open, set once and never cleared; empty otherwise.
  std::unique_ptr<std::atomic<const TokenSource*>[]> kept_;
  mutable std::mutex mu_;
  std::vector<Shard> slots_;                             // guarded by mu_; null when not mapped
  std::list<uint64_t> lru_;                              // guarded by mu_; most recent first
  std::vector<std::list<uint64_t>::iterator> position_;  // guarded by mu_; valid when mapped
  Counters counters_;                                    // guarded by mu_
  std::vector<bool> opening_;                            // guarded by mu_; being opened now
  std::condition_variable cv_;                           // an opening ended
};

}  // namespace stoker
