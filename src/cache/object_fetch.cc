#include "cache/object_fetch.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <vector>

#include "common/hash.h"

namespace stoker::cache {
namespace {

Status WriteAllAt(int fd, const char* data, size_t n, uint64_t offset, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write " + path, errno);
    }
    data += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::OK();
}

// One attempt: the whole object into the file. Returns the checksum of what was written.
Result<std::string> FetchOnce(const storage::Backend& backend, const FetchTarget& target,
                              std::vector<char>& buffer, FetchCounts* counts) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, backend.OpenForRead(target.uri));
  if (source->size_bytes() != target.size_bytes) {
    return Corruption(target.uri + ": size " + std::to_string(source->size_bytes()) +
                      " bytes, expected " + std::to_string(target.size_bytes));
  }
  Xxh3Hasher hasher;
  for (uint64_t at = 0; at < target.size_bytes;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), target.size_bytes - at));
    STOKER_RETURN_IF_ERROR(ReadExactlyAt(*source, at, want, buffer.data(), "cached object"));
    counts->bytes_fetched += want;
    hasher.Update(buffer.data(), want);
    STOKER_RETURN_IF_ERROR(WriteAllAt(target.fd, buffer.data(), want, at, target.temp_path));
    at += want;
  }
  return hasher.HexDigest();
}

}  // namespace

Result<std::string> FetchVerified(const storage::Backend& backend, const FetchTarget& target,
                                  uint64_t chunk_bytes, int max_refetch, FetchCounts* counts) {
  std::vector<char> buffer(static_cast<size_t>(
      std::max<uint64_t>(1, std::min<uint64_t>(chunk_bytes, target.size_bytes))));
  Status last;
  const int attempts = 1 + std::max(0, max_refetch);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) ++counts->refetches;
    Result<std::string> got = FetchOnce(backend, target, buffer, counts);
    if (got.ok() && (target.xxh3.empty() || *got == target.xxh3)) return got;
    if (got.ok()) {
      last = Corruption(target.uri + ": checksum mismatch (xxh3 " + *got + ", expected " +
                        target.xxh3 + ")");
    } else {
      last = got.status();
      // A missing object or a refused request does not get better by asking again.
      const StatusCode code = last.code();
      if (code != StatusCode::kCorruption && code != StatusCode::kUnavailable &&
          code != StatusCode::kIOError) {
        return last;
      }
    }
  }
  if (last.code() == StatusCode::kCorruption) {
    return Corruption(last.message() + " after " + std::to_string(attempts) +
                      " download(s); giving up on it");
  }
  return last.WithContext("download of " + target.uri + " failed " + std::to_string(attempts) +
                          " time(s)");
}

}  // namespace stoker::cache
