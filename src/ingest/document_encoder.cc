#include "ingest/document_encoder.h"

#include <nlohmann/json.hpp>

#include "chat/chat_encoder.h"
#include "chat/json_record.h"
#include "format/loss_mask.h"
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
  trained_tokens += o.trained_tokens;
  untrained_conversations_skipped += o.untrained_conversations_skipped;
  for (const auto& [why, r] : o.skip_reasons) AddSkipReason(why, r.first, r.count);
}

void PackCounters::AddSkipReason(const std::string& why, const std::string& where, uint64_t count) {
  auto it = skip_reasons.find(why);
  if (it == skip_reasons.end() && skip_reasons.size() >= kMaxSkipReasons) {
    it = skip_reasons.find(kOtherSkipReasons);
  }
  if (it == skip_reasons.end()) {
    const bool full = skip_reasons.size() + 1 >= kMaxSkipReasons;
    it = skip_reasons.emplace(full ? kOtherSkipReasons : why, SkipReason{0, where}).first;
  }
  it->second.count += count;
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
  put("trained_tokens", trained_tokens);
  put("untrained_conversations_skipped", untrained_conversations_skipped);
  return m;
}

DocumentEncoder::DocumentEncoder(const Tokenizer* tokenizer, DocumentEncoderOptions options,
                                 const ChatEncoder* chat)
    : tokenizer_(tokenizer), options_(std::move(options)), chat_(chat) {}

Status DocumentEncoder::BadLine(const RawDocument& doc, const std::string& path,
                                const std::string& why, PackCounters* counters) const {
  if (options_.skip_bad_lines) {
    ++counters->bad_lines_skipped;
    counters->AddSkipReason(why, Where(doc, path));
    return Status::OK();
  }
  return InvalidArgument(Where(doc, path) + " (byte offset " + std::to_string(doc.offset_bytes) +
                         "): " + why + " (use " + options_.skip_hint + " to skip such lines)");
}

Status DocumentEncoder::EncodeConversation(const RawDocument& doc, const std::string& path,
                                           std::string_view line, EncodedDocuments* out) const {
  PackCounters& c = out->counters;
  // Key order is kept: a template iterates a tool's parameters as the file lists them.
  nlohmann::ordered_json record;
  if (!ParseJsonRecord(line, &record)) return BadLine(doc, path, "invalid JSON", &c);
  if (!record.is_object()) return BadLine(doc, path, "the line is not a JSON object", &c);
  Result<ChatIds> ids = chat_->Encode(std::move(record));
  if (!ids.ok()) return BadLine(doc, path, ids.status().message(), &c);
  const size_t first_span = out->spans.size();
  const uint64_t trained = MaskToSpans(ids->mask, &out->spans);
  if (trained == 0) {
    ++c.untrained_conversations_skipped;
    return Status::OK();
  }
  out->tokens.insert(out->tokens.end(), ids->ids.begin(), ids->ids.end());
  out->lengths.push_back(ids->ids.size());
  out->span_lengths.push_back(out->spans.size() - first_span);
  c.trained_tokens += trained;
  ++c.documents;
  return Status::OK();
}

Status DocumentEncoder::Encode(const RawDocument& doc, const std::string& path,
                               EncodedDocuments* out) const {
  if (chat_ != nullptr && !doc.jsonl && !doc.record) {
    return InvalidArgument(Where(doc, path) +
                           ": chat data is read from JSONL files and record shards; this input is "
                           "a text file");
  }
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

  if (chat_ != nullptr) {
    if (bytes.find_first_not_of(" \t\r") == std::string_view::npos) return Status::OK();
    return EncodeConversation(doc, path, bytes, out);
  }
  std::string_view text = bytes;
  if (doc.jsonl) {
    auto bad_line = [&](const std::string& why) { return BadLine(doc, path, why, &c); };
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
        return bad_line("missing text field '" + options_.text_field + "'" +
                        (bytes.find("\"messages\"") != std::string_view::npos
                             ? " (a conversation? chat data is told by its first record, "
                               "or by --train-on, and is packed in one task for now)"
                             : ""));
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
