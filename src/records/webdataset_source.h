// WebDataset shards: the regular members of a tar archive grouped into samples by key, exactly
// as webdataset 1.0.2 groups them (tariterators.py: tar_file_iterator + group_by_keys). A
// sample is a Record whose key is __key__ and whose fields are its extensions (lower-cased),
// as kBytes, in archive order. Not thread-safe: one user at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "records/byte_stream.h"
#include "records/record_source.h"
#include "storage/byte_source.h"

namespace stoker {

// Splits a member name as webdataset's base_plus_ext does (regex ^((?:.*/|)[^.]+)[.]([^/]*)$):
// key = directory part + last component up to its first dot, ext = the rest. False when the
// name has no such split (the member is then ignored).
bool SplitWebDatasetName(std::string_view name, std::string_view* key, std::string_view* ext);

// True for names webdataset skips as metadata: a top-level name starting and ending with "__",
// or a first path component "__*__".
bool IsWebDatasetMetaName(std::string_view name);

// Reads one tar shard (`compression` kNone, kGzip or kZstd) from `source`.
std::unique_ptr<RecordSource> OpenWebDatasetShard(std::shared_ptr<const ByteSource> source,
                                                  Compression compression);

}  // namespace stoker
