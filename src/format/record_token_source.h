// RecordTokenSource: a TokenSource over the token column of a record dataset — MosaicML MDS
// ndarray columns, LitData token leaves and TokensLoader items, Parquet and Arrow
// list<int> columns — so that the indexed path (plan, loader, bench) reads them in place, as it
// reads Megatron and .npy files. One record is one document; one record shard (MDS shard, LitData
// chunk, Parquet or Arrow file) is one shard.
//
// The column is read once at Open into memory (int32 tokens plus one offset per document:
// about 4 bytes per token), which suits datasets that fit in RAM; pack larger ones into stoker
// shards (`stoker pack --text-field COLUMN`), which are memory-mapped instead.
// Thread-safe: immutable after Open.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "records/record_source.h"
#include "stoker/token_source.h"
#include "storage/metering_backend.h"

namespace stoker {

class RecordTokenSource : public TokenSource {
 public:
  // Opens the record dataset `input` (format detected as DetectRecordFormat does when kAuto) and
  // reads the token column `field`. An empty `field` picks the column: the only token-array
  // field of the first record, else the first of input_ids, tokens, ids, token_ids among them.
  // kInvalidArgument naming the input and the fields when there is no such column (or the choice
  // is ambiguous); kOutOfRange for a token outside int32; reader errors as they come.
  static Result<std::unique_ptr<RecordTokenSource>> Open(const std::string& input,
                                                         RecordFormat format = RecordFormat::kAuto,
                                                         std::string field = "");

  std::string_view format() const override { return format_; }
  const std::string& path() const override { return path_; }
  TokenDType dtype() const override { return TokenDType::kInt32; }
  uint64_t num_documents() const override { return offsets_.size() - 1; }
  uint64_t num_tokens() const override { return tokens_.size(); }
  uint64_t document_length(uint64_t doc) const override {
    return offsets_[doc + 1] - offsets_[doc];
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override;
  uint64_t num_shards() const override { return shard_starts_.size() - 1; }
  uint64_t shard_first_document(uint64_t shard) const override { return shard_starts_[shard]; }

  // The column that was read.
  const std::string& field() const { return field_; }
  // Remote inputs: every request of the listing and the reads at Open (all of them: the column
  // is read whole then).
  StorageStats storage_stats() const override { return storage_.Total(); }

 private:
  RecordTokenSource() = default;
  Status Check(uint64_t doc, uint64_t offset, uint64_t count) const;
  Status ReadRecords(const std::vector<RecordShard>& shards);
  Status ReadArrowColumns(const std::vector<RecordShard>& shards);

  std::string path_;
  std::string format_;
  std::string field_;
  std::vector<int32_t> tokens_;
  std::vector<uint64_t> offsets_{0};       // document d is tokens_[offsets_[d], offsets_[d+1])
  std::vector<uint64_t> shard_starts_{0};  // first document of each shard, then the total
  storage::MetricsSet storage_;            // of the shards' stores
};

// True when `path` is a record dataset whose token column RecordTokenSource reads: an MDS or
// LitData index directory, a save_to_disk directory, a .parquet or .arrow file.
bool IsRecordTokenDataset(const std::string& path);

}  // namespace stoker
