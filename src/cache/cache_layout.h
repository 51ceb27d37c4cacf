// CacheLayout: the files of one cache directory and the rules that make it safe to share.
//
//   DIR/stoker-cache.json        marker: a directory without it (and not empty) is not ours
//   DIR/data/<key>               a complete, verified object (renamed into place)
//   DIR/meta/<key>.json          its URI, size and XXH3-64 (written before the data is renamed)
//   DIR/tmp/<key>~<pid>~<n>.part a download in progress (its size reserved up front)
//   DIR/locks/<key>.lock         per-object flock: exclusive to download or evict, shared to pin
//   DIR/space.lock               flock held while the budget is checked and space reserved
//   DIR/stats.json, stats.lock   counters summed over every process that used the directory
//
// <key> is 16 hex digits of XXH3-64(uri), '-', and the URI's base name made filename-safe.
// Plain value with free functions over paths; thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker::cache {

inline constexpr std::string_view kMarkerFileName = "stoker-cache.json";

std::string ObjectKey(std::string_view uri);
bool IsObjectKey(std::string_view name);

// What meta/<key>.json records about a cached object.
struct ObjectMeta {
  std::string uri;
  uint64_t size_bytes = 0;
  std::string xxh3;  // of the bytes as downloaded, 16 hex digits
  // The boot id (/proc/sys/kernel/random/boot_id) of the kernel that published the data without
  // fsync; empty: the data reached the disk before its rename. An object whose tag names another
  // boot may have been torn by a power loss and is re-verified before first use (docs/cache.md).
  std::string unsynced_boot;
};

// One file of data/ as the directory shows it.
struct StoredObject {
  std::string key;
  uint64_t size_bytes = 0;
  int64_t mtime_ns = 0;
};

class CacheLayout {
 public:
  // Opens the cache in `dir`. A missing or empty directory becomes a new cache when `create`
  // (else kNotFound). kFailedPrecondition naming the first foreign entry when the directory
  // holds anything the cache did not write: the cache never deletes what is not its own.
  static Result<CacheLayout> Open(const std::string& dir, bool create);

  const std::string& dir() const { return dir_; }
  std::string data_path(std::string_view key) const;
  std::string meta_path(std::string_view key) const;
  std::string lock_path(std::string_view key) const;
  // A fresh temporary name for a download of `key` by this process.
  std::string temp_path(std::string_view key) const;
  std::string data_dir() const;
  std::string temp_dir() const;
  std::string space_lock_path() const;
  std::string stats_path() const;
  std::string stats_lock_path() const;

  // The objects in data/ (unsorted).
  Result<std::vector<StoredObject>> ScanData() const;
  // Sum of the sizes of tmp/ files: space reserved by downloads in progress (or stale).
  Result<uint64_t> TempBytes() const;
  // Removes the temporary files whose download is no longer running (nobody holds the object's
  // lock: their process died). Returns how many were removed.
  Result<int> RemoveStaleTemps() const;
  // Removes data/<key> and meta/<key>.json. The caller holds the object's exclusive lock.
  Status RemoveObject(std::string_view key) const;

 private:
  explicit CacheLayout(std::string dir) : dir_(std::move(dir)) {}
  Status CheckOwnEntries() const;
  std::string dir_;
};

// Writes the meta file atomically without fsync (WriteFileAtomically, durable = false), as
// stats.json is: their loss in a power cut costs a download or a few counts, never a wrong byte
// (a data file without its meta is not a hit).
Status WriteMeta(const std::string& path, const ObjectMeta& meta);
Result<ObjectMeta> ReadMeta(const std::string& path);

}  // namespace stoker::cache
