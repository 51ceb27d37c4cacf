#include "text/worker_pool.h"

#include <pthread.h>

#include <thread>

namespace stoker {
namespace {

WorkerPool* shared_pool = nullptr;
std::once_flag shared_once;

}  // namespace

WorkerPool& WorkerPool::Shared() {
  std::call_once(shared_once, [] {
    shared_pool = new WorkerPool();
    // In a forked child the threads are gone and the mutex may be held by one of them: leave
    // the parent's pool alone and start an empty one.
    pthread_atfork(nullptr, nullptr, [] { shared_pool = new WorkerPool(); });
  });
  return *shared_pool;
}

WorkerPool::Group WorkerPool::Start(size_t copies, std::function<void()> job) {
  auto state = std::make_shared<Group::State>();
  state->running = copies;
  if (copies == 0) return Group(state);
  auto shared_job = std::make_shared<std::function<void()>>(std::move(job));
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < copies; ++i) queue_.push_back({[shared_job] { (*shared_job)(); }, state});
  // Enough threads that all queued copies run at once (copies of one group may wait on each
  // other, so they must not queue behind one another).
  while (idle_ < queue_.size()) {
    ++threads_;
    ++idle_;  // counted idle until it takes a task
    std::thread([this] { Loop(); }).detach();
  }
  cv_.notify_all();
  return Group(state);
}

size_t WorkerPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_;
}

void WorkerPool::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return !queue_.empty(); });
    Task task = std::move(queue_.front());
    queue_.pop_front();
    --idle_;
    lock.unlock();
    task.job();
    std::shared_ptr<Group::State> group = std::move(task.group);
    task = Task();
    lock.lock();
    ++idle_;  // before the group is told, so a Start right after Wait finds this thread idle
    std::lock_guard<std::mutex> group_lock(group->mu);
    if (--group->running == 0) group->cv.notify_all();
  }
}

void WorkerPool::Group::Wait() {
  if (!state_) return;
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [this] { return state_->running == 0; });
}

}  // namespace stoker
