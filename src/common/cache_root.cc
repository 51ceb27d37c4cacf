#include "common/cache_root.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "common/file_util.h"

namespace stoker {
namespace {

constexpr std::string_view kKindNames[] = {"shards", "plan", "stream-scan"};

}  // namespace

std::optional<std::string> CacheRoot() {
  if (const char* dir = std::getenv(std::string(kCacheRootEnv).c_str())) {
    const std::string_view v(dir);
    if (v.empty() || v == "off") return std::nullopt;
    return std::string(v);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return JoinPath(xdg, "stoker");
  }
  return "/tmp/stoker-cache-" + std::to_string(::getuid());
}

std::string_view CacheKindDirName(CacheKind kind) { return kKindNames[static_cast<int>(kind)]; }

bool IsCacheKindDirName(std::string_view name) {
  return std::ranges::find(kKindNames, name) != std::end(kKindNames);
}

std::optional<std::string> CacheDirFor(CacheKind kind) {
  std::optional<std::string> root = CacheRoot();
  if (!root) return std::nullopt;
  return JoinPath(*root, CacheKindDirName(kind));
}

}  // namespace stoker
