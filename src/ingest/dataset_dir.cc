#include "ingest/dataset_dir.h"

#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/file_util.h"
#include "format/manifest.h"

namespace fs = std::filesystem;

namespace stoker {
namespace {


Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(path + ": cannot remove", errno);
  }
  return Status::OK();
}

}  // namespace

Status PrepareOutputDir(const std::string& dir, const OutputDirOptions& options) {
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
    STOKER_RETURN_IF_ERROR(RemoveFile(manifest));
    STOKER_RETURN_IF_ERROR(FsyncDirectory(dir));
  }
  STOKER_ASSIGN_OR_RETURN(auto names, ListDirectory(dir));
  for (const std::string& name : names) {
    bool stale =
        name.ends_with(".tmp") || (options.remove_stale_shards && name.starts_with("part-") &&
                                   (name.ends_with(".bin") || name.ends_with(".idx")));
    if (stale) STOKER_RETURN_IF_ERROR(RemoveFile(JoinPath(dir, name)));
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
