// Output-directory rules shared by `stoker pack` and `stoker merge`: a directory holds a dataset
// exactly when it has a manifest.json; we refuse to replace one unless asked, and we clean up what
// an interrupted run left behind. Plain functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "stoker/status.h"

namespace stoker {

struct OutputDirOptions {
  bool overwrite = false;
  // Also delete part-*.bin / part-*.idx found in the directory (pack: they are leftovers of an
  // interrupted or replaced pack; merge never deletes shards, which may belong to its parts).
  bool remove_stale_shards = false;
};

// Creates `dir` if needed. If it holds a dataset: kAlreadyExists unless options.overwrite, in
// which case the manifest is removed first (so the old dataset stops being complete before any of
// its files change). Then removes stale "*.tmp" files (and shards, see above).
Status PrepareOutputDir(const std::string& dir, const OutputDirOptions& options);

// kInvalidArgument if `output_dir` is one of `input_dirs` or lies inside one of them (a later
// pack of the same inputs would read our shards as documents).
Status CheckOutputOutsideInputs(const std::string& output_dir,
                                const std::vector<std::string>& inputs);

}  // namespace stoker
