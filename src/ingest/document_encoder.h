// DocumentEncoder: the per-document work of `stoker pack` — JSONL field extraction, the UTF-8
// policy, tokenization and the EOS token — applied by the pack worker threads.
// Thread-safe: Encode is const; the tokenizer is shared (and must itself be thread-safe).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stoker/status.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace stoker {

class ChatEncoder;

// One input document as read from disk: a JSONL line or a whole text file.
struct RawDocument {
  std::string data;
  uint32_t file_index = 0;    // into the pack's input list (names the file in errors)
  uint64_t line_number = 0;   // 1-based JSONL line; 0 for a whole-file document
  uint64_t offset_bytes = 0;  // where the line starts in the (decompressed) file
  bool jsonl = false;
  // A record of a record shard: `data` is its text field, or `tokens` its token field
  // (pretokenized), or `missing` says why it has neither (treated like a bad JSONL line).
  bool record = false;
  bool pretokenized = false;
  std::vector<int32_t> tokens;
  std::string record_where;    // "record <i> (key '...', byte offset N)" for errors
  uint64_t record_offset = 0;  // a record: where it starts in its shard (Record::offset_bytes)
  std::string missing;
  bool corrupt_shard = false;  // the rest of a corrupt shard, skipped: `missing` says why
};

// What happened to the documents, as stored in the manifest's counters.
struct PackCounters {
  uint64_t documents = 0;                        // written to shards
  uint64_t input_bytes = 0;                      // raw bytes read (decompressed)
  uint64_t invalid_utf8_replaced_documents = 0;  // --utf8 replace: documents repaired
  uint64_t invalid_utf8_replacements = 0;        // U+FFFD inserted in them
  uint64_t invalid_utf8_skipped_documents = 0;   // --utf8 skip
  uint64_t bad_lines_skipped = 0;                // --on-error skip: bad JSON / missing field
  uint64_t empty_documents_skipped = 0;          // no text: nothing to learn, so not written
  uint64_t corrupt_shards_skipped = 0;           // --on-error skip: record shards cut short
  uint64_t trained_tokens = 0;                   // chat data: tokens inside the loss mask
  uint64_t untrained_conversations_skipped = 0;  // chat data: no token left to learn
  // --on-error skip: why lines and records were skipped (the reason, without its place), how
  // many each, and where each was first met. At most kMaxSkipReasons reasons; the others are
  // counted under kOtherSkipReasons. Not a manifest counter: the pack prints them.
  struct SkipReason {
    uint64_t count = 0;
    std::string first;  // "file:line" or "file record ..."
  };
  std::map<std::string, SkipReason> skip_reasons;
  static constexpr size_t kMaxSkipReasons = 16;
  static constexpr const char* kOtherSkipReasons = "other reasons";
  void AddSkipReason(const std::string& why, const std::string& where, uint64_t count = 1);

  void Add(const PackCounters& other);
  // Non-zero counters under their manifest names (documents is always present).
  std::map<std::string, uint64_t> ToMap() const;
};

// The tokens of a run of consecutive documents, in order, each ending with EOS (a conversation
// ends as its template ends it).
struct EncodedDocuments {
  std::vector<int32_t> tokens;
  std::vector<uint64_t> lengths;  // tokens per document, EOS included
  // Chat data: each document's trained spans (format/loss_mask.h), one after another, and how
  // many int32 values each document has there.
  std::vector<int32_t> spans;
  std::vector<uint64_t> span_lengths;
  PackCounters counters;
};

struct DocumentEncoderOptions {
  std::string text_field = "text";  // JSONL field, or record field (text or token ids)
  Utf8Policy utf8 = Utf8Policy::kReplace;
  bool skip_bad_lines = false;  // else a bad JSONL line is an error
  // How the user turns skipping on, named in the error (pack and the stream spell it differently).
  std::string skip_hint = "--on-error skip";
};

class DocumentEncoder {
 public:
  // With `chat` (not null), a JSONL line is a conversation record, encoded by it with its loss
  // mask; `tokenizer` is then unused.
  DocumentEncoder(const Tokenizer* tokenizer, DocumentEncoderOptions options,
                  const ChatEncoder* chat = nullptr);

  // Encodes `doc` (read from `path`) and appends it to *out, or counts it as skipped. Errors
  // (policy "fail", or a bad line without skip) name the file, the line and the byte offset.
  Status Encode(const RawDocument& doc, const std::string& path, EncodedDocuments* out) const;

 private:
  // Records (record_document.cc): a missing field under the --on-error policy, and token ids
  // copied as they are (checked against the vocabulary) followed by EOS.
  Status EncodeRecord(const RawDocument& doc, const std::string& path, EncodedDocuments* out) const;

  // A JSONL line holding a conversation (the text is valid UTF-8 by now).
  Status EncodeConversation(const RawDocument& doc, const std::string& path, std::string_view line,
                            EncodedDocuments* out) const;
  // A bad line: counted (with its reason) under --on-error skip, else the error naming the file
  // and the line.
  Status BadLine(const RawDocument& doc, const std::string& path, const std::string& why,
                 PackCounters* counters) const;

  const Tokenizer* tokenizer_;
  DocumentEncoderOptions options_;
  const ChatEncoder* chat_;
};

}  // namespace stoker
