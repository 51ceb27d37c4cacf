// Retry: repeats a request that failed with kUnavailable (HTTP 5xx, 429, 503 SlowDown, timeouts,
// connection resets) or that came back short (fewer bytes than the object holds at that offset),
// with exponential backoff and full jitter: before attempt k (k = 1, 2, ...) it sleeps a uniform
// random time in [0, min(max_delay_ms, base_delay_ms * 2^(k-1))]. kCorruption, kNotFound and every
// other code are returned at once. After max_attempts the last error is returned, saying how
// many attempts were made. Writers are not retried here (a part upload is not idempotent at this
// level). Thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "storage/backend.h"
#include "storage/metering_backend.h"

namespace stoker::storage {

struct RetryOptions {
  int max_attempts = 6;        // including the first; at least 1
  uint32_t base_delay_ms = 50;
  uint32_t max_delay_ms = 5000;
  uint64_t seed = 0;           // of the jitter; 0: from the clock
  StorageMetrics* metrics = nullptr;  // if set, counts every retry; must outlive the backend
};

std::unique_ptr<Backend> NewRetryBackend(std::unique_ptr<Backend> inner, RetryOptions options);

// The sleep before attempt `attempt` (1-based count of retries so far) for `draw`, a uniform
// number in [0, 1): full jitter over the capped exponential. Exposed for tests.
uint32_t BackoffDelayMs(const RetryOptions& options, int attempt, double draw);

}  // namespace stoker::storage
