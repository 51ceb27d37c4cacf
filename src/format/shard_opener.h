// ShardOpener: the one seam through which the shards of a remote stoker dataset are opened. The
// dataset (stoker_dataset.h) asks for a shard the first time a read needs it, never at open, and
// keeps a few open (ShardPool). The backend opener reads shards straight from the object store:
// the .idx whole (one GET), the .bin in ranged GETs — whole parts kept in memory while the shard
// is open, fetched ahead by two threads from its first read (kParts: block shuffle and
// sequential reads read every part), or exactly the bytes of each read
// (kExact: global shuffle over a dataset its cache cannot hold, small range GETs of document
// pieces; stoker_dataset.h, whole_shards_if_they_fit). A node-local cache plugs in
// here as another opener that stages each shard's files on disk and opens them there.
// Thread-safe: Open and Schedule may be called from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/manifest.h"
#include "stoker/token_source.h"
#include "storage/backend.h"

namespace stoker {

// How the .bin of a remote shard is read (see above).
enum class RemoteReads { kParts, kExact };

// What an opener needs to know about shard `index` of a dataset.
struct ShardRef {
  uint64_t index = 0;
  std::string prefix;  // <prefix>.bin and <prefix>.idx: full URIs
  const ShardInfo* info = nullptr;
  TokenDType dtype = TokenDType::kUint16;
  std::string manifest_uri;  // for errors
};

class ShardOpener {
 public:
  virtual ~ShardOpener() = default;
  // Opens the shard for reads, checked against its manifest entry. Errors name the file.
  virtual Result<std::shared_ptr<const TokenSource>> Open(const ShardRef& shard) const = 0;
  // The shards the next reads will need, in plan order (a cache stages them ahead). Default:
  // nothing.
  virtual void Schedule(const std::vector<ShardRef>& upcoming) const { (void)upcoming; }
  // Makes the shard local now, where the opener caches (`stoker prefetch`). Default: nothing.
  virtual Status Stage(const ShardRef& shard) const {
    (void)shard;
    return Status::OK();
  }
  // Whether shards come through a node-local cache, and the reads it served from disk.
  virtual bool cached() const { return false; }
  virtual uint64_t cache_hits() const { return 0; }
};

// Reads shards through `backend` (which the opener keeps alive). `part_bytes`: the kParts unit.
std::shared_ptr<const ShardOpener> NewBackendShardOpener(
    std::shared_ptr<const storage::Backend> backend, RemoteReads reads, size_t part_bytes);

}  // namespace stoker
