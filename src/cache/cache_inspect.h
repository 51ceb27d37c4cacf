// What a cache directory holds, for `stoker cache DIR`, and clearing it. Both work on a directory
// that processes may be using: objects they pin are reported as in use and never removed.
// Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache_stats.h"
#include "stoker/status.h"

namespace stoker::cache {

struct CachedObjectInfo {
  std::string uri;
  uint64_t size_bytes = 0;
  std::string xxh3;
  bool in_use = false;  // pinned or being replaced by a process now
};

struct CacheReport {
  std::string dir;
  std::vector<CachedObjectInfo> objects;  // sorted by uri
  uint64_t temp_bytes = 0;                // downloads in progress (or left by a dead process)
  CacheStats stats;                       // summed counters, latest budget, used_bytes
};

// kNotFound when `dir` is not a cache (missing or empty); kFailedPrecondition when it holds files
// that are not the cache's.
Result<CacheReport> InspectCache(const std::string& dir);

struct ClearReport {
  uint64_t removed_objects = 0;
  uint64_t removed_bytes = 0;
  uint64_t in_use = 0;  // objects left because a process pins them
};

// Removes the cache's objects (data and meta), stale temporary files and the counters. Keeps
// what processes use now, and the marker and lock files (empty; removing a lock file that another
// process may open next would break its locking).
Result<ClearReport> ClearCache(const std::string& dir);

}  // namespace stoker::cache
