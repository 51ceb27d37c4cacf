// MegatronWriter: writes one shard as a Megatron-LM indexed dataset (`.bin` + `.idx`, MMIDIDX v1),
// byte-compatible with megatron-core's IndexedDatasetBuilder (one sequence per document).
//
// Both files are AtomicFiles (common/atomic_file.h) that Finish() commits, so a crash never leaves
// a shard that looks complete. Not thread-safe: one user at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "format/manifest.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

class MegatronWriter {
 public:
  // Creates the temporary files for shard `prefix` (absolute or relative to the cwd) with token
  // type `dtype` (kUint16 or kInt32 for stoker's own shards; any integer code is accepted).
  static Result<std::unique_ptr<MegatronWriter>> Create(const std::string& prefix,
                                                        TokenDType dtype);
  ~MegatronWriter();  // removes the temporary files if Finish() was not called

  // Appends one document as one sequence. kInvalidArgument if a token does not fit the dtype (or
  // is negative); the shard is then unchanged.
  Status AddDocument(std::span<const int32_t> tokens);
  // Appends one document made of several sequences (Megatron's sentence-level layout, as
  // IndexedDatasetBuilder.add_document); `sequence_lengths` must sum to tokens.size(). stoker's own
  // shards use one sequence per document; this exists for compatibility and tests.
  Status AddDocument(std::span<const int32_t> tokens, std::span<const int32_t> sequence_lengths);

  // Appends documents whose tokens the caller has already checked (TokensFit) and stored as this
  // shard's dtype (StoreFittingTokens), one sequence each: `lengths` in tokens, summing to
  // bytes.size() / the dtype's size. Hashes and writes the bytes without a copy into the staging
  // buffer when they are large (stoker pack stores them on its encode threads, so that its writer
  // thread only orders, hashes and writes).
  Status AddStoredDocuments(std::span<const uint8_t> bytes, std::span<const uint64_t> lengths);

  // Megatron documents written so far.
  uint64_t documents() const { return document_indices_.size() - 1; }
  // Sequences written so far (what TokenSource calls documents; equal to documents() unless the
  // multi-sequence AddDocument was used).
  uint64_t sequences() const { return lengths_.size(); }
  uint64_t tokens() const { return tokens_; }
  uint64_t bin_bytes() const;

  // Writes the index, fsyncs both files, renames them to their final names, and returns the
  // shard's description (prefix = base name of `prefix`, counts, sizes, XXH3 checksums;
  // `documents` counts sequences, as TokenSource does).
  Result<ShardInfo> Finish();

 private:
  MegatronWriter(std::string prefix, TokenDType dtype);
  std::string prefix_;
  TokenDType dtype_;
  std::vector<int32_t> lengths_;              // one per sequence
  std::vector<int64_t> document_indices_{0};  // sequence index where each document starts
  uint64_t tokens_ = 0;
  bool finished_ = false;
  // (implementation detail: the .bin file and a streaming XXH3 state over its bytes)
  struct HashState;
  std::unique_ptr<HashState> bin_hash_;
};

}  // namespace stoker
