#include "storage/backend.h"

namespace stoker::storage {

std::string UnquoteEtag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  return etag;
}

Result<std::unique_ptr<ByteSource>> Backend::OpenForReadWithSize(const std::string& uri,
                                                                 uint64_t size_bytes) const {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenForRead(uri));
  if (source->size_bytes() != size_bytes) {
    return Corruption(uri + ": " + std::to_string(source->size_bytes()) + " bytes, expected " +
                      std::to_string(size_bytes));
  }
  return source;
}

Result<std::string> ReadAll(const Backend& backend, const std::string& uri) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, backend.OpenForRead(uri));
  std::string bytes(source->size_bytes(), '\0');
  STOKER_RETURN_IF_ERROR(ReadExactlyAt(*source, 0, bytes.size(), bytes.data(), "object"));
  return bytes;
}

Status WriteAll(const Backend& backend, const std::string& uri, std::string_view bytes) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer, backend.OpenForWrite(uri));
  STOKER_RETURN_IF_ERROR(writer->Append(bytes));
  return writer->Close();
}

}  // namespace stoker::storage
