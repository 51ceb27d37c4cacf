#include "records/record_source.h"

#include <algorithm>
#include <utility>

#include "common/file_util.h"
#include "records/arrow_sources.h"
#include "records/brace_expand.h"
#include "records/byte_stream.h"
#include "records/hf_dataset.h"
#include "records/litdata_source.h"
#include "records/mds_source.h"
#include "records/tfrecord.h"
#include "records/webdataset_source.h"
#include "storage/byte_source.h"

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

bool IsParquetName(std::string_view name) { return name.ends_with(".parquet"); }
bool IsArrowName(std::string_view name) { return name.ends_with(".arrow"); }

bool MatchesFormat(std::string_view name, RecordFormat format) {
  switch (format) {
    case RecordFormat::kWebDataset:
      return IsTarName(name);
    case RecordFormat::kParquet:
      return IsParquetName(name);
    case RecordFormat::kArrow:
      return IsArrowName(name);
    default:
      return IsTfRecordName(name);
  }
}

// An index.json is LitData's when it lists "chunks" (MDS lists "shards").
bool IsLitDataText(const std::string& text) {
  return text.find("\"chunks\"") != std::string::npos &&
         text.find("\"shards\"") == std::string::npos;
}
bool IsLitDataIndex(const std::string& index_path) {
  Result<std::string> text = ReadFileToString(index_path);
  return text.ok() && IsLitDataText(*text);
}

// The shards of one file or dataset directory of a format that lists its own shards, or
// std::nullopt for a format whose files are walked and taken whole.
Result<std::optional<std::vector<RecordShard>>> ListedShards(const std::string& path,
                                                             RecordFormat f) {
  using Listed = std::optional<std::vector<RecordShard>>;
  if (f == RecordFormat::kMds || f == RecordFormat::kLitData) {
    std::string index = IsDirectory(path) ? JoinPath(path, "index.json") : path;
    if (f == RecordFormat::kMds) {
      STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> s, ListMdsShards(index));
      return Listed(std::move(s));
    }
    STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> s, ListLitDataShards(index));
    return Listed(std::move(s));
  }
  if (f == RecordFormat::kArrow && IsHfDatasetDir(path)) {
    STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> s, ListHfDatasetShards(path));
    return Listed(std::move(s));
  }
  if (f == RecordFormat::kParquet && !IsDirectory(path)) {
    STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> s, ListParquetShards(path));
    return Listed(std::move(s));
  }
  return Listed();
}

Result<RecordShard> FileShard(const std::string& path, RecordFormat format) {
  RecordShard shard;
  shard.path = path;
  shard.format = format;
  STOKER_ASSIGN_OR_RETURN(shard.size_bytes, FileSizeBytes(path));
  shard.object_bytes = shard.size_bytes;
  return shard;
}

// One remote object as shards: a Parquet file's row groups, else the object whole.
Status AddRemoteObject(const RecordStore& store, const std::string& uri, uint64_t size,
                       RecordFormat f, std::vector<RecordShard>* out) {
  if (f == RecordFormat::kParquet) {
    STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> groups, ListParquetShards(uri, store, size));
    for (RecordShard& g : groups) out->push_back(std::move(g));
    return Status::OK();
  }
  RecordShard shard;
  shard.path = uri;
  shard.format = f;
  shard.store = store;
  shard.size_bytes = size;
  shard.object_bytes = size;
  out->push_back(std::move(shard));
  return Status::OK();
}

// The shards of one remote input (brace patterns already expanded); see ExpandRecordShards.
Status ExpandRemote(const std::string& path, RecordFormat format, std::vector<RecordShard>* out) {
  RecordFormat f = format == RecordFormat::kAuto ? DetectRecordFormat(path) : format;
  const std::string base = BaseName(path);
  const std::string_view plain = StripCompressionSuffix(base);
  if (f == RecordFormat::kAuto && (plain.ends_with(".jsonl") || plain.ends_with(".json") ||
                                   plain.ends_with(".txt") || plain.ends_with(".text"))) {
    return InvalidArgument(path +
                           ": JSONL and text are not record shards (WebDataset, TFRecord, MDS, "
                           "LitData, Parquet, Arrow); `stoker pack` reads them, remote too");
  }
  STOKER_ASSIGN_OR_RETURN(RecordStore store, RecordStore::For(path));
  if (HasGlobPattern(path)) {
    STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, store.Glob(path));
    if (objects.empty()) return NotFound(path + ": the pattern matches no object");
    for (const storage::ObjectInfo& o : objects) {
      RecordFormat of = f == RecordFormat::kAuto ? DetectRecordFormat(o.uri) : f;
      if (of == RecordFormat::kAuto) {
        return InvalidArgument(o.uri +
                               ": cannot tell its record format from the name (use "
                               "--input-format)");
      }
      STOKER_RETURN_IF_ERROR(AddRemoteObject(store, o.uri, o.size_bytes, of, out));
    }
    return Status::OK();
  }
  const bool is_index = BaseName(path) == "index.json";
  if (f == RecordFormat::kAuto || is_index) {
    // A prefix (or an index.json): what it holds says the format, one GET each at most.
    const std::string index = is_index ? path : JoinPath(path, "index.json");
    Result<std::string> text = store.ReadAll(index);
    if (text.ok()) {
      if (format == RecordFormat::kAuto)
        f = IsLitDataText(*text) ? RecordFormat::kLitData : RecordFormat::kMds;
    } else if (text.status().code() != StatusCode::kNotFound) {
      return text.status();
    } else if (is_index) {
      return NotFound(index + ": no such object");
    } else if (f == RecordFormat::kAuto && IsHfDatasetDir(path, store)) {
      f = RecordFormat::kArrow;
    } else if (f == RecordFormat::kAuto) {
      return InvalidArgument(path +
                             ": no index.json or state.json under this prefix, and no record "
                             "format in its name (use --input-format webdataset|tfrecord|mds|"
                             "litdata|parquet|arrow)");
    }
  }
  if (f == RecordFormat::kMds || f == RecordFormat::kLitData) {
    const std::string index = is_index ? path : JoinPath(path, "index.json");
    STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> s, f == RecordFormat::kMds
                                                            ? ListMdsShards(index, store)
                                                            : ListLitDataShards(index, store));
    for (RecordShard& shard : s) out->push_back(std::move(shard));
    return Status::OK();
  }
  const bool named = MatchesFormat(BaseName(path), f);
  if (f == RecordFormat::kArrow && !named) {
    STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> s, ListHfDatasetShards(path, store));
    for (RecordShard& shard : s) out->push_back(std::move(shard));
    return Status::OK();
  }
  if (!named) {
    // A prefix of files of the given format (s3:// only): one listing.
    STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, store.ListDir(path));
    size_t before = out->size();
    for (const storage::ObjectInfo& o : objects) {
      if (BaseName(o.uri).starts_with(".") || !MatchesFormat(BaseName(o.uri), f)) continue;
      STOKER_RETURN_IF_ERROR(AddRemoteObject(store, o.uri, o.size_bytes, f, out));
    }
    if (out->size() == before) {
      return NotFound(path + ": no " + std::string(RecordFormatName(f)) +
                      " objects under this prefix");
    }
    return Status::OK();
  }
  STOKER_ASSIGN_OR_RETURN(uint64_t size, store.Size(path));
  return AddRemoteObject(store, path, size, f, out);
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

