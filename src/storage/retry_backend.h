// Retry: repeats a request that failed with kUnavailable (HTTP 5xx, 429, 503 SlowDown, timeouts,
// connection resets) or that came back short (fewer bytes than the object holds at that offset),
// with exponential backoff and full jitter: before attempt k (k = 1, 2, ...) it sleeps a uniform
// random time in [0, min(max_delay_ms, base_delay_ms * 2^(k-1))]. kCorruption, kNotFound and every
// other code are returned at once. After max_attempts the last error is returned, saying how
// many attempts were made. Writers are not retried here (an Append is not idempotent from
// outside); the S3 writer retries each of its own steps with a Backoff. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "storage/backend.h"
#include "storage/cancel.h"
#include "storage/metering_backend.h"

namespace stoker::storage {

struct RetryOptions {
  int max_attempts = 6;  // including the first; at least 1
  uint32_t base_delay_ms = 50;
  uint32_t max_delay_ms = 5000;
  uint64_t seed = 0;                  // of the jitter; 0: from the clock
  StorageMetrics* metrics = nullptr;  // if set, counts every retry; must outlive the backend
};

// The retry loop itself, for callers that retry their own idempotent steps (an S3 part upload).
// Thread-safe.
class Backoff {
 public:
  explicit Backoff(const RetryOptions& options);

  // Runs `call` (returning Status or Result<T>) until it succeeds, fails with a code other than
  // kUnavailable, or has been tried max_attempts times; then returns its last result, saying how
  // many attempts were made. Under a cancelled CancelScope (cancel.h) it stops: no further
  // attempt, and a backoff sleep in progress ends early; the result is then kCancelled.
  template <typename F>
  auto Run(F&& call) const -> decltype(call()) {
    for (int attempt = 1;; ++attempt) {
      auto result = call();
      if (result.ok()) return result;
      const Status last = StatusOf(result);
      if (last.code() != StatusCode::kUnavailable) return result;
      if (attempt >= options_.max_attempts) {
        return last.WithContext("gave up after " + std::to_string(attempt) + " attempts");
      }
      if (!Sleep(attempt)) return Cancelled(last.message() + "; cancelled, not retried");
    }
  }

 private:
  // The status of a call's Status or Result<T>.
  static Status StatusOf(const Status& s) { return s; }
  template <typename T>
  static Status StatusOf(const Result<T>& r) {
    return r.status();
  }
  // Counts the retry, then sleeps the jittered backoff; false (at once or early) if the calling
  // thread's requests are cancelled.
  bool Sleep(int attempt) const;

  RetryOptions options_;
  mutable std::mutex mu_;
  mutable std::mt19937_64 rng_;  // guarded by mu_
};

std::unique_ptr<Backend> NewRetryBackend(std::unique_ptr<Backend> inner, RetryOptions options);

// The sleep before attempt `attempt` (1-based count of retries so far) for `draw`, a uniform
// number in [0, 1): full jitter over the capped exponential. Exposed for tests.
uint32_t BackoffDelayMs(const RetryOptions& options, int attempt, double draw);

}  // namespace stoker::storage
