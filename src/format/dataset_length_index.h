// The length index of a stoker dataset directory: written from the shards' `.idx` files by
// `stoker pack`, `stoker merge` and `stoker index`, recorded in the manifest, and checked against
// the manifest when the dataset is opened (docs/dataset-format.md, "The length index").
// Free functions; thread-safe (no shared state).
#pragma once

#include <memory>
#include <string>

#include "format/length_index.h"
#include "format/manifest.h"
#include "stoker/status.h"

namespace stoker {

// Reads every shard's lengths (O(documents), one shard mapped at a time), writes
// `dir`/lengths.stkidx atomically and returns the record for the manifest (the caller writes the
// manifest). Errors name the shard or the index file.
Result<LengthIndexInfo> BuildDatasetLengthIndex(const std::string& dir, const Manifest& manifest);

// Opens the length index `manifest` records and checks it against the manifest in O(shards) (file
// size, recorded checksum, document count, token total, every shard boundary). The lengths of a
// version-2 index are verified chunk by chunk when first read (LengthIndex::chunk_verifier); a
// version-1 index is hashed whole here (one pass at memory bandwidth). kCorruption naming the
// index file (and saying `stoker index DIR` rebuilds it) when it is stale or damaged.
Result<std::shared_ptr<const LengthIndex>> OpenDatasetLengthIndex(const std::string& dir,
                                                                  const Manifest& manifest);

}  // namespace stoker
