#include "format/manifest.h"

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/hash.h"

namespace stoker {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kFormatName = "stoker-dataset";

// Reads typed fields of one JSON object and remembers the first problem, so that Parse reads as a
// list of fields instead of a ladder of ifs. Errors say the JSON path: "shards[3].tokens".
class FieldReader {
 public:
  FieldReader(const Json& obj, std::string path, Status* status)
      : obj_(obj), path_(std::move(path)), status_(status) {
    if (!obj_.is_object()) Fail(path_.empty() ? "top level" : path_, "must be an object");
  }

  uint64_t Uint(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned()) return Fail(Name(key), "must be a non-negative integer"), 0;
    return v->get<uint64_t>();
  }
  int64_t Int(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) return 0;
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX)) {
      return Fail(Name(key), "must be an integer"), 0;
    }
    return v->get<int64_t>();
  }
  std::string String(const char* key, bool optional = false) {
    const Json* v = Find(key, optional);
    if (v == nullptr) return "";
    if (!v->is_string()) return Fail(Name(key), "must be a string"), "";
    return v->get<std::string>();
  }
  std::string Checksum(const char* key) {
    std::string s = String(key);
    if (status_->ok() && !IsXxh3Hex(s)) Fail(Name(key), "must be 16 lowercase hex digits");
    return s;
  }
  const Json* Find(const char* key, bool optional = false) {
    if (!status_->ok() || !obj_.is_object()) return nullptr;
    auto it = obj_.find(key);
    if (it == obj_.end()) {
      if (!optional) Fail(Name(key), "is missing");
      return nullptr;
    }
    return &*it;
  }
  std::string Name(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  void Fail(const std::string& field, const std::string& what) {
    if (status_->ok()) *status_ = Corruption("field '" + field + "' " + what);
  }

 private:
  const Json& obj_;
  std::string path_;
  Status* status_;
};

Status ParseJson(const Json& j, Manifest* m) {
  Status st;
  FieldReader top(j, "", &st);
  if (top.String("format") != kFormatName && st.ok()) {
    top.Fail("format", "must be \"" + std::string(kFormatName) + "\"");
  }
  uint64_t version = top.Uint("version");
  if (st.ok() && version != static_cast<uint64_t>(kManifestFormatVersion)) {
    return Corruption("unsupported manifest version " + std::to_string(version) +
                      " (this stoker reads version " + std::to_string(kManifestFormatVersion) +
                      "; a newer stoker may have written it)");
  }
  m->version = static_cast<int>(version);
  std::string dtype = top.String("dtype");
  if (st.ok()) {
    Result<TokenDType> d = ParseTokenDType(dtype);
    if (!d.ok()) return Corruption("field 'dtype': " + d.status().message());
    m->dtype = *d;
  }
  if (const Json* t = top.Find("tokenizer")) {
    FieldReader tr(*t, "tokenizer", &st);
    m->tokenizer.kind = tr.String("kind");
    m->tokenizer.name = tr.String("name");
    m->tokenizer.vocab_size = tr.Uint("vocab_size");
    m->tokenizer.eos_id = tr.Int("eos_id");
    m->tokenizer.checksum = tr.String("checksum");
    if (st.ok() && m->tokenizer.eos_id < -1) tr.Fail("tokenizer.eos_id", "must be >= -1");
  }
  const uint64_t item = TokenDTypeSize(m->dtype);
  if (const Json* shards = top.Find("shards")) {
    if (!shards->is_array()) return Corruption("field 'shards' must be an array");
    for (size_t i = 0; i < shards->size() && st.ok(); ++i) {
      FieldReader sr((*shards)[i], "shards[" + std::to_string(i) + "]", &st);
      ShardInfo s;
      s.prefix = sr.String("prefix");
      s.documents = sr.Uint("documents");
      s.tokens = sr.Uint("tokens");
      s.bin_bytes = sr.Uint("bin_bytes");
      s.idx_bytes = sr.Uint("idx_bytes");
      s.bin_xxh3 = sr.Checksum("bin_xxh3");
      s.idx_xxh3 = sr.Checksum("idx_xxh3");
      if (!st.ok()) break;
      if (s.prefix.empty() || s.prefix.find('\0') != std::string::npos) {
        sr.Fail(sr.Name("prefix"), "must be a non-empty path");
      } else if (s.tokens > UINT64_MAX / 8 || s.tokens * item != s.bin_bytes) {
        sr.Fail(sr.Name("bin_bytes"), "is " + std::to_string(s.bin_bytes) + " but " +
                                          std::to_string(s.tokens) + " " +
                                          std::string(TokenDTypeName(m->dtype)) + " tokens need " +
                                          std::to_string(s.tokens * item));
      }
      m->shards.push_back(std::move(s));
    }
  }
  if (const Json* c = top.Find("counters", /*optional=*/true)) {
    FieldReader cr(*c, "counters", &st);
    if (st.ok()) {
      for (auto it = c->begin(); it != c->end(); ++it)
        m->counters[it.key()] = cr.Uint(it.key().c_str());
    }
  }
  if (const Json* li = top.Find("length_index", /*optional=*/true); li != nullptr && st.ok()) {
    FieldReader lr(*li, "length_index", &st);
    LengthIndexInfo info;
    info.file = lr.String("file");
    info.bytes = lr.Uint("bytes");
    info.documents = lr.Uint("documents");
    info.xxh3 = lr.Checksum("xxh3");
    if (st.ok() && (info.file.empty() || info.file.find('\0') != std::string::npos)) {
      lr.Fail(lr.Name("file"), "must be a non-empty path");
    }
    m->length_index = std::move(info);
  }
  if (const Json* lm = top.Find("loss_mask", /*optional=*/true); lm != nullptr && st.ok()) {
    FieldReader lr(*lm, "loss_mask", &st);
    LossMaskInfo info;
    info.dataset = lr.String("dataset");
    info.trained_tokens = lr.Uint("trained_tokens");
    if (st.ok() && (info.dataset.empty() || info.dataset.find('\0') != std::string::npos)) {
      lr.Fail(lr.Name("dataset"), "must be a non-empty path");
    }
    m->loss_mask = std::move(info);
  }
  // The totals are redundant (for people reading the file) but must agree when present.
  if (st.ok() && top.Find("documents", true) && top.Uint("documents") != m->total_documents()) {
    top.Fail("documents",
             "disagrees with the sum over shards (" + std::to_string(m->total_documents()) + ")");
  }
  if (st.ok() && top.Find("tokens", true) && top.Uint("tokens") != m->total_tokens()) {
    top.Fail("tokens",
             "disagrees with the sum over shards (" + std::to_string(m->total_tokens()) + ")");
  }
  return st;
}

}  // namespace

