#include "records/litdata_source.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/load.h"
#include "records/arrow_sources.h"
#include "records/byte_stream.h"
#include "records/litdata_chunk.h"

namespace stoker {
namespace {

constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 32;  // offsets are u32

Status Unzstd(std::string data, const std::string& where, std::string* out) {
  auto stream = OpenSourceStream(MemorySource(where, std::move(data)), Compression::kZstd);
  out->clear();
  return ReadAllFrom(*stream, kMaxChunkBytes >> 30, where, out);
}

uint32_t U32At(std::string_view s, size_t at) { return LoadAs<uint32_t>(s.data() + at); }

// litdata's framed zstd chunk (compression_level "batch"), rebuilt as the classic chunk: a
// 24-byte prefix <8sHHIII> (magic LDFZ01, version 1, flags, n items, items per frame, frames),
// u32 offsets[n+1] counted from the first item, a 24-byte entry <IIQII> per frame (first item,
// items, compressed offset, compressed length, uncompressed length), then the zstd frames.
Status UnframeChunk(std::string_view framed, const std::string& uri, std::string* out) {
  if (framed.size() < 24) return Corruption(uri + ": framed zstd chunk shorter than its prefix");
  const uint16_t version = LoadAs<uint16_t>(framed.data() + 8);
  uint64_t n = U32At(framed, 12), frames = U32At(framed, 20);
  if (version != 1)
    return Unimplemented(uri + ": framed zstd chunk version " + std::to_string(version));
  uint64_t table = 24 + 4 * (n + 1);
  if (table + 24 * frames > framed.size()) {
    return Corruption(uri + ": framed zstd chunk tables (" + std::to_string(n) + " items, " +
                      std::to_string(frames) + " frames) run past the end at byte offset 24");
  }
  uint64_t header = 4 + 4 * (n + 1);
  out->assign(4, '\0');
  std::memcpy(out->data(), framed.data() + 12, 4);
  for (uint64_t i = 0; i <= n; ++i) {
    uint64_t absolute = header + U32At(framed, 24 + 4 * i);
    if (absolute > kMaxChunkBytes) return Corruption(uri + ": framed item offset past 4 GiB");
    uint32_t v = static_cast<uint32_t>(absolute);
    out->append(reinterpret_cast<const char*>(&v), 4);
  }
  for (uint64_t f = 0; f < frames; ++f) {
    size_t entry = table + 24 * f;
    const uint64_t offset = LoadAs<uint64_t>(framed.data() + entry + 8);
    uint64_t length = U32At(framed, entry + 16), raw = U32At(framed, entry + 20);
    if (offset > framed.size() || length > framed.size() - offset) {
      return Corruption(uri + ": zstd frame " + std::to_string(f) + " at byte offset " +
                        std::to_string(offset) + " runs past the end");
    }
    std::string inflated;
    STOKER_RETURN_IF_ERROR(Unzstd(std::string(framed.substr(offset, length)), uri, &inflated));
    if (inflated.size() != raw) {
      return Corruption(uri + ": zstd frame " + std::to_string(f) + " at byte offset " +
                        std::to_string(offset) + " inflates to " + std::to_string(inflated.size()) +
                        " bytes, not " + std::to_string(raw));
    }
    out->append(inflated);
    if (out->size() > kMaxChunkBytes) return Corruption(uri + ": decompresses past 4 GiB");
  }
  return Status::OK();
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
    Record r{.key = std::to_string(next_), .source = uri_, .index = next_, .offset_bytes = begin};
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

Result<std::vector<RecordShard>> ListLitDataShards(const std::string& index_path,
                                                   const RecordStore& store) {
  STOKER_ASSIGN_OR_RETURN(std::string text, store.ReadAll(index_path));
  STOKER_RETURN_IF_ERROR(ParseLitDataConfig(text, index_path).status());
  std::string dir = DirName(index_path);
  std::vector<RecordShard> shards;
  auto shared_text = std::make_shared<const std::string>(text);
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
      s.store = store;
      s.index_text = shared_text;
      if (c.contains("chunk_bytes") && c["chunk_bytes"].is_number_unsigned()) {
        s.size_bytes = c["chunk_bytes"].get<uint64_t>();
        s.object_bytes = s.size_bytes;
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
  std::string text;
  if (shard.index_text != nullptr) {
    text = *shard.index_text;
  } else {
    STOKER_ASSIGN_OR_RETURN(text, ReadFileToString(index_path));
  }
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
  if (data.starts_with(std::string_view("LDFZ01\0\0", 8))) {
    std::string framed = std::move(data);
    STOKER_RETURN_IF_ERROR(UnframeChunk(framed, uri, &data));
  }
  std::string_view arrow_file;
  STOKER_ASSIGN_OR_RETURN(bool arrow_rows, FindLitDataArrowRows(data, &arrow_file, uri));
  if (arrow_rows) {
    RecordShard inner;
    inner.path = uri;
    inner.format = RecordFormat::kArrow;
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<RecordSource> rows,
                            OpenArrowIpcShard(inner, MemorySource(uri + " (Arrow row footer)",
                                                                  std::string(arrow_file))));
    return std::unique_ptr<RecordSource>(new LitDataArrowChunk(uri, std::move(rows)));
  }
  STOKER_ASSIGN_OR_RETURN(auto items, ParseLitDataChunk(data, uri));
  return std::unique_ptr<RecordSource>(
      new LitDataChunk(uri, std::move(data), std::move(config), std::move(items)));
}

}  // namespace stoker
