// ChunkVerifier: checks an array one chunk at a time, the first time any element of the chunk is
// used, and remembers the answer in one bit per chunk. A length index (docs/dataset-format.md)
// keeps a checksum per chunk of 1,024 lengths; its reader verifies a chunk before the plan uses
// any length in it, so opening the file costs O(1) and a damaged chunk is still an error (the
// first one is kept and reported) before any of its lengths decides a row.
// Thread-safe: Touch, status and VerifyAll may be called from any thread at once; two threads
// touching a new chunk together may both verify it (with the same result).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "stoker/status.h"

namespace stoker {

class ChunkVerifier {
 public:
  // `num_elements` in chunks of 2^`chunk_shift`; `verify(c)` checks chunk c (OK, or an error
  // that names the file and the chunk) and must be thread-safe.
  ChunkVerifier(uint64_t num_elements, uint32_t chunk_shift,
                std::function<Status(uint64_t chunk)> verify);

  // Verifies the chunk holding element `i` unless that was done; a load and a test afterwards.
  // A failure is kept for status(); the element may then be read, but status() says not to use it.
  void Touch(uint64_t i) const {
    const uint64_t c = i >> chunk_shift_;
    if (((bits_[c >> 6].load(std::memory_order_acquire) >> (c & 63)) & 1) == 0) VerifySlow(c);
  }
  // OK, or the first failure of a chunk touched so far.
  Status status() const;
  // Verifies every chunk (O(elements)); the first failure, if any.
  Status VerifyAll() const;

  uint64_t num_chunks() const { return num_chunks_; }
  uint32_t chunk_shift() const { return chunk_shift_; }
  // Chunks verified so far (for tests and statistics).
  uint64_t chunks_verified() const;

 private:
  void VerifySlow(uint64_t chunk) const;

  uint64_t num_chunks_;
  uint32_t chunk_shift_;
  std::function<Status(uint64_t)> verify_;
  std::unique_ptr<std::atomic<uint64_t>[]> bits_;  // bit c set: chunk c verified (or failed)
  mutable std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  mutable Status first_error_;  // guarded by mu_
};

}  // namespace stoker
