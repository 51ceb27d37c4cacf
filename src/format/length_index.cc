#include "format/length_index.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/file_util.h"
#include "common/load.h"
#include "format/megatron_index.h"

namespace stoker {
namespace {

// Header field offsets (docs/dataset-format.md).
constexpr uint64_t kVersionAt = 8, kHeaderBytesAt = 12, kDocumentsAt = 16, kShardsAt = 24,
                   kTokensAt = 32, kNonemptyAt = 40, kMaxLengthAt = 48, kLengthHashAt = 56,
                   kShardsOffsetAt = 64, kLengthsOffsetAt = 72, kFileBytesAt = 80,
                   kArraysXxh3At = 88, kChunksOffsetAt = 96, kShardsXxh3At = 104,
                   kChunkShiftAt = 112, kHeaderXxh3At = 120;
constexpr size_t kWriteBuffer = 1 << 20;
static_assert(kWriteBuffer % (4 << kLengthChunkShift) == 0, "flushes end on chunk boundaries");

// The 64-bit header fields at their offsets: version 1's, then the ones version 2 added (with the
// 32-bit chunk_shift at kChunkShiftAt).
using Field64 = uint64_t LengthIndexHeader::*;
constexpr std::pair<uint64_t, Field64> kFields[] = {
    {kDocumentsAt, &LengthIndexHeader::num_documents},
    {kShardsAt, &LengthIndexHeader::num_shards},
    {kTokensAt, &LengthIndexHeader::total_tokens},
    {kNonemptyAt, &LengthIndexHeader::nonempty_documents},
    {kMaxLengthAt, &LengthIndexHeader::max_length},
    {kLengthHashAt, &LengthIndexHeader::length_hash},
    {kShardsOffsetAt, &LengthIndexHeader::shards_offset},
    {kLengthsOffsetAt, &LengthIndexHeader::lengths_offset},
    {kFileBytesAt, &LengthIndexHeader::file_bytes},
    {kArraysXxh3At, &LengthIndexHeader::arrays_xxh3},
    {kChunksOffsetAt, &LengthIndexHeader::chunks_offset},
    {kShardsXxh3At, &LengthIndexHeader::shards_xxh3},
};
constexpr size_t kVersion1Fields = 10;

void Store64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

// A chunk's checksum: seeded with its number, so chunks that trade places do not match.
uint64_t ChunkXxh3(const uint8_t* data, size_t size, uint64_t chunk) {
  return XXH3_64bits_withSeed(data, size, chunk);
}

}  // namespace

Result<LengthIndexHeader> ParseLengthIndexHeader(const uint8_t* data, uint64_t size,
                                                 const std::string& file) {
  if (size < kLengthIndexHeaderBytes) {
    return CorruptionAt(file, size, "truncated: a length index header needs 128 bytes");
  }
  if (std::memcmp(data, kLengthIndexMagic, sizeof kLengthIndexMagic) != 0) {
    return CorruptionAt(file, 0, "bad magic, expected \"STKLENS1\" (not a stoker length index)");
  }
  const uint32_t version = LoadAs<uint32_t>(data + kVersionAt);
  const uint32_t header_bytes = LoadAs<uint32_t>(data + kHeaderBytesAt);
  if (version != 1 && version != kLengthIndexVersion) {
    return CorruptionAt(file, kVersionAt,
                        "unsupported length index version " + std::to_string(version) +
                            " (this stoker reads 1 and 2; `stoker index DATASET` rewrites it)");
  }
  if (Xxh3(data, kHeaderXxh3At) != LoadAs<uint64_t>(data + kHeaderXxh3At)) {
    return CorruptionAt(file, kHeaderXxh3At, "header checksum mismatch (damaged header)");
  }
  LengthIndexHeader h;
  h.version = version;
  for (size_t i = 0; i < (version >= 2 ? std::size(kFields) : kVersion1Fields); ++i) {
    h.*kFields[i].second = LoadAs<uint64_t>(data + kFields[i].first);
  }
  if (version >= 2) h.chunk_shift = LoadAs<uint32_t>(data + kChunkShiftAt);
  // The counts are bounded first so that the offset arithmetic cannot overflow.
  const uint64_t lengths_end = h.lengths_offset + 4 * h.num_documents;
  const bool chunks_ok = version == 1 ? h.file_bytes == lengths_end
                                      : h.chunk_shift == kLengthChunkShift &&
                                            h.chunks_offset == lengths_end &&
                                            h.file_bytes == h.chunks_offset + 8 * h.num_chunks();
  const bool layout_ok =
      header_bytes == kLengthIndexHeaderBytes && h.num_shards < (uint64_t{1} << 40) &&
      h.num_documents < (uint64_t{1} << 60) && h.shards_offset == kLengthIndexHeaderBytes &&
      h.lengths_offset == h.shards_offset + 8 * (h.num_shards + 1) && chunks_ok &&
      h.nonempty_documents <= h.num_documents;
  if (!layout_ok) {
    return CorruptionAt(file, kShardsOffsetAt,
                        "array offsets disagree with the counts (" +
                            std::to_string(h.num_documents) + " documents, " +
                            std::to_string(h.num_shards) + " shards)");
  }
  return h;
}

Result<std::shared_ptr<const LengthIndex>> LengthIndex::Open(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file,
                          MappedFile::Open(path, MappedFile::Access::kRandom));
  STOKER_ASSIGN_OR_RETURN(LengthIndexHeader h,
                          ParseLengthIndexHeader(file->data(), file->size(), path));
  if (file->size() != h.file_bytes) {
    return CorruptionAt(path, file->size(),
                        "the file is " + std::to_string(file->size()) + " bytes, its header says " +
                            std::to_string(h.file_bytes) + " (truncated or overwritten)");
  }
  if (h.version >= 2 &&
      Xxh3(file->data() + h.shards_offset, h.lengths_offset - h.shards_offset) != h.shards_xxh3) {
    return CorruptionAt(path, h.shards_offset, "shard array checksum mismatch (damaged)");
  }
  if (h.num_shards > 0 && shard_first(file->data(), h, h.num_shards) != h.num_documents) {
    return CorruptionAt(
        path, h.shards_offset + 8 * h.num_shards,
        "the last shard boundary is not the document count " + std::to_string(h.num_documents));
  }
  auto index = std::shared_ptr<LengthIndex>(new LengthIndex(std::move(file), h));
  if (h.version >= 2) {
    // The verifier lives inside the index it checks, so the raw pointer cannot dangle.
    const LengthIndex* self = index.get();
    index->chunks_ = std::make_unique<ChunkVerifier>(
        h.num_documents, h.chunk_shift, [self](uint64_t c) { return self->VerifyChunk(c); });
  }
  return std::shared_ptr<const LengthIndex>(std::move(index));
}

