#include "ingest/remote_tools.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "common/uri.h"
#include "format/dataset_length_index.h"
#include "ingest/upload_dataset.h"
#include "records/record_store.h"
#include "storage/open_backend.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

Status WriteLocal(const std::string& path, std::string_view bytes) {
  STOKER_RETURN_IF_ERROR(MakeDirectories(fs::path(path).parent_path().string()));
  return WriteFileAtomically(path, bytes);
}

// A sparse file of `size` bytes: the stand-in for a .bin that stays where it is.
Status SparseFile(const std::string& path, uint64_t size) {
  STOKER_RETURN_IF_ERROR(MakeDirectories(fs::path(path).parent_path().string()));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(path + ": cannot create", errno);
  const int rc = ::ftruncate(fd, static_cast<off_t>(size));
  const int e = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(path + ": cannot size", e);
  return Status::OK();
}

}  // namespace

Status ParallelFor(size_t n, const std::function<Status(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      Status st = fn(i);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = st;
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < std::min<size_t>(8, n); ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  return first;
}

Status MirrorShardMetadata(const storage::Backend& backend, const std::string& uri,
                           const std::vector<ShardInfo>& shards, const std::string& local_dir) {
  return ParallelFor(shards.size(), [&](size_t i) -> Status {
    const ShardInfo& s = shards[i];
    const std::string local = (fs::path(local_dir) / s.prefix).lexically_normal().string();
    STOKER_RETURN_IF_ERROR(SparseFile(local + ".bin", s.bin_bytes));
    STOKER_ASSIGN_OR_RETURN(std::string idx,
                            storage::ReadAll(backend, JoinUri(uri, s.prefix) + ".idx"));
    return WriteLocal(local + ".idx", idx);
  });
}

namespace {

Status UploadLocalFile(const storage::Backend& backend, const std::string& path,
                       const std::string& uri) {
  STOKER_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return storage::WriteAll(backend, uri, bytes);
}

// The bucket of an s3:// URI, or an error saying what remote tools accept.
Result<ParsedUri> S3Location(const std::string& uri, const char* what) {
  STOKER_ASSIGN_OR_RETURN(ParsedUri parsed, ParseUri(uri));
  if (parsed.kind != UriKind::kS3) {
    return InvalidArgument(uri + ": " + what + " must be s3:// when any dataset is remote (" +
                           "http(s):// is read-only, and local and remote datasets cannot refer "
                           "to each other's shards)");
  }
  return parsed;
}

}  // namespace

Status UploadIndexAndManifest(const storage::Backend& backend, const std::string& local_dir,
                              const Manifest& m, const std::string& uri) {
  if (m.length_index) {
    STOKER_RETURN_IF_ERROR(UploadLocalFile(backend, JoinPath(local_dir, m.length_index->file),
                                           JoinUri(uri, m.length_index->file)));
  }
  return UploadLocalFile(backend, JoinPath(local_dir, kManifestFileName),
                         JoinUri(uri, kManifestFileName));
}

Result<Manifest> MirrorDatasetMetadata(const storage::Backend& backend, const std::string& uri,
                                       const std::string& local_dir) {
  const std::string manifest_uri = JoinUri(uri, kManifestFileName);
  Result<std::string> text = storage::ReadAll(backend, manifest_uri);
  if (!text.ok() && text.status().code() == StatusCode::kNotFound) {
    return NotFound(uri + ": not a complete stoker dataset (no " + std::string(kManifestFileName) +
                    ")");
  }
  STOKER_RETURN_IF_ERROR(text.status());
  STOKER_RETURN_IF_ERROR(WriteLocal(JoinPath(local_dir, kManifestFileName), *text));
  STOKER_ASSIGN_OR_RETURN(Manifest m, ReadManifest(local_dir));
  // One listing per directory that holds shards gives every size.
  std::set<std::string> dirs;
  for (const ShardInfo& s : m.shards) dirs.insert(DirName(JoinUri(uri, s.prefix)));
  std::map<std::string, uint64_t> sizes;
  for (const std::string& dir : dirs) {
    STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, backend.List(dir + "/"));
    for (const storage::ObjectInfo& o : objects) sizes[o.uri] = o.size_bytes;
  }
  for (const ShardInfo& s : m.shards) {
    for (auto [ext, expected] : {std::pair<const char*, uint64_t>{".bin", s.bin_bytes},
                                 std::pair<const char*, uint64_t>{".idx", s.idx_bytes}}) {
      const std::string object = JoinUri(uri, s.prefix) + ext;
      auto it = sizes.find(object);
      if (it == sizes.end()) return FailedPrecondition(object + ": shard file missing");
      if (it->second != expected) {
        return FailedPrecondition(object + ": " + std::to_string(it->second) +
                                  " bytes, but the manifest of " + uri + " says " +
                                  std::to_string(expected));
      }
    }
  }
  STOKER_RETURN_IF_ERROR(MirrorShardMetadata(backend, uri, m.shards, local_dir));
  return m;
}

