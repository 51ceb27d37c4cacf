#include "records/record_file_sink.h"

#include <unistd.h>

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

RecordFileSink::~RecordFileSink() = default;  // an open file's temporary file is removed

Status RecordFileSink::Append(std::string_view bytes) {
  if (!file_) {
    STOKER_RETURN_IF_ERROR(MakeDirectories(dir_));
    char num[16];
    std::snprintf(num, sizeof num, "%06zu", done_.size());
    current_ = RecordFileInfo{prefix_ + "-" + num + suffix_, 0, 0, ""};
    STOKER_ASSIGN_OR_RETURN(file_, AtomicFile::Create(JoinPath(dir_, current_.name)));
    hasher_ = std::make_unique<Xxh3Hasher>();
  }
  STOKER_RETURN_IF_ERROR(file_->Append(bytes));
  hasher_->Update(bytes.data(), bytes.size());
  current_.size_bytes += bytes.size();
  return Status::OK();
}

Status RecordFileSink::Close() {
  if (!file_) return Status::OK();
  std::unique_ptr<AtomicFile> file = std::move(file_);
  STOKER_RETURN_IF_ERROR(file->Commit());
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
  file_.reset();  // removes its temporary file
  for (const RecordFileInfo& f : done_) ::unlink(JoinPath(dir_, f.name).c_str());
  done_.clear();
}

}  // namespace stoker
