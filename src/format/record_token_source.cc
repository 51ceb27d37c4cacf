#include "format/record_token_source.h"

#include <algorithm>
#include <limits>

#include "records/arrow_sources.h"

namespace stoker {
namespace {

bool IsTokenField(const Field& f) { return f.type == FieldType::kTokens; }

// The column to read, from the first record's fields.
Result<std::string> PickField(const Record& first, const std::string& input) {
  std::vector<std::string> candidates;
  std::string all;
  for (const Field& f : first.fields) {
    all += (all.empty() ? "" : ", ") + f.name + " (" + std::string(FieldTypeName(f.type)) + ")";
    if (IsTokenField(f)) candidates.push_back(f.name);
  }
  if (candidates.size() == 1) return candidates[0];
  for (const char* preferred : {"input_ids", "tokens", "ids", "token_ids"}) {
    if (std::find(candidates.begin(), candidates.end(), preferred) != candidates.end()) {
      return std::string(preferred);
    }
  }
  return InvalidArgument(input + ": " +
                         (candidates.empty() ? "no token-array field to read as tokens"
                                             : "several token-array fields, none of them named "
                                               "input_ids/tokens/ids/token_ids") +
                         " (fields: " + all + "); pack it with `stoker pack --text-field FIELD`");
}

}  // namespace

bool IsRecordTokenDataset(const std::string& path) {
  switch (DetectRecordFormat(path)) {
    case RecordFormat::kMds:
    case RecordFormat::kLitData:
    case RecordFormat::kParquet:
    case RecordFormat::kArrow:
      return true;
    default:
      return false;
  }
}

Result<std::unique_ptr<RecordTokenSource>> RecordTokenSource::Open(const std::string& input,
                                                                   RecordFormat format,
                                                                   std::string field) {
  RecordFormat f = format == RecordFormat::kAuto ? DetectRecordFormat(input) : format;
  STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> shards, ExpandRecordShards({input}, f));
  auto src = std::unique_ptr<RecordTokenSource>(new RecordTokenSource());
  src->path_ = input;
  src->format_ = std::string(RecordFormatName(f));
  src->field_ = std::move(field);
  // Every request of its listing and its reads: the shards' stores are metered (record_store.h).
  for (const RecordShard& shard : shards) src->storage_.Add(shard.store.metrics());
  if (src->field_.empty()) {
    // The first record, from the shards already listed (no second listing).
    std::optional<Record> first;
    for (size_t i = 0; i < shards.size() && !first; ++i) {
      STOKER_ASSIGN_OR_RETURN(std::unique_ptr<RecordSource> records, OpenRecordShard(shards[i]));
      STOKER_ASSIGN_OR_RETURN(first, records->Next());
    }
    if (!first) return InvalidArgument(input + ": no records");
    STOKER_ASSIGN_OR_RETURN(src->field_, PickField(*first, input));
  }
  if (f == RecordFormat::kParquet || f == RecordFormat::kArrow) {
    STOKER_RETURN_IF_ERROR(src->ReadArrowColumns(shards));
  } else {
    STOKER_RETURN_IF_ERROR(src->ReadRecords(shards));
  }
  return src;
}

Status RecordTokenSource::ReadRecords(const std::vector<RecordShard>& shards) {
  for (const RecordShard& shard : shards) {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<RecordSource> records, OpenRecordShard(shard));
    while (true) {
      STOKER_ASSIGN_OR_RETURN(std::optional<Record> r, records->Next());
      if (!r) break;
      const Field* f = r->Find(field_);
      if (f == nullptr || (f->type != FieldType::kTokens && f->type != FieldType::kInt)) {
        return InvalidArgument(r->Where() + ": no token field '" + field_ + "'");
      }
      for (int64_t v : f->ints) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          return OutOfRange(r->Where() + ": token " + std::to_string(v) + " in field '" + field_ +
                            "' does not fit in 32 bits");
        }
        tokens_.push_back(static_cast<int32_t>(v));
      }
      offsets_.push_back(tokens_.size());
    }
    shard_starts_.push_back(offsets_.size() - 1);
  }
  return Status::OK();
}

Status RecordTokenSource::ReadArrowColumns(const std::vector<RecordShard>& shards) {
  RecordFormat f = shards.empty() ? RecordFormat::kParquet : shards[0].format;
  std::string last;
  for (const RecordShard& shard : shards) {
    if (shard.path == last) continue;  // Parquet: one shard per row group, read per file
    last = shard.path;
    STOKER_ASSIGN_OR_RETURN(TokenColumn column, ReadArrowTokenColumn(shard.path, f, field_));
    uint64_t base = tokens_.size();
    tokens_.insert(tokens_.end(), column.tokens.begin(), column.tokens.end());
    for (size_t i = 1; i < column.offsets.size(); ++i) offsets_.push_back(base + column.offsets[i]);
    shard_starts_.push_back(offsets_.size() - 1);
  }
  return Status::OK();
}

Status RecordTokenSource::Check(uint64_t doc, uint64_t offset, uint64_t count) const {
  if (doc >= num_documents() || offset > document_length(doc) ||
      count > document_length(doc) - offset) {
    return OutOfRange(path_ + ": document " + std::to_string(doc) + " tokens [" +
                      std::to_string(offset) + ", " + std::to_string(offset + count) +
                      ") outside the document");
  }
  return Status::OK();
}

Status RecordTokenSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  STOKER_RETURN_IF_ERROR(Check(doc, offset, count));
  std::copy_n(tokens_.data() + offsets_[doc] + offset, count, out);
  return Status::OK();
}

Status RecordTokenSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const {
  STOKER_RETURN_IF_ERROR(Check(doc, offset, count));
  std::copy_n(tokens_.data() + offsets_[doc] + offset, count, out);
  return Status::OK();
}

}  // namespace stoker
