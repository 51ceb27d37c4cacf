#include "storage/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace stoker {
namespace {

class FileSource final : public ByteSource {
 public:
  FileSource(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~FileSource() override { ::close(fd_); }

  const std::string& uri() const override { return path_; }
  uint64_t size_bytes() const override { return size_; }

  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    size_t done = 0;
    while (done < n) {
      ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (got == 0) break;
      if (got < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(path_ + ": read failed at byte offset " + std::to_string(offset + done),
                           errno);
      }
      done += static_cast<size_t>(got);
    }
    return done;
  }

 private:
  std::string path_;
  int fd_;
  uint64_t size_;
};

class InMemorySource final : public ByteSource {
 public:
  InMemorySource(std::string uri, std::string bytes)
      : uri_(std::move(uri)), bytes_(std::move(bytes)) {}
  const std::string& uri() const override { return uri_; }
  uint64_t size_bytes() const override { return bytes_.size(); }
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    if (offset >= bytes_.size()) return size_t{0};
    size_t len = std::min<uint64_t>(n, bytes_.size() - offset);
    std::memcpy(out, bytes_.data() + offset, len);
    return len;
  }
  Status ViewAt(uint64_t offset, size_t n, const char* what,
                FunctionRef<Status(const uint8_t* data)> use) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) {
      return ByteSource::ViewAt(offset, n, what, use);  // the truncation error
    }
    return use(reinterpret_cast<const uint8_t*>(bytes_.data()) + offset);
  }

 private:
  std::string uri_;
  std::string bytes_;
};

}  // namespace

Status ByteSource::ViewAt(uint64_t offset, size_t n, const char* what,
                          FunctionRef<Status(const uint8_t* data)> use) const {
  // One buffer per reading thread, reused: the loader reads piece after piece.
  thread_local std::vector<uint8_t> buffer;
  buffer.resize(n);
  STOKER_RETURN_IF_ERROR(
      ReadExactlyAt(*this, offset, n, reinterpret_cast<char*>(buffer.data()), what));
  return use(buffer.data());
}

Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus(path + ": cannot open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return ErrnoStatus(path + ": cannot stat", e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": not a regular file");
  }
  return std::unique_ptr<ByteSource>(new FileSource(path, fd, static_cast<uint64_t>(st.st_size)));
}

std::unique_ptr<ByteSource> MemorySource(std::string uri, std::string bytes) {
  return std::make_unique<InMemorySource>(std::move(uri), std::move(bytes));
}

Status ReadExactlyAt(const ByteSource& source, uint64_t offset, size_t n, char* out,
                     const char* what) {
  STOKER_ASSIGN_OR_RETURN(size_t got, source.ReadAt(offset, n, out));
  if (got != n) {
    return Corruption(source.uri() + ": truncated " + what + " at byte offset " +
                      std::to_string(offset) + " (" + std::to_string(n) + " bytes needed, " +
                      std::to_string(got) + " left)");
  }
  return Status::OK();
}

}  // namespace stoker
