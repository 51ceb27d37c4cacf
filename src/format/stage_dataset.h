// StageRemoteDataset: copies a remote stoker dataset (manifest, length index, every shard) into
// a local directory with the same relative layout, so that code which reads every byte anyway
// (`stoker verify`) runs unchanged on it. Files are fetched by `threads` threads in ranged GETs;
// sizes come from the manifest (no HEAD, no LIST). A shard missing on the server is left out
// (the local check then reports it as missing). Free function; thread-safe.
#pragma once

#include <memory>
#include <string>

#include "common/temp_dir.h"
#include "stoker/status.h"
#include "storage/backend.h"

namespace stoker {

struct StagedDataset {
  std::unique_ptr<TempDir> root;  // removed with everything in it when this goes
  std::string dir;                // the dataset's local directory (below root)
};

// `uri`: s3:// or http(s)://. Errors: the manifest's (naming its URI), or a failed download.
Result<StagedDataset> StageRemoteDataset(const storage::Backend& backend, const std::string& uri,
                                         int threads = 8);

}  // namespace stoker
