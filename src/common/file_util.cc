#include "common/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/atomic_file.h"

namespace stoker {
namespace {

// Closes a file descriptor when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

}  // namespace

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write " + path, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

Status PwriteAll(int fd, const void* data, size_t n, uint64_t offset, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write " + path, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::OK();
}

// Reads into the string itself, sized from fstat: appending 64 KiB chunks copied a 14 MB
// tokenizer.json about twice over, into fresh pages at each doubling.
Result<std::string> ReadFileToString(const std::string& path, size_t spare_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  FdCloser closer(fd);
  struct stat st;
  const size_t expected =
      ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0;
  std::string out;
  out.reserve(expected + std::max<size_t>(spare_bytes, 1));
  out.resize(expected + 1);  // one byte more, so that the read that sees the end has room
  size_t got = 0;
  for (;;) {
    if (got == out.size()) out.resize(std::max<size_t>(2 * out.size(), 1 << 16));  // it grew
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read " + path, errno);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  if (out.capacity() < got + spare_bytes) out.reserve(got + spare_bytes);
  return out;
}

Status WriteFileAtomically(const std::string& path, std::string_view contents, bool durable) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path, durable));
  STOKER_RETURN_IF_ERROR(file->Append(contents));
  return file->Commit();
}

Status RemoveFileIfPresent(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(path + ": cannot remove", errno);
  }
  return Status::OK();
}

std::string AtomicWriteTarget(std::string_view name) {
  constexpr std::string_view kSuffix = ".tmp";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return "";
  name.remove_suffix(kSuffix.size());
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  const std::string_view tag = name.substr(dot + 1);  // "<pid>-<n>"
  const size_t dash = tag.find('-');
  auto digits = [](std::string_view d) {
    return !d.empty() &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dash == std::string_view::npos || !digits(tag.substr(0, dash)) ||
      !digits(tag.substr(dash + 1))) {
    return "";
  }
  return std::string(name.substr(0, dot));
}

Status FsyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory " + dir, errno);
  FdCloser closer(fd);
  // Some file systems refuse fsync on directories; that is not a failure of the write.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    return ErrnoStatus("fsync directory " + dir, errno);
  }
  return Status::OK();
}

Status MakeDirectories(const std::string& dir) {
  if (dir.empty()) return Status::OK();
  if (IsDirectory(dir)) return Status::OK();
  std::string parent = DirName(dir);
  if (parent != dir && parent != ".") STOKER_RETURN_IF_ERROR(MakeDirectories(parent));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus("mkdir " + dir, errno);
  }
  if (!IsDirectory(dir)) return AlreadyExists("mkdir " + dir + ": exists and is not a directory");
  return Status::OK();
}

Result<std::vector<std::string>> ListDirectory(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus("opendir " + dir, errno);
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name(e->d_name);
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return ErrnoStatus("readdir " + dir, err);
  std::sort(names.begin(), names.end());
  return names;
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<uint64_t> FileSizeBytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  return static_cast<uint64_t>(st.st_size);
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty() || (!b.empty() && b.front() == '/')) return std::string(b);
  std::string out(a);
  if (out.back() != '/') out.push_back('/');
  out.append(b);
  return out;
}

std::string DirName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string BaseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace stoker
