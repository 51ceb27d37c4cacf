#include "cache/shard_cache.h"

#include <algorithm>
#include <chrono>

#include "cache/shard_cache_internal.h"
#include "common/file_util.h"
#include "common/human_size.h"
#include "storage/cancel.h"

namespace stoker::cache {
namespace {

// Acquire gives up when an object it downloaded is evicted before it can pin it this many times
// in a row (other processes filling a budget too small for all of them).
constexpr int kMaxAcquireRounds = 64;
// Hits are written to stats.json in batches of this many (downloads at once).
constexpr uint64_t kHitsPerFlush = 64;
// Look-ahead downloads are added to stats.json in batches of this many (and at destruction).
constexpr uint64_t kDownloadsPerFlush = 16;

Status TooLargeForBudget(const std::string& uri, uint64_t size, uint64_t budget) {
  return InvalidArgument(uri + ": " + FormatSize(size) +
                         " is larger than the whole cache budget (" + FormatSize(budget) +
                         "); the budget must hold at least one read unit: "
                         "raise the cache size");
}

}  // namespace

const std::string& CachedFile::path() const { return pin_->path; }
const std::string& CachedFile::uri() const { return pin_->uri; }
uint64_t CachedFile::size_bytes() const { return pin_->size_bytes; }

Result<std::shared_ptr<ShardCache>> ShardCache::Open(const CacheOptions& options,
                                                     std::shared_ptr<storage::Backend> source) {
  if (source == nullptr) return InvalidArgument("cache: no source backend");
  if (options.budget_bytes == 0) return InvalidArgument("cache " + options.dir + ": budget is 0");
  if (options.largest_object_bytes > options.budget_bytes) {
    return TooLargeForBudget("the largest object", options.largest_object_bytes,
                             options.budget_bytes)
        .WithContext("cache " + options.dir);
  }
  if (options.download_threads < 0 || options.download_threads > 256 || options.max_refetch < 0 ||
      options.part_threads < 1 || options.part_threads > 64 || options.chunk_bytes == 0 ||
      options.poll_ms == 0) {
    return InvalidArgument("cache " + options.dir +
                           ": download_threads must be 0..256, part_threads 1..64, max_refetch "
                           ">= 0, chunk_bytes and poll_ms > 0");
  }
  STOKER_ASSIGN_OR_RETURN(CacheLayout layout, CacheLayout::Open(options.dir, /*create=*/true));
  // Downloads whose process died: their lock went with the process, their temp file did not.
  STOKER_RETURN_IF_ERROR(layout.RemoveStaleTemps().status());
  STOKER_RETURN_IF_ERROR(AddToStatsFile(layout, CacheStats(), options.budget_bytes));
  std::shared_ptr<ShardCache> cache(new ShardCache(options, std::move(source), std::move(layout)));
  cache->idle_at_.assign(static_cast<size_t>(options.download_threads), ~uint64_t{0});
  for (size_t i = 0; i < cache->idle_at_.size(); ++i) {
    cache->workers_.emplace_back([c = cache.get(), i] { c->DownloadLoop(i); });
  }
  return cache;
}

ShardCache::ShardCache(CacheOptions options, std::shared_ptr<storage::Backend> source,
                       CacheLayout layout)
    : options_(std::move(options)), source_(std::move(source)), layout_(std::move(layout)) {
  counts_.budget_bytes = options_.budget_bytes;
}

ShardCache::~ShardCache() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cancel_.store(true);
  changed_.notify_all();
  idle_.notify_all();
  for (std::thread& t : workers_) t.join();
  (void)FlushStats();  // best effort: the counters are advisory
}

ShardCache::Entry& ShardCache::EntryFor(const CacheRequest& request) {
  std::unique_ptr<Entry>& slot = entries_[request.uri];
  if (slot == nullptr) {
    slot = std::make_unique<Entry>();
    slot->request = request;
    slot->key = ObjectKey(request.uri);
    by_key_[slot->key] = slot.get();
  } else if (slot->request.size != request.size || slot->request.checksum != request.checksum) {
    slot->request = request;
    slot->local = false;
  }
  return *slot;
}

void ShardCache::Schedule(std::vector<CacheRequest> upcoming) {
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const std::string& uri : schedule_) entries_[uri]->position = kUnscheduled;
    schedule_.clear();
    for (size_t i = 0; i < upcoming.size(); ++i) {
      Entry& e = EntryFor(upcoming[i]);
      if (e.position != kUnscheduled) continue;  // listed twice: its first read decides
      e.position = i;
      e.passed = false;
      schedule_.push_back(upcoming[i].uri);
    }
    ++generation_;
  }
  changed_.notify_all();
}

