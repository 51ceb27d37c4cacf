// LitData optimized datasets (docs/formats-reference.md §5): index.json lists the chunk files in
// the global item order; each chunk is one shard. PyTreeLoader chunks give one field per leaf
// (named by the dict keys of litdata's data_spec); TokensLoader chunks give one "tokens" field per
// item as written. Chunks compressed whole (chunk-*.zstd.bin), per sample and in frames ("batch",
// the LDFZ01 layout) are read; encrypted datasets are kUnimplemented. Chunks carrying their rows as
// an Arrow IPC footer (litdata 0.2.7x writes flat dicts so) need the Arrow build. Functions are
// thread-safe; a returned RecordSource is not (one user at a time).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "records/record_source.h"
#include "storage/byte_source.h"

namespace stoker {

// The chunks of the index.json at `index_path`, in index order.
// `store`: where the index and its chunks live (record_store.h); the index text travels with
// each shard (RecordShard::index_text), so opening a chunk reads no index again.
Result<std::vector<RecordShard>> ListLitDataShards(const std::string& index_path,
                                                   const RecordStore& store = {});

// Reads one chunk whole (the config comes from the index.json beside it).
Result<std::unique_ptr<RecordSource>> OpenLitDataShard(const RecordShard& shard,
                                                       std::shared_ptr<const ByteSource> source);

}  // namespace stoker
