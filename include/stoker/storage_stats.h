// StorageStats: what reading remote datasets (s3://, http(s)://) asked of storage — real HTTP
// requests by kind (every ranged part and every retry counted), bytes, failures, retries and the
// time those requests took — since the datasets were opened, and how each remote dataset is read
// (whole shards through the node-local cache, or ranged GETs of document pieces). All zero for
// local data. A plain value.
#pragma once

#include <algorithm>
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
  // Time spent waiting on storage: the durations of the requests above, summed over every thread
  // that made them (workers, the cache's download threads).
  uint64_t request_us = 0;
  // Remote datasets read by ranged GETs of document pieces (global shuffle with no cache, or a
  // cache whose budget is below the dataset): their delivery is bound by request latency. And the
  // bytes (.bin + .idx) of those datasets, and the largest cache budget among them (0: no cache).
  uint64_t ranged_datasets = 0;
  uint64_t ranged_bytes = 0;
  uint64_t ranged_cache_budget = 0;
  // Remote datasets whose shards are fetched whole into the cache and read there.
  uint64_t whole_shard_datasets = 0;
  // Document pieces of ranged datasets that the loader's read-ahead fetched before a worker
  // needed them (many requests in flight), and those a worker read itself (the read-ahead was
  // behind, or the piece was not in the plan's look-ahead).
  uint64_t pieces_read_ahead = 0;
  uint64_t pieces_read_on_demand = 0;
  uint64_t read_ahead_requests = 0;  // the requests the read-ahead keeps in flight, all datasets

  StorageStats& operator+=(const StorageStats& o) {
    get += o.get, head += o.head, list += o.list, put += o.put, failed += o.failed;
    retries += o.retries, bytes_read += o.bytes_read, cache_hits += o.cache_hits;
    request_us += o.request_us, ranged_datasets += o.ranged_datasets;
    ranged_bytes += o.ranged_bytes;
    ranged_cache_budget = std::max(ranged_cache_budget, o.ranged_cache_budget);
    whole_shard_datasets += o.whole_shard_datasets;
    pieces_read_ahead += o.pieces_read_ahead, pieces_read_on_demand += o.pieces_read_on_demand;
    read_ahead_requests += o.read_ahead_requests;
    return *this;
  }
};

}  // namespace stoker
