// EncodePool: a fixed set of threads that run the stream's decode + tokenize tasks (one pool per
// StreamPlanner, sized by the loader's num_workers; for num_workers = 0, by DefaultThreadsPerRank
// in common/env.h, the node's cores / LOCAL_WORLD_SIZE, as the loader's workers are). Tasks are
// plain closures; their results are ordered by whoever submitted them (DocPipeline), never by the
// pool, so the pool's size changes only the speed. Shutdown (the destructor) runs every queued
// task, then joins. Thread-safe: Submit may be called from many threads at once.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"

namespace stoker::stream {

class EncodePool {
 public:
  explicit EncodePool(int threads);
  ~EncodePool();
  EncodePool(const EncodePool&) = delete;
  EncodePool& operator=(const EncodePool&) = delete;

  // Queues `task` to run on one of the pool's threads.
  void Submit(std::function<void()> task);
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_ STOKER_GUARDED_BY(mu_);
  bool stop_ STOKER_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace stoker::stream