uint64_t Manifest::total_documents() const {
  uint64_t n = 0;
  for (const ShardInfo& s : shards) n += s.documents;
  return n;
}

uint64_t Manifest::total_tokens() const {
  uint64_t n = 0;
  for (const ShardInfo& s : shards) n += s.tokens;
  return n;
}

std::string Manifest::ToJson() const {
  OrderedJson j;
  j["format"] = kFormatName;
  j["version"] = version;
  j["dtype"] = TokenDTypeName(dtype);
  j["documents"] = total_documents();
  j["tokens"] = total_tokens();
  j["tokenizer"] = {{"kind", tokenizer.kind},
                    {"name", tokenizer.name},
                    {"vocab_size", tokenizer.vocab_size},
                    {"eos_id", tokenizer.eos_id},
                    {"checksum", tokenizer.checksum}};
  OrderedJson counters_json = OrderedJson::object();
  for (const auto& [k, v] : counters) counters_json[k] = v;
  j["counters"] = counters_json;
  OrderedJson shard_list = OrderedJson::array();
  for (const ShardInfo& s : shards) {
    shard_list.push_back({{"prefix", s.prefix},
                          {"documents", s.documents},
                          {"tokens", s.tokens},
                          {"bin_bytes", s.bin_bytes},
                          {"idx_bytes", s.idx_bytes},
                          {"bin_xxh3", s.bin_xxh3},
                          {"idx_xxh3", s.idx_xxh3}});
  }
  j["shards"] = shard_list;
  if (length_index) {
    j["length_index"] = {{"file", length_index->file},
                         {"bytes", length_index->bytes},
                         {"documents", length_index->documents},
                         {"xxh3", length_index->xxh3}};
  }
  if (loss_mask) {
    j["loss_mask"] = {{"dataset", loss_mask->dataset},
                      {"trained_tokens", loss_mask->trained_tokens}};
  }
  return j.dump(2) + "\n";
}

Result<Manifest> Manifest::Parse(std::string_view json, std::string_view origin) {
  Manifest m;
  try {
    Json j = Json::parse(json.begin(), json.end());
    Status st = ParseJson(j, &m);
    if (!st.ok()) return st.WithContext(origin);
  } catch (const Json::parse_error& e) {
    return Corruption(std::string(origin) + ": at byte " + std::to_string(e.byte) +
                      ": invalid JSON: " + e.what());
  } catch (const Json::exception& e) {
    return Corruption(std::string(origin) + ": invalid manifest: " + e.what());
  }
  return m;
}

Result<Manifest> ReadManifest(const std::string& dataset_dir) {
  std::string path = JoinPath(dataset_dir, kManifestFileName);
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFound(path + ": no manifest (not a stoker dataset, or an unfinished one)");
    }
    return text.status();
  }
  return Manifest::Parse(*text, path);
}

Status WriteManifest(const std::string& dataset_dir, const Manifest& manifest) {
  return WriteFileAtomically(JoinPath(dataset_dir, kManifestFileName), manifest.ToJson());
}

}  // namespace stoker
