#include "format/shard_source.h"

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
  const size_t item = TokenDTypeSize(index_.dtype());
  const uint64_t pos = static_cast<uint64_t>(ptr) + offset * item;
  const TokenDType dtype = index_.dtype();
  // In place where the .bin is mapped (a cached copy held by its lease), else a copy.
  return bin_->ViewAt(pos, count * item, "tokens", [&](const uint8_t* data) -> Status {
    if (std::optional<uint64_t> bad = DecodeTokens(data, dtype, count, out)) {
      return BadTokenStatus(bin_->uri(), pos, dtype, *bad, data,
                            sizeof(T) == 4 ? "int32" : "int64");
    }
    return Status::OK();
  });
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
