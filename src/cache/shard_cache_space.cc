// ShardCache's downloads and its budget: reserving space under DIR/space.lock, evicting in plan
// order, fetching into a temporary file and renaming it into place.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "cache/object_fetch.h"
#include "cache/shard_cache_internal.h"
#include "common/file_util.h"
#include "common/hash.h"
#include "common/human_size.h"
#include "storage/cancel.h"

namespace stoker::cache {
namespace {

// Removes tmp/<key>~* files. The caller holds the object's exclusive lock, so they are stale.
Status RemoveTempsOf(const CacheLayout& layout, const std::string& key) {
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(layout.temp_dir()));
  for (const std::string& name : names) {
    if (!name.starts_with(key + "~")) continue;
    STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(JoinPath(layout.temp_dir(), name)));
  }
  return Status::OK();
}

}  // namespace

const std::string& BootId() {
  static const std::string id = [] {
    Result<std::string> text = ReadFileToString("/proc/sys/kernel/random/boot_id");
    std::string s = text.ok() ? *text : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }();
  return id;
}

ShardCache::Space::~Space() {
  if (fd >= 0) ::close(fd);
  if (!path.empty()) ::unlink(path.c_str());
}

Status ShardCache::Space::Publish(const std::string& target, bool fsync,
                                  const std::string& space_lock) {
  if (fsync && ::fdatasync(fd) != 0) return ErrnoStatus("fsync " + path, errno);
  const int f = fd;
  fd = -1;
  if (::close(f) != 0) return ErrnoStatus("close " + path, errno);
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> publishing,
                          FileLock::Acquire(space_lock, LockMode::kShared));
  if (::rename(path.c_str(), target.c_str()) != 0) {
    return ErrnoStatus("rename " + path + " to " + target, errno);
  }
  path.clear();
  return Status::OK();
}

bool ShardCache::IsComplete(const std::string& key, const CacheRequest& request) const {
  Result<uint64_t> size = FileSizeBytes(layout_.data_path(key));
  if (!size.ok() || (request.size != 0 && *size != request.size)) return false;
  Result<ObjectMeta> meta = ReadMeta(layout_.meta_path(key));
  return meta.ok() && meta->uri == request.uri && meta->size_bytes == *size &&
         (request.checksum.empty() || meta->xxh3 == request.checksum) &&
         (meta->unsynced_boot.empty() || meta->unsynced_boot == BootId());
}

