// CacheStats: what a cache did (hits, misses, downloads, bytes, refetches, evictions) and what it
// holds (budget, used bytes). The counters are also kept in DIR/stats.json, summed over every
// process that used the directory, so that `stoker cache DIR` can show a node's hit rate: each
// process adds its new counts under DIR/stats.lock (read, add, write to a temp name, rename), so
// a process killed at any point leaves the file either before or after its last update.
// Plain values and free functions; thread-safe (no shared state; the file lock serializes).
#pragma once

#include <cstdint>
#include <string>

#include "cache/cache_layout.h"
#include "stoker/status.h"

namespace stoker::cache {

struct CacheStats {
  uint64_t hits = 0;              // Acquire found the object local and verified
  uint64_t misses = 0;            // Acquire had to wait for a download
  uint64_t downloads = 0;         // objects downloaded, verified and published
  uint64_t bytes_downloaded = 0;  // every byte fetched, refetches included
  uint64_t refetches = 0;         // downloads repeated after a checksum, size or transfer error
  uint64_t evictions = 0;         // objects removed to make room
  uint64_t reverified = 0;        // objects of an earlier boot re-hashed and kept (not fetched)
  uint64_t budget_bytes = 0;
  uint64_t used_bytes = 0;  // data plus space reserved by downloads in progress

  double hit_rate() const;  // hits / (hits + misses); 0 when there were none
  // Adds the counters (not budget and used) of `delta`.
  void AddCounts(const CacheStats& delta);
};

// Adds `delta`'s counters to DIR/stats.json and records `budget_bytes` as the latest budget.
Status AddToStatsFile(const CacheLayout& layout, const CacheStats& delta, uint64_t budget_bytes);
// The summed counters and latest budget (zeros when the file does not exist yet); used_bytes is
// left 0.
Result<CacheStats> ReadStatsFile(const CacheLayout& layout);

}  // namespace stoker::cache
