// TokenSource: random access to the documents of a tokenized dataset, whatever its format.
//
// A document is a run of token ids (for Megatron files: one `.idx` sequence). Implementations
// memory-map their files once and never do per-document file operations (but a stoker dataset
// with more shards than the process may keep mapped maps its shards on demand: stoker_dataset.h).
// Thread-safe: every method is const and may be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/dataset_lengths.h"
#include "stoker/document_reader.h"
#include "stoker/status.h"
#include "stoker/storage_stats.h"

namespace stoker {

// Token element types, numbered as Megatron-LM's `.idx` dtype codes (9 and 10 are fairseq's).
enum class TokenDType : uint8_t {
  kUint8 = 1,
  kInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kFloat64 = 6,
  kFloat32 = 7,
  kUint16 = 8,
  kUint32 = 9,
  kUint64 = 10,
};

// Bytes per element; 0 for a code that is not a TokenDType.
size_t TokenDTypeSize(TokenDType dtype);
// "uint16", "int32", ... (NumPy names); "unknown" for a bad code.
std::string_view TokenDTypeName(TokenDType dtype);
// Parses a NumPy-style name ("uint16", "int32", ...).
Result<TokenDType> ParseTokenDType(std::string_view name);

// The tokenizer that produced a dataset's tokens, where the data records it (a stoker manifest).
struct TokenizerInfo {
  std::string kind;  // "bytes", "sentencepiece", ...
  std::string name;  // e.g. the model file's base name
  uint64_t vocab_size = 0;
  int64_t eos_id = -1;
  std::string checksum;  // xxh3-64 hex of the tokenizer model file; empty for "bytes"
};

// A DocumentReader that also knows its documents' count and lengths up front, so a Plan can be
// made from them. Read, Prefetch*, path() and storage_stats() are DocumentReader's.
class TokenSource : public DocumentReader {
 public:
  // "stoker", "megatron", "nanogpt", "llmc" or "npy".
  virtual std::string_view format() const = 0;
  virtual TokenDType dtype() const = 0;

  virtual uint64_t num_documents() const = 0;
  virtual uint64_t num_tokens() const = 0;
  // Length in tokens of document `doc`. Precondition: doc < num_documents().
  virtual uint64_t document_length(uint64_t doc) const = 0;
  // Lengths of documents [first, first + count) into `out`; 0 for documents past the end. Sources
  // that look a length up in a shard override it to find each shard once, not once per document.
  virtual void DocumentLengths(uint64_t first, uint64_t count, uint64_t* out) const {
    for (uint64_t d = 0; d < count; ++d) {
      out[d] = first + d < num_documents() ? document_length(first + d) : 0;
    }
  }

  std::optional<uint64_t> FindDocumentLength(uint64_t doc) const final {
    if (doc >= num_documents()) return std::nullopt;
    return document_length(doc);
  }

  // Shards group consecutive documents stored in one file; block shuffle keeps reads within a few.
  // Shard s holds documents [shard_first_document(s), shard_first_document(s + 1)).
  virtual uint64_t num_shards() const { return 1; }
  // Precondition: shard <= num_shards(); shard == num_shards() gives num_documents().
  virtual uint64_t shard_first_document(uint64_t shard) const {
    return shard == 0 ? 0 : num_documents();
  }
  // The shard holding document `doc` (< num_documents()), from shard_first_document.
  uint64_t ShardOf(uint64_t doc) const;
  // The files of shard `shard` (provenance, messages): a stoker dataset's shard prefix; path()
  // for a source of one file.
  virtual std::string shard_path(uint64_t shard) const { return path(); }

  // The lengths and shard boundaries a plan reads (stoker/plan.h). By default they are copied
  // (DocumentLengths, one pass); a stoker dataset with a length index and a Megatron source give
  // theirs in place (MappedLengths, no copy), with the totals known without a pass.
  virtual Result<DatasetLengths> Lengths() const;

  // The tokenizer recorded with the data; nullopt where the format records none.
  virtual std::optional<TokenizerInfo> tokenizer_info() const { return std::nullopt; }
  // Checks every entry of the source's index, beyond the header checks of opening (Megatron:
  // every sequence pointer and length): kCorruption naming the file and the entry.
  virtual Status CheckWholeIndex() const { return Status::OK(); }

  // Shards fetched from remote storage (a remote stoker dataset): the loader schedules the shards
  // of the steps ahead (ScheduleShards), and, where they go through a node-local cache
  // (caches_shards), `stoker prefetch` stages them. The defaults are for local data.
  virtual bool remote_shards() const { return false; }
  virtual bool caches_shards() const { return false; }
  // Whether each document read is a request to remote storage (a remote dataset under global
  // shuffle that its cache cannot hold): the loader then fetches the pieces of the steps ahead,
  // many at once, before its workers read them (docs/cache.md).
  virtual bool reads_by_request() const { return false; }
  struct ShardBytes {
    uint64_t bin = 0;  // token bytes
    uint64_t idx = 0;  // index bytes
  };
  // The bytes a cache holds for shard `shard`; zero where nothing is fetched.
  virtual ShardBytes shard_bytes(uint64_t shard) const { return {}; }
  // Starts fetching `shards` into the cache, in this order (a hint; never fails).
  virtual void ScheduleShards(const std::vector<uint64_t>& shards) const { (void)shards; }
  // Fetches shard `shard` into the cache and waits for it.
  virtual Status StageShard(uint64_t shard) const { return Status::OK(); }
};

// Opens any supported token data, detecting the format from `path`:
//  - a directory with a stoker manifest (manifest.json): a stoker dataset of Megatron shards;
//  - a Megatron prefix P (P.bin + P.idx exist), or P.bin / P.idx named directly;
//  - a `.npy` file (v1-v3; 1-D = one document, 2-D [N, L] = N documents of L tokens);
//  - a `.bin` with an llm.c header (magic 20240520 or 20240801): one document;
//  - any other `.bin`: nanoGPT raw uint16 tokens, one document;
//  - the token column of a record dataset (MDS or LitData index directory, save_to_disk
//    directory, .parquet, .arrow): one document per record, read into memory.
// Errors name the file and, for malformed data, the byte offset.
Result<std::unique_ptr<TokenSource>> OpenTokenSource(const std::string& path);

}  // namespace stoker
