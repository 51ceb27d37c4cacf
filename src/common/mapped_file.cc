#include "common/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace stoker {
namespace {
// Stands in for the data of an empty file, so data() is never null.
const uint8_t kEmpty[1] = {0};
}  // namespace

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path, Access access) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("stat " + path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return std::unique_ptr<MappedFile>(new MappedFile(path, kEmpty, 0, false));
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (p == MAP_FAILED) {
    Status s = ErrnoStatus("mmap " + path, err);
    // The usual cause is the per-process mapping limit, not memory: every mapped shard file counts.
    if (err == ENOMEM) {
      return Status(s.code(), s.message() + " (too many mapped files? see vm.max_map_count)");
    }
    return s;
  }
  if (access != Access::kNormal) {
    ::madvise(p, size, access == Access::kSequential ? MADV_SEQUENTIAL : MADV_RANDOM);
  }
  return std::unique_ptr<MappedFile>(
      new MappedFile(path, static_cast<const uint8_t*>(p), size, true));
}

MappedFile::MappedFile(std::string path, const uint8_t* data, size_t size, bool mapped)
    : path_(std::move(path)), data_(data), size_(size), mapped_(mapped) {}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace stoker
