// Counting a whole epoch's windows (bestfit rows per window): in parallel over windows, and kept in
// a cache file shared by the processes of a machine, so that only the first process of the first
// run pays (docs/plan.md, "Thread safety and cost").
//
// The cache file is named by a key that covers everything the counts depend on (the plan
// fingerprint, the dataset, the epoch, the window count). It holds the key again, the counts and
// an XXH3-64 of both; it is written under a temporary name and renamed, so a file from a process
// killed while writing is never read under the final name, and a damaged or foreign file fails its
// checks and is recomputed (and rewritten), never used.
// Free functions; thread-safe (no shared state beyond the files themselves).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stoker::plan {

// amount(w) for w in [first, last), computed by up to `threads` threads (each takes contiguous
// chunks of windows). `amount` must be thread-safe.
std::vector<uint64_t> CountWindowsInParallel(uint64_t first, uint64_t last, unsigned threads,
                                             const std::function<uint64_t(uint64_t)>& amount);

// Threads for counting: $STOKER_PLAN_THREADS when set (>= 1), else the hardware's.
unsigned CountingThreads();

// The directory for cached counts and totals: the cache root's plan/ (common/cache_root.h);
// nullopt when caching is off ($STOKER_CACHE_DIR=off).
std::optional<std::string> CacheDirectory();

// Epochs with fewer windows than this are counted without the cache (cheaper than the file):
// $STOKER_PLAN_CACHE_MIN_WINDOWS, else 256 (a million documents at the default window).
uint64_t CacheMinWindows();

// A cache file `name` in `dir` that begins with `head` and holds `body_bytes` more, then an XXH3-64
// of both: its body, or nullopt if it is missing, of another size or head, or fails its checksum.
std::optional<std::string> ReadCacheFile(const std::string& dir, const std::string& name,
                                         const std::string& head, uint64_t body_bytes);
// Writes `bytes` and their XXH3-64 as `name` in `dir` (WriteFileAtomically). Best effort: a
// cache that cannot be written is not an error.
void WriteCacheFile(const std::string& dir, const std::string& name, std::string bytes);

struct WindowCountsKey {
  std::string fingerprint;  // the plan's
  uint32_t dataset = 0;
  uint64_t epoch = 0;
  uint64_t num_windows = 0;
  std::string FileName() const;  // "plan-<fingerprint>-d<dataset>-e<epoch>-w<windows>.counts"
};

// The counts in `dir` for `key`, or nullopt if there is no such file or it fails its checks.
std::optional<std::vector<uint64_t>> ReadWindowCounts(const std::string& dir,
                                                      const WindowCountsKey& key);
// Writes them (temp + rename). Best effort: a cache that cannot be written is not an error.
void WriteWindowCounts(const std::string& dir, const WindowCountsKey& key,
                       const std::vector<uint64_t>& counts);

}  // namespace stoker::plan
