// MegatronSource: a TokenSource over one Megatron-LM `.bin` + `.idx` pair (any dtype code 1-10).
//
// Documents are the index's sequences (one per document for stoker's and preprocess_data.py's
// document-level shards). Both files are memory-mapped once; reads copy straight from the mapping.
// Thread-safe: immutable after Open.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/mapped_file.h"
#include "format/megatron_index.h"
#include "stoker/token_source.h"

namespace stoker {

class MegatronSource : public TokenSource {
 public:
  // Opens `prefix`.bin / `prefix`.idx. With Checks::kFull every index entry is validated (O(N));
  // with kHeader only O(1) checks run (the header and the section sizes against the file size:
  // how OpenTokenSource opens a Megatron input and a stoker dataset its shards; `stoker verify`
  // runs the full checks) and num_tokens() is taken from the .bin size. Either way a read checks
  // its own sequence first (length and pointer non-negative, inside the .bin, not overlapping its
  // neighbours: what kFull checks for every sequence), so a bad entry is kCorruption naming the
  // .idx, the sequence and the byte offset when it is read.
  static Result<std::unique_ptr<MegatronSource>> Open(const std::string& prefix,
                                                      MegatronIndex::Checks checks);

  std::string_view format() const override { return "megatron"; }
  const std::string& path() const override { return prefix_; }
  // Its `.idx` sizes read in place, with lazy totals (format/megatron_lengths.h).
  Result<DatasetLengths> Lengths() const override;
  Status CheckWholeIndex() const override { return index_.ValidateFull(); }
  TokenDType dtype() const override { return index_.dtype(); }
  uint64_t num_documents() const override { return index_.num_sequences(); }
  uint64_t num_tokens() const override { return num_tokens_; }
  // 0 for a document past the end (a broken precondition must not read outside the index), or
  // for a negative length in an index opened with Checks::kHeader.
  uint64_t document_length(uint64_t doc) const override {
    if (doc >= index_.num_sequences()) return 0;
    int32_t len = index_.sequence_length(doc);
    return len < 0 ? 0 : static_cast<uint64_t>(len);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override;
  void PrefetchIndex(uint64_t doc) const override;
  void PrefetchTokens(uint64_t doc, uint64_t offset) const override;

  const MegatronIndex& index() const { return index_; }
  const MappedFile& bin_file() const { return *bin_; }
  const MappedFile& idx_file() const { return *idx_; }
  // Documents of non-zero length: known when opened with Checks::kFull (counted while checking).
  std::optional<uint64_t> nonempty_documents() const { return nonempty_documents_; }
  // The .idx mapping, for a reader that must keep it mapped after the source is gone.
  std::shared_ptr<const MappedFile> shared_idx_file() const { return idx_; }

 private:
  MegatronSource(std::string prefix, std::unique_ptr<MappedFile> bin,
                 std::unique_ptr<MappedFile> idx, MegatronIndex index, uint64_t num_tokens);
  template <typename T>
  Status ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const;
  // Precondition: doc < num_sequences() and its length is non-negative.
  Status CheckSequence(uint64_t doc) const;

  std::string prefix_;
  std::unique_ptr<MappedFile> bin_;
  std::shared_ptr<const MappedFile> idx_;
  MegatronIndex index_;
  uint64_t num_tokens_;
  std::optional<uint64_t> nonempty_documents_;
};

}  // namespace stoker
