// RecordStore: where the objects of a record dataset live — local files, or one remote backend
// (s3://, http(s)://, storage/open_backend.h) — so that listing (index.json, state.json, Parquet
// footers, glob patterns) and shard reads go through the same calls for both. A remote shard is
// opened with the size its listing gave (no HEAD per shard), and read through a bounded
// read-ahead window of 8 MiB parts (storage/window_source.h) when its reader goes forward, or with
// exact ranged reads when it seeks (Parquet, through ArrowByteFile). Nothing is downloaded whole
// to disk. Thread-safe: a RecordStore is immutable; the backend synchronizes itself.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/status.h"
#include "storage/backend.h"
#include "storage/byte_source.h"
#include "storage/metering_backend.h"

namespace stoker {

// True for s3://, http:// and https:// names (served by a remote backend).
bool IsRemoteRecordUri(const std::string& uri);

class RecordStore {
 public:
  RecordStore() = default;  // local files
  // `metrics`, if set, are the counters `backend` reports its requests to.
  explicit RecordStore(std::shared_ptr<const storage::Backend> backend,
                       std::shared_ptr<const storage::StorageMetrics> metrics = nullptr);
  // Local files for a plain path or file://; else a new backend for the URI's scheme (with
  // retries and the default per-host bound), metered into metrics(). Errors as
  // OpenBackendForUri's.
  static Result<RecordStore> For(const std::string& uri);

  bool remote() const { return backend_ != nullptr; }
  const std::shared_ptr<const storage::Backend>& backend() const { return backend_; }
  // Every request the backend made (listing, index objects, shard reads, retries), shared by the
  // copies of this store; null for local files or a backend given without them.
  const std::shared_ptr<const storage::StorageMetrics>& metrics() const { return metrics_; }

  // A whole (small) object: an index.json, a state.json (remote: a HEAD and a GET, once: the
  // text is kept, so telling a format and listing it read the object once). kNotFound when it
  // is missing.
  Result<std::string> ReadAll(const std::string& uri) const;
  // Its size (remote: one HEAD). kNotFound when it is missing.
  Result<uint64_t> Size(const std::string& uri) const;
  // Whether the object exists (a local directory counts; remote: one HEAD).
  bool Exists(const std::string& uri) const;
  // Opens an object for reads. `size_bytes` from a listing (0: unknown, asked for with a HEAD).
  // `forward`: the reader goes forward through it (a read-ahead window); else exact range reads.
  Result<std::unique_ptr<ByteSource>> Open(const std::string& uri, uint64_t size_bytes,
                                           bool forward) const;
  // Remote only: the objects whose URI matches `pattern` (fnmatch: '*', '?' and '[...]' do not
  // cross '/'), listed from the pattern's literal prefix, sorted. s3:// lists with
  // ListObjectsV2; http(s):// cannot list and is kInvalidArgument saying what to pass instead.
  Result<std::vector<storage::ObjectInfo>> Glob(const std::string& pattern) const;
  // Remote only: the objects under `prefix` + "/" (a "directory"), sorted.
  Result<std::vector<storage::ObjectInfo>> ListDir(const std::string& prefix) const;

 private:
  struct Memo;
  std::shared_ptr<const storage::Backend> backend_;
  std::shared_ptr<const storage::StorageMetrics> metrics_;
  std::shared_ptr<Memo> memo_;  // remote: ReadAll's texts, shared by the copies
};

// True if `s` holds an unescaped glob character ('*', '?' or '[').
bool HasGlobPattern(const std::string& s);

}  // namespace stoker
