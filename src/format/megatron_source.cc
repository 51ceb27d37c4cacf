#include "format/megatron_source.h"

#include <algorithm>

#include "format/token_convert.h"

namespace stoker {

Result<std::unique_ptr<MegatronSource>> MegatronSource::Open(const std::string& prefix,
                                                             MegatronIndex::Checks checks) {
  const std::string idx_path = prefix + ".idx";
  const std::string bin_path = prefix + ".bin";
  STOKER_ASSIGN_OR_RETURN(auto idx, MappedFile::Open(idx_path));
  STOKER_ASSIGN_OR_RETURN(auto bin, MappedFile::Open(bin_path));
  STOKER_ASSIGN_OR_RETURN(MegatronIndex index,
                          MegatronIndex::Parse(idx->data(), idx->size(), idx_path, bin->size(),
                                               bin_path, MegatronIndex::Checks::kHeader));
  uint64_t tokens = bin->size() / TokenDTypeSize(index.dtype());
  std::optional<uint64_t> nonempty;
  if (checks == MegatronIndex::Checks::kFull) {
    // One pass validates every entry and counts the tokens and the non-empty documents.
    uint64_t count = 0;
    STOKER_RETURN_IF_ERROR(index.ValidateFull(&tokens, &count));
    nonempty = count;
  }
  auto source = std::unique_ptr<MegatronSource>(
      new MegatronSource(prefix, std::move(bin), std::move(idx), index, tokens));
  source->nonempty_documents_ = nonempty;
  return source;
}

MegatronSource::MegatronSource(std::string prefix, std::unique_ptr<MappedFile> bin,
                               std::unique_ptr<MappedFile> idx, MegatronIndex index,
                               uint64_t num_tokens)
    : prefix_(std::move(prefix)),
      bin_(std::move(bin)),
      idx_(std::move(idx)),
      index_(index),
      num_tokens_(num_tokens) {}

template <typename T>
Status MegatronSource::ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const {
  uint64_t n = index_.num_sequences();
  int32_t len = doc < n ? index_.sequence_length(doc) : 0;
  if (len < 0) {
    return CorruptionAt(idx_->path(), kMegatronHeaderBytes + 4 * doc,
                        "negative sequence length " + std::to_string(len));
  }
  // Context is added only on failure: this runs for every piece the loader reads.
  Status range = CheckReadRange(doc, n, static_cast<uint64_t>(len), offset, count);
  if (!range.ok()) return range.WithContext(prefix_);
  STOKER_RETURN_IF_ERROR(CheckSequence(doc));
  const int64_t ptr = index_.sequence_pointer(doc);
  uint64_t pos = static_cast<uint64_t>(ptr) + offset * TokenDTypeSize(index_.dtype());
  return ReadTokensAt(bin_->data(), bin_->size(), bin_->path(), pos, index_.dtype(), count, 1, out);
}

// The checks ValidateFull makes for one sequence, against its neighbours: O(1) per read, so that
// opening a large .idx needs no pass over it and a bad entry is still reported when read.
Status MegatronSource::CheckSequence(uint64_t doc) const {
  const uint64_t item = TokenDTypeSize(index_.dtype());
  auto span = [&](uint64_t i) {
    return std::to_string(index_.sequence_length(i)) + " tokens at byte " +
           std::to_string(index_.sequence_pointer(i));
  };
  const int64_t ptr = index_.sequence_pointer(doc);
  const uint64_t at = index_.pointers_offset() + 8 * doc;
  if (ptr < 0) {
    return CorruptionAt(
        idx_->path(), at,
        "sequence " + std::to_string(doc) + ": negative sequence pointer " + std::to_string(ptr));
  }
  const uint64_t end =
      static_cast<uint64_t>(ptr) + static_cast<uint64_t>(index_.sequence_length(doc)) * item;
  if (end > bin_->size()) {
    return CorruptionAt(idx_->path(), at,
                        "sequence " + std::to_string(doc) + " (" + span(doc) + ") ends at byte " +
                            std::to_string(end) + ", past the end of " + bin_->path() + " (" +
                            std::to_string(bin_->size()) + " bytes)");
  }
  auto overlap = [&](uint64_t a) {  // sequences a and a + 1 overlap or are out of order
    return CorruptionAt(idx_->path(), index_.pointers_offset() + 8 * (a + 1),
                        "sequence " + std::to_string(a + 1) + " (" + span(a + 1) +
                            ") starts before the end of sequence " + std::to_string(a) + " (" +
                            span(a) + "): offsets are not monotonic");
  };
  if (doc > 0) {
    const int64_t prev = index_.sequence_pointer(doc - 1);
    const int32_t prev_len = index_.sequence_length(doc - 1);
    if (prev < 0 || prev_len < 0 ||
        static_cast<uint64_t>(prev) + static_cast<uint64_t>(prev_len) * item >
            static_cast<uint64_t>(ptr)) {
      return overlap(doc - 1);
    }
  }
  if (doc + 1 < index_.num_sequences()) {
    const int64_t next = index_.sequence_pointer(doc + 1);
    if (next < 0 || end > static_cast<uint64_t>(next)) return overlap(doc);
  }
  return Status::OK();
}

void MegatronSource::PrefetchIndex(uint64_t doc) const {
  if (doc < index_.num_sequences()) index_.PrefetchSequence(doc);
}

void MegatronSource::PrefetchTokens(uint64_t doc, uint64_t offset) const {
  if (doc >= index_.num_sequences()) return;
  const int64_t ptr = index_.sequence_pointer(doc);
  const uint64_t pos = static_cast<uint64_t>(ptr) + offset * TokenDTypeSize(index_.dtype());
  if (ptr < 0 || pos >= bin_->size()) return;
  // The first lines of the piece: the hardware prefetcher follows on from there.
  const uint8_t* p = bin_->data() + pos;
  const uint64_t end = std::min<uint64_t>(bin_->size() - pos, 256);
  for (uint64_t at = 0; at < end; at += 64) __builtin_prefetch(p + at);
}

Status MegatronSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

Status MegatronSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

}  // namespace stoker
