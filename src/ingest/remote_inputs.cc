#include "ingest/remote_inputs.h"

#include "common/file_util.h"
#include "records/brace_expand.h"
#include "records/record_store.h"

namespace stoker {
namespace {

Status AddObject(const RecordStore& store, const storage::ObjectInfo& o,
                 std::vector<InputFile>* out) {
  InputFile f;
  f.path = o.uri;
  f.size_bytes = o.size_bytes;
  f.kind = InputKindFromName(o.uri);
  f.shard.path = o.uri;
  f.shard.size_bytes = o.size_bytes;
  f.shard.object_bytes = o.size_bytes;
  f.shard.store = store;
  out->push_back(std::move(f));
  return Status::OK();
}

// One input with its braces expanded.
Status ExpandOne(const std::string& path, std::vector<InputFile>* out) {
  STOKER_ASSIGN_OR_RETURN(RecordStore store, RecordStore::For(path));
  if (HasGlobPattern(path)) {
    STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, store.Glob(path));
    if (objects.empty()) return NotFound(path + ": the pattern matches no object");
    for (const storage::ObjectInfo& o : objects) STOKER_RETURN_IF_ERROR(AddObject(store, o, out));
    return Status::OK();
  }
  Result<uint64_t> size = store.Size(path);
  if (size.ok()) return AddObject(store, {path, *size, ""}, out);
  if (size.status().code() != StatusCode::kNotFound || !path.starts_with("s3://")) {
    return size.status();
  }
  // No such object: a prefix, listed as a directory (hidden names skipped).
  STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, store.ListDir(path));
  size_t before = out->size();
  for (const storage::ObjectInfo& o : objects) {
    if (BaseName(o.uri).starts_with(".")) continue;
    STOKER_RETURN_IF_ERROR(AddObject(store, o, out));
  }
  if (out->size() == before) return NotFound(path + ": no such object, and no objects under it");
  return Status::OK();
}

}  // namespace

bool IsRemotePlainInput(const std::string& input) {
  if (!IsRemoteRecordUri(input)) return false;
  std::string_view base = StripCompressionSuffix(input);
  return base.ends_with(".jsonl") || base.ends_with(".ndjson") || base.ends_with(".json") ||
         base.ends_with(".txt") || base.ends_with(".text");
}

Result<std::vector<InputFile>> ExpandRemotePlainInput(const std::string& input) {
  std::vector<std::string> paths{input};
  if (HasBracePattern(input)) {
    STOKER_ASSIGN_OR_RETURN(paths, ExpandBraces(input));
  }
  std::vector<InputFile> files;
  for (const std::string& path : paths) STOKER_RETURN_IF_ERROR(ExpandOne(path, &files));
  return files;
}

Result<std::unique_ptr<ByteStream>> OpenInputStream(const InputFile& file) {
  if (!file.shard.store.remote()) return OpenByteStream(file.path);
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                          file.shard.store.Open(file.path, file.size_bytes, /*forward=*/true));
  return OpenSourceStream(std::shared_ptr<const ByteSource>(std::move(source)),
                          CompressionFromName(file.path));
}

}  // namespace stoker
