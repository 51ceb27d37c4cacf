// PartCacheSource: a ByteSource decorator that reads its inner source in whole aligned parts
// (8 MiB by default) and keeps every part it fetched until it is destroyed, so that many small
// reads of one region (a block-shuffled shard, a sequential scan) cost one ranged GET per part.
// A read that misses fetches its parts; threads that miss the same part wait for the one fetch.
// A failed fetch is the error of the reads that waited for it and is not kept: the next read
// tries again. With fetch_ahead > 0, that many threads fetch every part in order from the first
// read on,
// so that a shard read whole (block shuffle, source order) arrives at the speed of parallel
// downloads rather than one part per reader's miss; destroying the source aborts their requests
// in flight (storage/cancel.h) and joins them. Use it for shards read whole, not for global shuffle
// (one small document per part would fetch 8 MiB for a few KiB). Thread-safe.
#pragma once

#include <cstddef>
#include <memory>

#include "storage/byte_source.h"

namespace stoker::storage {

std::unique_ptr<ByteSource> NewPartCacheSource(std::unique_ptr<ByteSource> inner, size_t part_bytes,
                                               int fetch_ahead = 0);

}  // namespace stoker::storage
