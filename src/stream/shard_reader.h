// ShardReader: the documents of one StreamShard in order, each with its reference (shard, record,
// byte offset) and its tokens (ingest's DocumentEncoder: JSONL field or record field, --utf8
// policy, tokenizer, EOS — so the ids equal `stoker pack`'s). Reading (NextRaw) and encoding
// (EncodeItem) are separate steps so that DocPipeline can encode on many threads while one
// reads. Also re-reads documents by reference, for resume.
// Not thread-safe: one user at a time, except EncodeItem (const, thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ingest/document_encoder.h"
#include "ingest/line_reader.h"
#include "ingest/record_inputs.h"
#include "stream/shards.h"

namespace stoker::stream {

// Where a document lives: its shard, its index among the shard's records, and the byte offset of
// its line in the (decompressed) file, or of its record in the shard (the tar member's header,
// the TFRecord's length field, the MDS sample; decompressed for .gz/.zst); 0 for whole files.
struct DocRef {
  uint32_t shard = 0;
  uint64_t record = 0;
  uint64_t offset = 0;
  bool operator==(const DocRef&) const = default;
};

struct StreamDoc {
  DocRef ref;
  std::vector<int32_t> tokens;  // EOS included; never empty
  std::vector<int32_t> spans;   // chat data: the trained spans (format/loss_mask.h); else empty
};

// One record as read, before encoding.
struct RawItem {
  DocRef ref;
  RawDocument raw;
};

// How a stream user asks to skip bad lines and records (named in the error that stops the stream).
inline constexpr const char* kStreamSkipHint = "--on-error skip (Python: on_error=\"skip\")";

struct ReaderOptions {
  DocumentEncoderOptions encoder;  // skip_bad_lines = on_error "skip"
  // A truncated or corrupt compressed shard: "skip" ends the shard early instead of failing with
  // the error (which names the file and the compressed offset).
  bool skip_corrupt_shards = false;
  // Chat data: records are conversations, encoded with their loss mask; null for text.
  std::shared_ptr<const ChatEncoder> chat;
};

class ShardReader {
 public:
  ShardReader(const std::vector<StreamShard>* shards, const Tokenizer* tokenizer,
              ReaderOptions options);

  // Starts reading shard `shard` at record `record` whose line starts at byte `offset` (0, 0 =
  // from the shard's beginning), up to (not including) record `end_record`.
  Status Open(uint32_t shard, uint64_t record, uint64_t offset, uint64_t end_record = UINT64_MAX);
  // The next record, not yet encoded, or false at the shard's end (or, under
  // skip_corrupt_shards, at a corrupt or vanished part of it). Sets next_record/offset.
  Result<bool> NextRaw(RawItem* item);
  // Encodes `item` into *scratch (cleared first). *kept: it yields a document (else it was
  // skipped, counted in scratch->counters). Errors name the file and the line or byte offset.
  // Thread-safe: reads only the shard list and the (const) encoder.
  Status EncodeItem(const RawItem& item, EncodedDocuments* scratch, bool* kept) const;
  // Where the next document would be read from (for a checkpoint).
  uint64_t next_record() const { return next_record_; }
  uint64_t next_offset() const { return next_offset_; }

  // Reads `shards` from now on (the list an elastic epoch's references index; docs/streaming.md).
  void set_shards(const std::vector<StreamShard>* shards) { shards_ = shards; }

  // Re-reads the documents `refs` (all of one shard, records increasing) in one pass.
  Status ReadRefs(const std::vector<DocRef>& refs, std::vector<StreamDoc>* out);

 private:
  Result<bool> NextLine(std::string* line, uint64_t* offset);
  Status CorruptOrFail(const Status& st);  // skip_corrupt_shards: end the shard

  const std::vector<StreamShard>* shards_;
  const Tokenizer* tokenizer_;
  ReaderOptions options_;
  DocumentEncoder encoder_;
  uint32_t shard_ = 0;
  std::unique_ptr<LineReader> lines_;
  std::unique_ptr<RecordDocumentReader> records_;
  uint64_t base_ = 0;  // file offset of the stream's byte 0
  uint64_t next_record_ = 0, next_offset_ = 0;
  uint64_t end_record_ = UINT64_MAX;  // the record this reading stops before
  bool whole_done_ = false;           // a whole-file document already returned
  bool open_ = false;
  EncodedDocuments scratch_;
};

}  // namespace stoker::stream
