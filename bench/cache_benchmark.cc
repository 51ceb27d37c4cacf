// Cold and warm ShardCache throughput from an object store (bench/cache_vs_boto3.py runs it
// against a local moto S3 server, beside a boto3 thread-pool download of the same bytes).
//
//   cache_benchmark PREFIX DIR [--threads N] [--fsync]
//
// Lists PREFIX, then (cold) opens an empty cache in DIR, schedules every object and acquires them
// in order; then (warm) opens the same directory again and acquires them all. Prints one JSON
// line with bytes, seconds and MB/s for both passes and the backend's request counts.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cache/shard_cache.h"
#include "common/temp_dir.h"
#include "storage/open_backend.h"

namespace {

using namespace stoker;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Acquires every request in order; returns the seconds it took, or < 0 after printing an error.
double AcquireAll(const cache::CacheOptions& options, std::shared_ptr<storage::Backend> backend,
                  const std::vector<cache::CacheRequest>& requests, cache::CacheStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  auto cache = cache::ShardCache::Open(options, std::move(backend));
  if (!cache.ok()) {
    std::fprintf(stderr, "cache_benchmark: %s\n", cache.status().ToString().c_str());
    return -1;
  }
  (*cache)->Schedule(requests);
  for (const cache::CacheRequest& r : requests) {
    Result<cache::CachedFile> file = (*cache)->Acquire(r);
    if (!file.ok()) {
      std::fprintf(stderr, "cache_benchmark: %s\n", file.status().ToString().c_str());
      return -1;
    }
    (*cache)->Passed(r.uri);
  }
  const double s = Seconds(start);
  *stats = (*cache)->Stats();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cache_benchmark PREFIX DIR [--threads N] [--fsync]\n");
    return 2;
  }
  cache::CacheOptions options;
  options.dir = argv[2];
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      options.download_threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--fsync") == 0) {
      options.fsync = true;  // the default publishes unsynced, tagged with the boot id
    }
  }
  storage::StorageMetrics metrics;
  storage::BackendOptions backend_options;
  backend_options.metrics = &metrics;
  auto backend = storage::OpenBackendForUri(argv[1], backend_options);
  if (!backend.ok()) {
    std::fprintf(stderr, "cache_benchmark: %s\n", backend.status().ToString().c_str());
    return 2;
  }
  std::shared_ptr<storage::Backend> shared = std::move(*backend);
  auto listing = shared->List(argv[1]);
  if (!listing.ok() || listing->empty()) {
    std::fprintf(stderr, "cache_benchmark: nothing under %s\n", argv[1]);
    return 2;
  }
  std::vector<cache::CacheRequest> requests;
  uint64_t bytes = 0;
  for (const storage::ObjectInfo& o : *listing) {
    requests.push_back({o.uri, o.size_bytes, ""});
    bytes += o.size_bytes;
  }
  options.budget_bytes = bytes + (1 << 20);
  cache::CacheStats cold, warm;
  const double cold_s = AcquireAll(options, shared, requests, &cold);
  const double warm_s = cold_s < 0 ? -1 : AcquireAll(options, shared, requests, &warm);
  if (warm_s < 0) return 1;
  const storage::StorageMetricsSnapshot m = metrics.Snapshot();
  std::printf(
      "{\"objects\":%zu,\"bytes\":%llu,\"threads\":%d,\"fsync\":%s,\"cold_s\":%.4f,"
      "\"cold_MBps\":%.1f,\"warm_s\":%.4f,\"warm_MBps\":%.1f,\"downloads\":%llu,"
      "\"warm_hits\":%llu,\"gets\":%llu}\n",
      requests.size(), static_cast<unsigned long long>(bytes), options.download_threads,
      options.fsync ? "true" : "false", cold_s, bytes / cold_s / 1e6, warm_s, bytes / warm_s / 1e6,
      static_cast<unsigned long long>(cold.downloads), static_cast<unsigned long long>(warm.hits),
      static_cast<unsigned long long>(m.requests[static_cast<int>(storage::RequestKind::kGet)]));
  return 0;
}
