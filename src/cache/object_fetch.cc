#include "cache/object_fetch.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "common/hash.h"
#include "storage/cancel.h"

namespace stoker::cache {
namespace {

// Copies parts [next, parts) of `source` into the file, taking part numbers from `next` until
// they run out or another reader failed. Returns the first error. Its requests stop (in flight
// too) once `cancel` or one of the `outer` scopes (the thread that started the fetch) is set.
Status CopyParts(const ByteSource& source, const FetchTarget& target, uint64_t part_bytes,
                 const std::atomic<bool>* cancel, const storage::CancelScope* outer,
                 std::atomic<uint64_t>* next, std::atomic<bool>* failed,
                 std::atomic<uint64_t>* fetched) {
  const storage::CancelScope scope(cancel, outer);
  std::vector<char> buffer(static_cast<size_t>(std::min(part_bytes, target.size_bytes)));
  while (!failed->load()) {
    if (scope.cancelled()) {
      failed->store(true);
      return Cancelled(target.uri + ": download cancelled");
    }
    const uint64_t at = next->fetch_add(1) * part_bytes;
    if (at >= target.size_bytes) break;
    const size_t want = static_cast<size_t>(std::min(part_bytes, target.size_bytes - at));
    Status s = ReadExactlyAt(source, at, want, buffer.data(), "cached object");
    if (s.ok()) s = PwriteAll(target.fd, buffer.data(), want, at, target.temp_path);
    // Start writing the part back now, so that the fsync before the rename has little left to
    // wait for (advisory: an error shows at that fsync).
    if (s.ok()) {
      (void)::sync_file_range(target.fd, static_cast<off_t>(at), static_cast<off_t>(want),
                              SYNC_FILE_RANGE_WRITE);
    }
    if (!s.ok()) {
      failed->store(true);
      return s;
    }
    fetched->fetch_add(want);
  }
  return Status::OK();
}

// One attempt: the whole object into the file, in parts of `part_bytes` read by up to
// `part_threads` threads at once. Returns the checksum of what was written.
Result<std::string> FetchOnce(const storage::Backend& backend, const FetchTarget& target,
                              uint64_t part_bytes, int part_threads,
                              const std::atomic<bool>* cancel, FetchCounts* counts) {
  // The size is known (the manifest's): no HEAD. An object of another size fails the read that
  // passes its end, or (S3, HTTP) the first read, whose Content-Range names the real size.
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                          backend.OpenForReadWithSize(target.uri, target.size_bytes));
  if (source->size_bytes() != target.size_bytes) {
    return Corruption(target.uri + ": size " + std::to_string(source->size_bytes()) +
                      " bytes, expected " + std::to_string(target.size_bytes));
  }
  const uint64_t parts = (target.size_bytes + part_bytes - 1) / part_bytes;
  const int threads = static_cast<int>(std::min<uint64_t>(std::max(1, part_threads), parts));
  std::atomic<uint64_t> next{0}, fetched{0};
  std::atomic<bool> failed{false};
  std::vector<Status> results(static_cast<size_t>(std::max(1, threads)));
  std::vector<std::thread> helpers;
  const storage::CancelScope* outer = storage::CurrentCancelScope();  // outlives the helpers
  for (int t = 1; t < threads; ++t) {
    helpers.emplace_back([&, t] {
      results[t] = CopyParts(*source, target, part_bytes, cancel, outer, &next, &failed, &fetched);
    });
  }
  results[0] = CopyParts(*source, target, part_bytes, cancel, outer, &next, &failed, &fetched);
  for (std::thread& h : helpers) h.join();
  counts->bytes_fetched += fetched.load();
  for (const Status& s : results) STOKER_RETURN_IF_ERROR(s);
  // Parts land out of order, so the checksum is taken from the file (page-cached, fast).
  if (target.size_bytes == 0) return Xxh3Hex(Xxh3(nullptr, 0));
  return Xxh3HexOfFile(target.temp_path);
}

}  // namespace

Result<std::string> FetchVerified(const storage::Backend& backend, const FetchTarget& target,
                                  const FetchOptions& options, FetchCounts* counts) {
  const uint64_t part_bytes = std::max<uint64_t>(1, options.part_bytes);
  Status last;
  const int attempts = 1 + std::max(0, options.max_refetch);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if ((options.cancel != nullptr && options.cancel->load()) || storage::CancelRequested()) {
      return Cancelled(target.uri + ": download cancelled");
    }
    if (attempt > 1) ++counts->refetches;
    Result<std::string> got =
        FetchOnce(backend, target, part_bytes, options.part_threads, options.cancel, counts);
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
