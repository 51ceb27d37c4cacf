// LengthIndex: a dataset's consolidated length index, one file holding every document's length
// (uint32) and the shard boundaries behind a 128-byte header with the counts, totals and checksums
// (layout: docs/dataset-format.md, "The length index"). The plan maps it and reads lengths in
// place, so every process on a machine shares one copy in the page cache. The header alone says
// where each array lies, so a reader of a remote file needs one request for the header and one per
// byte range it wants.
//
// Open runs the O(1) checks (magic, version, header checksum, offsets against the file size, the
// shard array's checksum). The lengths are checked lazily: a version-2 file holds an XXH3-64 per
// chunk of 1,024 lengths, and chunk_verifier() verifies a chunk the first time one of its lengths
// is read (a version-1 file, written before chunks existed, has none: OpenDatasetLengthIndex
// hashes it whole instead). VerifyChecksum hashes the whole file against the header, Verify also
// checks every chunk and recomputes the totals. Thread-safe: immutable after Open.
// LengthIndexWriter: one user at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/atomic_file.h"
#include "common/hash.h"
#include "common/mapped_file.h"
#include "format/length_hash.h"
#include "stoker/chunk_verifier.h"
#include "stoker/status.h"

namespace stoker {

inline constexpr char kLengthIndexMagic[8] = {'S', 'T', 'K', 'L', 'E', 'N', 'S', '1'};
inline constexpr uint32_t kLengthIndexVersion = 2;  // 1: no chunk checksums (still read)
inline constexpr uint32_t kLengthChunkShift = 10;   // 1,024 lengths (one 4 KiB page) per chunk
inline constexpr uint64_t kLengthIndexHeaderBytes = 128;
// The file name `stoker pack`, `stoker merge` and `stoker index` give it in a dataset directory.
inline constexpr std::string_view kLengthIndexFileName = "lengths.stkidx";

struct LengthIndexHeader {
  uint32_t version = kLengthIndexVersion;
  uint64_t num_documents = 0;
  uint64_t num_shards = 0;
  uint64_t total_tokens = 0;
  uint64_t nonempty_documents = 0;
  uint64_t max_length = 0;
  // FingerprintHasher over every length in order: what the plan fingerprint hashes.
  uint64_t length_hash = 0;
  uint64_t shards_offset = 0;   // (num_shards + 1) little-endian uint64: first document per shard
  uint64_t lengths_offset = 0;  // num_documents little-endian uint32
  // Version 2: the chunk table, one XXH3-64 (seeded with the chunk's number) per chunk of
  // 2^chunk_shift lengths; 0 in version 1.
  uint64_t chunks_offset = 0;
  uint32_t chunk_shift = 0;
  uint64_t shards_xxh3 = 0;  // version 2: XXH3-64 of the shard array
  uint64_t file_bytes = 0;
  uint64_t arrays_xxh3 = 0;  // XXH3-64 of bytes [shards_offset, file_bytes)
  uint64_t num_chunks() const;
};

// Parses and checks the first `size` (>= 128) bytes of a length index named `file` (for errors):
// magic, version (1 or 2), the header's own checksum, and offsets that agree with the counts.
// kCorruption naming the file and the byte offset of the bad field.
Result<LengthIndexHeader> ParseLengthIndexHeader(const uint8_t* data, uint64_t size,
                                                 const std::string& file);

class LengthIndex {
 public:
  // Maps `path` and checks its header, its size and its shard array (O(shards)).
  static Result<std::shared_ptr<const LengthIndex>> Open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  const LengthIndexHeader& header() const { return header_; }
  uint64_t num_documents() const { return header_.num_documents; }
  // The lengths array (num_documents little-endian uint32, 4-byte aligned in the mapping).
  const uint32_t* lengths() const {
    return reinterpret_cast<const uint32_t*>(file_->data() + header_.lengths_offset);
  }
  // Precondition: s <= num_shards.
  uint64_t shard_first_document(uint64_t s) const;
  // Version 2: verifies a chunk of lengths against its checksum the first time it is touched
  // (kCorruption naming the file, the chunk and its documents). nullptr for version 1.
  const ChunkVerifier* chunk_verifier() const { return chunks_.get(); }
  // Checks chunk `c` against the chunk table now (version 2; precondition: c < num_chunks()).
  Status VerifyChunk(uint64_t c) const;
  // Recomputes the XXH3-64 of the arrays (O(N) at memory bandwidth); kCorruption naming the file
  // if it is not the header's.
  Status VerifyChecksum() const;
  // VerifyChecksum, every chunk, then the shard boundaries and the header's totals recomputed from
  // the lengths.
  Status Verify() const;

 private:
  static uint64_t shard_first(const uint8_t* data, const LengthIndexHeader& h, uint64_t s);
  LengthIndex(std::unique_ptr<MappedFile> file, LengthIndexHeader header)
      : file_(std::move(file)), header_(header) {}
  std::unique_ptr<MappedFile> file_;
  LengthIndexHeader header_;
  std::unique_ptr<ChunkVerifier> chunks_;
};

// Writes a length index: the shard boundaries up front, then the lengths in document order, then
// Finish writes the header. The file is an AtomicFile (common/atomic_file.h) until Finish commits
// it (fsync, rename), so a process killed on the way never leaves a file at `path`.
class LengthIndexWriter {
 public:
  // `shard_first_document`: num_shards + 1 non-decreasing entries from 0 to the document count
  // (just {0} for a dataset without shards, e.g. a pack task that got no documents).
  static Result<std::unique_ptr<LengthIndexWriter>> Create(
      const std::string& path, const std::vector<uint64_t>& shard_first_document);
  ~LengthIndexWriter();  // removes the temporary file unless Finish succeeded
  LengthIndexWriter(const LengthIndexWriter&) = delete;
  LengthIndexWriter& operator=(const LengthIndexWriter&) = delete;

  // Appends lengths; kInvalidArgument for a length above 2^32 - 1 or more than the documents.
  Status Add(const uint64_t* lengths, uint64_t count);
  // Writes the header, syncs and renames; kFailedPrecondition if fewer lengths than documents came.
  Result<LengthIndexHeader> Finish();

 private:
  LengthIndexWriter() = default;
  Status Flush();

  std::string path_;
  std::unique_ptr<AtomicFile> file_;
  LengthIndexHeader header_;
  uint64_t added_ = 0;                  // lengths given to Add
  uint64_t added_lengths_written_ = 0;  // of those, written to the file
  std::vector<uint8_t> pending_;        // bytes not yet written
  std::vector<uint8_t> shard_bytes_;
  std::vector<uint64_t> chunk_xxh3_;  // one per chunk of lengths written so far
  FingerprintHasher length_hash_;
  std::unique_ptr<Xxh3Hasher> checksum_;
};

// Writes `path` from lengths held in memory (tests, tools).
Result<LengthIndexHeader> WriteLengthIndex(const std::string& path,
                                           const std::vector<uint64_t>& shard_first_document,
                                           const std::vector<uint64_t>& lengths);

}  // namespace stoker
