// Arrow IPC through Arrow C++: the stream format (what Hugging Face save_to_disk writes,
// docs/formats-reference.md §7.2) read message by message, or the ARROW1 file format read batch by
// batch.
#include <arrow/ipc/reader.h>
#include <arrow/record_batch.h>

#include "records/arrow/arrow_byte_file.h"
#include "records/arrow/arrow_columns.h"
#include "records/arrow/arrow_module.h"

namespace stoker {
namespace {

bool IsIpcFileFormat(const ByteSource& source) {
  char head[6];
  Result<size_t> got = source.ReadAt(0, 6, head);
  return got.ok() && *got == 6 && std::string_view(head, 6) == "ARROW1";
}

class ArrowIpcSource final : public RecordSource {
 public:
  static Result<std::unique_ptr<RecordSource>> Open(std::shared_ptr<const ByteSource> source) {
    std::string uri = source->uri();
    bool file_format = IsIpcFileFormat(*source);
    auto self = std::unique_ptr<ArrowIpcSource>(new ArrowIpcSource());
    self->file_ = std::make_shared<ArrowByteFile>(std::move(source));
    if (file_format) {
      auto reader = arrow::ipc::RecordBatchFileReader::Open(self->file_.get());
      if (!reader.ok()) return FromArrow(reader.status(), uri + ": Arrow IPC file footer");
      self->file_reader_ = std::move(*reader);
    } else {
      auto reader = arrow::ipc::RecordBatchStreamReader::Open(self->file_.get());
      if (!reader.ok()) {
        return FromArrow(reader.status(), uri + ": Arrow IPC stream schema (byte offset 0)");
      }
      self->stream_reader_ = std::move(*reader);
    }
    ArrowIpcSource* p = self.get();
    self->rows_.emplace(uri, 0, 0, [p, uri]() -> Result<std::shared_ptr<arrow::RecordBatch>> {
      int64_t at = p->file_->Tell().ValueOr(0);
      if (p->file_reader_ != nullptr) {
        if (p->next_batch_ >= p->file_reader_->num_record_batches()) {
          return std::shared_ptr<arrow::RecordBatch>();
        }
        auto batch = p->file_reader_->ReadRecordBatch(p->next_batch_);
        if (!batch.ok()) {
          return FromArrow(batch.status(),
                           uri + ": Arrow IPC record batch " + std::to_string(p->next_batch_));
        }
        ++p->next_batch_;
        // A batch read from untrusted bytes: its offsets and lengths are checked before any row
        // is read (the readers' own checks do not look inside list offsets).
        arrow::Status valid = (*batch)->ValidateFull();
        if (!valid.ok()) {
          return FromArrow(valid,
                           uri + ": Arrow IPC record batch " + std::to_string(p->next_batch_ - 1));
        }
        return *batch;
      }
      std::shared_ptr<arrow::RecordBatch> batch;
      arrow::Status s = p->stream_reader_->ReadNext(&batch);
      if (s.ok() && batch != nullptr) s = batch->ValidateFull();
      if (!s.ok()) {
        return FromArrow(s, uri + ": Arrow IPC message at byte offset " + std::to_string(at));
      }
      return batch;
    });
    return std::unique_ptr<RecordSource>(std::move(self));
  }

  Result<std::optional<Record>> Next() override { return rows_->Next(); }

 private:
  ArrowIpcSource() = default;

  std::shared_ptr<ArrowByteFile> file_;  // outlives the readers
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> file_reader_;
  std::shared_ptr<arrow::ipc::RecordBatchStreamReader> stream_reader_;
  int next_batch_ = 0;
  std::optional<ArrowRowReader> rows_;
};

}  // namespace

namespace arrow_module {

Result<std::unique_ptr<RecordSource>> OpenArrowIpcShard(const RecordShard& shard,
                                                        std::shared_ptr<const ByteSource> source) {
  return ArrowIpcSource::Open(std::move(source));
}

}  // namespace arrow_module
}  // namespace stoker
