#include "records/litdata_source.h"

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "records/arrow_sources.h"
#include "records/byte_stream.h"
#include "records/litdata_chunk.h"

namespace stoker {
namespace {

constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 32;  // offsets are u32

// Everything `stream` yields, or kCorruption past `limit` bytes.
Status ReadAllFrom(ByteStream& stream, const std::string& where, std::string* out) {
  char buf[1 << 16];
  while (true) {
    STOKER_ASSIGN_OR_RETURN(size_t n, stream.Read(buf, sizeof buf));
    if (n == 0) return Status::OK();
    out->append(buf, n);
    if (out->size() > kMaxChunkBytes) return Corruption(where + ": decompresses past 4 GiB");
  }
}

Status Unzstd(std::string data, const std::string& where, std::string* out) {
  auto stream = OpenSourceStream(MemorySource(where, std::move(data)), Compression::kZstd);
  out->clear();
  return ReadAllFrom(*stream, where, out);
}

class LitDataChunk final : public RecordSource {
 public:
  LitDataChunk(std::string uri, std::string data, LitDataConfig config,
               std::vector<std::pair<uint32_t, uint32_t>> items)
      : uri_(std::move(uri)),
        data_(std::move(data)),
        config_(std::move(config)),
        items_(std::move(items)) {}

  Result<std::optional<Record>> Next() override {
    if (next_ >= items_.size()) return std::optional<Record>();
    auto [begin, end] = items_[next_];
    Record r;
    r.source = uri_;
    r.index = next_;
    r.key = std::to_string(next_);
    r.offset_bytes = begin;
    ++next_;
    std::string_view item = std::string_view(data_).substr(begin, end - begin);
    std::string inflated;
    if (config_.compression_level == "sample") {
      Status s = Unzstd(std::string(item), uri_, &inflated);
      if (!s.ok()) return s.WithContext(r.Where());
      item = inflated;
    }
    if (config_.tokens_loader) {
      Field f;
      f.name = "tokens";
      Status s = DecodeLitDataLeaf(config_.data_format[0], item, &f);
      if (!s.ok()) return s.WithContext(r.Where());
      r.fields.push_back(std::move(f));
    } else {
      Status s = DecodeLitDataItem(item, config_, &r.fields);
      if (!s.ok()) return s.WithContext(r.Where());
    }
    return std::optional<Record>(std::move(r));
  }

 private:
  std::string uri_;
  std::string data_;
  LitDataConfig config_;
  std::vector<std::pair<uint32_t, uint32_t>> items_;
  size_t next_ = 0;
};

// Arrow rows of a chunk, with the chunk's own name on every record.
class LitDataArrowChunk final : public RecordSource {
 public:
  LitDataArrowChunk(std::string uri, std::unique_ptr<RecordSource> rows)
      : uri_(std::move(uri)), rows_(std::move(rows)) {}
  Result<std::optional<Record>> Next() override {
    STOKER_ASSIGN_OR_RETURN(std::optional<Record> r, rows_->Next());
    if (r) r->source = uri_;
    return r;
  }

 private:
  std::string uri_;
  std::unique_ptr<RecordSource> rows_;
};

}  // namespace

Result<std::vector<RecordShard>> ListLitDataShards(const std::string& index_path) {
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(index_path));
  STOKER_RETURN_IF_ERROR(ParseLitDataConfig(text, index_path).status());
  std::string dir = DirName(index_path);
  std::vector<RecordShard> shards;
  try {
    size_t i = 0;
    nlohmann::json index = nlohmann::json::parse(text);
    for (const nlohmann::json& c : index.at("chunks")) {
      std::string name = c.at("filename").get<std::string>();
      if (name.empty() || name.starts_with("/") || name.find("..") != std::string::npos) {
        return Corruption(index_path + ": chunks[" + std::to_string(i) + "] '" + name +
                          "' is not a file name inside the directory");
      }
      RecordShard s;
      s.path = JoinPath(dir, name);
      s.format = RecordFormat::kLitData;
      if (c.contains("chunk_bytes") && c["chunk_bytes"].is_number_unsigned()) {
        s.size_bytes = c["chunk_bytes"].get<uint64_t>();
      }
      shards.push_back(std::move(s));
      ++i;
    }
  } catch (const nlohmann::json::exception& e) {
    return Corruption(index_path + ": malformed LitData index.json: " + e.what());
  }
  return shards;
}

Result<std::unique_ptr<RecordSource>> OpenLitDataShard(const RecordShard& shard,
                                                       std::shared_ptr<const ByteSource> source) {
  const std::string uri = source->uri();
  std::string index_path = JoinPath(DirName(shard.path), "index.json");
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(index_path));
  STOKER_ASSIGN_OR_RETURN(LitDataConfig config, ParseLitDataConfig(text, index_path));
  if (source->size_bytes() > kMaxChunkBytes) return Corruption(uri + ": chunk exceeds 4 GiB");
  std::string data(source->size_bytes(), '\0');
  STOKER_RETURN_IF_ERROR(ReadExactlyAt(*source, 0, data.size(), data.data(), "LitData chunk"));
  // chunk-R-I.<compression>.bin (zstd or zstd:<level>) is compressed whole; chunk-R-I.bin is not.
  std::string base = BaseName(uri);
  if (base.ends_with(".bin")) base.resize(base.size() - 4);
  if (size_t dot = base.rfind('.'); dot != std::string::npos) {
    if (!base.substr(dot + 1).starts_with("zstd")) {
      return Unimplemented(uri + ": LitData chunk compression '" + base.substr(dot + 1) +
                           "' (stoker reads zstd)");
    }
    std::string raw = std::move(data);
    STOKER_RETURN_IF_ERROR(Unzstd(std::move(raw), uri, &data));
  }
  std::string_view arrow_file;
  STOKER_ASSIGN_OR_RETURN(bool arrow_rows, FindLitDataArrowRows(data, &arrow_file, uri));
  if (arrow_rows) {
    RecordShard inner;
    inner.path = uri;
    inner.format = RecordFormat::kArrow;
    STOKER_ASSIGN_OR_RETURN(
        std::unique_ptr<RecordSource> rows,
        OpenArrowIpcShard(inner, MemorySource(uri + " (Arrow row footer)", std::string(arrow_file))));
    return std::unique_ptr<RecordSource>(new LitDataArrowChunk(uri, std::move(rows)));
  }
  STOKER_ASSIGN_OR_RETURN(auto items, ParseLitDataChunk(data, uri));
  return std::unique_ptr<RecordSource>(
      new LitDataChunk(uri, std::move(data), std::move(config), std::move(items)));
}

}  // namespace stoker
