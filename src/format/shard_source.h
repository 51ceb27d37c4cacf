// ShardSource: one Megatron shard (.idx + .bin) of a stoker dataset read through byte ranges — a
// shard of a remote dataset, or one a node-local cache staged on disk. The .idx is held whole in
// memory (12 bytes a document plus a header; one request); the .bin is read through a ByteSource,
// one ReadAt of exactly the tokens asked for per Read (a part cache in front of it, if the opener
// put one there, turns those into one ranged GET per part). Checked against the manifest at open:
// the .idx checksum, dtype and document count.
// Thread-safe: immutable after Open; reads may come from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "format/manifest.h"
#include "format/megatron_index.h"
#include "stoker/token_source.h"
#include "storage/byte_source.h"

namespace stoker {

class ShardSource final : public TokenSource {
 public:
  // `idx` is the whole .idx file (`idx_size` bytes at `idx_data`, kept alive by `idx_owner`),
  // named `idx_uri` in errors; `bin` the .bin. `info` is the shard's manifest entry (shard `s` of
  // `manifest_uri`). kCorruption naming the file for a bad index or one that is not the manifest's.
  static Result<std::unique_ptr<ShardSource>> Open(std::string prefix, uint64_t s,
                                                   const ShardInfo& info, TokenDType dtype,
                                                   const std::string& manifest_uri,
                                                   std::shared_ptr<const void> idx_owner,
                                                   const uint8_t* idx_data, size_t idx_size,
                                                   std::string idx_uri,
                                                   std::unique_ptr<ByteSource> bin);

  std::string_view format() const override { return "megatron"; }
  const std::string& path() const override { return prefix_; }
  TokenDType dtype() const override { return index_.dtype(); }
  uint64_t num_documents() const override { return index_.num_sequences(); }
  uint64_t num_tokens() const override { return num_tokens_; }
  uint64_t document_length(uint64_t doc) const override {
    if (doc >= index_.num_sequences()) return 0;
    const int32_t len = index_.sequence_length(doc);
    return len < 0 ? 0 : static_cast<uint64_t>(len);
  }
  // The index entry (held in memory) and the first tokens of the piece, where the .bin source
  // holds them in memory (a mapped cached copy).
  void PrefetchIndex(uint64_t doc) const override {
    if (doc < index_.num_sequences()) index_.PrefetchSequence(doc);
  }
  void PrefetchTokens(uint64_t doc, uint64_t offset) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override;
  // From the sequence pointers: what lies between two pieces of the .bin, read by one ViewAt.
  std::optional<uint64_t> TokensBetween(uint64_t doc, uint64_t end, uint64_t next_doc,
                                        uint64_t next_offset) const override;
  Status ReadSpan(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;

 private:
  ShardSource(std::string prefix, std::shared_ptr<const void> idx_owner, std::string idx_uri,
              MegatronIndex index, std::unique_ptr<ByteSource> bin, uint64_t num_tokens)
      : prefix_(std::move(prefix)),
        idx_owner_(std::move(idx_owner)),
        idx_uri_(std::move(idx_uri)),
        index_(index),
        bin_(std::move(bin)),
        num_tokens_(num_tokens) {}
  template <typename T>
  Status ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const;
  // Where token `offset` of `doc` is stored in the .bin, or nullopt for a document or an offset
  // outside the index, or a negative pointer or length (Read reports those).
  std::optional<uint64_t> TokenPosition(uint64_t doc, uint64_t offset) const;
  // Decodes `count` tokens at byte `pos` of the .bin into `out`.
  template <typename T>
  Status DecodeAt(uint64_t pos, uint64_t count, T* out) const;

  std::string prefix_;
  std::shared_ptr<const void> idx_owner_;
  std::string idx_uri_;
  MegatronIndex index_;
  std::unique_ptr<ByteSource> bin_;
  uint64_t num_tokens_;
};

}  // namespace stoker
