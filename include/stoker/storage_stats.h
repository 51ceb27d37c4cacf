// StorageStats: what reading remote datasets (s3://, http(s)://) asked of storage — real HTTP
// requests by kind (every ranged part and every retry counted), bytes, failures and retries —
// since the datasets were opened. All zero for local data. A plain value.
#pragma once

#include <cstdint>

namespace stoker {

struct StorageStats {
  uint64_t get = 0;     // GET requests (ranged parts)
  uint64_t head = 0;    // HEAD requests
  uint64_t list = 0;    // LIST requests (ListObjectsV2 pages)
  uint64_t put = 0;     // writes (PUT, POST, DELETE)
  uint64_t failed = 0;  // requests that failed (transport error or non-2xx)
  uint64_t retries = 0;
  uint64_t bytes_read = 0;
  uint64_t cache_hits = 0;  // reads served by a node-local cache (0 without one)

  StorageStats& operator+=(const StorageStats& o) {
    get += o.get, head += o.head, list += o.list, put += o.put, failed += o.failed;
    retries += o.retries, bytes_read += o.bytes_read, cache_hits += o.cache_hits;
    return *this;
  }
};

}  // namespace stoker
