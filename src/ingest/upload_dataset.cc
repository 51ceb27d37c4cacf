#include "ingest/upload_dataset.h"

#include <fstream>
#include <vector>

#include "common/file_util.h"
#include "common/uri.h"
#include "format/manifest.h"
#include "ingest/pack_records.h"
#include "ingest/remote_tools.h"
#include "ingest/task_plan.h"
#include "storage/open_backend.h"

namespace stoker {
namespace {

Status UploadFile(const storage::Backend& backend, const std::string& path,
                  const std::string& uri) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IOError(path + ": cannot open for upload");
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Writer> writer, backend.OpenForWrite(uri));
  std::string buffer(size_t{8} << 20, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize got = in.gcount();
    if (got > 0) STOKER_RETURN_IF_ERROR(writer->Append(std::string_view(buffer.data(), got)));
  }
  if (in.bad()) return IOError(path + ": read failed during upload");
  return writer->Close();
}

}  // namespace

Result<PackDestination> PreparePackDestination(const std::string& output, bool overwrite,
                                               const std::string& marker) {
  PackDestination d;
  d.uri = output;
  STOKER_ASSIGN_OR_RETURN(d.local_dir, TaskOutputRoot(output));  // http(s):// is refused
  if (!IsRemoteUri(output)) return d;
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(output));
  const std::string manifest = JoinUri(output, marker);
  Result<storage::ObjectInfo> existing = backend->Stat(manifest);
  if (existing.ok() && !overwrite) {
    return AlreadyExists(manifest + ": a dataset is already there (--overwrite replaces it)");
  }
  if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  STOKER_ASSIGN_OR_RETURN(d.staging, TempDir::Create("stoker-pack-"));
  d.local_dir = d.staging->Join("dataset");
  return d;
}

Status UploadFiles(const storage::Backend& backend, const std::string& local_dir,
                   const std::string& uri, const std::vector<std::string>& files) {
  return ParallelFor(files.size(), [&](size_t i) {
    return UploadFile(backend, JoinPath(local_dir, files[i]), JoinUri(uri, files[i]));
  });
}

Status UploadDataset(const storage::Backend& backend, const std::string& local_dir,
                     const std::string& uri) {
  STOKER_ASSIGN_OR_RETURN(Manifest m, ReadManifest(local_dir));
  std::vector<std::string> files;
  for (const ShardInfo& s : m.shards) {
    files.push_back(s.prefix + ".bin");
    files.push_back(s.prefix + ".idx");
  }
  if (m.length_index) files.push_back(m.length_index->file);
  STOKER_RETURN_IF_ERROR(UploadFiles(backend, local_dir, uri, files));
  // Last: the dataset is there once its manifest is.
  return UploadFile(backend, JoinPath(local_dir, kManifestFileName),
                    JoinUri(uri, kManifestFileName));
}

Status FinishPackDestination(const PackDestination& destination) {
  if (!destination.remote()) return Status::OK();
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(destination.uri));
  return UploadDataset(*backend, destination.local_dir, destination.uri);
}

Status FinishRecordsDestination(const PackDestination& destination, const std::string& subdir) {
  if (!destination.remote()) return Status::OK();
  const std::string dir =
      subdir.empty() ? destination.local_dir : JoinPath(destination.local_dir, subdir);
  const std::string uri = subdir.empty() ? destination.uri : JoinUri(destination.uri, subdir);
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  std::vector<std::string> files;
  bool has_manifest = false;
  for (const std::string& name : names) {
    if (IsDirectory(JoinPath(dir, name))) continue;
    if (name == kRecordsManifestName) {
      has_manifest = true;
    } else {
      files.push_back(name);
    }
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(destination.uri));
  STOKER_RETURN_IF_ERROR(UploadFiles(*backend, dir, uri, files));
  if (!has_manifest) return Status::OK();
  return UploadFile(*backend, JoinPath(dir, kRecordsManifestName),
                    JoinUri(uri, kRecordsManifestName));
}

}  // namespace stoker
