// `stoker merge` and `stoker index` on datasets in an object store (s3://). Both need only the
// datasets' metadata: each manifest, every shard's .idx (the document lengths) and the size of
// every .bin. MirrorDatasetMetadata downloads the first two into a local mirror (8 threads) and
// stands in for each .bin with a sparse file of the size that one listing per shard directory
// reports — checked against the manifest, so a missing or short shard is still an error naming
// its URI — and the local merge or index runs on the mirror. What they write (the length index,
// then the manifest, last) is uploaded; no shard is copied or rewritten. Free functions;
// thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "format/length_index.h"
#include "format/manifest.h"
#include "ingest/merge.h"
#include "stoker/status.h"
#include "storage/backend.h"

namespace stoker {

// Mirrors the dataset at `uri` into `local_dir` (see above) and returns its manifest. Errors name
// the object at fault (kNotFound: no manifest; kFailedPrecondition: a shard missing or of the
// wrong size).
Result<Manifest> MirrorDatasetMetadata(const storage::Backend& backend, const std::string& uri,
                                       const std::string& local_dir);

// Runs fn(i) for i in [0, n) on up to 8 threads; the first error wins and stops the rest.
Status ParallelFor(size_t n, const std::function<Status(size_t)>& fn);

// The metadata mirror of `shards` (prefixes relative to `uri`) in `local_dir`: each .idx
// downloaded, each .bin a sparse file of its recorded size (8 threads).
Status MirrorShardMetadata(const storage::Backend& backend, const std::string& uri,
                           const std::vector<ShardInfo>& shards, const std::string& local_dir);

// Uploads what `local_dir` holds beside the shards: the manifest's length index, then
// manifest.json (last: the dataset at `uri` is complete once it is there).
Status UploadIndexAndManifest(const storage::Backend& backend, const std::string& local_dir,
                              const Manifest& m, const std::string& uri);

// True when any of the parts or the output is remote (s3://, http(s)://).
bool IsRemoteMerge(const MergeOptions& options);
// Merge (ingest/merge.h) of parts in one bucket into an output in the same bucket: the merged
// manifest refers to the parts' shards by relative keys, as on local disk. kInvalidArgument for a
// mixture of local and remote datasets, several buckets or an http(s):// output.
Result<Manifest> MergeRemote(const MergeOptions& options);

// `stoker index` of a remote dataset: builds its length index, uploads it, then the manifest that
// names it. With `check`, verifies the existing one instead (kNotFound when it has none).
Result<LengthIndexInfo> IndexRemote(const std::string& uri, bool check);

}  // namespace stoker
