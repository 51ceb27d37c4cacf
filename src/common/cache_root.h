// The cache root: the one directory under which every on-disk cache of stoker lives, a
// subdirectory per kind (docs/cache.md, "One cache root"):
//
//   <root>/shards/       the node-local shard cache of remote datasets (cache/shard_cache.h)
//   <root>/plan/         the plan's Megatron totals and epoch window counts (plan/window_counts.h)
//   <root>/stream-scan/  the stream's pre-scans (stream/prescan.h)
//
// <root> is $STOKER_CACHE_DIR when set ("off" or "": no root, every default cache off), else
// $XDG_CACHE_HOME/stoker, else /tmp/stoker-cache-<uid> (node-local and per user).
// Free functions; thread-safe as far as getenv is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stoker {

// The environment variable that names the root ("off" turns every default cache off).
inline constexpr std::string_view kCacheRootEnv = "STOKER_CACHE_DIR";

// Where the root is, for help texts and messages.
inline constexpr std::string_view kCacheRootRule =
    "$STOKER_CACHE_DIR, else $XDG_CACHE_HOME/stoker, else /tmp/stoker-cache-<uid>";

enum class CacheKind { kShards, kPlan, kStreamScan };

// The root as the environment sets it; nullopt when $STOKER_CACHE_DIR is "off" or "".
std::optional<std::string> CacheRoot();

// The kind's subdirectory name: "shards", "plan", "stream-scan".
std::string_view CacheKindDirName(CacheKind kind);

// True for a name CacheKindDirName gives (what a cache root holds at its top).
bool IsCacheKindDirName(std::string_view name);

// <CacheRoot()>/<CacheKindDirName(kind)>; nullopt when the root is off. Not created here.
std::optional<std::string> CacheDirFor(CacheKind kind);

}  // namespace stoker
