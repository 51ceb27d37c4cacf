// The records input path of `stoker pack`: record shards (WebDataset, TFRecord, MDS, LitData,
// Parquet, Arrow / Hugging Face save_to_disk) in the
// input list beside JSONL and text files, and the reader that turns one shard's records into
// documents — the text field to tokenize, or a token field to copy.
// ExpandPackInputs is thread-safe; a RecordDocumentReader is not (one user: the pack reader).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingest/document_encoder.h"
#include "ingest/input_plan.h"
#include "records/record_source.h"

namespace stoker {

// How pack reads its inputs: "auto" (record shards by name, see DetectRecordFormat, everything
// else as JSONL/text), "jsonl" / "text" (the JSONL/text path only), or a record format name.
enum class PackInputFormat {
  kAuto,
  kPlain,
  kWebDataset,
  kTfRecord,
  kMds,
  kLitData,
  kParquet,
  kArrow
};
Result<PackInputFormat> ParsePackInputFormat(std::string_view name);

// The ordered input list: each argument expands to its record shards (InputKind::kRecords) or,
// on the JSONL/text path, as ExpandInputs does. Errors name the input.
Result<std::vector<InputFile>> ExpandPackInputs(const std::vector<std::string>& inputs,
                                                PackInputFormat format);

// RecordDocumentReader's text field meaning "the whole record, as JSON" (chat data).
inline constexpr char kWholeRecord[] = "*";

class RecordDocumentReader {
 public:
  // Opens the shard of `file` (kind kRecords). `text_field` names the field holding the text
  // (bytes or string) or the token ids (tokens or int); `key_field`, if not empty, the field
  // whose value is the record's key in error messages.
  // `text_field` kWholeRecord: the document is the whole record as a JSON object (chat data):
  // nested fields as they are, strings as strings, a WebDataset `json` member's keys merged in.
  static Result<std::unique_ptr<RecordDocumentReader>> Open(const InputFile& file,
                                                            std::string text_field,
                                                            std::string key_field);

  // The next record as a document, or false at the end of the shard. A record without a usable
  // field becomes a document with `missing` set (the encoder applies --bad-lines).
  Result<bool> Next(RawDocument* doc);

 private:
  RecordDocumentReader(std::unique_ptr<RecordSource> source, std::string text_field,
                       std::string key_field)
      : source_(std::move(source)),
        text_field_(std::move(text_field)),
        key_field_(std::move(key_field)) {}

  // The whole record as JSON (text_field_ == kWholeRecord).
  void RecordToJson(Record* r, RawDocument* doc) const;

  std::unique_ptr<RecordSource> source_;
  std::string text_field_;
  std::string key_field_;
};

}  // namespace stoker
