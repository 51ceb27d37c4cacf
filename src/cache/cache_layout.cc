#include "cache/cache_layout.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/cache_root.h"
#include "common/file_lock.h"
#include "common/file_util.h"
#include "common/hash.h"

namespace stoker::cache {
namespace {

constexpr size_t kMaxBaseNameChars = 48;
constexpr std::string_view kDirs[] = {"data", "meta", "tmp", "locks"};

bool IsSafeChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// The key of a tmp/ name "<key>~<pid>~<n>.part" (or "" when it is not one).
std::string_view TempKey(std::string_view name) {
  const size_t tilde = name.find('~');
  if (tilde == std::string_view::npos || !name.ends_with(".part")) return {};
  return name.substr(0, tilde);
}

bool IsOwnEntry(std::string_view sub, std::string_view name) {
  if (sub == "data") return IsObjectKey(name);
  if (sub == "meta") {
    const std::string target = AtomicWriteTarget(name);  // WriteMeta's temporary file
    if (!target.empty()) name = target;
    return name.ends_with(".json") && IsObjectKey(name.substr(0, name.size() - 5));
  }
  if (sub == "locks")
    return name.ends_with(".lock") && IsObjectKey(name.substr(0, name.size() - 5));
  return IsObjectKey(TempKey(name));  // tmp
}

bool IsOwnTopLevel(std::string_view name) {
  if (std::ranges::find(kDirs, name) != std::end(kDirs)) return true;
  // A cache at a cache root (where an older stoker kept it) lives beside the root's other kinds.
  if (IsCacheKindDirName(name)) return true;
  const std::string target = AtomicWriteTarget(name);  // the marker's or stats.json's temporary
  if (!target.empty()) name = target;
  return name == kMarkerFileName || name == "space.lock" || name == "stats.lock" ||
         name == "stats.json";
}

Result<struct stat> StatPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat " + path, errno);
  return st;
}

}  // namespace

std::string ObjectKey(std::string_view uri) {
  std::string_view base = uri;
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  const size_t slash = base.rfind('/');
  if (slash != std::string_view::npos) base.remove_prefix(slash + 1);
  if (base.size() > kMaxBaseNameChars) base = base.substr(base.size() - kMaxBaseNameChars);
  std::string key = Xxh3Hex(Xxh3(uri.data(), uri.size())) + "-";
  for (char c : base) key += IsSafeChar(c) ? c : '_';
  return key;
}

bool IsObjectKey(std::string_view name) {
  if (name.size() < 17 || name.size() > 17 + kMaxBaseNameChars || name[16] != '-') return false;
  return IsXxh3Hex(name.substr(0, 16)) && std::ranges::all_of(name.substr(17), IsSafeChar);
}

Result<CacheLayout> CacheLayout::Open(const std::string& dir, bool create) {
  if (dir.empty()) return InvalidArgument("cache directory: empty path");
  if (PathExists(dir) && !IsDirectory(dir)) {
    return FailedPrecondition(dir + ": not a directory (cache directory)");
  }
  if (!create && !PathExists(dir)) return NotFound(dir + ": no such cache directory");
  STOKER_RETURN_IF_ERROR(MakeDirectories(dir));
  // Processes starting together on one new directory: one of them sets it up, under a lock on
  // the directory itself (a lock file inside would look foreign to the others).
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                          FileLock::Acquire(dir, LockMode::kExclusive));
  CacheLayout layout(dir);
  const std::string marker = JoinPath(dir, kMarkerFileName);
  if (PathExists(marker)) {
    STOKER_RETURN_IF_ERROR(layout.CheckOwnEntries());
    for (std::string_view d : kDirs) STOKER_RETURN_IF_ERROR(MakeDirectories(JoinPath(dir, d)));
    return layout;
  }
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  if (!names.empty()) {
    return FailedPrecondition(dir + ": not a stoker cache (no " + std::string(kMarkerFileName) +
                              ") and not empty (holds '" + names.front() +
                              "'); the cache never deletes what it did not write: give it an "
                              "empty or new directory");
  }
  if (!create) return NotFound(dir + ": no stoker cache here (empty directory)");
  for (std::string_view d : kDirs) STOKER_RETURN_IF_ERROR(MakeDirectories(JoinPath(dir, d)));
  nlohmann::json j = {{"format", "stoker-cache"}, {"version", 1}};
  STOKER_RETURN_IF_ERROR(WriteFileAtomically(marker, j.dump(2) + "\n"));
  return layout;
}