// The name of each format in RecordFormat's order, then the aliases that ParseRecordFormat takes.
constexpr std::pair<std::string_view, RecordFormat> kFormatNames[] = {
    {"auto", RecordFormat::kAuto},         {"webdataset", RecordFormat::kWebDataset},
    {"tfrecord", RecordFormat::kTfRecord}, {"mds", RecordFormat::kMds},
    {"litdata", RecordFormat::kLitData},   {"parquet", RecordFormat::kParquet},
    {"arrow", RecordFormat::kArrow},       {"wds", RecordFormat::kWebDataset},
    {"hf", RecordFormat::kArrow},
};

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
  const auto i = static_cast<size_t>(format);
  return i <= static_cast<size_t>(RecordFormat::kArrow) ? kFormatNames[i].first : "?";
}

Result<RecordFormat> ParseRecordFormat(std::string_view name) {
  for (const auto& [known, format] : kFormatNames) {
    if (known == name) return format;
  }
  return InvalidArgument("unknown record format '" + std::string(name) +
                         "' (expected auto, webdataset, tfrecord, mds, litdata, parquet or arrow)");
}

RecordFormat DetectRecordFormat(const std::string& input) {
  if (IsDirectory(input)) {
    std::string index = JoinPath(input, "index.json");
    if (PathExists(index))
      return IsLitDataIndex(index) ? RecordFormat::kLitData : RecordFormat::kMds;
    return IsHfDatasetDir(input) ? RecordFormat::kArrow : RecordFormat::kAuto;
  }
  std::string base = BaseName(input);
  if (base == "index.json")
    return IsLitDataIndex(input) ? RecordFormat::kLitData : RecordFormat::kMds;
  if (IsParquetName(base)) return RecordFormat::kParquet;
  if (IsArrowName(base)) return RecordFormat::kArrow;
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
      if (IsRemoteRecordUri(path)) {
        STOKER_RETURN_IF_ERROR(ExpandRemote(path, format, &shards));
        continue;
      }
      RecordFormat f = format == RecordFormat::kAuto ? DetectRecordFormat(path) : format;
      if (!PathExists(path)) return NotFound(path + ": no such file or directory");
      if (f == RecordFormat::kAuto) {
        return InvalidArgument(path +
                               ": cannot tell its record format from the name (use "
                               "--input-format webdataset|tfrecord|mds|litdata|parquet|arrow)");
      }
      STOKER_ASSIGN_OR_RETURN(std::optional<std::vector<RecordShard>> listed,
                              ListedShards(path, f));
      if (listed) {
        for (RecordShard& s : *listed) shards.push_back(std::move(s));
      } else if (IsDirectory(path)) {
        std::vector<RecordShard> found;
        STOKER_RETURN_IF_ERROR(WalkDirectory(path, f, &found));
        // Sorted by whole path, as pack sorts the files of a directory.
        std::ranges::sort(found, {}, &RecordShard::path);
        for (RecordShard& s : found) {
          if (f != RecordFormat::kParquet) {
            shards.push_back(std::move(s));
            continue;
          }
          STOKER_ASSIGN_OR_RETURN(std::vector<RecordShard> groups, ListParquetShards(s.path));
          for (RecordShard& g : groups) shards.push_back(std::move(g));
        }
      } else {
        STOKER_ASSIGN_OR_RETURN(RecordShard shard, FileShard(path, f));
        shards.push_back(std::move(shard));
      }
    }
  }
  return shards;
}

Result<std::unique_ptr<RecordSource>> OpenRecordShard(const RecordShard& shard) {
  // Parquet seeks (footer, then column chunks): exact ranges. The others read forward.
  const bool forward = shard.format != RecordFormat::kParquet;
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> owned,
                          shard.store.Open(shard.path, shard.object_bytes, forward));
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
    case RecordFormat::kLitData:
      return OpenLitDataShard(shard, std::move(source));
    case RecordFormat::kParquet:
      return OpenParquetShard(shard, std::move(source));
    case RecordFormat::kArrow:
      return OpenArrowIpcShard(shard, std::move(source));
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
