#include "records/arrow/arrow_byte_file.h"

#include <arrow/buffer.h>

#include <algorithm>

namespace stoker {
namespace {

arrow::Status ToArrow(const Status& s) {
  if (s.code() == StatusCode::kNotFound || s.code() == StatusCode::kIOError ||
      s.code() == StatusCode::kUnavailable) {
    return arrow::Status::IOError(s.message());
  }
  return arrow::Status::Invalid(s.message());
}

}  // namespace

arrow::Status ArrowByteFile::Close() {
  closed_ = true;
  return arrow::Status::OK();
}

arrow::Status ArrowByteFile::Seek(int64_t position) {
  if (position < 0) return arrow::Status::Invalid(uri(), ": negative seek");
  position_ = position;
  return arrow::Status::OK();
}

arrow::Result<int64_t> ArrowByteFile::GetSize() {
  return static_cast<int64_t>(source_->size_bytes());
}

arrow::Result<int64_t> ArrowByteFile::ReadAt(int64_t position, int64_t nbytes,
                                             bool allow_short_read, void* out) {
  if (position < 0 || nbytes < 0) return arrow::Status::Invalid(uri(), ": negative read");
  Result<size_t> got = source_->ReadAt(static_cast<uint64_t>(position), static_cast<size_t>(nbytes),
                                       static_cast<char*>(out));
  if (!got.ok()) return ToArrow(got.status());
  if (!allow_short_read && static_cast<int64_t>(*got) < nbytes) {
    return arrow::Status::Invalid(uri(), ": ", nbytes, " bytes at byte offset ", position,
                                  " run past the end (", source_->size_bytes(), " bytes)");
  }
  return static_cast<int64_t>(*got);
}

arrow::Result<int64_t> ArrowByteFile::ReadAt(int64_t position, int64_t nbytes, void* out) {
  return ReadAt(position, nbytes, true, out);
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ArrowByteFile::ReadAt(int64_t position,
                                                                    int64_t nbytes,
                                                                    bool allow_short_read) {
  int64_t size = static_cast<int64_t>(source_->size_bytes());
  // Never allocate past the end of the object: a corrupt length is an error, not an OOM.
  int64_t want = std::clamp<int64_t>(size - position, 0, std::max<int64_t>(nbytes, 0));
  if (!allow_short_read && want < nbytes) {
    return arrow::Status::Invalid(uri(), ": ", nbytes, " bytes at byte offset ", position,
                                  " run past the end (", size, " bytes)");
  }
  ARROW_ASSIGN_OR_RAISE(std::unique_ptr<arrow::ResizableBuffer> buffer,
                        arrow::AllocateResizableBuffer(want));
  ARROW_ASSIGN_OR_RAISE(int64_t got, ReadAt(position, want, true, buffer->mutable_data()));
  ARROW_RETURN_NOT_OK(buffer->Resize(got));
  return std::shared_ptr<arrow::Buffer>(std::move(buffer));
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ArrowByteFile::ReadAt(int64_t position,
                                                                    int64_t nbytes) {
  return ReadAt(position, nbytes, true);
}

arrow::Result<int64_t> ArrowByteFile::Read(int64_t nbytes, void* out) {
  ARROW_ASSIGN_OR_RAISE(int64_t got, ReadAt(position_, nbytes, true, out));
  position_ += got;
  return got;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ArrowByteFile::Read(int64_t nbytes) {
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> buffer, ReadAt(position_, nbytes, true));
  position_ += buffer->size();
  return buffer;
}

Status FromArrow(const arrow::Status& status, const std::string& context) {
  std::string message = context + ": " + status.message();
  // Arrow reports a file that ends inside a message ("Expected to be able to read N bytes for
  // message body, got M") as an IOError; the file is truncated, not unreadable.
  bool truncated = status.message().find("Expected to be able to read") != std::string::npos;
  if (status.IsIOError() && !truncated) return IOError(message);
  if (status.IsNotImplemented()) return Unimplemented(message);
  if (status.IsOutOfMemory()) return Internal(message);
  return Corruption(message);
}

}  // namespace stoker
