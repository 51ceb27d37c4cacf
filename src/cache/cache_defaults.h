// Defaults for a cache the user did not configure (remote data without --cache-dir/--cache-size)
// and the parsing of --cache-size. Remote datasets (s3://, http(s)://) read through a cache unless
// it is turned off; local data never does. Free functions; thread-safe as far as getenv is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker::cache {

// The stated default budget: 64 GiB, or half of what the disk holding the cache can still give
// it, whichever is smaller.
inline constexpr uint64_t kDefaultBudgetBytes = uint64_t{64} << 30;

// The cache-directory setting (LoaderOptions::cache_dir) that means "the default directory".
inline constexpr std::string_view kDefaultCacheDirSetting = "auto";

// The shard cache of the cache root (common/cache_root.h): <root>/shards, or the root itself where
// an older stoker kept its shard cache there (its marker at the root), so that what it holds is
// used, not downloaded again. "" when the root is off ($STOKER_CACHE_DIR=off): no cache.
std::string DefaultCacheDir();

// The directory a setting names: "auto" is DefaultCacheDir(), "" stays "" (no cache), anything
// else is the shard cache's directory itself.
std::string ResolveCacheDir(const std::string& setting);

// min(kDefaultBudgetBytes, (free bytes of the file system under `dir` + `cache_used_bytes`) / 2).
// `dir` or its nearest existing parent is measured. kIOError if none can be.
Result<uint64_t> DefaultBudgetBytes(const std::string& dir, uint64_t cache_used_bytes = 0);

// "200GiB", "500G", "1.5TiB", "10000000000" (common/human_size.h). kInvalidArgument naming
// `flag` for text that is not a size, or for 0.
Result<uint64_t> ParseCacheSize(std::string_view text, std::string_view flag = "--cache-size");

}  // namespace stoker::cache
