#include "cache/cache_defaults.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "cache/cache_layout.h"
#include "common/cache_root.h"
#include "common/file_util.h"
#include "common/human_size.h"

namespace stoker::cache {

std::string DefaultCacheDir() {
  const std::optional<std::string> root = CacheRoot();
  if (!root) return "";
  if (PathExists(JoinPath(*root, kMarkerFileName))) return *root;  // an older stoker's layout
  return JoinPath(*root, CacheKindDirName(CacheKind::kShards));
}

std::string ResolveCacheDir(const std::string& setting) {
  return setting == kDefaultCacheDirSetting ? DefaultCacheDir() : setting;
}

Result<uint64_t> DefaultBudgetBytes(const std::string& dir, uint64_t cache_used_bytes) {
  std::string probe = dir.empty() ? "." : dir;
  while (!PathExists(probe) && probe != "/" && probe != ".") probe = DirName(probe);
  struct statvfs fs;
  if (::statvfs(probe.c_str(), &fs) != 0) return ErrnoStatus("statvfs " + probe, errno);
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  return std::min(kDefaultBudgetBytes, (free_bytes + cache_used_bytes) / 2);
}

Result<uint64_t> ParseCacheSize(std::string_view text, std::string_view flag) {
  Result<uint64_t> size = ParseSize(text);
  if (!size.ok()) return size.status().WithContext(flag);
  if (*size == 0) return InvalidArgument(std::string(flag) + ": a cache needs a budget above 0");
  return size;
}

}  // namespace stoker::cache
