// For tests of AtomicFile's writers (common/atomic_file.h). Free function; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/file_util.h"

namespace stoker::testing_util {

// The temporary files of `path` now beside it (an open writer's, or one a crash left), sorted.
inline std::vector<std::string> AtomicTempFilesOf(const std::string& path) {
  std::vector<std::string> out;
  Result<std::vector<std::string>> names = ListDirectory(DirName(path));
  for (const std::string& name : names.ok() ? *names : std::vector<std::string>{}) {
    if (AtomicWriteTarget(name) == BaseName(path)) out.push_back(JoinPath(DirName(path), name));
  }
  return out;
}

}  // namespace stoker::testing_util
