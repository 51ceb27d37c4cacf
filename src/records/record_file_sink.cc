#include "records/record_file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/file_util.h"

namespace stoker {

std::string RecordsManifestJson(const std::vector<RecordFileInfo>& files, const std::string& format,
                                const std::string& extra_json) {
  nlohmann::json m =
      extra_json.empty() ? nlohmann::json::object() : nlohmann::json::parse(extra_json);
  m["format"] = format;
  uint64_t records = 0;
  nlohmann::json list = nlohmann::json::array();
  for (const RecordFileInfo& f : files) {
    list.push_back(
        {{"name", f.name}, {"bytes", f.size_bytes}, {"records", f.records}, {"xxh3", f.xxh3}});
    records += f.records;
  }
  m["files"] = std::move(list);
  m["records"] = records;
  return m.dump(2) + "\n";
}

RecordFileSink::RecordFileSink(std::string dir, std::string prefix, std::string suffix)
    : dir_(std::move(dir)), prefix_(std::move(prefix)), suffix_(std::move(suffix)) {}

RecordFileSink::~RecordFileSink() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

Status RecordFileSink::Append(std::string_view bytes) {
  if (fd_ < 0) {
    STOKER_RETURN_IF_ERROR(MakeDirectories(dir_));
    char num[16];
    std::snprintf(num, sizeof num, "%06zu", done_.size());
    current_ = RecordFileInfo{prefix_ + "-" + num + suffix_, 0, 0, ""};
    tmp_path_ = JoinPath(dir_, current_.name) + ".tmp";
    fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return ErrnoStatus("create " + tmp_path_, errno);
    hasher_ = std::make_unique<Xxh3Hasher>();
  }
  STOKER_RETURN_IF_ERROR(WriteAll(fd_, bytes, tmp_path_));
  hasher_->Update(bytes.data(), bytes.size());
  current_.size_bytes += bytes.size();
  return Status::OK();
}

Status RecordFileSink::Close() {
  if (fd_ < 0) return Status::OK();
  int fd = fd_;
  fd_ = -1;
  Status st;
  if (::fsync(fd) != 0) st = ErrnoStatus("fsync " + tmp_path_, errno);
  if (::close(fd) != 0 && st.ok()) st = ErrnoStatus("close " + tmp_path_, errno);
  std::string final_path = JoinPath(dir_, current_.name);
  if (st.ok() && ::rename(tmp_path_.c_str(), final_path.c_str()) != 0) {
    st = ErrnoStatus("rename " + tmp_path_ + " to " + final_path, errno);
  }
  if (!st.ok()) {
    ::unlink(tmp_path_.c_str());
    return st;
  }
  current_.xxh3 = hasher_->HexDigest();
  done_.push_back(current_);
  return Status::OK();
}

Status RecordFileSink::Finish(const std::string& manifest_name, const std::string& format,
                              const std::string& extra_json) {
  STOKER_RETURN_IF_ERROR(Close());
  STOKER_RETURN_IF_ERROR(MakeDirectories(dir_));
  STOKER_RETURN_IF_ERROR(FsyncDirectory(dir_));
  return WriteFileAtomically(JoinPath(dir_, manifest_name),
                             RecordsManifestJson(done_, format, extra_json));
}

void RecordFileSink::RemoveAll() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_path_.c_str());
  }
  for (const RecordFileInfo& f : done_) ::unlink(JoinPath(dir_, f.name).c_str());
  done_.clear();
}

}  // namespace stoker