uint64_t LengthIndexHeader::num_chunks() const {
  if (chunk_shift == 0) return 0;
  return (num_documents + (uint64_t{1} << chunk_shift) - 1) >> chunk_shift;
}

Status LengthIndex::VerifyChunk(uint64_t c) const {
  const uint64_t first = c << header_.chunk_shift;
  const uint64_t count =
      std::min<uint64_t>(uint64_t{1} << header_.chunk_shift, header_.num_documents - first);
  const uint8_t* data = file_->data();
  const uint64_t at = header_.lengths_offset + 4 * first;
  if (ChunkXxh3(data + at, 4 * count, c) !=
      LoadAs<uint64_t>(data + header_.chunks_offset + 8 * c)) {
    return CorruptionAt(path(), at,
                        "length chunk " + std::to_string(c) + " (documents " +
                            std::to_string(first) + " to " + std::to_string(first + count - 1) +
                            ") does not match its checksum at byte " +
                            std::to_string(header_.chunks_offset + 8 * c) +
                            " (damaged; `stoker index DATASET` rebuilds it)");
  }
  return Status::OK();
}

uint64_t LengthIndex::shard_first(const uint8_t* data, const LengthIndexHeader& h, uint64_t s) {
  return LoadAs<uint64_t>(data + h.shards_offset + 8 * s);
}

uint64_t LengthIndex::shard_first_document(uint64_t s) const {
  return shard_first(file_->data(), header_, s);
}

