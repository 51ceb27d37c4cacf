#include "common/temp_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "common/file_util.h"

namespace stoker {

Result<std::unique_ptr<TempDir>> TempDir::Create(std::string_view prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl =
      JoinPath(base != nullptr && *base != '\0' ? base : "/tmp", std::string(prefix) + "XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return ErrnoStatus("mkdtemp " + tmpl, errno);
  return std::unique_ptr<TempDir>(new TempDir(buf.data()));
}

TempDir::~TempDir() { (void)RemoveAll(path_); }

std::string TempDir::Join(std::string_view name) const { return JoinPath(path_, name); }

Status RemoveAll(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::OK() : ErrnoStatus("lstat " + path, errno);
  }
  if (S_ISDIR(st.st_mode)) {
    STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(path));
    for (const std::string& name : names) STOKER_RETURN_IF_ERROR(RemoveAll(JoinPath(path, name)));
    if (::rmdir(path.c_str()) != 0) return ErrnoStatus("rmdir " + path, errno);
  } else if (::unlink(path.c_str()) != 0) {
    return ErrnoStatus("unlink " + path, errno);
  }
  return Status::OK();
}

}  // namespace stoker
