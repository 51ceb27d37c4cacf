// Metering: counts what a backend is asked to do — requests by kind (GET, HEAD, LIST, PUT), bytes
// read and written, failed requests, time spent — in a StorageMetrics that the caller owns and
// may read at any time. The retry decorator adds its retries to the same counters. The metering
// decorator sees the Backend interface: one ReadAt is one GET, one Stat or OpenForRead one HEAD
// (OpenForReadWithSize none), one List one LIST, one Writer::Close one PUT. The S3 and HTTP
// backends count their real HTTP requests into a StorageMetrics themselves (http_client.h);
// OpenBackendForUri uses that for them and this decorator for local files.
// Thread-safe (relaxed atomic counters).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "stoker/storage_stats.h"
#include "storage/backend.h"

namespace stoker::storage {

enum class RequestKind { kGet = 0, kHead, kList, kPut };
inline constexpr int kRequestKinds = 4;
const char* RequestKindName(RequestKind kind);  // "GET", "HEAD", "LIST", "PUT"

struct StorageMetricsSnapshot {
  uint64_t requests[kRequestKinds] = {};
  uint64_t failed_requests = 0;
  uint64_t retries = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t latency_us = 0;  // summed over all requests
  // {"requests":{"GET":n,...},"failed_requests":n,"retries":n,"bytes_read":n,...}
  std::string ToJson() const;
};

class StorageMetrics {
 public:
  void AddRequest(RequestKind kind, uint64_t latency_us, bool failed);
  void AddBytesRead(uint64_t n) { bytes_read_.fetch_add(n, std::memory_order_relaxed); }
  void AddBytesWritten(uint64_t n) { bytes_written_.fetch_add(n, std::memory_order_relaxed); }
  void AddRetry() { retries_.fetch_add(1, std::memory_order_relaxed); }
  StorageMetricsSnapshot Snapshot() const;

 private:
  std::atomic<uint64_t> requests_[kRequestKinds] = {};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> latency_us_{0};
};

// The loader's view of a snapshot (Loader::Stats, `bench --json`): requests by kind, failures,
// retries, bytes read, request time; cache_hits and the read modes are left 0.
StorageStats ToStorageStats(const StorageMetricsSnapshot& m);

// The counters of several backends (one per remote input of a record dataset, say) summed, each
// counted once however often it is added. Thread-safe.
class MetricsSet {
 public:
  void Add(std::shared_ptr<const StorageMetrics> metrics);
  StorageStats Total() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const StorageMetrics>> all_;  // guarded by mu_; distinct
  std::set<const StorageMetrics*> seen_;                    // guarded by mu_
};

// `metrics` must outlive the returned backend and every reader and writer it opens.
std::unique_ptr<Backend> NewMeteringBackend(std::unique_ptr<Backend> inner,
                                            StorageMetrics* metrics);

}  // namespace stoker::storage
