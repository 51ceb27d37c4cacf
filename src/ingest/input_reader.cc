#include "ingest/input_reader.h"

#include <algorithm>

#include "ingest/remote_inputs.h"

namespace stoker {
namespace {

constexpr size_t kMaxDocumentsPerBatch = 4096;

}  // namespace

InputReader::InputReader(const std::vector<InputFile>* files, TaskSlice slice, uint64_t batch_bytes,
                         std::string text_field, std::string key_field, bool skip_corrupt_shards)
    : files_(files),
      slice_(slice),
      batch_bytes_(batch_bytes),
      next_file_(slice.first),
      text_field_(std::move(text_field)),
      key_field_(std::move(key_field)),
      skip_corrupt_shards_(skip_corrupt_shards) {}

Result<bool> InputReader::NextBatch(std::vector<RawDocument>* batch, uint64_t* disk_bytes_done) {
  batch->clear();
  *disk_bytes_done = 0;
  uint64_t bytes = 0;
  auto full = [&] { return bytes >= batch_bytes_ || batch->size() >= kMaxDocumentsPerBatch; };
  // Whether `error` is a corrupt shard that this reader skips: then the document that stands for
  // it (counted as a skip) joins the batch.
  auto skipped = [&](const Status& error) {
    if (error.code() != StatusCode::kCorruption || !skip_corrupt_shards_) return false;
    RawDocument& doc = batch->emplace_back();
    doc.file_index = static_cast<uint32_t>(next_file_);
    doc.record = true;
    doc.missing = error.message();
    doc.corrupt_shard = true;
    return true;
  };
  while (!full()) {
    if (lines_) {
      RawDocument doc;
      STOKER_ASSIGN_OR_RETURN(bool more, lines_->Next(&doc.data));
      const InputFile& file = (*files_)[next_file_];
      if (!more) {
        lines_.reset();
        *disk_bytes_done += file.size_bytes - std::min(counted_in_file_, file.size_bytes);
        ++next_file_;
        continue;
      }
      if (CompressionFromName(file.path) == Compression::kNone) {
        uint64_t line_bytes = std::min(doc.data.size() + 1, file.size_bytes - counted_in_file_);
        counted_in_file_ += line_bytes;
        *disk_bytes_done += line_bytes;
      }
      doc.file_index = static_cast<uint32_t>(next_file_);
      doc.line_number = lines_->line_number();
      doc.offset_bytes = lines_->line_offset_bytes();
      doc.jsonl = true;
      bytes += doc.data.size();
      batch->push_back(std::move(doc));
      continue;
    }
    if (records_) {
      RawDocument doc;
      Result<bool> next = records_->Next(&doc);
      if (!next.ok() && skipped(next.status())) next = false;  // the rest of this shard is skipped
      STOKER_RETURN_IF_ERROR(next.status());
      if (!*next) {
        records_.reset();
        *disk_bytes_done += (*files_)[next_file_].size_bytes;
        ++next_file_;
        continue;
      }
      doc.file_index = static_cast<uint32_t>(next_file_);
      bytes += doc.data.size() + doc.tokens.size() * sizeof(int32_t);
      batch->push_back(std::move(doc));
      continue;
    }
    if (next_file_ >= slice_.last) break;
    const InputFile& file = (*files_)[next_file_];
    if (file.kind == InputKind::kRecords) {
      auto opened = RecordDocumentReader::Open(file, text_field_, key_field_);
      if (!opened.ok() && skipped(opened.status())) {
        // A shard corrupt from its header on (an MDS offset table, an Arrow schema): the whole
        // shard is the counted skip.
        *disk_bytes_done += file.size_bytes;
        ++next_file_;
        continue;
      }
      STOKER_ASSIGN_OR_RETURN(records_, std::move(opened));
      continue;
    }
    if (file.kind == InputKind::kJsonl) {
      STOKER_ASSIGN_OR_RETURN(auto stream, OpenInputStream(file));
      lines_ = std::make_unique<LineReader>(std::move(stream));
      counted_in_file_ = 0;
      continue;
    }
    RawDocument doc;
    STOKER_ASSIGN_OR_RETURN(auto stream, OpenInputStream(file));
    STOKER_RETURN_IF_ERROR(ReadAllDecompressed(*stream, &doc.data));
    doc.file_index = static_cast<uint32_t>(next_file_);
    bytes += doc.data.size();
    batch->push_back(std::move(doc));
    *disk_bytes_done += file.size_bytes;
    ++next_file_;
  }
  return !batch->empty() || next_file_ < slice_.last;
}

}  // namespace stoker
