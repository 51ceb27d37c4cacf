#include "ingest/document_encoder.h"

#include "ingest/jsonl_field.h"

namespace stoker {
namespace {

std::string Where(const RawDocument& doc, const std::string& path) {
  if (doc.record) return path + " " + doc.record_where;
  return doc.jsonl ? path + ":" + std::to_string(doc.line_number) : path;
}

}  // namespace

void PackCounters::Add(const PackCounters& o) {
  documents += o.documents;
  input_bytes += o.input_bytes;
  invalid_utf8_replaced_documents += o.invalid_utf8_replaced_documents;
  invalid_utf8_replacements += o.invalid_utf8_replacements;
  invalid_utf8_skipped_documents += o.invalid_utf8_skipped_documents;
  bad_lines_skipped += o.bad_lines_skipped;
  empty_documents_skipped += o.empty_documents_skipped;
  corrupt_shards_skipped += o.corrupt_shards_skipped;
}

std::map<std::string, uint64_t> PackCounters::ToMap() const {
  std::map<std::string, uint64_t> m = {{"documents", documents}, {"input_bytes", input_bytes}};
  auto put = [&m](const char* name, uint64_t v) {
    if (v != 0) m[name] = v;
  };
  put("invalid_utf8_replaced_documents", invalid_utf8_replaced_documents);
  put("invalid_utf8_replacements", invalid_utf8_replacements);
  put("invalid_utf8_skipped_documents", invalid_utf8_skipped_documents);
  put("bad_lines_skipped", bad_lines_skipped);
  put("empty_documents_skipped", empty_documents_skipped);
  put("corrupt_shards_skipped", corrupt_shards_skipped);
  return m;
}

DocumentEncoder::DocumentEncoder(const Tokenizer* tokenizer, DocumentEncoderOptions options)
    : tokenizer_(tokenizer), options_(std::move(options)) {}

Status DocumentEncoder::Encode(const RawDocument& doc, const std::string& path,
                               EncodedDocuments* out) const {
  if (doc.record && (doc.pretokenized || !doc.missing.empty())) return EncodeRecord(doc, path, out);
  PackCounters& c = out->counters;
  c.input_bytes += doc.data.size() + (doc.jsonl ? 1 : 0);  // + the newline
  // Invalid UTF-8 is handled on the raw bytes, before JSON parsing: a JSON parser rejects it,
  // and the policy must decide, not the parser.
  std::string repaired;
  std::string_view bytes = doc.data;
  size_t bad = FindInvalidUtf8(bytes);
  if (bad != std::string_view::npos) {
    switch (options_.utf8) {
      case Utf8Policy::kFail:
        return InvalidArgument(Where(doc, path) + ": invalid UTF-8 at byte offset " +
                               std::to_string(doc.offset_bytes + bad) +
                               " (use --utf8 replace or --utf8 skip to accept such input)");
      case Utf8Policy::kSkip:
        ++c.invalid_utf8_skipped_documents;
        return Status::OK();
      case Utf8Policy::kReplace:
        c.invalid_utf8_replacements += AppendReplacingInvalidUtf8(bytes, &repaired);
        ++c.invalid_utf8_replaced_documents;
        bytes = repaired;
        break;
    }
  }

  std::string_view text = bytes;
  if (doc.jsonl) {
    auto bad_line = [&](const std::string& why) -> Status {
      if (options_.skip_bad_lines) {
        ++c.bad_lines_skipped;
        return Status::OK();
      }
      return InvalidArgument(Where(doc, path) + " (byte offset " +
                             std::to_string(doc.offset_bytes) + "): " + why + " (use " +
                             options_.skip_hint + " to skip such lines)");
    };
    if (bytes.find_first_not_of(" \t\r") == std::string_view::npos) return Status::OK();
    std::string why;
    switch (JsonlFieldReader::ForThread().Read(bytes, options_.text_field, &text, &why)) {
      case JsonlFieldReader::Outcome::kFound:
        break;
      case JsonlFieldReader::Outcome::kInvalidJson:
        return bad_line("invalid JSON: " + why);
      case JsonlFieldReader::Outcome::kNotObject:
        return bad_line("the line is not a JSON object");
      case JsonlFieldReader::Outcome::kMissing:
        return bad_line("missing text field '" + options_.text_field + "'");
      case JsonlFieldReader::Outcome::kNotString:
        return bad_line("field '" + options_.text_field + "' is a " + why + ", not a string");
    }
  }
  if (text.empty()) {
    ++c.empty_documents_skipped;
    return Status::OK();
  }
  size_t start = out->tokens.size();
  Status st = tokenizer_->Encode(text, &out->tokens);
  if (!st.ok()) {
    out->tokens.resize(start);
    return st.WithContext(Where(doc, path));
  }
  out->tokens.push_back(tokenizer_->eos_id());
  out->lengths.push_back(out->tokens.size() - start);
  ++c.documents;
  return Status::OK();
}

}  // namespace stoker
