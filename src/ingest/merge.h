// Merge: joins the manifests of several datasets (typically the parts of a multi-task pack) into
// one dataset without copying shards: the merged manifest's shard prefixes are relative paths
// into the part directories ("../part-00003/part-00003-00000").
//
// Order: parts of a multi-task pack (their manifests record task_index/task_count > 1) are put in
// task order and must be exactly tasks 0..count-1, so the merge holds the documents of a
// single-task pack in the same order; whole datasets (single-task packs, earlier merges) keep the
// order given; mixing the two is refused. Thread-safe (no shared state).
#pragma once

#include <string>
#include <vector>

#include "format/manifest.h"
#include "stoker/status.h"

namespace stoker {

struct MergeOptions {
  std::vector<std::string> parts;  // dataset directories
  std::string output_dir;
  bool overwrite = false;
};

// Writes the merged manifest into options.output_dir and returns it. Errors: kNotFound for a part
// without a manifest, kFailedPrecondition when tokenizers or dtypes disagree, tasks are missing
// or repeated, or a shard file is missing or has the wrong size; kAlreadyExists as for pack.
Result<Manifest> Merge(const MergeOptions& options);

}  // namespace stoker
