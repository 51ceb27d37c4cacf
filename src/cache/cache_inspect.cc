#include "cache/cache_inspect.h"

#include <algorithm>
#include <string_view>

#include "cache/cache_layout.h"
#include "common/file_lock.h"
#include "common/file_util.h"

namespace stoker::cache {

Result<CacheReport> InspectCache(const std::string& dir) {
  STOKER_ASSIGN_OR_RETURN(CacheLayout layout, CacheLayout::Open(dir, /*create=*/false));
  CacheReport report;
  report.dir = dir;
  STOKER_ASSIGN_OR_RETURN(report.stats, ReadStatsFile(layout));
  STOKER_ASSIGN_OR_RETURN(std::vector<StoredObject> objects, layout.ScanData());
  STOKER_ASSIGN_OR_RETURN(report.temp_bytes, layout.TempBytes());
  report.stats.used_bytes = report.temp_bytes;
  for (const StoredObject& o : objects) {
    CachedObjectInfo info;
    info.size_bytes = o.size_bytes;
    Result<ObjectMeta> meta = ReadMeta(layout.meta_path(o.key));
    info.uri = meta.ok() ? meta->uri : "(no meta: " + o.key + ")";
    if (meta.ok()) info.xxh3 = meta->xxh3;
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                            FileLock::TryAcquire(layout.lock_path(o.key), LockMode::kExclusive));
    info.in_use = lock == nullptr;
    report.stats.used_bytes += o.size_bytes;
    report.objects.push_back(std::move(info));
  }
  std::ranges::sort(report.objects, {}, &CachedObjectInfo::uri);
  return report;
}

Result<ClearReport> ClearCache(const std::string& dir) {
  STOKER_ASSIGN_OR_RETURN(CacheLayout layout, CacheLayout::Open(dir, /*create=*/false));
  ClearReport report;
  STOKER_RETURN_IF_ERROR(layout.RemoveStaleTemps().status());
  STOKER_ASSIGN_OR_RETURN(std::vector<StoredObject> objects, layout.ScanData());
  for (const StoredObject& o : objects) {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                            FileLock::TryAcquire(layout.lock_path(o.key), LockMode::kExclusive));
    if (lock == nullptr) {
      ++report.in_use;
      continue;
    }
    STOKER_RETURN_IF_ERROR(layout.RemoveObject(o.key));
    ++report.removed_objects;
    report.removed_bytes += o.size_bytes;
  }
  // Meta files whose data is gone (a process died between writing one and renaming the other).
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> metas, ListDirectory(layout.dir() + "/meta"));
  for (const std::string& name : metas) {
    std::string key = AtomicWriteTarget(name);  // WriteMeta's temporary file of "<key>.json"
    if (key.empty()) key = name;
    if (key.size() > 5 && key.ends_with(".json")) key.resize(key.size() - 5);
    if (!IsObjectKey(key)) continue;
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                            FileLock::TryAcquire(layout.lock_path(key), LockMode::kExclusive));
    if (lock == nullptr || PathExists(layout.data_path(key))) continue;
    STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(layout.dir() + "/meta/" + name));
  }
  {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                            FileLock::Acquire(layout.stats_lock_path(), LockMode::kExclusive));
    STOKER_ASSIGN_OR_RETURN(std::vector<std::string> top, ListDirectory(layout.dir()));
    for (const std::string& name : top) {
      if (name != "stats.json" && AtomicWriteTarget(name) != "stats.json") continue;
      STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(JoinPath(layout.dir(), name)));
    }
  }
  return report;
}

}  // namespace stoker::cache
