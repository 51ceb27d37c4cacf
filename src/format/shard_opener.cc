#include "format/shard_opener.h"

#include "format/shard_source.h"
#include "storage/part_cache_source.h"

namespace stoker {
namespace {

constexpr int kFetchAheadThreads = 2;

class BackendShardOpener final : public ShardOpener {
 public:
  BackendShardOpener(std::shared_ptr<const storage::Backend> backend, RemoteReads reads,
                     size_t part_bytes)
      : backend_(std::move(backend)), reads_(reads), part_bytes_(part_bytes) {}

  Result<std::shared_ptr<const TokenSource>> Open(const ShardRef& shard) const override {
    const std::string idx_uri = shard.prefix + ".idx", bin_uri = shard.prefix + ".bin";
    // Sizes come from the manifest: no HEAD, only the GETs of the bytes.
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> idx,
                            backend_->OpenForReadWithSize(idx_uri, shard.info->idx_bytes));
    auto idx_bytes = std::make_shared<std::string>(shard.info->idx_bytes, '\0');
    STOKER_RETURN_IF_ERROR(
        ReadExactlyAt(*idx, 0, idx_bytes->size(), idx_bytes->data(), "shard index"));
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> bin,
                            backend_->OpenForReadWithSize(bin_uri, shard.info->bin_bytes));
    // Read whole under block shuffle and in source order: its parts are fetched ahead, two at a
    // time, while the loader reads the first ones.
    if (reads_ == RemoteReads::kParts) {
      bin = storage::NewPartCacheSource(std::move(bin), part_bytes_, kFetchAheadThreads);
    }
    const auto* data = reinterpret_cast<const uint8_t*>(idx_bytes->data());
    const size_t size = idx_bytes->size();
    STOKER_ASSIGN_OR_RETURN(
        std::unique_ptr<ShardSource> source,
        ShardSource::Open(shard.prefix, shard.index, *shard.info, shard.dtype, shard.manifest_uri,
                          std::move(idx_bytes), data, size, idx_uri, std::move(bin)));
    return std::shared_ptr<const TokenSource>(std::move(source));
  }

 private:
  std::shared_ptr<const storage::Backend> backend_;
  RemoteReads reads_;
  size_t part_bytes_;
};

}  // namespace

std::shared_ptr<const ShardOpener> NewBackendShardOpener(
    std::shared_ptr<const storage::Backend> backend, RemoteReads reads, size_t part_bytes) {
  return std::make_shared<BackendShardOpener>(std::move(backend), reads, part_bytes);
}

}  // namespace stoker
