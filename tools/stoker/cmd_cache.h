// `stoker cache DIR [--json] [--clear]`, callable without CLI11 for its tests. Not thread-safe.
#pragma once

#include <cstdio>
#include <string>

namespace stoker::cli {

// Prints what the cache in `dir` holds (or clears it) on `out`; errors go to stderr. Returns the
// process exit code (0, or 2 for a directory that is not a cache).
int RunCacheCommand(const std::string& dir, bool json, bool clear, std::FILE* out);

}  // namespace stoker::cli
