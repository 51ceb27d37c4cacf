#include "storage/file_backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "common/atomic_file.h"
#include "common/file_util.h"
#include "common/uri.h"

namespace stoker::storage {
namespace {

namespace fs = std::filesystem;

Result<std::string> LocalPath(const std::string& uri) {
  STOKER_ASSIGN_OR_RETURN(ParsedUri parsed, ParseUri(uri));
  if (parsed.kind != UriKind::kFile) {
    return InvalidArgument(uri + ": the file backend serves local paths and file:// URIs only");
  }
  return parsed.path;
}

// An AtomicFile (common/atomic_file.h): readers see the object whole once Close commits it.
class FileWriter final : public Writer {
 public:
  explicit FileWriter(std::unique_ptr<AtomicFile> file) : file_(std::move(file)) {}

  Status Append(std::string_view bytes) override { return file_->Append(bytes); }

  // Syncs and closes the temporary file and returns its name, leaving it there (unrenamed) for
  // the caller: WriteIfAbsent links it into place.
  Result<std::string> Publish() {
    STOKER_RETURN_IF_ERROR(file_->Close());
    return file_->temp_path();
  }

  Status Close() override { return file_->Commit(); }

 private:
  std::unique_ptr<AtomicFile> file_;
};

class FileBackend final : public Backend {
 public:
  Result<ObjectInfo> Stat(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(std::string path, LocalPath(uri));
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(uri + ": cannot stat", errno);
    if (!S_ISREG(st.st_mode)) return InvalidArgument(uri + ": not a regular file");
    return ObjectInfo{uri, static_cast<uint64_t>(st.st_size), ""};
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    STOKER_ASSIGN_OR_RETURN(std::string path, LocalPath(prefix));
    const size_t slash = path.rfind('/');
    const fs::path dir =
        slash == std::string::npos ? fs::path(".") : fs::path(path.substr(0, slash + 1));
    std::vector<ObjectInfo> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    // "./x" and "x" name the same file: compare against the walk's own spelling of the prefix.
    const std::string base = slash == std::string::npos ? std::string("./") + path : path;
    auto it = fs::recursive_directory_iterator(dir, ec);
    if (ec) return IOError(prefix + ": cannot list: " + ec.message());
    for (const fs::directory_entry& entry : it) {
      std::error_code type_ec;
      if (!entry.is_regular_file(type_ec)) continue;
      std::string name = entry.path().string();
      if (name.compare(0, base.size(), base) != 0) continue;
      if (!AtomicWriteTarget(name).empty()) continue;  // a write in progress (AtomicFile)
      const uint64_t size = entry.file_size(type_ec);
      if (type_ec) continue;  // removed while listing
      out.push_back({prefix + name.substr(base.size()), size, ""});
    }
    std::ranges::sort(out, {}, &ObjectInfo::uri);
    return out;
  }

  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(std::string path, LocalPath(uri));
    return OpenFileSource(path);
  }

  Result<std::unique_ptr<Writer>> OpenForWrite(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(std::string path, LocalPath(uri));
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec)
      return IOError(uri + ": cannot create directory " + parent.string() + ": " + ec.message());
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path));
    return std::unique_ptr<Writer>(new FileWriter(std::move(file)));
  }

  Status WriteIfAbsent(const std::string& uri, std::string_view bytes) const override {
    STOKER_ASSIGN_OR_RETURN(std::string path, LocalPath(uri));
    // Written whole under a temporary name, then link()ed: link never replaces a file, so of
    // several writers exactly one publishes, and a reader never sees a partial file.
    const std::string temp_uri = uri + ".if-absent";
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Writer> w, OpenForWrite(temp_uri));
    auto* file = static_cast<FileWriter*>(w.get());
    STOKER_RETURN_IF_ERROR(file->Append(bytes));
    STOKER_ASSIGN_OR_RETURN(std::string temp, file->Publish());
    Status status;
    if (::link(temp.c_str(), path.c_str()) != 0) {
      status = errno == EEXIST ? AlreadyExists(uri + ": a file is already there")
                               : ErrnoStatus(path + ": cannot link " + temp + " into place", errno);
    }
    ::unlink(temp.c_str());
    return status;
  }

  Status Delete(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(std::string path, LocalPath(uri));
    return RemoveFileIfPresent(path);
  }
};

}  // namespace

std::unique_ptr<Backend> NewFileBackend() { return std::make_unique<FileBackend>(); }

}  // namespace stoker::storage
