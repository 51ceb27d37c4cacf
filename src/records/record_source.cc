#include "records/record_source.h"

#include <algorithm>

#include "common/file_util.h"
#include "records/brace_expand.h"
#include "records/byte_source.h"
#include "records/mds_source.h"
#include "records/tfrecord.h"
#include "records/webdataset_source.h"

namespace stoker {
namespace {

bool IsTarName(std::string_view name) {
  for (std::string_view ext : {".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.zstd"}) {
    if (name.ends_with(ext)) return true;
  }
  return false;
}

bool IsTfRecordName(std::string_view name) {
  for (std::string_view c : {".gz", ".zlib", ".zst", ".zstd"}) {
    if (name.ends_with(c)) {
      name.remove_suffix(c.size());
      break;
    }
  }
  for (std::string_view ext : {".tfrecord", ".tfrecords", ".tfrec"}) {
    if (name.ends_with(ext)) return true;
  }
  // name-00000-of-00128: TensorFlow's sharded file naming
  size_t of = name.rfind("-of-");
  return of != std::string_view::npos && of > 0 && of + 4 < name.size() &&
         name.substr(of + 4).find_first_not_of("0123456789") == std::string_view::npos;
}

bool MatchesFormat(std::string_view name, RecordFormat format) {
  return format == RecordFormat::kWebDataset ? IsTarName(name) : IsTfRecordName(name);
}

Result<RecordShard> FileShard(const std::string& path, RecordFormat format) {
  RecordShard shard;
  shard.path = path;
  shard.format = format;
  STOKER_ASSIGN_OR_RETURN(shard.size_bytes, FileSizeBytes(path));
  return shard;
}

// The record files of `dir` (recursively, hidden names skipped), unsorted.
Status WalkDirectory(const std::string& dir, RecordFormat format, std::vector<RecordShard>* out) {
  STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  for (const std::string& name : names) {
    if (name.starts_with(".")) continue;
    std::string path = JoinPath(dir, name);
    if (IsDirectory(path)) {
      STOKER_RETURN_IF_ERROR(WalkDirectory(path, format, out));
    } else if (MatchesFormat(name, format)) {
      STOKER_ASSIGN_OR_RETURN(RecordShard shard, FileShard(path, format));
      out->push_back(std::move(shard));
    }
  }
  return Status::OK();
}

// Every shard of the inputs, one after the other.
class ChainedSource final : public RecordSource {
 public:
  explicit ChainedSource(std::vector<RecordShard> shards) : shards_(std::move(shards)) {}

  Result<std::optional<Record>> Next() override {
    while (true) {
      if (!current_) {
        if (next_ >= shards_.size()) return std::optional<Record>();
        STOKER_ASSIGN_OR_RETURN(current_, OpenRecordShard(shards_[next_++]));
      }
      STOKER_ASSIGN_OR_RETURN(std::optional<Record> r, current_->Next());
      if (r) return r;
      current_.reset();
    }
  }

