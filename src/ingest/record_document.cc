// DocumentEncoder's handling of records that are not plain text (see document_encoder.h).
#include "ingest/document_encoder.h"

namespace stoker {

Status DocumentEncoder::EncodeRecord(const RawDocument& doc, const std::string& path,
                                     EncodedDocuments* out) const {
  PackCounters& c = out->counters;
  if (doc.corrupt_shard) {
    ++c.corrupt_shards_skipped;  // only produced under --on-error skip
    return Status::OK();
  }
  if (!doc.missing.empty()) {
    if (options_.skip_bad_lines) {
      ++c.bad_lines_skipped;
      c.AddSkipReason(doc.missing, path + " " + doc.record_where);
      return Status::OK();
    }
    return InvalidArgument(path + " " + doc.record_where + ": " + doc.missing + " (use " +
                           options_.skip_hint + " to skip such records)");
  }
  c.input_bytes += doc.tokens.size() * sizeof(int32_t);
  if (doc.tokens.empty()) {
    ++c.empty_documents_skipped;
    return Status::OK();
  }
  const uint64_t vocab = tokenizer_->vocab_size();
  for (size_t i = 0; i < doc.tokens.size(); ++i) {
    if (doc.tokens[i] < 0 || static_cast<uint64_t>(doc.tokens[i]) >= vocab) {
      return InvalidArgument(path + " " + doc.record_where + ": token " +
                             std::to_string(doc.tokens[i]) + " at position " + std::to_string(i) +
                             " is outside the tokenizer's vocabulary of " + std::to_string(vocab) +
                             " (pass the tokenizer these ids came from with --tokenizer)");
    }
  }
  out->tokens.insert(out->tokens.end(), doc.tokens.begin(), doc.tokens.end());
  out->tokens.push_back(tokenizer_->eos_id());
  out->lengths.push_back(doc.tokens.size() + 1);
  ++c.documents;
  return Status::OK();
}

}  // namespace stoker
