// OpenTokenSource: format detection, as documented in include/stoker/token_source.h.
#include "format/open_token_source.h"

#include <cstring>

#include "common/file_util.h"
#include "common/mapped_file.h"
#include "common/uri.h"
#include "format/array_source.h"
#include "format/manifest.h"
#include "format/megatron_source.h"
#include "format/record_token_source.h"
#include "format/stoker_dataset.h"
#include "stoker/token_source.h"

namespace stoker {
namespace {

Result<std::unique_ptr<TokenSource>> OpenMegatron(const std::string& prefix) {
  for (const char* ext : {".idx", ".bin"}) {
    if (!PathExists(prefix + ext)) {
      return NotFound(prefix + ext + ": missing (a Megatron dataset needs both " + prefix +
                      ".bin and " + prefix + ".idx)");
    }
  }
  // O(1) checks: a .idx of 200 M documents is 4 GB, too much to read before the first batch. Each
  // read checks its own entry; `stoker verify` checks them all.
  STOKER_ASSIGN_OR_RETURN(auto src, MegatronSource::Open(prefix, MegatronIndex::Checks::kHeader));
  return std::unique_ptr<TokenSource>(std::move(src));
}

template <typename T>
Result<std::unique_ptr<TokenSource>> Up(Result<std::unique_ptr<T>> r) {
  if (!r.ok()) return r.status();
  return std::unique_ptr<TokenSource>(std::move(*r));
}

}  // namespace

Result<std::unique_ptr<TokenSource>> OpenTokenSource(const std::string& uri) {
  return OpenTokenSource(uri, RemoteDatasetOptions{});
}

Result<std::unique_ptr<TokenSource>> OpenTokenSource(const std::string& uri,
                                                     const RemoteDatasetOptions& remote) {
  STOKER_ASSIGN_OR_RETURN(const ParsedUri parsed, ParseUri(uri));
  if (parsed.kind != UriKind::kFile) {
    // An object store has no directories to look into: a remote URI names a stoker dataset.
    if (uri.ends_with(".bin") || uri.ends_with(".idx") || uri.ends_with(".npy")) {
      return InvalidArgument(uri +
                             ": remote token data must be a stoker dataset (a prefix "
                             "holding manifest.json); copy other formats to local disk, or "
                             "`stoker pack` them");
    }
    return Up(StokerDataset::OpenRemote(uri, remote));
  }
  const std::string& path = parsed.path;
  if (IsRecordTokenDataset(path)) return Up(RecordTokenSource::Open(path));  // MDS, Parquet...
  if (IsDirectory(path)) {
    if (!PathExists(JoinPath(path, kManifestFileName))) {
      // A task-split pack's output holds its plan (ingest/task_plan.h's inputs.json) and its
      // tasks' receipts until `stoker merge` writes the manifest.
      if (PathExists(JoinPath(path, "inputs.json")) && IsDirectory(JoinPath(path, "tasks"))) {
        return NotFound(path + ": the output of a task-split pack, not merged yet: run `stoker " +
                        "merge " + path + "` once every task has finished (it checks their " +
                        "receipts and writes " + std::string(kManifestFileName) + ")");
      }
      return NotFound(path + ": a directory without " + std::string(kManifestFileName) +
                      " (not a stoker dataset, or a pack that did not finish)");
    }
    return Up(StokerDataset::Open(path));
  }
  if (path.ends_with(".idx")) return OpenMegatron(path.substr(0, path.size() - 4));
  if (path.ends_with(".npy")) return Up(ArraySource::OpenNpy(path));
  if (path.ends_with(".bin")) {
    std::string prefix = path.substr(0, path.size() - 4);
    if (PathExists(prefix + ".idx")) return OpenMegatron(prefix);
    STOKER_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
    if (ArraySource::LooksLikeLlmc(file->data(), file->size())) {
      return Up(ArraySource::OpenLlmc(path));
    }
    return Up(ArraySource::OpenNanoGpt(path));
  }
  if (PathExists(path + ".bin") || PathExists(path + ".idx")) return OpenMegatron(path);
  if (!PathExists(path)) {
    return NotFound(path + ": no such file, directory or Megatron prefix (" + path + ".bin/.idx)");
  }
  // An unusual file name: look at the first bytes.
  STOKER_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  if (file->size() >= 6 && std::memcmp(file->data(), "\x93NUMPY", 6) == 0) {
    return Up(ArraySource::OpenNpy(path));
  }
  if (ArraySource::LooksLikeLlmc(file->data(), file->size()))
    return Up(ArraySource::OpenLlmc(path));
  return InvalidArgument(path +
                         ": unknown token file format (expected a stoker dataset "
                         "directory, a Megatron prefix or .bin/.idx, a .npy file, or a nanoGPT/"
                         "llm.c .bin)");
}

}  // namespace stoker
