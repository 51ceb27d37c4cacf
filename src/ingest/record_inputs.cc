#include "ingest/record_inputs.h"

#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "ingest/remote_inputs.h"
#include "records/brace_expand.h"
#include "text/utf8.h"

namespace stoker {
namespace {

RecordFormat ToRecordFormat(PackInputFormat f) {
  // Indexed by PackInputFormat: kAuto and kPlain (no record format), then the record formats.
  static constexpr RecordFormat kFormats[] = {RecordFormat::kAuto,       RecordFormat::kAuto,
                                              RecordFormat::kWebDataset, RecordFormat::kTfRecord,
                                              RecordFormat::kMds,        RecordFormat::kLitData,
                                              RecordFormat::kParquet,    RecordFormat::kArrow};
  static_assert(static_cast<size_t>(PackInputFormat::kWebDataset) == 2 &&
                static_cast<size_t>(PackInputFormat::kArrow) + 1 == std::size(kFormats));
  const auto i = static_cast<size_t>(f);
  return i < std::size(kFormats) ? kFormats[i] : RecordFormat::kAuto;
}

// The record's key: the key field's value when asked for and present, else the format's key.
std::string KeyOf(const Record& r, const std::string& key_field) {
  if (key_field.empty()) return r.key;
  const Field* f = r.Find(key_field);
  if (f == nullptr) return r.key;
  switch (f->type) {
    case FieldType::kBytes:
    case FieldType::kString:
    case FieldType::kJson:
      return f->bytes;
    case FieldType::kInt:
    case FieldType::kTokens:
      return f->ints.empty() ? r.key : std::to_string(f->ints[0]);
    case FieldType::kFloat:
      return r.key;
  }
  return r.key;
}

// The record shards of `input` (a shard, a pattern or a dataset directory), as input files.
Status AppendRecordShards(const std::string& input, RecordFormat format,
                          std::vector<InputFile>* files) {
  STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> shards, ExpandRecordShards({input}, format));
  for (RecordShard& s : shards) {
    InputFile f;
    f.path = s.path;
    f.size_bytes = s.size_bytes;
    f.kind = InputKind::kRecords;
    f.shard = std::move(s);
    files->push_back(std::move(f));
  }
  return Status::OK();
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
  std::vector<InputFile> files;
  for (const std::string& input : inputs) {
    // Remote JSONL and text (by name, or all remote inputs with --input-format jsonl|text).
    if (IsRemoteRecordUri(input) &&
        (format == PackInputFormat::kPlain ||
         (format == PackInputFormat::kAuto && IsRemotePlainInput(input)))) {
      STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> remote, ExpandRemotePlainInput(input));
      for (InputFile& f : remote) files.push_back(std::move(f));
      continue;
    }
    if (format == PackInputFormat::kPlain) {
      STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> plain, ExpandInputs({input}));
      for (InputFile& f : plain) files.push_back(std::move(f));
      continue;
    }
    // A remote input with another name is record shards.
    bool records = format != PackInputFormat::kAuto || IsRemoteRecordUri(input) ||
                   DetectRecordFormat(input) != RecordFormat::kAuto ||
                   (HasBracePattern(input) && !PathExists(input));
    if (!records) {
      // In a directory, a file named as a record shard (*.parquet, *.arrow, *.tar, *.tfrecord)
      // is one: its bytes are never a document.
      STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> plain, ExpandInputs({input}));
      for (InputFile& f : plain) {
        if (DetectRecordFormat(f.path) == RecordFormat::kAuto) {
          files.push_back(std::move(f));
        } else {
          STOKER_RETURN_IF_ERROR(AppendRecordShards(f.path, RecordFormat::kAuto, &files));
        }
      }
      continue;
    }
    STOKER_RETURN_IF_ERROR(AppendRecordShards(input, ToRecordFormat(format), &files));
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
  if (text_field_ == kWholeRecord) {
    RecordToJson(&*r, doc);
    return true;
  }
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
    case FieldType::kJson:
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

void RecordDocumentReader::RecordToJson(Record* r, RawDocument* doc) const {
  nlohmann::ordered_json record = nlohmann::ordered_json::object();
  for (Field& f : r->fields) {
    switch (f.type) {
      case FieldType::kJson:
      case FieldType::kBytes: {
        nlohmann::ordered_json v = nlohmann::ordered_json::parse(f.bytes, nullptr, false);
        if (f.type == FieldType::kJson) {
          record[f.name] = std::move(v);
        } else if (f.name == "json" && v.is_object()) {  // a WebDataset sample's .json member
          for (auto& [key, value] : v.items()) record[key] = std::move(value);
        } else if (FindInvalidUtf8(f.bytes) == std::string_view::npos) {
          record[f.name] = std::move(f.bytes);
        }
        break;
      }
      case FieldType::kString:
        if (FindInvalidUtf8(f.bytes) == std::string_view::npos) record[f.name] = std::move(f.bytes);
        break;
      case FieldType::kInt:
        if (f.ints.size() == 1) record[f.name] = f.ints[0];
        break;
      case FieldType::kTokens:
      case FieldType::kFloat:
        break;
    }
  }
  doc->data = record.dump();
}

}  // namespace stoker
