// CacheShardOpener: the ShardOpener (shard_opener.h) that reads a remote dataset's shards through
// a node-local disk cache (cache/shard_cache.h). Each shard's .idx and .bin are downloaded whole
// by the cache, checked against the manifest's size and XXH3, and read from local disk. The .idx
// is copied into memory at open; the .bin is read through a lease (cached_bin_lease.h) that keeps
// its local copy pinned and open across reads, and a reaper thread lets go of the leases idle for
// 100 ms, so that idle open shards pin nothing for long and a budget smaller than the working set
// slows the loader (the cache evicts and downloads again) instead of deadlocking it. Schedule hands
// the plan-order look-ahead to the cache; Stage downloads a shard now (`stoker prefetch`). With
// RemoteReads::kExact (global shuffle over a dataset larger than the budget: single documents
// spread over every shard), only the .idx files go through the cache; each read of a .bin is a
// ranged GET of exactly its bytes from `backend`, not a whole-shard download (which would evict
// and fetch every shard many times an epoch). A global shuffle over a dataset that fits the budget
// is read with kParts, as block shuffle is (StokerDataset::OpenRemote decides).
// Thread-safe.
#pragma once

#include <memory>

#include "cache/shard_cache.h"
#include "format/shard_opener.h"

namespace stoker {

std::shared_ptr<const ShardOpener> NewCacheShardOpener(
    std::shared_ptr<cache::ShardCache> cache, std::shared_ptr<const storage::Backend> backend,
    RemoteReads reads = RemoteReads::kParts);

}  // namespace stoker
