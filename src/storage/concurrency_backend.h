// Per-host concurrency bound that adapts (AIMD, as TCP does): at most `limit` requests to one host
// are in flight; a throttling answer (HTTP 503 SlowDown, 429, "reduce your request rate") halves
// the limit, down to min_in_flight, and every success adds 1/limit, so the limit climbs back by
// about one per round of requests, up to max_in_flight. A request over the limit waits; it fails
// only when its thread's requests are cancelled (storage/cancel.h: kCancelled naming the URI).
// The host is the bucket for s3://, the authority for http(s)://, one for local files.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "storage/backend.h"

namespace stoker::storage {

struct ConcurrencyOptions {
  uint32_t max_in_flight = 64;
  uint32_t min_in_flight = 1;
};

// One host's bound. Thread-safe.
class ConcurrencyLimiter {
 public:
  explicit ConcurrencyLimiter(const ConcurrencyOptions& options);
  // Takes a request slot, waiting while in_flight >= limit. kCancelled (nothing taken) once the
  // calling thread's requests are cancelled: a thread with a CancelScope wakes every
  // kCancelCheckMs to look at it, since setting a cancel flag wakes nobody.
  Status Acquire();
  static constexpr int kCancelCheckMs = 10;
  // Ends a request; `throttled` when the server asked to slow down.
  void Release(bool throttled);
  double limit() const;
  uint32_t in_flight() const;

 private:
  const ConcurrencyOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  double limit_;            // guarded by mu_
  uint32_t in_flight_ = 0;  // guarded by mu_
};

// True for a status that says "slow down": kUnavailable naming SlowDown, HTTP 503 or HTTP 429.
bool IsThrottle(const Status& status);

// The host key of a URI (see above).
std::string HostOf(const std::string& uri);

std::unique_ptr<Backend> NewConcurrencyBackend(std::unique_ptr<Backend> inner,
                                               const ConcurrencyOptions& options);

}  // namespace stoker::storage