void ShardCache::Passed(const std::string& uri) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = entries_.find(uri);
    if (it == entries_.end()) return;
    it->second->passed = true;
    ++generation_;
  }
  changed_.notify_all();
}

void ShardCache::Release(const std::string& uri) {
  {
    std::lock_guard<std::mutex> l(mu_);
    --entries_[uri]->pins;
    ++generation_;
  }
  changed_.notify_all();
}

Result<CachedFile> ShardCache::Acquire(const CacheRequest& request) {
  if (request.size > options_.budget_bytes) {
    return TooLargeForBudget(request.uri, request.size, options_.budget_bytes);
  }
  // The whole Acquire holds a claim (one of the entry's pins): a thread of this process that
  // needs space cannot evict the object between its download and its pinning here. On success
  // the claim passes to the CachedFile.
  struct Claim {
    ShardCache* cache;
    std::string uri;
    bool held = true;
    ~Claim() {
      if (held) cache->Release(uri);
    }
  };
  std::string key;
  uint64_t fetches_seen;  // a look-ahead that only finds the object complete is no miss
  {
    std::lock_guard<std::mutex> l(mu_);
    Entry& e = EntryFor(request);
    ++e.pins;
    key = e.key;
    fetches_seen = e.fetches;
  }
  Claim claim{this, request.uri};
  const std::string lock_path = layout_.lock_path(key);
  bool waited = false;
  for (int round = 0;; ++round) {
    size_t position;
    {
      std::unique_lock<std::mutex> l(mu_);
      Entry& e = EntryFor(request);
      // Waiting for another thread's download; a caller whose requests are cancelled (a loader
      // being closed, storage/cancel.h) stops waiting.
      while (e.downloading && !stop_) {
        if (storage::CancelRequested()) {
          return Cancelled(request.uri + ": cancelled while waiting for its download");
        }
        changed_.wait_for(l, std::chrono::milliseconds(options_.poll_ms));
      }
      if (e.fetches != fetches_seen) waited = true;
      if (!e.failed.ok()) {
        Status failed = e.failed;
        e.failed = Status::OK();
        // A corrupt object was already fetched max_refetch times; a transient error is retried.
        if (failed.code() == StatusCode::kCorruption) return failed;
      }
      position = e.position;
    }
    // Pin what is on disk. A shared lock waits while another process downloads or evicts it,
    // until the caller's requests are cancelled: that process may take a whole download.
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                            FileLock::TryAcquire(lock_path, LockMode::kShared));
    if (lock == nullptr) {
      waited = true;
      Result<std::unique_ptr<FileLock>> after_wait =
          FileLock::AcquireCancellable(lock_path, LockMode::kShared, StorageCancelCheck(),
                                       std::chrono::milliseconds(options_.poll_ms));
      if (!after_wait.ok()) {
        return after_wait.status().WithContext(request.uri +
                                               ": waiting for another process's "
                                               "download");
      }
      lock = std::move(*after_wait);
    }
    if (IsComplete(key, request)) {
      auto pin = std::make_shared<CachedFile::Pin>();
      pin->lock = std::move(lock);
      pin->path = layout_.data_path(key);
      pin->uri = request.uri;
      Result<uint64_t> on_disk = FileSizeBytes(pin->path);
      pin->size_bytes = request.size != 0 ? request.size : on_disk.ok() ? *on_disk : 0;
      pin->cache = shared_from_this();
      claim.held = false;  // ~Pin releases it
      bool flush;
      {
        std::lock_guard<std::mutex> l(mu_);
        EntryFor(request).local = true;
        uint64_t CacheStats::*counter = waited ? &CacheStats::misses : &CacheStats::hits;
        counts_.*counter += 1;
        unflushed_.*counter += 1;
        flush = unflushed_.hits >= kHitsPerFlush;
      }
      if (flush) (void)FlushStats();
      return CachedFile(std::move(pin));
    }
    lock.reset();
    if (round >= kMaxAcquireRounds) {
      return Unavailable(request.uri + ": evicted by other processes before it could be read, " +
                         std::to_string(round) + " times; the cache budget (" +
                         FormatSize(options_.budget_bytes) + ") is too small for them all");
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      Entry& e = EntryFor(request);
      if (e.downloading) continue;  // a look-ahead thread took it meanwhile: wait for it
      e.downloading = true;
    }
    Result<Outcome> outcome = Download(request, Priority::kDemand, position);
    {
      std::lock_guard<std::mutex> l(mu_);
      Entry& e = EntryFor(request);
      e.downloading = false;
      if (outcome.ok() && *outcome == Outcome::kDone) {
        ++e.fetches;
        fetches_seen = e.fetches;
        waited = true;
      }
      ++generation_;
    }
    changed_.notify_all();
    if (!outcome.ok()) return outcome.status();
    (void)FlushStats();
  }
}

