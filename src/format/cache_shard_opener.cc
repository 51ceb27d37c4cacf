#include "format/cache_shard_opener.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "format/cached_bin_lease.h"
#include "format/shard_source.h"

namespace stoker {
namespace {

cache::CacheRequest IdxRequest(const ShardRef& s) {
  return {s.prefix + ".idx", s.info->idx_bytes, s.info->idx_xxh3};
}
cache::CacheRequest BinRequest(const ShardRef& s) {
  return {s.prefix + ".bin", s.info->bin_bytes, s.info->bin_xxh3};
}

// How long a reader may hold a cached .bin's pin without reading through it (none while a reader
// of this process waits for space), and how often the reaper looks (cached_bin_lease.h).
constexpr auto kLeaseIdle = std::chrono::milliseconds(100);
constexpr auto kReaperPeriod = std::chrono::milliseconds(10);
// Leases are held only where the budget holds this many of the largest objects: below that,
// open shards' pins would fill it and each read would wait for the reaper. It was 16: a block-
// shuffled epoch with a budget of 8 or 12 shards (pins taken per read) fetched each shard 50 times
// (3,604 GETs for 33 shards), against 163 GETs with leases held at 8 (bench/RESULTS.md, session
// 27).
constexpr uint64_t kLeaseBudgetObjects = 4;

// The .bin of a cached shard, read through a lease on its local copy (viewed in place where the
// lease is kept and so mapped).
class CachedBinSource final : public ByteSource {
 public:
  explicit CachedBinSource(std::shared_ptr<BinLease> lease) : lease_(std::move(lease)) {}
  const std::string& uri() const override { return lease_->request().uri; }
  uint64_t size_bytes() const override { return lease_->request().size; }
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    return lease_->ReadAt(offset, n, out);
  }
  Status ViewAt(uint64_t offset, size_t n, const char* what,
                FunctionRef<Status(const uint8_t* data)> use) const override {
    return lease_->ViewAt(offset, n, what, use);
  }
  void Prefetch(uint64_t offset, size_t n) const override { lease_->Prefetch(offset, n); }

 private:
  std::shared_ptr<BinLease> lease_;
};

class CacheShardOpener final : public ShardOpener {
 public:
  CacheShardOpener(std::shared_ptr<cache::ShardCache> cache,
                   std::shared_ptr<const storage::Backend> backend, RemoteReads reads)
      : cache_(std::move(cache)), backend_(std::move(backend)), reads_(reads) {
    if (!exact()) reaper_ = std::thread([this] { Reap(); });
  }
  ~CacheShardOpener() override {
    {
      std::lock_guard<std::mutex> l(leases_mu_);
      stop_ = true;
    }
    reaper_cv_.notify_all();
    if (reaper_.joinable()) reaper_.join();
  }

  Result<std::shared_ptr<const TokenSource>> Open(const ShardRef& shard) const override {
    const cache::CacheRequest idx_request = IdxRequest(shard);
    auto idx = std::make_shared<std::string>(idx_request.size, '\0');
    {
      STOKER_ASSIGN_OR_RETURN(cache::CachedFile file, cache_->Acquire(idx_request));
      STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> local, OpenFileSource(file.path()));
      STOKER_RETURN_IF_ERROR(ReadExactlyAt(*local, 0, idx->size(), idx->data(), "shard index"));
    }
    std::unique_ptr<ByteSource> bin;
    if (exact()) {
      STOKER_ASSIGN_OR_RETURN(
          bin, backend_->OpenForReadWithSize(shard.prefix + ".bin", shard.info->bin_bytes));
    } else {
      const cache::CacheOptions& o = cache_->options();
      const bool keep = o.largest_object_bytes > 0 &&
                        o.budget_bytes / kLeaseBudgetObjects >= o.largest_object_bytes;
      auto lease = std::make_shared<BinLease>(cache_, BinRequest(shard), keep);
      {
        std::lock_guard<std::mutex> l(leases_mu_);
        leases_.push_back(lease);
      }
      bin = std::make_unique<CachedBinSource>(std::move(lease));
    }
    const auto* data = reinterpret_cast<const uint8_t*>(idx->data());
    const size_t size = idx->size();
    STOKER_ASSIGN_OR_RETURN(
        std::unique_ptr<ShardSource> source,
        ShardSource::Open(shard.prefix, shard.index, *shard.info, shard.dtype, shard.manifest_uri,
                          std::move(idx), data, size, idx_request.uri, std::move(bin)));
    return std::shared_ptr<const TokenSource>(std::move(source));
  }

  void Schedule(const std::vector<ShardRef>& upcoming) const override {
    std::vector<cache::CacheRequest> requests;
    requests.reserve(2 * upcoming.size());
    for (const ShardRef& s : upcoming) {
      requests.push_back(IdxRequest(s));
      if (!exact()) requests.push_back(BinRequest(s));
    }
    cache_->Schedule(std::move(requests));
  }

  Status Stage(const ShardRef& shard) const override {
    STOKER_RETURN_IF_ERROR(cache_->Acquire(IdxRequest(shard)).status());
    if (exact()) return Status::OK();  // its documents are read by ranges, not staged
    return cache_->Acquire(BinRequest(shard)).status();
  }

  bool cached() const override { return true; }
  uint64_t cache_hits() const override { return cache_->Counters().hits; }

 private:
  bool exact() const { return reads_ == RemoteReads::kExact; }

  // Every kReaperPeriod: lets go of the leases idle for kLeaseIdle (or at all, while a reader
  // waits for space) and forgets closed shards'.
  void Reap() {
    std::unique_lock<std::mutex> l(leases_mu_);
    while (!stop_) {
      reaper_cv_.wait_for(l, kReaperPeriod, [&] { return stop_; });
      std::vector<std::shared_ptr<BinLease>> live;
      size_t kept = 0;
      for (size_t i = 0; i < leases_.size(); ++i) {
        if (std::shared_ptr<BinLease> lease = leases_[i].lock()) {
          live.push_back(std::move(lease));
          if (kept != i) leases_[kept] = std::move(leases_[i]);  // never a self-move
          ++kept;
        }
      }
      leases_.resize(kept);
      l.unlock();  // a lease's last owner may be `live`: destroyed without the mutex
      const auto idle = cache_->WaitingForSpace() ? std::chrono::milliseconds(0) : kLeaseIdle;
      for (const std::shared_ptr<BinLease>& lease : live) lease->ReleaseIfIdle(idle);
      live.clear();
      l.lock();
    }
  }

  std::shared_ptr<cache::ShardCache> cache_;
  std::shared_ptr<const storage::Backend> backend_;
  RemoteReads reads_;
  mutable std::mutex leases_mu_;
  mutable std::vector<std::weak_ptr<BinLease>> leases_;  // guarded by leases_mu_
  bool stop_ = false;                                    // guarded by leases_mu_
  std::condition_variable reaper_cv_;
  std::thread reaper_;
};

}  // namespace

std::shared_ptr<const ShardOpener> NewCacheShardOpener(
    std::shared_ptr<cache::ShardCache> cache, std::shared_ptr<const storage::Backend> backend,
    RemoteReads reads) {
  return std::make_shared<CacheShardOpener>(std::move(cache), std::move(backend), reads);
}

}  // namespace stoker