Status LengthIndex::VerifyChecksum() const {
  const uint8_t* data = file_->data();
  if (Xxh3(data + header_.shards_offset, header_.file_bytes - header_.shards_offset) !=
      header_.arrays_xxh3) {
    return CorruptionAt(path(), header_.shards_offset,
                        "checksum mismatch: the arrays do not match the header's XXH3-64 " +
                            Xxh3Hex(header_.arrays_xxh3) + " (damaged; `stoker index` rebuilds)");
  }
  return Status::OK();
}

Status LengthIndex::Verify() const {
  STOKER_RETURN_IF_ERROR(VerifyChecksum());
  for (uint64_t c = 0; c < header_.num_chunks(); ++c) STOKER_RETURN_IF_ERROR(VerifyChunk(c));
  uint64_t prev = 0;
  for (uint64_t s = 0; s <= header_.num_shards; ++s) {
    uint64_t first = shard_first_document(s);
    if ((s == 0 && first != 0) || first < prev || first > header_.num_documents) {
      return CorruptionAt(path(), header_.shards_offset + 8 * s,
                          "shard boundary " + std::to_string(s) + " is " + std::to_string(first));
    }
    prev = first;
  }
  uint64_t tokens = 0, nonempty = 0, max_length = 0;
  FingerprintHasher hash;
  const uint32_t* len = lengths();
  for (uint64_t d = 0; d < header_.num_documents; ++d) {
    tokens += len[d];
    nonempty += len[d] > 0;
    max_length = std::max<uint64_t>(max_length, len[d]);
    hash.Add(len[d]);
  }
  if (tokens != header_.total_tokens || nonempty != header_.nonempty_documents ||
      max_length != header_.max_length || hash.value() != header_.length_hash) {
    return CorruptionAt(path(), kTokensAt, "the totals in the header disagree with the lengths");
  }
  return Status::OK();
}

Result<std::unique_ptr<LengthIndexWriter>> LengthIndexWriter::Create(
    const std::string& path, const std::vector<uint64_t>& shard_first_document) {
  if (shard_first_document.empty() || shard_first_document.front() != 0) {
    return InvalidArgument(path + ": shard boundaries must run from 0 to the document count");
  }
  for (size_t s = 1; s < shard_first_document.size(); ++s) {
    if (shard_first_document[s] < shard_first_document[s - 1]) {
      return InvalidArgument(path + ": shard boundaries decrease at shard " + std::to_string(s));
    }
  }
  auto w = std::unique_ptr<LengthIndexWriter>(new LengthIndexWriter());
  w->path_ = path;
  LengthIndexHeader& h = w->header_;
  h.num_shards = shard_first_document.size() - 1;
  h.num_documents = shard_first_document.back();
  h.shards_offset = kLengthIndexHeaderBytes;
  h.lengths_offset = h.shards_offset + 8 * (h.num_shards + 1);
  h.chunks_offset = h.lengths_offset + 4 * h.num_documents;
  h.chunk_shift = kLengthChunkShift;
  h.file_bytes = h.chunks_offset + 8 * h.num_chunks();
  STOKER_ASSIGN_OR_RETURN(w->file_, AtomicFile::Create(path));
  w->checksum_ = std::make_unique<Xxh3Hasher>();
  w->shard_bytes_.resize(8 * shard_first_document.size());
  for (size_t s = 0; s < shard_first_document.size(); ++s) {
    Store64(w->shard_bytes_.data() + 8 * s, shard_first_document[s]);
  }
  w->checksum_->Update(w->shard_bytes_.data(), w->shard_bytes_.size());
  h.shards_xxh3 = Xxh3(w->shard_bytes_.data(), w->shard_bytes_.size());
  STOKER_RETURN_IF_ERROR(PwriteAll(w->file_->fd(), w->shard_bytes_.data(), w->shard_bytes_.size(),
                                   h.shards_offset, w->file_->temp_path()));
  w->pending_.reserve(kWriteBuffer);
  return w;
}

LengthIndexWriter::~LengthIndexWriter() = default;  // file_ removes an uncommitted file