Status CacheLayout::CheckOwnEntries() const {
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> top, ListDirectory(dir_));
  for (const std::string& name : top) {
    if (!IsOwnTopLevel(name)) {
      return FailedPrecondition(
          JoinPath(dir_, name) +
          ": not written by the stoker cache; the cache refuses a directory "
          "that holds anything else (it never deletes what it did not write)");
    }
  }
  for (std::string_view sub : kDirs) {
    const std::string path = JoinPath(dir_, sub);
    if (!PathExists(path)) continue;
    STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(path));
    for (const std::string& name : names) {
      if (!IsOwnEntry(sub, name)) {
        return FailedPrecondition(JoinPath(path, name) +
                                  ": not written by the stoker cache; the cache refuses a "
                                  "directory that holds anything else");
      }
    }
  }
  return Status::OK();
}

std::string CacheLayout::data_path(std::string_view key) const {
  return dir_ + "/data/" + std::string(key);
}
std::string CacheLayout::meta_path(std::string_view key) const {
  return dir_ + "/meta/" + std::string(key) + ".json";
}
std::string CacheLayout::lock_path(std::string_view key) const {
  return dir_ + "/locks/" + std::string(key) + ".lock";
}
std::string CacheLayout::temp_path(std::string_view key) const {
  static std::atomic<uint64_t> counter{0};
  return dir_ + "/tmp/" + std::string(key) + "~" + std::to_string(::getpid()) + "~" +
         std::to_string(counter.fetch_add(1)) + ".part";
}
std::string CacheLayout::data_dir() const { return dir_ + "/data"; }
std::string CacheLayout::temp_dir() const { return dir_ + "/tmp"; }
std::string CacheLayout::space_lock_path() const { return dir_ + "/space.lock"; }
std::string CacheLayout::stats_path() const { return dir_ + "/stats.json"; }
std::string CacheLayout::stats_lock_path() const { return dir_ + "/stats.lock"; }

Result<std::vector<StoredObject>> CacheLayout::ScanData() const {
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(data_dir()));
  std::vector<StoredObject> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    Result<struct stat> st = StatPath(data_path(name));
    if (!st.ok()) {
      if (st.status().code() == StatusCode::kNotFound) continue;  // evicted meanwhile
      return st.status();
    }
    out.push_back({name, static_cast<uint64_t>(st->st_size),
                   int64_t{st->st_mtim.tv_sec} * 1000000000 + st->st_mtim.tv_nsec});
  }
  return out;
}

Result<uint64_t> CacheLayout::TempBytes() const {
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(temp_dir()));
  uint64_t total = 0;
  for (const std::string& name : names) {
    Result<struct stat> st = StatPath(JoinPath(temp_dir(), name));
    if (st.ok()) total += static_cast<uint64_t>(st->st_size);
  }
  return total;
}

Result<int> CacheLayout::RemoveStaleTemps() const {
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(temp_dir()));
  int removed = 0;
  for (const std::string& name : names) {
    const std::string key(TempKey(name));
    if (!IsObjectKey(key)) continue;
    // A running download holds the object's exclusive lock for as long as its temp file exists.
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                            FileLock::TryAcquire(lock_path(key), LockMode::kExclusive));
    if (lock == nullptr) continue;
    const std::string path = JoinPath(temp_dir(), name);
    if (::unlink(path.c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT) {
      return ErrnoStatus("unlink " + path, errno);
    }
  }
  return removed;
}

Status CacheLayout::RemoveObject(std::string_view key) const {
  for (const std::string& path : {data_path(key), meta_path(key)}) {
    STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(path));
  }
  return Status::OK();
}

Status WriteMeta(const std::string& path, const ObjectMeta& meta) {
  nlohmann::json j = {{"uri", meta.uri}, {"size_bytes", meta.size_bytes}, {"xxh3", meta.xxh3}};
  if (!meta.unsynced_boot.empty()) j["unsynced_boot"] = meta.unsynced_boot;
  return WriteFileAtomically(path, j.dump() + "\n", /*durable=*/false);
}

Result<ObjectMeta> ReadMeta(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("uri") || !j["uri"].is_string() || !j.contains("size_bytes") ||
      !j["size_bytes"].is_number_unsigned() || !j.contains("xxh3") || !j["xxh3"].is_string()) {
    return Corruption(path + ": not a cache meta file (want uri, size_bytes, xxh3)");
  }
  if (j.contains("unsynced_boot") && !j["unsynced_boot"].is_string()) {
    return Corruption(path + ": unsynced_boot is not a string");
  }
  return ObjectMeta{j["uri"].get<std::string>(), j["size_bytes"].get<uint64_t>(),
                    j["xxh3"].get<std::string>(), j.value("unsynced_boot", std::string())};
}

}  // namespace stoker::cache
