// ArrowByteFile: an arrow::io::RandomAccessFile over a stoker ByteSource, so that Arrow's Parquet
// and IPC readers read through the storage interface (local files today, S3/HTTP later) and
// never open a path themselves. Also the Status conversion used by every Arrow reader here.
// ReadAt is thread-safe (it is ByteSource::ReadAt); Read/Seek/Tell share one position and are
// for one user at a time, as Arrow's own files are.
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <memory>
#include <string>

#include "stoker/status.h"
#include "storage/byte_source.h"

namespace stoker {

class ArrowByteFile final : public arrow::io::RandomAccessFile {
 public:
  explicit ArrowByteFile(std::shared_ptr<const ByteSource> source) : source_(std::move(source)) {}

  arrow::Status Close() override;
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Status Seek(int64_t position) override;
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override;
  arrow::Result<int64_t> GetSize() override;
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, bool allow_short_read,
                                void* out) override;
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes,
                                                       bool allow_short_read) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override;

  const std::string& uri() const { return source_->uri(); }

 private:
  std::shared_ptr<const ByteSource> source_;
  int64_t position_ = 0;
  bool closed_ = false;
};

// An Arrow error as a stoker Status: kCorruption (malformed data is what Arrow reports for a
// damaged file) unless Arrow says IOError / NotImplemented / OutOfMemory; the message is
// "<context>: <arrow message>".
Status FromArrow(const arrow::Status& status, const std::string& context);

}  // namespace stoker
