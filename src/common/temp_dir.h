// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
// Used by tests and by tools that stage files. Not thread-safe: one owner.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

class TempDir {
 public:
  // Creates "<tmp>/<prefix>XXXXXX".
  static Result<std::unique_ptr<TempDir>> Create(std::string_view prefix = "stoker-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Join(std::string_view name) const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Removes `path` and, if it is a directory, everything below it (like `rm -rf`, but it does not
// follow symbolic links). OK if it does not exist.
Status RemoveAll(const std::string& path);

}  // namespace stoker