bool IsRemoteMerge(const MergeOptions& options) {
  return IsRemoteRecordUri(options.output_dir) ||
         std::ranges::any_of(options.parts, IsRemoteRecordUri);
}

Result<Manifest> MergeRemote(const MergeOptions& options) {
  STOKER_ASSIGN_OR_RETURN(ParsedUri out, S3Location(options.output_dir, "the output"));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(options.output_dir));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> staging, TempDir::Create("stoker-merge-"));
  // s3://bucket/key is mirrored at <staging>/key, so relative paths between parts and output are
  // the keys' relative paths.
  auto local = [&](const ParsedUri& u) {
    return (fs::path(staging->path()) / "b" / u.key).lexically_normal().string();
  };
  MergeOptions mirrored;
  mirrored.overwrite = true;  // the mirror is new; the output is checked on the server below
  mirrored.output_dir = local(out);
  for (const std::string& part : options.parts) {
    STOKER_ASSIGN_OR_RETURN(ParsedUri p, S3Location(part, "every part"));
    if (p.bucket != out.bucket) {
      return InvalidArgument(part +
                             ": a remote merge keeps its parts and its output in one "
                             "bucket (the output is in " +
                             out.bucket + ")");
    }
    STOKER_RETURN_IF_ERROR(MirrorDatasetMetadata(*backend, part, local(p)).status());
    mirrored.parts.push_back(local(p));
  }
  const std::string manifest_uri = JoinUri(options.output_dir, kManifestFileName);
  Result<storage::ObjectInfo> existing = backend->Stat(manifest_uri);
  if (existing.ok() && !options.overwrite) {
    return AlreadyExists(manifest_uri + ": a dataset is already there (--overwrite replaces it)");
  }
  if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  Result<Manifest> merged = Merge(mirrored);
  if (!merged.ok()) {
    // Name the objects, not the mirror.
    std::string message = merged.status().message();
    const std::string root = (fs::path(staging->path()) / "b").string() + "/";
    for (size_t at; (at = message.find(root)) != std::string::npos;) {
      message.replace(at, root.size(), "s3://" + out.bucket + "/");
    }
    return Status(merged.status().code(), message);
  }
  STOKER_RETURN_IF_ERROR(
      UploadIndexAndManifest(*backend, mirrored.output_dir, *merged, options.output_dir));
  return merged;
}

Result<LengthIndexInfo> IndexRemote(const std::string& uri, bool check) {
  STOKER_RETURN_IF_ERROR(S3Location(uri, "the dataset").status());
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(uri));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> staging, TempDir::Create("stoker-index-"));
  const std::string dir = staging->Join("dataset");
  STOKER_ASSIGN_OR_RETURN(Manifest m, MirrorDatasetMetadata(*backend, uri, dir));
  if (check) {
    if (!m.length_index)
      return NotFound(uri + " has no length index (`stoker index " + uri + "` writes one)");
    STOKER_ASSIGN_OR_RETURN(std::string bytes,
                            storage::ReadAll(*backend, JoinUri(uri, m.length_index->file)));
    STOKER_RETURN_IF_ERROR(WriteLocal(JoinPath(dir, m.length_index->file), bytes));
    STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const LengthIndex> index,
                            OpenDatasetLengthIndex(dir, m));
    Status st = index->Verify();
    if (!st.ok())
      return Status(st.code(), JoinUri(uri, m.length_index->file) + ": " + st.message());
    return *m.length_index;
  }
  STOKER_ASSIGN_OR_RETURN(LengthIndexInfo info, BuildDatasetLengthIndex(dir, m));
  m.length_index = info;
  STOKER_RETURN_IF_ERROR(WriteManifest(dir, m));
  STOKER_RETURN_IF_ERROR(UploadIndexAndManifest(*backend, dir, m, uri));
  return info;
}

}  // namespace stoker
