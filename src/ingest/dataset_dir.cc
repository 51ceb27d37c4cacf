#include "ingest/dataset_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "common/file_util.h"
#include "format/manifest.h"

namespace fs = std::filesystem;

namespace stoker {
namespace {

// Removes every file in `dir`, then `dir`; the first error.
Status RemoveDirectoryOfFiles(const std::string& dir) {
  STOKER_ASSIGN_OR_RETURN(auto names, ListDirectory(dir));
  for (const std::string& name : names) {
    STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(JoinPath(dir, name)));
  }
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(dir + ": cannot remove", errno);
  }
  return Status::OK();
}

}  // namespace

BackgroundDeletion::BackgroundDeletion(std::string dir)
    : dir_(std::move(dir)), thread_([this] { status_ = RemoveDirectoryOfFiles(dir_); }) {}

BackgroundDeletion::~BackgroundDeletion() {
  if (thread_.joinable()) thread_.join();
}

Status BackgroundDeletion::Wait() {
  if (thread_.joinable()) thread_.join();
  return status_;
}

Status PrepareOutputDir(const std::string& dir, const OutputDirOptions& options,
                        std::unique_ptr<BackgroundDeletion>* deletion) {
  if (PathExists(dir) && !IsDirectory(dir)) {
    return InvalidArgument(dir + ": the output exists and is not a directory");
  }
  STOKER_RETURN_IF_ERROR(MakeDirectories(dir));
  std::string manifest = JoinPath(dir, kManifestFileName);
  if (PathExists(manifest)) {
    if (!options.overwrite) {
      return AlreadyExists(dir + " already holds a stoker dataset (" + manifest +
                           "); pass --overwrite to replace it, or choose another output");
    }
    STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(manifest));
    STOKER_RETURN_IF_ERROR(FsyncDirectory(dir));
  }
  const std::string replaced = JoinPath(dir, kReplacedDirName);
  if (deletion) STOKER_RETURN_IF_ERROR(MakeDirectories(replaced));
  STOKER_ASSIGN_OR_RETURN(auto names, ListDirectory(dir));
  for (const std::string& name : names) {
    bool stale =
        name.ends_with(".tmp") || (options.remove_stale_shards && name.starts_with("part-") &&
                                   (name.ends_with(".bin") || name.ends_with(".idx")));
    if (!stale) continue;
    const std::string path = JoinPath(dir, name);
    if (!deletion) {
      STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(path));
    } else if (::rename(path.c_str(), JoinPath(replaced, name).c_str()) != 0) {
      return ErrnoStatus(path + ": cannot move aside into " + replaced, errno);
    }
  }
  if (deletion) {
    *deletion = std::make_unique<BackgroundDeletion>(replaced);
  } else if (IsDirectory(replaced)) {
    STOKER_RETURN_IF_ERROR(RemoveDirectoryOfFiles(replaced));  // what a crashed pack left
  }
  return Status::OK();
}

Status CheckOutputOutsideInputs(const std::string& output_dir,
                                const std::vector<std::string>& inputs) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(output_dir, ec);
  if (ec) return Status::OK();  // the output is created later; nothing to compare yet
  for (const std::string& input : inputs) {
    if (!IsDirectory(input)) continue;
    fs::path in = fs::weakly_canonical(input, ec);
    if (ec) continue;
    fs::path rel = out.lexically_relative(in);
    if (!rel.empty() && *rel.begin() != "..") {
      return InvalidArgument("output " + output_dir + " is inside input directory " + input +
                             "; choose an output outside the inputs");
    }
  }
  return Status::OK();
}

}  // namespace stoker
