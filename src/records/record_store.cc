#include "records/record_store.h"

#include <fnmatch.h>

#include <algorithm>

#include "common/file_util.h"
#include "common/uri.h"
#include "storage/open_backend.h"
#include "storage/ranged_source.h"
#include "storage/window_source.h"

namespace stoker {
namespace {

Status NotListable(const std::string& uri) {
  return InvalidArgument(uri +
                         ": an http(s):// server cannot be listed; name the shards, or give a "
                         "brace pattern (shard-{000000..000099}.tar) or an index.json");
}

}  // namespace

bool IsRemoteRecordUri(const std::string& uri) { return IsRemoteUri(uri); }

bool HasGlobPattern(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '*' || s[i] == '?' || s[i] == '[') return true;
  }
  return false;
}

struct RecordStore::Memo {
  std::mutex mu;
  std::map<std::string, std::string> texts;  // guarded by mu
};

RecordStore::RecordStore(std::shared_ptr<const storage::Backend> backend,
                         std::shared_ptr<const storage::StorageMetrics> metrics)
    : backend_(std::move(backend)), metrics_(std::move(metrics)), memo_(std::make_shared<Memo>()) {}

Result<RecordStore> RecordStore::For(const std::string& uri) {
  if (!IsRemoteRecordUri(uri)) return RecordStore();
  auto metrics = std::make_shared<storage::StorageMetrics>();
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<storage::Backend> backend,
                          storage::OpenMeteredBackendForUri(uri, metrics));
  return RecordStore(std::move(backend), std::move(metrics));
}

Result<std::string> RecordStore::ReadAll(const std::string& uri) const {
  if (!remote()) return ReadFileToString(uri);
  {
    std::lock_guard<std::mutex> lock(memo_->mu);
    if (auto it = memo_->texts.find(uri); it != memo_->texts.end()) return it->second;
  }
  STOKER_ASSIGN_OR_RETURN(std::string text, storage::ReadAll(*backend_, uri));
  std::lock_guard<std::mutex> lock(memo_->mu);
  memo_->texts[uri] = text;
  return text;
}

Result<uint64_t> RecordStore::Size(const std::string& uri) const {
  if (!remote()) return FileSizeBytes(uri);
  STOKER_ASSIGN_OR_RETURN(storage::ObjectInfo info, backend_->Stat(uri));
  return info.size_bytes;
}

bool RecordStore::Exists(const std::string& uri) const {
  if (!remote()) return PathExists(uri);
  return backend_->Stat(uri).ok();
}

Result<std::unique_ptr<ByteSource>> RecordStore::Open(const std::string& uri, uint64_t size_bytes,
                                                      bool forward) const {
  if (!remote()) return OpenFileSource(uri);
  std::unique_ptr<ByteSource> source;
  if (size_bytes > 0) {
    STOKER_ASSIGN_OR_RETURN(source, backend_->OpenForReadWithSize(uri, size_bytes));
  } else {
    STOKER_ASSIGN_OR_RETURN(source, backend_->OpenForRead(uri));
  }
  if (!forward) return source;
  return storage::NewWindowSource(std::move(source), storage::kDefaultPartBytes);
}

Result<std::vector<storage::ObjectInfo>> RecordStore::Glob(const std::string& pattern) const {
  if (!remote()) return InvalidArgument(pattern + ": RecordStore::Glob lists remote objects only");
  if (UriScheme(pattern) != "s3") {
    return NotListable(pattern);
  }
  size_t literal = 0;
  while (literal < pattern.size() && !HasGlobPattern(pattern.substr(0, literal + 1))) ++literal;
  STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> all,
                          backend_->List(pattern.substr(0, literal)));
  std::vector<storage::ObjectInfo> out;
  for (storage::ObjectInfo& o : all) {
    if (::fnmatch(pattern.c_str(), o.uri.c_str(), FNM_PATHNAME) == 0) out.push_back(std::move(o));
  }
  std::ranges::sort(out, {}, &storage::ObjectInfo::uri);
  return out;
}

Result<std::vector<storage::ObjectInfo>> RecordStore::ListDir(const std::string& prefix) const {
  if (!remote())
    return InvalidArgument(prefix + ": RecordStore::ListDir lists remote objects only");
  if (UriScheme(prefix) != "s3") {
    return NotListable(prefix);
  }
  std::string dir = prefix;
  if (!dir.ends_with("/")) dir += "/";
  STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> all, backend_->List(dir));
  std::ranges::sort(all, {}, &storage::ObjectInfo::uri);
  return all;
}

}  // namespace stoker