Result<bool> ShardCache::ReverifyEarlierBoot(const std::string& key, const CacheRequest& request) {
  const std::string data = layout_.data_path(key);
  Result<ObjectMeta> meta = ReadMeta(layout_.meta_path(key));
  if (!meta.ok() || meta->unsynced_boot.empty() || meta->unsynced_boot == BootId()) return false;
  Result<uint64_t> size = FileSizeBytes(data);
  if (!size.ok() || *size != meta->size_bytes || (request.size != 0 && *size != request.size) ||
      meta->uri != request.uri || (!request.checksum.empty() && meta->xxh3 != request.checksum)) {
    return false;
  }
  // Its rename reached the disk; its data may not have (zeros or an older block where the write
  // was lost): the bytes on disk must hash to what was verified at download.
  Result<std::string> xxh3 = Xxh3HexOfFile(data);
  if (!xxh3.ok() || *xxh3 != meta->xxh3) return false;
  {
    // Synced now (a clean file: nothing to write), so it is trusted after the next boot too.
    const int fd = ::open(data.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open " + data, errno);
    const int rc = ::fdatasync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return ErrnoStatus("fsync " + data, err);
  }
  meta->unsynced_boot.clear();
  STOKER_RETURN_IF_ERROR(WriteMeta(layout_.meta_path(key), *meta));
  Count(&CacheStats::reverified, 1);
  return true;
}

Result<ShardCache::Outcome> ShardCache::Download(const CacheRequest& request, Priority priority,
                                                 size_t position) {
  const std::string key = ObjectKey(request.uri);
  const std::string lock_path = layout_.lock_path(key);
  std::unique_ptr<FileLock> lock;
  if (priority == Priority::kDemand) {
    // Another process may hold it for a whole download, or pin an older version while it reads.
    Result<std::unique_ptr<FileLock>> locked =
        FileLock::AcquireCancellable(lock_path, LockMode::kExclusive, StorageCancelCheck(),
                                     std::chrono::milliseconds(options_.poll_ms));
    if (!locked.ok()) return locked.status().WithContext(request.uri);
    lock = std::move(*locked);
  } else {
    // Already there (a warm cache): no exclusive lock, which would make a reader wait for it.
    if (IsComplete(key, request)) return Outcome::kPresent;
    STOKER_ASSIGN_OR_RETURN(lock, FileLock::TryAcquire(lock_path, LockMode::kExclusive));
    if (lock == nullptr) return Outcome::kBusy;
  }
  if (IsComplete(key, request)) return Outcome::kPresent;  // another process got there first
  // Published unsynced before a reboot: kept when its bytes are intact, downloaded again if not.
  STOKER_ASSIGN_OR_RETURN(bool intact, ReverifyEarlierBoot(key, request));
  if (intact) return Outcome::kPresent;
  // Holding the exclusive lock, anything left of this object is stale or an older version.
  STOKER_RETURN_IF_ERROR(RemoveTempsOf(layout_, key));
  STOKER_RETURN_IF_ERROR(layout_.RemoveObject(key));
  uint64_t size = request.size;
  if (size == 0) {
    STOKER_ASSIGN_OR_RETURN(storage::ObjectInfo info, source_->Stat(request.uri));
    size = info.size_bytes;
  }
  if (size > options_.budget_bytes) {
    return InvalidArgument(request.uri + ": " + FormatSize(size) +
                           " is larger than the whole cache budget (" +
                           FormatSize(options_.budget_bytes) + ")");
  }
  Space space;
  for (;;) {
    STOKER_ASSIGN_OR_RETURN(space, Reserve(key, size, priority, position, request.uri));
    if (space.fd >= 0) break;
    if (priority == Priority::kLookAhead) return Outcome::kNoSpace;
    // Back-pressure: wait for a pin to be released or an object to pass, here or in another
    // process (which only a fresh look at the directory shows).
    struct Waiting {
      std::atomic<int>* n;
      explicit Waiting(std::atomic<int>* count) : n(count) { n->fetch_add(1); }
      ~Waiting() { n->fetch_sub(1); }
    } waiting(&space_waiters_);
    std::unique_lock<std::mutex> l(mu_);
    const uint64_t seen = generation_;
    changed_.wait_for(l, std::chrono::milliseconds(options_.poll_ms),
                      [&] { return generation_ != seen || stop_; });
    if (stop_ || storage::CancelRequested()) {
      return Cancelled("cancelled while waiting for cache space for " + request.uri);
    }
  }
  FetchCounts counts;
  Result<std::string> xxh3 = FetchVerified(
      *source_, {request.uri, size, request.checksum, space.fd, space.path},
      {options_.chunk_bytes, options_.part_threads, options_.max_refetch, &cancel_}, &counts);
  Count(&CacheStats::bytes_downloaded, counts.bytes_fetched);
  Count(&CacheStats::refetches, counts.refetches);
  if (!xxh3.ok()) return xxh3.status();
  // The meta file first: a data file always has one. Without fsync the download thread does not
  // wait for the disk: the meta names this boot, and after a reboot the object is re-hashed
  // before it is used (ReverifyEarlierBoot). With fsync the data is synced before the rename.
  // The directory is never synced: a rename lost in a crash only means a second download.
  const bool sync = options_.fsync || BootId().empty();
  STOKER_RETURN_IF_ERROR(
      WriteMeta(layout_.meta_path(key), {request.uri, size, *xxh3, sync ? "" : BootId()}));
  STOKER_RETURN_IF_ERROR(space.Publish(layout_.data_path(key), sync, layout_.space_lock_path()));
  Count(&CacheStats::downloads, 1);
  return Outcome::kDone;
}

Result<ShardCache::Space> ShardCache::Reserve(const std::string& key, uint64_t size,
                                              Priority priority, size_t position,
                                              const std::string& uri) {
  // Exclusive: no other reservation, and no download renamed from tmp/ into data/ between the
  // two scans (Space::Publish), which would leave it out of `used`.
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> space_lock,
                          FileLock::Acquire(layout_.space_lock_path(), LockMode::kExclusive));
  STOKER_ASSIGN_OR_RETURN(std::vector<StoredObject> objects, layout_.ScanData());
  STOKER_ASSIGN_OR_RETURN(uint64_t used, layout_.TempBytes());
  for (const StoredObject& o : objects) used += o.size_bytes;
  if (used + size > options_.budget_bytes) {
    // Space held by downloads whose process died is the first to take back.
    STOKER_ASSIGN_OR_RETURN(int removed, layout_.RemoveStaleTemps());
    if (removed > 0) {
      STOKER_ASSIGN_OR_RETURN(used, layout_.TempBytes());
      for (const StoredObject& o : objects) used += o.size_bytes;
    }
    if (used + size > options_.budget_bytes)
      STOKER_RETURN_IF_ERROR(EvictFor(objects, size, &used, priority, position));
    if (used + size > options_.budget_bytes) return Space();
  }
  Space space;
  space.path = layout_.temp_path(key);
  space.fd = ::open(space.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (space.fd < 0) {
    const int err = errno;
    space.path.clear();
    return ErrnoStatus("create " + layout_.temp_dir() + " file for " + uri, err);
  }
  // Reserve the blocks now, so that a full disk shows here and not halfway through a download;
  // the file's size is what other processes count against the budget.
  if (size > 0 && ::fallocate(space.fd, 0, 0, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    if (err == ENOSPC) {
      return IOError(layout_.dir() + ": disk full reserving " + FormatSize(size) + " for " + uri +
                     "; the cache budget (" + FormatSize(options_.budget_bytes) +
                     ") is more than the disk holds");
    }
    if (::ftruncate(space.fd, static_cast<off_t>(size)) != 0) {
      return ErrnoStatus("truncate " + space.path, errno);
    }
  }
  return space;
}

Status ShardCache::EvictFor(const std::vector<StoredObject>& objects, uint64_t need, uint64_t* used,
                            Priority priority, size_t position) {
  struct Candidate {
    const StoredObject* object;
    int rank;       // 0: passed, 1: not in this process's plan, 2: scheduled
    int64_t order;  // within a rank, smaller goes first
  };
  std::vector<Candidate> candidates;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const StoredObject& o : objects) {
      auto it = by_key_.find(o.key);
      const Entry* e = it == by_key_.end() ? nullptr : it->second;
      if (e != nullptr && e->pins > 0) continue;
      if (e != nullptr && e->passed) {
        candidates.push_back({&o, 0, 0});
      } else if (e == nullptr || e->position == kUnscheduled) {
        candidates.push_back({&o, 1, o.mtime_ns});
      } else if (priority == Priority::kDemand || e->position > position) {
        // A look-ahead download never evicts what is read before it.
        candidates.push_back({&o, 2, -static_cast<int64_t>(e->position)});
      }
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.order < b.order;
  });
  for (const Candidate& c : candidates) {
    if (*used + need <= options_.budget_bytes) break;
    // Pinned (shared lock) or being replaced elsewhere: not ours to take.
    STOKER_ASSIGN_OR_RETURN(
        std::unique_ptr<FileLock> lock,
        FileLock::TryAcquire(layout_.lock_path(c.object->key), LockMode::kExclusive));
    if (lock == nullptr) continue;
    if (!PathExists(layout_.data_path(c.object->key))) continue;  // evicted meanwhile
    STOKER_RETURN_IF_ERROR(layout_.RemoveObject(c.object->key));
    *used -= std::min(*used, c.object->size_bytes);
    Count(&CacheStats::evictions, 1);
    std::lock_guard<std::mutex> l(mu_);
    auto it = by_key_.find(c.object->key);
    if (it != by_key_.end()) it->second->local = false;
  }
  return Status::OK();
}

}  // namespace stoker::cache
