// ByteSource: the bytes of one object (a local file today; an S3 or HTTP object once src/storage/
// lands) seen as a size and positionless range reads. Every record reader reads through this
// interface and never learns which backend serves the bytes. The storage module is meant to take
// this header over unchanged (Backend::Open returning a ByteSource) and add its decorators.
// Thread-safe: ReadAt may be called from any number of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "common/function_ref.h"
#include "stoker/status.h"

namespace stoker {

class ByteSource {
 public:
  virtual ~ByteSource() = default;

  // The name used in every error about these bytes (a path or a URI).
  virtual const std::string& uri() const = 0;
  // Size of the object in bytes, fixed when it was opened.
  virtual uint64_t size_bytes() const = 0;
  // Reads up to `n` bytes starting at `offset` into `out` and returns how many were read; fewer
  // than `n` only when the object ends first (0 at or past the end). Errors name the uri and the
  // offset (kIOError, or kUnavailable for a transient remote failure).
  virtual Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const = 0;
  // Calls `use` with the `n` bytes at `offset`, which it may read only during the call: in place
  // where the source holds them in memory (a mapped file, a memory source), else copied by ReadAt
  // into a buffer of the calling thread (so `use` must not call ViewAt itself). kCorruption as
  // ReadExactlyAt (`what`) if the object ends first; otherwise what `use` returns.
  virtual Status ViewAt(uint64_t offset, size_t n, const char* what,
                        FunctionRef<Status(const uint8_t* data)> use) const;
  // Hints that the `n` bytes at `offset` will be read soon, so that their cache misses overlap
  // other work (a source holding them in memory prefetches their first cache lines). Never fails
  // or blocks; does nothing by default.
  virtual void Prefetch(uint64_t offset, size_t n) const {
    (void)offset;
    (void)n;
  }
};

// Forwards uri() and size_bytes() to `inner`, so that a decorating source (retry, metering, a part
// cache) overrides only ReadAt and what else it changes (BackendWrapper's counterpart). Owns
// `inner`. Thread-safe if `inner` is.
class ByteSourceWrapper : public ByteSource {
 public:
  explicit ByteSourceWrapper(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {}

  const std::string& uri() const override { return inner_->uri(); }
  uint64_t size_bytes() const override { return inner_->size_bytes(); }

 protected:
  const ByteSource& inner() const { return *inner_; }

 private:
  std::unique_ptr<ByteSource> inner_;
};

// Opens a local regular file. kNotFound if it is missing, kInvalidArgument if it is not a file.
Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);

// An in-memory object (tests, fuzzers, and data already in memory).
std::unique_ptr<ByteSource> MemorySource(std::string uri, std::string bytes);

// Reads exactly `n` bytes at `offset`; kCorruption naming the uri and offset if the object ends
// first (`what` says what was being read, e.g. "tar header").
Status ReadExactlyAt(const ByteSource& source, uint64_t offset, size_t n, char* out,
                     const char* what);

}  // namespace stoker
