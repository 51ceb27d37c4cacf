// DocumentReader: random access to the tokens of numbered documents, what the row pieces of a
// BatchPlanner (stoker/planner.h) refer to. TokenSource (stoker/token_source.h) is the indexed
// kind; the stream serves its tokenized pieces through one too.
// Thread-safe: every method is const and may be called from many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "stoker/status.h"
#include "stoker/storage_stats.h"

namespace stoker {

// Random access to the tokens of numbered documents: what a planner's row pieces refer to.
// TokenSource (stoker/token_source.h) is the indexed kind.
class DocumentReader {
 public:
  virtual ~DocumentReader() = default;

  // A name for errors (the path the reader was opened from).
  virtual const std::string& path() const = 0;
  // The length in tokens of document `doc`, or nullopt if the reader has no such document.
  virtual std::optional<uint64_t> FindDocumentLength(uint64_t doc) const = 0;
  // Copies tokens [offset, offset + count) of document `doc` into `out` (count elements), converted
  // to the output type. Fails with kOutOfRange if the range is outside the document, and with
  // kCorruption if a value does not fit the output type (e.g. a negative or > INT32_MAX id).
  virtual Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const = 0;
  virtual Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const = 0;
  // Hints that `doc` will be read soon, so that its cache misses overlap other work: the loader
  // asks for the index entry of the piece after next, and for the tokens of the next piece, while
  // it copies the current one. Never fail; do nothing by default.
  virtual void PrefetchIndex(uint64_t doc) const { (void)doc; }
  virtual void PrefetchTokens(uint64_t doc, uint64_t offset) const {
    (void)doc;
    (void)offset;
  }
  // Reading neighbouring documents with one request (a remote dataset's read-ahead coalesces the
  // pieces the plan reads close together: docs/cache.md). TokensBetween: the tokens stored between
  // token `end` of `doc` and token `next_offset` of `next_doc` (> doc), when both lie in one
  // stored object that ReadSpan reads without another request, and the reader can tell without
  // I/O; nullopt otherwise (the default: every read stays within one document).
  virtual std::optional<uint64_t> TokensBetween(uint64_t doc, uint64_t end, uint64_t next_doc,
                                                uint64_t next_offset) const {
    (void)doc;
    (void)end;
    (void)next_doc;
    (void)next_offset;
    return std::nullopt;
  }
  // Copies `count` tokens stored from token `offset` of `doc` on into `out`, running past the end
  // of `doc` into the documents stored after it where TokensBetween said they follow it. By
  // default a Read (within `doc`).
  virtual Status ReadSpan(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
    return Read(doc, offset, count, out);
  }
  // Chat data (docs/chat.md): whether the documents carry a loss mask, and the mask of tokens
  // [offset, offset + count) of `doc` (out[k] = 1 where token offset + k is trained, else 0).
  // A reader without one says false, and ReadLossMask fails with kFailedPrecondition.
  virtual bool has_loss_mask() const { return false; }
  virtual Status ReadLossMask(uint64_t doc, uint64_t offset, uint64_t count, uint8_t* out) const {
    (void)doc;
    (void)offset;
    (void)count;
    (void)out;
    return FailedPrecondition(path() + ": has no loss mask");
  }
  // The requests made to remote storage (s3://, http(s)://) for this reader since it was opened.
  // Zero for local data.
  virtual StorageStats storage_stats() const { return {}; }
};

}  // namespace stoker