bool ShardCache::NextLookAhead(CacheRequest* request, size_t* position) {
  if (blocked_generation_ == generation_) return false;
  uint64_t ahead = 0;  // bytes of the schedule up to and including this object
  for (size_t i = 0; i < schedule_.size(); ++i) {
    Entry& e = *entries_[schedule_[i]];
    if (e.passed) continue;
    ahead += e.request.size;
    if (ahead > options_.budget_bytes) return false;  // the look-ahead stops at the budget
    if (e.local || e.downloading || !e.failed.ok() || e.busy_generation == generation_) {
      continue;
    }
    *request = e.request;
    *position = i;
    return true;
  }
  return false;
}

void ShardCache::WaitLookAheadIdle() {
  std::unique_lock<std::mutex> l(mu_);
  idle_.wait(l, [&] {
    return stop_ || std::ranges::all_of(idle_at_, [&](uint64_t g) { return g == generation_; });
  });
}

void ShardCache::DownloadLoop(size_t worker) {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    CacheRequest request;
    size_t position;
    if (!NextLookAhead(&request, &position)) {
      if (idle_at_[worker] != generation_) {
        idle_at_[worker] = generation_;
        idle_.notify_all();
      }
      // Other processes free space and finish downloads without telling us: look again soon.
      if (changed_.wait_for(l, std::chrono::milliseconds(options_.poll_ms)) ==
          std::cv_status::timeout) {
        ++generation_;
        changed_.notify_all();  // the other look-ahead threads look again too
      }
      continue;
    }
    Entry& e = *entries_[request.uri];
    e.downloading = true;
    l.unlock();
    Result<Outcome> outcome = Download(request, Priority::kLookAhead, position);
    l.lock();
    e.downloading = false;
    if (!outcome.ok()) {
      e.failed = outcome.status();
    } else if (*outcome == Outcome::kDone || *outcome == Outcome::kPresent) {
      e.local = true;
      if (*outcome == Outcome::kDone) ++e.fetches;
    } else if (*outcome == Outcome::kNoSpace) {
      blocked_generation_ = generation_;
    } else {
      e.busy_generation = generation_;
    }
    changed_.notify_all();  // an Acquire may be waiting for this download
    // stats.json in batches (a lock, a read and a rename each): not after every download.
    if (unflushed_.downloads >= kDownloadsPerFlush) {
      l.unlock();
      (void)FlushStats();
      l.lock();
    }
  }
}

void ShardCache::Count(uint64_t CacheStats::*counter, uint64_t n) {
  std::lock_guard<std::mutex> l(mu_);
  counts_.*counter += n;
  unflushed_.*counter += n;
}

CacheStats ShardCache::Counters() const {
  std::lock_guard<std::mutex> l(mu_);
  return counts_;
}

CacheStats ShardCache::Stats() const {
  CacheStats stats = Counters();
  // Under the space lock, as Reserve: a download renamed into data/ between the two scans
  // would be in neither. (Without the lock, the scans as they are.)
  Result<std::unique_ptr<FileLock>> space_lock =
      FileLock::Acquire(layout_.space_lock_path(), LockMode::kExclusive);
  Result<std::vector<StoredObject>> objects = layout_.ScanData();
  Result<uint64_t> temp = layout_.TempBytes();
  stats.used_bytes = temp.ok() ? *temp : 0;
  if (objects.ok()) {
    for (const StoredObject& o : *objects) stats.used_bytes += o.size_bytes;
  }
  return stats;
}

Status ShardCache::FlushStats() {
  CacheStats delta;
  {
    std::lock_guard<std::mutex> l(mu_);
    delta = unflushed_;
    unflushed_ = CacheStats();
  }
  Status s = AddToStatsFile(layout_, delta, options_.budget_bytes);
  if (!s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    unflushed_.AddCounts(delta);
  }
  return s;
}

}  // namespace stoker::cache
