// CheckedCancel (test code only): a cancel flag for a CancelScope that counts the looks at it, so
// that a test waits until the thread under the scope has reached a wait that checks for
// cancellation (a lock, a request slot, a backoff) and then cancels it, instead of sleeping until
// it most likely has. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace stoker::storage::testing {

class CheckedCancel {
 public:
  // The flag and the hook for CancelScope(flag(), hook()).
  const std::atomic<bool>* flag() const { return &flag_; }
  std::function<void()> hook() {
    return [this] {
      std::lock_guard<std::mutex> l(mu_);
      ++checks_;
      cv_.notify_all();
    };
  }
  // Waits until the flag has been looked at `n` times in all. false when that has not happened
  // after a minute: the thread never got there (a hang made a failure, not a timing assumption).
  bool WaitChecks(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::minutes(1), [&] { return checks_ >= n; });
  }
  int checks() const {
    std::lock_guard<std::mutex> l(mu_);
    return checks_;
  }
  void Cancel() { flag_ = true; }

 private:
  std::atomic<bool> flag_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int checks_ = 0;
};

}  // namespace stoker::storage::testing
