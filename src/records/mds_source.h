// MosaicML Streaming MDS datasets: index.json plus shards (docs/formats-reference.md §2). A shard
// is read whole into memory (the format caps it below 4 GiB; the writer's default is 64 MiB), after
// its hashes are checked and it is decompressed; its samples become Records with one field per
// column. Not thread-safe: one user at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "records/record_source.h"
#include "storage/byte_source.h"

namespace stoker {

// The shards that `index_path` (an index.json) lists, in index order, with the digests listed
// for the file to read (the compressed one when there is one). kNotFound if missing;
// kCorruption for a malformed index; kUnimplemented for a non-MDS shard format.
// `store`: where the index and its shards live (record_store.h).
Result<std::vector<RecordShard>> ListMdsShards(const std::string& index_path,
                                               const RecordStore& store = {});

// Reads one MDS shard (compression from its extension: none, .zstd, .gz). Every digest in
// shard.hashes is verified: xxh32, xxh64, xxh3_64, xxh128 (xxhash) and the hashlib names md5,
// sha1, sha224...sha512, sha3_*, blake2b, blake2s (OpenSSL); an algorithm neither knows is not
// checked. Columns: str -> kString;
// bytes, json, pkl, and image encodings -> kBytes (raw); int, [u]int8..64, str_int -> kInt;
// float16/32/64, str_float -> kFloat; str_decimal -> kString; ndarray -> kTokens (integer
// dtypes, flattened) or kFloat.
Result<std::unique_ptr<RecordSource>> OpenMdsShard(const RecordShard& shard,
                                                   std::shared_ptr<const ByteSource> source);

}  // namespace stoker