Status LengthIndexWriter::Add(const uint64_t* lengths, uint64_t count) {
  if (count > header_.num_documents - added_) {
    return InvalidArgument(path_ + ": more lengths than the " +
                           std::to_string(header_.num_documents) + " documents");
  }
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t l = lengths[i];
    if (l > UINT32_MAX) {
      return InvalidArgument(path_ + ": document " + std::to_string(added_ + i) + " has " +
                             std::to_string(l) + " tokens, more than a length index holds");
    }
    header_.total_tokens += l;
    header_.nonempty_documents += l > 0;
    header_.max_length = std::max(header_.max_length, l);
    length_hash_.Add(l);
    const uint32_t v = static_cast<uint32_t>(l);
    const size_t at = pending_.size();
    pending_.resize(at + 4);
    std::memcpy(pending_.data() + at, &v, 4);
    if (pending_.size() >= kWriteBuffer) STOKER_RETURN_IF_ERROR(Flush());
  }
  added_ += count;
  return Status::OK();
}

Status LengthIndexWriter::Flush() {
  const uint64_t offset = header_.lengths_offset + 4 * added_lengths_written_;
  checksum_->Update(pending_.data(), pending_.size());
  // Every flush but the last is a whole number of chunks (kWriteBuffer is), so chunks start here.
  const uint64_t chunk_bytes = 4 << header_.chunk_shift;
  for (uint64_t at = 0; at < pending_.size(); at += chunk_bytes) {
    const uint64_t n = std::min<uint64_t>(chunk_bytes, pending_.size() - at);
    chunk_xxh3_.push_back(ChunkXxh3(pending_.data() + at, n, chunk_xxh3_.size()));
  }
  STOKER_RETURN_IF_ERROR(
      PwriteAll(file_->fd(), pending_.data(), pending_.size(), offset, file_->temp_path()));
  added_lengths_written_ += pending_.size() / 4;
  pending_.clear();
  return Status::OK();
}

Result<LengthIndexHeader> LengthIndexWriter::Finish() {
  if (added_ != header_.num_documents) {
    return FailedPrecondition(path_ + ": " + std::to_string(added_) + " lengths written of " +
                              std::to_string(header_.num_documents));
  }
  STOKER_RETURN_IF_ERROR(Flush());
  std::vector<uint8_t> table(8 * chunk_xxh3_.size());
  for (size_t c = 0; c < chunk_xxh3_.size(); ++c) Store64(table.data() + 8 * c, chunk_xxh3_[c]);
  checksum_->Update(table.data(), table.size());
  STOKER_RETURN_IF_ERROR(PwriteAll(file_->fd(), table.data(), table.size(), header_.chunks_offset,
                                   file_->temp_path()));
  header_.length_hash = length_hash_.value();
  header_.arrays_xxh3 = checksum_->Digest();
  uint8_t head[kLengthIndexHeaderBytes] = {};
  std::memcpy(head, kLengthIndexMagic, sizeof kLengthIndexMagic);
  const uint32_t version = kLengthIndexVersion, header_bytes = kLengthIndexHeaderBytes;
  std::memcpy(head + kVersionAt, &version, 4);
  std::memcpy(head + kHeaderBytesAt, &header_bytes, 4);
  for (const auto& [at, field] : kFields) Store64(head + at, header_.*field);
  std::memcpy(head + kChunkShiftAt, &header_.chunk_shift, 4);
  Store64(head + kHeaderXxh3At, Xxh3(head, kHeaderXxh3At));
  STOKER_RETURN_IF_ERROR(PwriteAll(file_->fd(), head, sizeof head, 0, file_->temp_path()));
  STOKER_RETURN_IF_ERROR(file_->Commit());
  return header_;
}

Result<LengthIndexHeader> WriteLengthIndex(const std::string& path,
                                           const std::vector<uint64_t>& shard_first_document,
                                           const std::vector<uint64_t>& lengths) {
  STOKER_ASSIGN_OR_RETURN(auto writer, LengthIndexWriter::Create(path, shard_first_document));
  STOKER_RETURN_IF_ERROR(writer->Add(lengths.data(), lengths.size()));
  return writer->Finish();
}

}  // namespace stoker
