// AtomicFile: a file written in pieces that readers see either whole or not at all: the one
// atomic file commit of stoker (WriteFileAtomically, file_util.h, is it in one call). The bytes go
// to a temporary file of this writer's own beside `path`, "<path>.<pid>-<n>.tmp" (writers of one
// path in several threads or processes never share one; AtomicWriteTarget reads the name back, and
// a dataset directory's clean-up removes stale "*.tmp"). Commit renames it over `path`. `durable`:
// the file is fsynced before the rename and the directory after, so the new contents survive a
// power loss; without it a power loss may leave the old file, or the new name with incomplete
// bytes (for files whose readers check them). Until Commit, destroying it removes the temporary
// file. Not thread-safe: one writer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

class AtomicFile {
 public:
  // Creates the temporary file (its directory must exist). Errors: "create <temporary path>".
  static Result<std::unique_ptr<AtomicFile>> Create(std::string path, bool durable = true);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }
  // The temporary file's descriptor, for pwrite (PwriteAll); -1 once closed.
  int fd() const { return fd_; }

  // Writes `bytes` at the file's offset. Errors: "write <temporary path>".
  Status Append(std::string_view bytes);
  // Syncs (if durable) and closes the temporary file and leaves it there, unrenamed, for a caller
  // that puts it in place another way (a link that must not replace a file). Commit does this.
  Status Close();
  // Close, then rename the temporary file over `path` (and fsync the directory if durable). On
  // failure the temporary file is removed. Errors: "fsync", "close", "rename <temp> to <path>".
  Status Commit();

 private:
  AtomicFile(std::string path, std::string temp, int fd, bool durable)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), durable_(durable) {}
  Status Fail(Status status);  // removes the temporary file, returns `status`

  std::string path_, temp_;
  int fd_;
  bool durable_;
  bool committed_ = false;
};

}  // namespace stoker
