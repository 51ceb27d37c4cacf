#include "format/shard_pool.h"

namespace stoker {

ShardPool::ShardPool(uint64_t num_shards, uint64_t capacity, Opener open)
    : capacity_(capacity == 0 ? 1 : capacity),
      keeps_all_(capacity_ >= num_shards),
      open_(std::move(open)),
      kept_(keeps_all_ ? std::make_unique<std::atomic<const TokenSource*>[]>(num_shards) : nullptr),
      slots_(num_shards),
      position_(num_shards),
      opening_(num_shards, false) {}

void ShardPool::TouchLocked(uint64_t s) { lru_.splice(lru_.begin(), lru_, position_[s]); }

void ShardPool::InsertLocked(uint64_t s, Shard shard, std::vector<Shard>* unmapped) {
  while (lru_.size() >= capacity_) {
    uint64_t victim = lru_.back();
    lru_.pop_back();
    unmapped->push_back(std::move(slots_[victim]));
    ++counters_.unmapped;
  }
  slots_[s] = std::move(shard);
  lru_.push_front(s);
  position_[s] = lru_.begin();
  if (keeps_all_) kept_[s].store(slots_[s].get(), std::memory_order_release);
}

Result<ShardPool::Shard> ShardPool::Acquire(uint64_t s) {
  std::unique_lock<std::mutex> lock(mu_);
  // A shard another thread is opening is waited for, not opened twice (for a remote shard that
  // would be a second download).
  if (opening_[s]) {
    ++counters_.waited;
    cv_.wait(lock, [&] { return !opening_[s]; });
  }
  if (slots_[s] != nullptr) {
    TouchLocked(s);
    return slots_[s];
  }
  // 1. Claim the shard and open it without the lock: other readers go on meanwhile.
  // 2. Keep it and wake the threads waiting for it.
  // 3. Unmap the displaced shards after the lock is released.
  opening_[s] = true;
  lock.unlock();
  Result<Shard> opened = open_(s);
  std::vector<Shard> unmapped;
  Shard result;
  lock.lock();
  opening_[s] = false;
  cv_.notify_all();
  if (!opened.ok()) return opened.status();
  ++counters_.opened;
  InsertLocked(s, *opened, &unmapped);
  result = slots_[s];
  lock.unlock();
  return result;
}

void ShardPool::Offer(uint64_t s, Shard shard) {
  std::lock_guard<std::mutex> lock(mu_);
  if (slots_[s] != nullptr || lru_.size() >= capacity_) return;
  std::vector<Shard> none;
  InsertLocked(s, std::move(shard), &none);
}

ShardPool::Counters ShardPool::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  Counters c = counters_;
  c.mapped = lru_.size();
  return c;
}

}  // namespace stoker
