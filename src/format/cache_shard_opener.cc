#include "format/cache_shard_opener.h"

#include <unistd.h>

#include "format/shard_source.h"

namespace stoker {
namespace {

cache::CacheRequest IdxRequest(const ShardRef& s) {
  return {s.prefix + ".idx", s.info->idx_bytes, s.info->idx_xxh3};
}
cache::CacheRequest BinRequest(const ShardRef& s) {
  return {s.prefix + ".bin", s.info->bin_bytes, s.info->bin_xxh3};
}

// The .bin of a cached shard: each ReadAt acquires the local copy (downloading it again if it
// was evicted), reads it and lets it go.
class CachedBinSource final : public ByteSource {
 public:
  CachedBinSource(std::shared_ptr<cache::ShardCache> cache, cache::CacheRequest request)
      : cache_(std::move(cache)), request_(std::move(request)) {}
  const std::string& uri() const override { return request_.uri; }
  uint64_t size_bytes() const override { return request_.size; }
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    STOKER_ASSIGN_OR_RETURN(cache::CachedFile file, cache_->Acquire(request_));
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> local, OpenFileSource(file.path()));
    Result<size_t> got = local->ReadAt(offset, n, out);
    if (!got.ok()) return Status(got.status().code(), got.status().message() + " (cached copy of " + request_.uri + ")");
    return got;
  }

 private:
  std::shared_ptr<cache::ShardCache> cache_;
  cache::CacheRequest request_;
};

class CacheShardOpener final : public ShardOpener {
 public:
  CacheShardOpener(std::shared_ptr<cache::ShardCache> cache,
                   std::shared_ptr<const storage::Backend> backend, RemoteReads reads)
      : cache_(std::move(cache)), backend_(std::move(backend)), reads_(reads) {}

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
      STOKER_ASSIGN_OR_RETURN(bin, backend_->OpenForReadWithSize(shard.prefix + ".bin",
                                                                 shard.info->bin_bytes));
    } else {
      bin = std::make_unique<CachedBinSource>(cache_, BinRequest(shard));
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
  uint64_t cache_hits() const override { return cache_->Stats().hits; }

 private:
  bool exact() const { return reads_ == RemoteReads::kExact; }

  std::shared_ptr<cache::ShardCache> cache_;
  std::shared_ptr<const storage::Backend> backend_;
  RemoteReads reads_;
};

}  // namespace

std::shared_ptr<const ShardOpener> NewCacheShardOpener(
    std::shared_ptr<cache::ShardCache> cache, std::shared_ptr<const storage::Backend> backend,
    RemoteReads reads) {
  return std::make_shared<CacheShardOpener>(std::move(cache), std::move(backend), reads);
}

}  // namespace stoker
