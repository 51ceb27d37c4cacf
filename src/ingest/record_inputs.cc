#include "ingest/record_inputs.h"

#include <limits>

#include "common/file_util.h"
#include "records/brace_expand.h"

namespace stoker {
namespace {

RecordFormat ToRecordFormat(PackInputFormat f) {
  switch (f) {
    case PackInputFormat::kWebDataset:
      return RecordFormat::kWebDataset;
    case PackInputFormat::kTfRecord:
      return RecordFormat::kTfRecord;
    case PackInputFormat::kMds:
      return RecordFormat::kMds;
    case PackInputFormat::kLitData:
      return RecordFormat::kLitData;
    case PackInputFormat::kParquet:
      return RecordFormat::kParquet;
    case PackInputFormat::kArrow:
      return RecordFormat::kArrow;
    default:
      return RecordFormat::kAuto;
  }
}

// The record's key: the key field's value when asked for and present, else the format's key.
std::string KeyOf(const Record& r, const std::string& key_field) {
  if (key_field.empty()) return r.key;
  const Field* f = r.Find(key_field);
  if (f == nullptr) return r.key;
  switch (f->type) {
    case FieldType::kBytes:
    case FieldType::kString:
      return f->bytes;
    case FieldType::kInt:
    case FieldType::kTokens:
      return f->ints.empty() ? r.key : std::to_string(f->ints[0]);
    case FieldType::kFloat:
      return r.key;
  }
  return r.key;
}

}  // namespace

Result<PackInputFormat> ParsePackInputFormat(std::string_view name) {
  if (name == "auto") return PackInputFormat::kAuto;
  if (name == "jsonl" || name == "text") return PackInputFormat::kPlain;
  if (name == "webdataset" || name == "wds") return PackInputFormat::kWebDataset;
  if (name == "tfrecord") return PackInputFormat::kTfRecord;
  if (name == "mds") return PackInputFormat::kMds;
  if (name == "litdata") return PackInputFormat::kLitData;
  if (name == "parquet") return PackInputFormat::kParquet;
  if (name == "arrow" || name == "hf") return PackInputFormat::kArrow;
  return InvalidArgument(
      "--input-format must be auto, jsonl, text, webdataset, tfrecord, mds, litdata, parquet or "
      "arrow, not '" +
      std::string(name) + "'");
}

Result<std::vector<InputFile>> ExpandPackInputs(const std::vector<std::string>& inputs,
                                                PackInputFormat format) {
  if (format == PackInputFormat::kPlain) return ExpandInputs(inputs);
  std::vector<InputFile> files;
  for (const std::string& input : inputs) {
    // A remote input is record shards: JSONL and text are read from local files only.
    bool records = format != PackInputFormat::kAuto || IsRemoteRecordUri(input) ||
                   DetectRecordFormat(input) != RecordFormat::kAuto ||
                   (HasBracePattern(input) && !PathExists(input));
    if (!records) {
      STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> plain, ExpandInputs({input}));
      for (InputFile& f : plain) files.push_back(std::move(f));
      continue;
    }
    STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> shards,
                            ExpandRecordShards({input}, ToRecordFormat(format)));
    for (RecordShard& s : shards) {
      InputFile f;
      f.path = s.path;
      f.size_bytes = s.size_bytes;
      f.kind = InputKind::kRecords;
      f.shard = std::move(s);
      files.push_back(std::move(f));
    }
  }
  return files;
}

Result<std::unique_ptr<RecordDocumentReader>> RecordDocumentReader::Open(const InputFile& file,
                                                                         std::string text_field,
                                                                         std::string key_field) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<RecordSource> source, OpenRecordShard(file.shard));
  return std::unique_ptr<RecordDocumentReader>(
      new RecordDocumentReader(std::move(source), std::move(text_field), std::move(key_field)));
}

Result<bool> RecordDocumentReader::Next(RawDocument* doc) {
  STOKER_ASSIGN_OR_RETURN(std::optional<Record> r, source_->Next());
  if (!r) return false;
  doc->record = true;
  doc->jsonl = false;
  doc->line_number = r->index + 1;
  doc->offset_bytes = 0;
  doc->record_offset = r->offset_bytes;
  std::string key = KeyOf(*r, key_field_);
  doc->record_where = "record " + std::to_string(r->index) + " (key '" + key + "', byte offset " +
                      std::to_string(r->offset_bytes) + ")";
  doc->pretokenized = false;
  doc->tokens.clear();
  doc->missing.clear();
  doc->data.clear();
  Field* f = nullptr;
  for (Field& candidate : r->fields) {
    if (candidate.name == text_field_) f = &candidate;
  }
  if (f == nullptr) {
    std::string names;
    for (const Field& x : r->fields) names += (names.empty() ? "" : ", ") + x.name;
    doc->missing = "no field '" + text_field_ + "' (fields: " + names + ")";
    return true;
  }
  switch (f->type) {
    case FieldType::kBytes:
    case FieldType::kString:
      doc->data = std::move(f->bytes);
      return true;
    case FieldType::kInt:
    case FieldType::kTokens:
      doc->pretokenized = true;
      doc->tokens.reserve(f->ints.size());
      for (int64_t v : f->ints) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          doc->missing = "token " + std::to_string(v) + " in field '" + text_field_ +
                         "' does not fit in 32 bits";
          return true;
        }
        doc->tokens.push_back(static_cast<int32_t>(v));
      }
      return true;
    case FieldType::kFloat:
      doc->missing = "field '" + text_field_ + "' holds floats, not text or token ids";
      return true;
  }
  return true;
}

}  // namespace stoker