 private:
  std::vector<RecordShard> shards_;
  size_t next_ = 0;
  std::unique_ptr<RecordSource> current_;
};

}  // namespace

std::string_view RecordFormatName(RecordFormat format) {
  switch (format) {
    case RecordFormat::kAuto:
      return "auto";
    case RecordFormat::kWebDataset:
      return "webdataset";
    case RecordFormat::kTfRecord:
      return "tfrecord";
    case RecordFormat::kMds:
      return "mds";
  }
  return "?";
}

Result<RecordFormat> ParseRecordFormat(std::string_view name) {
  if (name == "auto") return RecordFormat::kAuto;
  if (name == "webdataset" || name == "wds") return RecordFormat::kWebDataset;
  if (name == "tfrecord") return RecordFormat::kTfRecord;
  if (name == "mds") return RecordFormat::kMds;
  return InvalidArgument("unknown record format '" + std::string(name) +
                         "' (expected auto, webdataset, tfrecord or mds)");
}

RecordFormat DetectRecordFormat(const std::string& input) {
  if (IsDirectory(input)) {
    return PathExists(JoinPath(input, "index.json")) ? RecordFormat::kMds : RecordFormat::kAuto;
  }
  std::string base = BaseName(input);
  if (base == "index.json") return RecordFormat::kMds;
  if (IsTarName(base)) return RecordFormat::kWebDataset;
  if (IsTfRecordName(base)) return RecordFormat::kTfRecord;
  return RecordFormat::kAuto;
}

Result<std::vector<RecordShard>> ExpandRecordShards(const std::vector<std::string>& inputs,
                                                    RecordFormat format) {
  std::vector<RecordShard> shards;
  for (const std::string& input : inputs) {
    std::vector<std::string> paths{input};
    if (HasBracePattern(input) && !PathExists(input)) {
      STOKER_ASSIGN_OR_RETURN(paths, ExpandBraces(input));
    }
    for (const std::string& path : paths) {
      RecordFormat f = format == RecordFormat::kAuto ? DetectRecordFormat(path) : format;
      if (!PathExists(path)) return NotFound(path + ": no such file or directory");
      if (f == RecordFormat::kAuto) {
        return InvalidArgument(path + ": cannot tell its record format from the name (use "
                                      "--input-format webdataset|tfrecord|mds)");
      }
      if (f == RecordFormat::kMds) {
        std::string index = IsDirectory(path) ? JoinPath(path, "index.json") : path;
        STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> listed, ListMdsShards(index));
        for (RecordShard& s : listed) shards.push_back(std::move(s));
      } else if (IsDirectory(path)) {
        std::vector<RecordShard> found;
        STOKER_RETURN_IF_ERROR(WalkDirectory(path, f, &found));
        // Sorted by whole path, as pack sorts the files of a directory.
        std::sort(found.begin(), found.end(),
                  [](const RecordShard& a, const RecordShard& b) { return a.path < b.path; });
        for (RecordShard& s : found) shards.push_back(std::move(s));
      } else {
        STOKER_ASSIGN_OR_RETURN(RecordShard shard, FileShard(path, f));
        shards.push_back(std::move(shard));
      }
    }
  }
  return shards;
}

Result<std::unique_ptr<RecordSource>> OpenRecordShard(const RecordShard& shard) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> owned, OpenFileSource(shard.path));
  std::shared_ptr<const ByteSource> source = std::move(owned);
  switch (shard.format) {
    case RecordFormat::kWebDataset: {
      Compression c = CompressionFromName(shard.path);
      if (shard.path.ends_with(".tgz")) c = Compression::kGzip;
      if (c == Compression::kNone) {
        char head[4];
        Result<size_t> got = source->ReadAt(0, 4, head);
        std::string_view h(head, got.ok() ? *got : 0);
        // Only the gzip and zstd magics: a tar header starts with a name, which a zlib check
        // could mistake for a zlib header.
        if (h.size() >= 2 && h.substr(0, 2) == "\x1f\x8b") c = Compression::kGzip;
        if (h == std::string_view("\x28\xb5\x2f\xfd", 4)) c = Compression::kZstd;
      }
      return OpenWebDatasetShard(std::move(source), c);
    }
    case RecordFormat::kTfRecord:
      return OpenTfRecordShard(std::move(source));
    case RecordFormat::kMds:
      return OpenMdsShard(shard, std::move(source));
    case RecordFormat::kAuto:
      break;
  }
  return InvalidArgument(shard.path + ": no record format given");
}

Result<std::unique_ptr<RecordSource>> OpenRecordSource(const std::vector<std::string>& inputs,
                                                       RecordFormat format) {
  STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> shards, ExpandRecordShards(inputs, format));
  return std::unique_ptr<RecordSource>(new ChainedSource(std::move(shards)));
}

}  // namespace stoker
