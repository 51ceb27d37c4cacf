// MappedFile: a whole file mapped read-only into memory.
//
// The descriptor is closed right after mapping, so a process can hold thousands of mapped shards
// without running out of file descriptors. An empty file maps to size() == 0 (data() is a valid,
// non-dereferenceable pointer). Thread-safe: the mapping is immutable; read it from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "stoker/status.h"

namespace stoker {

class MappedFile {
 public:
  enum class Access { kNormal, kRandom, kSequential };

  // Maps `path`. kNotFound if missing; kInvalidArgument if it is not a regular file. `access` is
  // a hint to the kernel's read-ahead.
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path,
                                                  Access access = Access::kNormal);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size, bool mapped);
  std::string path_;
  const uint8_t* data_;
  size_t size_;
  bool mapped_;
};

}  // namespace stoker
