// Backend: one storage system (local files, S3, HTTP) seen as names, listing and byte ranges, in
// the shape of Arrow's FileSystem. Readers get a ByteSource (size + positionless ReadAt) and never
// learn which backend serves it. Retry, metering and fault injection are decorators: classes that
// hold another Backend and override only what they change (BackendWrapper forwards the rest).
// Thread-safe: every method may be called from any number of threads at once; a Writer is not
// (one user at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"
#include "storage/byte_source.h"

namespace stoker::storage {

// What Stat and List say about one object.
struct ObjectInfo {
  std::string uri;  // full URI (or path, for the file backend given a plain path)
  uint64_t size_bytes = 0;
  std::string etag;  // S3/HTTP ETag without quotes; "" where the backend has none
};

// A new object being written. Nothing is visible under the final name until Close succeeds:
// files are written to a temporary name and renamed, S3 objects are uploaded in parts and
// completed. Destroying a Writer without Close abandons it (temp file removed, upload aborted).
// Not thread-safe: one user at a time.
class Writer {
 public:
  virtual ~Writer() = default;
  virtual Status Append(std::string_view bytes) = 0;
  // Publishes the object. After Close (ok or not) the writer accepts nothing more.
  virtual Status Close() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Size and etag of one object. kNotFound if it does not exist.
  virtual Result<ObjectInfo> Stat(const std::string& uri) const = 0;
  // Every object whose URI starts with `prefix`, sorted by URI. Paginated requests are made
  // under the hood; the whole listing is returned. An empty result is not an error.
  virtual Result<std::vector<ObjectInfo>> List(const std::string& prefix) const = 0;
  // Opens an object for range reads; its size is fixed at open. kNotFound if it does not exist.
  virtual Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const = 0;
  // Opens an object whose size the caller already knows (from a dataset's manifest): remote
  // backends make no request until the first ReadAt (no HEAD), so opening a shard costs nothing.
  // A wrong size shows as an error of the read that passes the real end. The default opens with
  // OpenForRead and refuses (kCorruption) a size other than `size_bytes`.
  virtual Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                                  uint64_t size_bytes) const;
  // Starts a new object (replacing any old one when it is closed). kUnimplemented for read-only
  // backends (http://).
  virtual Result<std::unique_ptr<Writer>> OpenForWrite(const std::string& uri) const = 0;
};

// Forwards every call to `inner`, so that a decorator overrides only what it changes (LevelDB's
// EnvWrapper). Owns `inner`. Thread-safe if `inner` is.
class BackendWrapper : public Backend {
 public:
  explicit BackendWrapper(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}

  Result<ObjectInfo> Stat(const std::string& uri) const override { return inner_->Stat(uri); }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    return inner_->List(prefix);
  }
  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    return inner_->OpenForRead(uri);
  }
  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size_bytes) const override {
    return inner_->OpenForReadWithSize(uri, size_bytes);
  }
  Result<std::unique_ptr<Writer>> OpenForWrite(const std::string& uri) const override {
    return inner_->OpenForWrite(uri);
  }

 protected:
  const Backend& inner() const { return *inner_; }

 private:
  std::unique_ptr<Backend> inner_;
};

// An ETag as servers send it ("\"abc\"" or W/"abc") without the quotes and the weak marker.
std::string UnquoteEtag(std::string etag);

// Reads a whole object into memory (small objects, tools and tests).
Result<std::string> ReadAll(const Backend& backend, const std::string& uri);
// Writes `bytes` as a whole object: OpenForWrite, Append, Close.
Status WriteAll(const Backend& backend, const std::string& uri, std::string_view bytes);

}  // namespace stoker::storage
