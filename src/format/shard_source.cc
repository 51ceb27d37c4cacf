#include "format/shard_source.h"

#include <algorithm>
#include <optional>

#include "common/hash.h"
#include "format/token_convert.h"

namespace stoker {

Result<std::unique_ptr<ShardSource>> ShardSource::Open(
    std::string prefix, uint64_t s, const ShardInfo& info, TokenDType dtype,
    const std::string& manifest_uri, std::shared_ptr<const void> idx_owner, const uint8_t* idx_data,
    size_t idx_size, std::string idx_uri, std::unique_ptr<ByteSource> bin) {
  const std::string shard = " (shard " + std::to_string(s) + " of " + manifest_uri + ")";
  if (idx_size != info.idx_bytes) {
    return Corruption(idx_uri + ": " + std::to_string(idx_size) + " bytes but the manifest says " +
                      std::to_string(info.idx_bytes) + shard);
  }
  // The index is small and read whole: its checksum is cheap, and a damaged index would send
  // every read of the shard to the wrong bytes.
  if (!info.idx_xxh3.empty() && Xxh3Hex(Xxh3(idx_data, idx_size)) != info.idx_xxh3) {
    return Corruption(idx_uri + ": xxh3 " + Xxh3Hex(Xxh3(idx_data, idx_size)) +
                      " but the manifest says " + info.idx_xxh3 + shard);
  }
  STOKER_ASSIGN_OR_RETURN(MegatronIndex index,
                          MegatronIndex::Parse(idx_data, idx_size, idx_uri, bin->size_bytes(),
                                               bin->uri(), MegatronIndex::Checks::kHeader));
  if (index.dtype() != dtype) {
    return Corruption(idx_uri + ": token dtype is " + std::string(TokenDTypeName(index.dtype())) +
                      " but the manifest says " + std::string(TokenDTypeName(dtype)) + shard);
  }
  if (index.num_sequences() != info.documents) {
    return Corruption(idx_uri + ": " + std::to_string(index.num_sequences()) +
                      " documents but the manifest says " + std::to_string(info.documents) + shard);
  }
  const uint64_t tokens = bin->size_bytes() / TokenDTypeSize(index.dtype());
  return std::unique_ptr<ShardSource>(new ShardSource(
      std::move(prefix), std::move(idx_owner), std::move(idx_uri), index, std::move(bin), tokens));
}

template <typename T>
Status ShardSource::ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const {
  const uint64_t n = index_.num_sequences();
  const int32_t len = doc < n ? index_.sequence_length(doc) : 0;
  if (len < 0) {
    return CorruptionAt(idx_uri_, kMegatronHeaderBytes + 4 * doc,
                        "negative sequence length " + std::to_string(len));
  }
  Status range = CheckReadRange(doc, n, static_cast<uint64_t>(len), offset, count);
  if (!range.ok()) return range.WithContext(prefix_);
  const int64_t ptr = index_.sequence_pointer(doc);
  if (ptr < 0) {
    return CorruptionAt(idx_uri_, index_.pointers_offset() + 8 * doc,
                        "negative sequence pointer " + std::to_string(ptr));
  }
  return DecodeAt(static_cast<uint64_t>(ptr) + offset * TokenDTypeSize(index_.dtype()), count, out);
}

template <typename T>
Status ShardSource::DecodeAt(uint64_t pos, uint64_t count, T* out) const {
  const TokenDType dtype = index_.dtype();
  // In place where the .bin is mapped (a cached copy held by its lease), else a copy.
  return bin_->ViewAt(pos, count * TokenDTypeSize(dtype), "tokens",
                      [&](const uint8_t* data) -> Status {
                        if (std::optional<uint64_t> bad = DecodeTokens(data, dtype, count, out)) {
                          return BadTokenStatus(bin_->uri(), pos, dtype, *bad, data,
                                                sizeof(T) == 4 ? "int32" : "int64");
                        }
                        return Status::OK();
                      });
}

std::optional<uint64_t> ShardSource::TokenPosition(uint64_t doc, uint64_t offset) const {
  if (doc >= index_.num_sequences()) return std::nullopt;
  const int32_t len = index_.sequence_length(doc);
  const int64_t ptr = index_.sequence_pointer(doc);
  if (len < 0 || ptr < 0 || offset > static_cast<uint64_t>(len)) return std::nullopt;
  return static_cast<uint64_t>(ptr) + offset * TokenDTypeSize(index_.dtype());
}

std::optional<uint64_t> ShardSource::TokensBetween(uint64_t doc, uint64_t end, uint64_t next_doc,
                                                   uint64_t next_offset) const {
  const std::optional<uint64_t> from = TokenPosition(doc, end);
  const std::optional<uint64_t> to = TokenPosition(next_doc, next_offset);
  const size_t item = TokenDTypeSize(index_.dtype());
  if (!from || !to || next_doc <= doc || *to < *from || (*to - *from) % item != 0) {
    return std::nullopt;
  }
  return (*to - *from) / item;
}

Status ShardSource::ReadSpan(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  const std::optional<uint64_t> pos = TokenPosition(doc, offset);
  if (!pos) return Read(doc, offset, count, out);  // its error
  const size_t item = TokenDTypeSize(index_.dtype());
  if (count > (bin_->size_bytes() - std::min(*pos, bin_->size_bytes())) / item) {
    return OutOfRange(prefix_ + ": " + std::to_string(count) + " tokens from token " +
                      std::to_string(offset) + " of document " + std::to_string(doc) +
                      " run past the end of " + bin_->uri());
  }
  return DecodeAt(*pos, count, out);
}

void ShardSource::PrefetchTokens(uint64_t doc, uint64_t offset) const {
  if (doc >= index_.num_sequences()) return;
  const int64_t ptr = index_.sequence_pointer(doc);
  if (ptr < 0) return;
  const size_t item = TokenDTypeSize(index_.dtype());
  const uint64_t len = document_length(doc);
  if (offset >= len) return;
  bin_->Prefetch(static_cast<uint64_t>(ptr) + offset * item, (len - offset) * item);
}

Status ShardSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

Status ShardSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

}  // namespace stoker
