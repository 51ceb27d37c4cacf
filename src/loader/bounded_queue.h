// BoundedQueue<T>: a fixed-capacity FIFO between pipeline stages.
//
// Push blocks while the queue is full, Pop while it is empty; Cancel() wakes every waiter and makes
// every later Push/Pop fail at once: that is how a stage graph shuts down (cancel, join, free).
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace stoker::loader {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Appends `item`, waiting for room. Returns false (dropping `item`) once cancelled.
  bool Push(T item) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return cancelled_ || items_.size() < capacity_; });
    if (cancelled_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Removes the oldest item, waiting for one. Returns nullopt once cancelled.
  std::optional<T> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return cancelled_ || !items_.empty(); });
    if (cancelled_) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // Removes the oldest item if there is one; never waits.
  std::optional<T> TryPop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_ || items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // Wakes every waiter; from now on Push and Pop fail immediately. Items still queued stay until
  // Clear() or destruction (so their owner can free them after joining the threads).
  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  // Drops every item and accepts Push/Pop again. Precondition: no thread is waiting on the queue.
  void Reset() {
    std::lock_guard<std::mutex> lock(mu_);
    items_.clear();
    cancelled_ = false;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }
  size_t capacity() const { return capacity_; }
  bool cancelled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;     // guarded by mu_
  bool cancelled_ = false;  // guarded by mu_
};

}  // namespace stoker::loader
