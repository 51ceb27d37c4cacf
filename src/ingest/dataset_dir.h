// Output-directory rules shared by `stoker pack` and `stoker merge`: a directory holds a dataset
// exactly when it has a manifest.json; we refuse to replace one unless asked, and we clean up what
// an interrupted run left behind. Plain functions; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "stoker/status.h"

namespace stoker {

struct OutputDirOptions {
  bool overwrite = false;
  // Also delete part-*.bin / part-*.idx found in the directory (pack: they are leftovers of an
  // interrupted or replaced pack; merge never deletes shards, which may belong to its parts).
  bool remove_stale_shards = false;
};

// The stale files of an output directory, moved aside into its kReplacedDirName and deleted on a
// thread of their own while the new dataset is written: unlinking a large shard frees its pages
// and blocks (40 ms for a 50 MB shard on ext4 here; seconds for a large dataset), and done first
// it delayed every byte of the pack behind it.
// Thread contract: Wait and the destructor are called by the owner; the thread only unlinks.
class BackgroundDeletion {
 public:
  // Deletes every file in `dir`, then `dir`.
  explicit BackgroundDeletion(std::string dir);
  ~BackgroundDeletion();  // waits
  BackgroundDeletion(const BackgroundDeletion&) = delete;
  BackgroundDeletion& operator=(const BackgroundDeletion&) = delete;

  // Waits for the deletion; the first error (a file that could not be removed), else OK.
  Status Wait();

 private:
  const std::string dir_;
  Status status_;  // written by the thread, read after join
  std::thread thread_;
};

// Hidden, so that nothing takes it for a shard; a crash can leave it, and the next pack into the
// directory deletes it.
inline constexpr const char* kReplacedDirName = ".stoker-replaced";

// Creates `dir` if needed. If it holds a dataset: kAlreadyExists unless options.overwrite, in
// which case the manifest is removed first (so the old dataset stops being complete before any of
// its files change). Then removes stale "*.tmp" files (and shards, see above). With `deletion`,
// the stale files are renamed into dir/kReplacedDirName and *deletion deletes them in the
// background (the caller waits on it before it publishes the new dataset); without, they are
// removed before this returns.
Status PrepareOutputDir(const std::string& dir, const OutputDirOptions& options,
                        std::unique_ptr<BackgroundDeletion>* deletion = nullptr);

// kInvalidArgument if `output_dir` is one of `input_dirs` or lies inside one of them (a later
// pack of the same inputs would read our shards as documents).
Status CheckOutputOutsideInputs(const std::string& output_dir,
                                const std::vector<std::string>& inputs);

}  // namespace stoker
