#include "records/mds_source.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/load.h"
#include "records/byte_stream.h"
#include "records/mds_columns.h"

namespace stoker {
namespace {

std::string Hex(const unsigned char* p, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

// The hex digest of `data` for an xxhash algorithm name, or nullopt if not one of them.
std::optional<std::string> XxhDigest(const std::string& algo, std::string_view data) {
  if (algo == "xxh32") {
    XXH32_canonical_t c;
    XXH32_canonicalFromHash(&c, XXH32(data.data(), data.size(), 0));
    return Hex(c.digest, sizeof c.digest);
  }
  if (algo == "xxh64") {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, XXH64(data.data(), data.size(), 0));
    return Hex(c.digest, sizeof c.digest);
  }
  if (algo == "xxh3_64") {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, XXH3_64bits(data.data(), data.size()));
    return Hex(c.digest, sizeof c.digest);
  }
  if (algo == "xxh128" || algo == "xxh3_128") {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(data.data(), data.size()));
    return Hex(c.digest, sizeof c.digest);
  }
  return std::nullopt;
}

// The hex digest of `data` for a hashlib algorithm name (md5, sha1, sha224 ... sha512,
// sha3_224 ... sha3_512, blake2b, blake2s), or nullopt if OpenSSL does not know it.
std::optional<std::string> HashlibDigest(const std::string& algo, std::string_view data) {
  std::string name = algo == "blake2b" ? "BLAKE2b512" : algo == "blake2s" ? "BLAKE2s256" : algo;
  for (char& c : name) {
    if (c == '_') c = '-';  // sha3_256 -> sha3-256, sha512_256 -> sha512-256
  }
  const EVP_MD* md = EVP_get_digestbyname(name.c_str());
  if (md == nullptr) return std::nullopt;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1) return std::nullopt;
  return Hex(out, len);
}

class MdsShard final : public RecordSource {
 public:
  MdsShard(std::string uri, std::string data, std::vector<MdsColumn> columns, uint32_t samples)
      : uri_(std::move(uri)),
        data_(std::move(data)),
        columns_(std::move(columns)),
        samples_(samples) {}

  Result<std::optional<Record>> Next() override {
    if (next_ >= samples_) return std::optional<Record>();
    uint32_t begin = LoadAs<uint32_t>(data_.data() + 4 + 4 * static_cast<size_t>(next_));
    uint32_t end = LoadAs<uint32_t>(data_.data() + 8 + 4 * static_cast<size_t>(next_));
    Record r{.key = std::to_string(next_), .source = uri_, .index = next_, .offset_bytes = begin};
    ++next_;
    Status st =
        DecodeMdsSample(std::string_view(data_).substr(begin, end - begin), columns_, &r.fields);
    if (!st.ok()) return st.WithContext(r.Where());
    return std::optional<Record>(std::move(r));
  }

 private:
  std::string uri_;
  std::string data_;
  std::vector<MdsColumn> columns_;
  uint32_t samples_;
  uint32_t next_ = 0;
};

}  // namespace

Result<std::vector<RecordShard>> ListMdsShards(const std::string& index_path,
                                               const RecordStore& store) {
  STOKER_ASSIGN_OR_RETURN(std::string text, store.ReadAll(index_path));
  std::string dir = DirName(index_path);
  std::vector<RecordShard> shards;
  try {
    nlohmann::json index = nlohmann::json::parse(text);
    if (!index.is_object() || !index.contains("shards") || !index["shards"].is_array()) {
      return Corruption(index_path + ": not an MDS index (no \"shards\" list)");
    }
    size_t i = 0;
    for (const nlohmann::json& s : index["shards"]) {
      std::string where = index_path + ": shard " + std::to_string(i++);
      if (!s.is_object()) return Corruption(where + " is not an object");
      std::string format = s.value("format", "");
      if (format != "mds") {
        return Unimplemented(where + " has format '" + format + "'; only 'mds' is read");
      }
      const nlohmann::json* file = nullptr;
      if (s.contains("zip_data") && s["zip_data"].is_object())
        file = &s["zip_data"];
      else if (s.contains("raw_data") && s["raw_data"].is_object())
        file = &s["raw_data"];
      if (file == nullptr || !file->contains("basename") || !(*file)["basename"].is_string()) {
        return Corruption(where + " has no raw_data/zip_data basename");
      }
      RecordShard shard;
      shard.format = RecordFormat::kMds;
      shard.store = store;
      shard.path = JoinPath(dir, (*file)["basename"].get<std::string>());
      if (file->contains("bytes") && (*file)["bytes"].is_number_unsigned()) {
        shard.size_bytes = (*file)["bytes"].get<uint64_t>();
        shard.object_bytes = shard.size_bytes;
      }
      if (file->contains("hashes") && (*file)["hashes"].is_object()) {
        for (const auto& [algo, hex] : (*file)["hashes"].items()) {
          if (hex.is_string()) shard.hashes.emplace_back(algo, hex.get<std::string>());
        }
      }
      shards.push_back(std::move(shard));
    }
  } catch (const nlohmann::json::exception& e) {
    return Corruption(index_path + ": malformed index.json: " + e.what());
  }
  return shards;
}

Result<std::unique_ptr<RecordSource>> OpenMdsShard(const RecordShard& shard,
                                                   std::shared_ptr<const ByteSource> source) {
  const std::string uri = source->uri();  // a copy: `source` is replaced below
  const Compression compression = CompressionFromName(uri);
  if (compression == Compression::kNone && !uri.ends_with(".mds")) {
    return Unimplemented(uri +
                         ": unsupported MDS shard compression (stoker reads .mds, "
                         ".mds.zstd and .mds.gz)");
  }
  std::string data;
  if (!shard.hashes.empty() || compression == Compression::kNone) {
    data.resize(source->size_bytes());
    STOKER_RETURN_IF_ERROR(ReadExactlyAt(*source, 0, data.size(), data.data(), "MDS shard"));
    for (const auto& [algo, hex] : shard.hashes) {
      std::optional<std::string> digest = XxhDigest(algo, data);
      if (!digest) digest = HashlibDigest(algo, data);
      if (digest && *digest != hex) {
        return Corruption(uri + ": " + algo + " digest " + *digest + " does not match the " + hex +
                          " that index.json lists");
      }
    }
    if (compression != Compression::kNone) {
      source = MemorySource(uri, std::move(data));
      data.clear();
    }
  }
  if (compression != Compression::kNone) {
    auto stream = OpenSourceStream(source, compression);
    STOKER_RETURN_IF_ERROR(ReadAllFrom(*stream, /*limit_gib=*/4, uri, &data));
  }
  STOKER_ASSIGN_OR_RETURN(MdsShardLayout layout, ParseMdsShardLayout(data, uri));
  return std::unique_ptr<RecordSource>(
      new MdsShard(uri, std::move(data), std::move(layout.columns), layout.samples));
}

}  // namespace stoker
