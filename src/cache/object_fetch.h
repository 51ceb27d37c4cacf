// FetchVerified: copies one object from a backend into a temporary file of the cache and checks
// it: the size the backend reports against the expected size, then the XXH3-64 of the bytes
// against the expected checksum. A mismatch or a failed transfer is fetched again, a bounded
// number of times. Free function; thread-safe for distinct files (it starts its own threads for
// the parts of one object and joins them before it returns).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "stoker/status.h"
#include "storage/backend.h"

namespace stoker::cache {

struct FetchTarget {
  std::string uri;
  uint64_t size_bytes = 0;  // expected; the backend must report exactly this
  std::string xxh3;         // expected XXH3-64 hex; empty: size only
  int fd = -1;              // the temporary file, open for writing
  std::string temp_path;    // its name, for errors
};

struct FetchCounts {
  uint64_t bytes_fetched = 0;  // every attempt's bytes
  uint64_t refetches = 0;
};

struct FetchOptions {
  uint64_t part_bytes = 8 << 20;  // bytes per backend read
  int part_threads = 4;           // reads of one object in flight at once
  int max_refetch = 3;
  // If set: once true, no further part or attempt starts, the requests in flight are aborted
  // (storage/cancel.h) and the fetch is kCancelled (a cache being closed does not wait for the
  // rest of a look-ahead download, a stalled request or its retries). The calling thread's own
  // CancelScopes stop the fetch the same way.
  const std::atomic<bool>* cancel = nullptr;
};

// Fetches `target` in parts, up to 1 + `max_refetch` times. Returns the XXH3-64
// hex of the bytes written. kCorruption naming the uri (expected and actual checksum or size, and
// the number of attempts) when every attempt mismatched; the last transfer error (e.g.
// kUnavailable) when the last attempt failed to read. kNotFound is not retried.
Result<std::string> FetchVerified(const storage::Backend& backend, const FetchTarget& target,
                                  const FetchOptions& options, FetchCounts* counts);

}  // namespace stoker::cache
