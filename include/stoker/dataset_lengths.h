// DatasetLengths: all a Plan (stoker/plan.h) needs to know about one dataset, its documents'
// lengths and shard boundaries, copied or read in place from a mapped file. A TokenSource gives
// its own (TokenSource::Lengths, stoker/token_source.h).
// Thread-safe: a DatasetLengths is immutable once made; its lazy totals compute once, locked.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/chunk_verifier.h"
#include "stoker/status.h"

namespace stoker {

// Lengths read in place from memory the plan does not copy: a memory-mapped array (a length index
// or a Megatron `.idx` `sizes` array) that every process mapping the file shares in the page cache.
struct MappedLengths {
  enum class Element : uint8_t {
    kUint32,  // little-endian uint32 (a stoker length index)
    kInt32,   // little-endian int32 (Megatron `sizes`); a negative value reads as 0
  };
  const uint8_t* data = nullptr;  // `count` elements, any alignment
  uint64_t count = 0;
  Element element = Element::kUint32;
  std::shared_ptr<const void> owner;  // keeps `data` mapped
  // When set (a length index), each chunk of `data` is verified before its first length is used;
  // DatasetLengths::status() reports a chunk that failed. Owned by `owner`.
  const ChunkVerifier* verifier = nullptr;
};

// What the plan would otherwise derive by reading every length (a length index's header holds it).
struct LengthTotals {
  uint64_t tokens = 0;
  uint64_t nonempty_documents = 0;  // unless count_nonempty is set
  // FingerprintHasher (format/length_hash.h) over the lengths in order; when absent the
  // fingerprint computes it the first time it is asked for.
  std::optional<uint64_t> length_hash;
  // For totals known only after a pass (a Megatron `.idx`): when set, the plan calls them the
  // first time it needs the value (non-empty documents: pad's row count and statistics; the hash:
  // the fingerprint), not before the first batch. Thread-safe; they compute once and may cache.
  std::function<uint64_t()> count_nonempty;
  std::function<uint64_t()> hash_lengths;
};

// All the plan needs to know about one dataset. Documents of length 0 are allowed (never planned).
struct DatasetLengths {
  std::string name;                        // shown in messages and statistics, e.g. the path
  std::vector<uint64_t> document_lengths;  // tokens per document, in source order (if not mapped)
  // Shard s holds documents [shard_first_document[s], shard_first_document[s + 1]): num_shards + 1
  // non-decreasing entries from 0 to the document count. Empty means one shard.
  std::vector<uint64_t> shard_first_document;
  // When `mapped.data` is set, the lengths are read from it and document_lengths stays empty.
  MappedLengths mapped;
  // Totals known without reading the lengths; when absent Plan::Create sums the lengths once and
  // the fingerprint hashes them when first asked for.
  std::optional<LengthTotals> totals;

  uint64_t num_documents() const {
    return mapped.data != nullptr ? mapped.count : document_lengths.size();
  }
  // Tokens of document `doc` (< num_documents()).
  uint64_t length(uint64_t doc) const {
    if (mapped.data == nullptr) return document_lengths[doc];
    if (mapped.verifier != nullptr) mapped.verifier->Touch(doc);
    uint32_t v;
    std::memcpy(&v, mapped.data + 4 * doc, 4);
    if (mapped.element == MappedLengths::Element::kInt32 && v > INT32_MAX) return 0;
    return v;
  }

  // OK, or the first damaged chunk of mapped lengths read so far (kCorruption naming the file and
  // the chunk): the plan turns it into the error of every batch from then on.
  Status status() const {
    return mapped.verifier != nullptr ? mapped.verifier->status() : Status::OK();
  }

  // Starts fetching the length of `doc` into the cache (a hint; never faults).
  void Prefetch(uint64_t doc) const {
    __builtin_prefetch(mapped.data != nullptr ? static_cast<const void*>(mapped.data + 4 * doc)
                                              : static_cast<const void*>(&document_lengths[doc]));
  }
};

}  // namespace stoker
