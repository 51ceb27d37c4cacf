#include "records/litdata_chunk.h"

#include <nlohmann/json.hpp>

#include "records/half_float.h"

namespace stoker {
namespace {

constexpr std::string_view kArrowRowsMagic("LDARW01\0", 8);
constexpr std::string_view kFramedMagic("LDFZ01\0\0", 8);

uint32_t LoadU32(std::string_view s, size_t at) { return LoadAs<uint32_t>(s.data() + at); }
uint32_t LoadU32BigEndian(std::string_view s, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data() + at);
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// Leaf names in flattening order from a treespec {"type", "context", "children_spec"}.
void LeafNames(const nlohmann::json& spec, const std::string& prefix,
               std::vector<std::string>* out) {
  const nlohmann::json& children = spec.at("children_spec");
  if (children.empty()) {
    out->push_back(prefix);
    return;
  }
  std::vector<std::string> keys;
  const nlohmann::json& type = spec.at("type");
  const nlohmann::json& context = spec.at("context");
  bool dict = type.is_string() && type.get<std::string>().find("dict") != std::string::npos;
  if (dict && context.is_string()) {
    for (const auto& k : nlohmann::json::parse(context.get<std::string>())) {
      keys.push_back(k.is_string() ? k.get<std::string>() : k.dump());
    }
  }
  for (size_t i = 0; i < children.size(); ++i) {
    std::string name = i < keys.size() ? keys[i] : std::to_string(i);
    LeafNames(children[i], prefix.empty() ? name : prefix + "." + name, out);
  }
}

// Element size and kind of a NumPy dtype index (litdata's _NUMPY_SCTYPES) or a torch one.
PackedType NumpyDtype(int i) {
  static const PackedType kTable[] = {{1, false, true},  {2, false, true},  {4, false, true},
                                      {8, false, true},  {1, false, false}, {2, false, false},
                                      {4, false, false}, {8, false, false}, {2, true, true},
                                      {4, true, true},   {8, true, true}};
  return i >= 0 && i < 11 ? kTable[i] : PackedType{};
}
PackedType TorchDtype(int i) {
  // Indexed by torch dtype code; size 0 for the codes not read.
  static const PackedType kTable[] = {
      {4, true, true},  {4, true, true},   {8, true, true},  {8, true, true},  {0, false, true},
      {0, false, true}, {0, false, true},  {0, false, true}, {2, true, true},  {2, true, true},
      {0, false, true}, {1, false, false}, {1, false, true}, {2, false, true}, {2, false, true},
      {4, false, true}, {4, false, true},  {8, false, true}, {8, false, true}, {1, false, false},
      {2, false, false}};
  return i >= 0 && i < static_cast<int>(std::size(kTable)) ? kTable[i] : PackedType{};
}

Status DecodeArray(PackedType d, std::string_view data, const std::string& format, Field* f) {
  if (d.size == 0) return Unimplemented("LitData leaf '" + format + "': unknown dtype");
  if (data.size() % d.size != 0) {
    return Corruption("LitData leaf '" + format + "': " + std::to_string(data.size()) +
                      " bytes is not a whole number of " + std::to_string(d.size) + "-byte values");
  }
  f->type = d.is_float ? FieldType::kFloat : FieldType::kTokens;
  d.is_float ? f->floats.clear() : f->ints.clear();  // the array replaces what the field held
  AppendPacked(data.data(), data.size() / d.size, d, f);
  return Status::OK();
}

// "no_header_numpy:5" -> 5; -1 when the suffix is not a number.
int SuffixIndex(std::string_view format) {
  size_t colon = format.find(':');
  if (colon == std::string_view::npos || colon + 1 >= format.size()) return -1;
  int v = 0;
  for (char c : format.substr(colon + 1)) {
    if (c < '0' || c > '9' || v > 1000) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

Result<LitDataConfig> ParseLitDataConfig(std::string_view index_json, const std::string& where) {
  LitDataConfig c;
  try {
    nlohmann::json index = nlohmann::json::parse(index_json);
    const nlohmann::json& config = index.at("config");
    if (config.contains("encryption") && !config["encryption"].is_null()) {
      return Unimplemented(where + ": encrypted LitData datasets are not read");
    }
    std::string loader = config.value("item_loader", "PyTreeLoader");
    if (loader != "PyTreeLoader" && loader != "TokensLoader") {
      return Unimplemented(where + ": LitData item_loader '" + loader +
                           "' is not read (PyTreeLoader and TokensLoader are)");
    }
    c.tokens_loader = loader == "TokensLoader";
    for (const auto& f : config.at("data_format")) c.data_format.push_back(f.get<std::string>());
    if (config.contains("compression") && config["compression"].is_string()) {
      c.compression = config["compression"].get<std::string>();
    }
    if (config.contains("compression_level") && config["compression_level"].is_string()) {
      c.compression_level = config["compression_level"].get<std::string>();
    }
    const nlohmann::json& spec_text = config.at("data_spec");
    if (spec_text.is_string()) {
      nlohmann::json spec = nlohmann::json::parse(spec_text.get<std::string>());
      LeafNames(spec.at(1), "", &c.leaf_names);
    }
  } catch (const nlohmann::json::exception& e) {
    return Corruption(where + ": malformed LitData index.json: " + e.what());
  }
  if (c.tokens_loader && c.data_format.size() != 1) {
    return Corruption(where + ": a TokensLoader dataset has one leaf, not " +
                      std::to_string(c.data_format.size()));
  }
  if (c.leaf_names.size() != c.data_format.size()) {
    c.leaf_names.clear();
    for (size_t i = 0; i < c.data_format.size(); ++i) c.leaf_names.push_back(std::to_string(i));
  }
  if (c.tokens_loader) c.leaf_names = {"tokens"};
  if (c.leaf_names.size() == 1 && c.leaf_names[0].empty()) c.leaf_names[0] = "0";
  return c;
}

Result<std::vector<std::pair<uint32_t, uint32_t>>> ParseLitDataChunk(std::string_view chunk,
                                                                     const std::string& where) {
  if (chunk.size() >= 8 && chunk.substr(0, 8) == kFramedMagic) {
    return Unimplemented(where + ": a framed zstd chunk (LitDataSource unframes these first)");
  }
  if (chunk.size() < 4) return Corruption(where + ": chunk shorter than its 4-byte item count");
  uint64_t n = LoadU32(chunk, 0);
  uint64_t header = 4 + 4 * (n + 1);
  if (header > chunk.size()) {
    return Corruption(where + ": offset table of " + std::to_string(n) + " items (" +
                      std::to_string(header) + " bytes) runs past the end (" +
                      std::to_string(chunk.size()) + " bytes)");
  }
  std::vector<std::pair<uint32_t, uint32_t>> items;
  items.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t begin = LoadU32(chunk, 4 + 4 * i), end = LoadU32(chunk, 8 + 4 * i);
    if (begin < header || begin > end || end > chunk.size()) {
      return Corruption(where + ": item " + std::to_string(i) + " at byte offset " +
                        std::to_string(begin) + ".." + std::to_string(end) +
                        " is outside the chunk's payload [" + std::to_string(header) + ", " +
                        std::to_string(chunk.size()) + ")");
    }
    items.emplace_back(begin, end);
  }
  return items;
}

Result<bool> FindLitDataArrowRows(std::string_view chunk, std::string_view* arrow_file,
                                  const std::string& where) {
  if (chunk.size() < 12 || chunk.substr(chunk.size() - 8) != kArrowRowsMagic) return false;
  uint64_t len = LoadU32(chunk, chunk.size() - 12);
  if (len > chunk.size() - 12) {
    return Corruption(where + ": Arrow row footer of " + std::to_string(len) +
                      " bytes is longer than the chunk");
  }
  *arrow_file = chunk.substr(chunk.size() - 12 - len, len);
  return true;
}

Status DecodeLitDataLeaf(std::string_view format, std::string_view bytes, Field* f) {
  std::string fmt(format);
  if (format == "str") {
    f->type = FieldType::kString;
    f->bytes.assign(bytes);
  } else if (format == "int" || format == "bool") {
    if (bytes.size() != (format == "int" ? 8u : 1u)) {
      return Corruption("LitData '" + fmt + "' leaf of " + std::to_string(bytes.size()) + " bytes");
    }
    f->type = FieldType::kInt;
    f->ints = {format == "int" ? LoadAs<int64_t>(bytes.data())
                               : int64_t{static_cast<unsigned char>(bytes[0]) != 0}};
  } else if (format == "float") {
    if (bytes.size() != 8)
      return Corruption("LitData 'float' leaf of " + std::to_string(bytes.size()) + " bytes");
    f->type = FieldType::kFloat;
    f->floats = {LoadAs<double>(bytes.data())};
  } else if (format.starts_with("no_header_numpy:")) {
    return DecodeArray(NumpyDtype(SuffixIndex(format)), bytes, fmt, f);
  } else if (format.starts_with("no_header_tensor:")) {
    return DecodeArray(TorchDtype(SuffixIndex(format)), bytes, fmt, f);
  } else if (format == "numpy" || format == "tensor") {
    // u32 dtype index, u32 ndim, u32 dims[ndim] (numpy: little-endian; tensor: big-endian).
    bool big = format == "tensor";
    auto u32 = [&](size_t at) { return big ? LoadU32BigEndian(bytes, at) : LoadU32(bytes, at); };
    if (bytes.size() < 8) return Corruption("LitData '" + fmt + "' leaf shorter than its header");
    uint64_t ndim = u32(4);
    if (8 + 4 * ndim > bytes.size())
      return Corruption("LitData '" + fmt + "' leaf: shape runs past the end");
    int dtype = static_cast<int>(u32(0));
    return DecodeArray(big ? TorchDtype(dtype) : NumpyDtype(dtype), bytes.substr(8 + 4 * ndim), fmt,
                       f);
  } else {
    f->type = FieldType::kBytes;
    f->bytes.assign(bytes);
  }
  return Status::OK();
}

Status DecodeLitDataItem(std::string_view item, const LitDataConfig& config,
                         std::vector<Field>* fields) {
  size_t leaves = config.data_format.size();
  if (item.size() < 4 * leaves) {
    return Corruption("item of " + std::to_string(item.size()) + " bytes is shorter than its " +
                      std::to_string(leaves) + " leaf sizes");
  }
  size_t at = 4 * leaves;
  for (size_t i = 0; i < leaves; ++i) {
    uint64_t size = LoadU32(item, 4 * i);
    if (at + size > item.size()) {
      return Corruption("leaf '" + config.leaf_names[i] + "' (" + std::to_string(size) +
                        " bytes at item offset " + std::to_string(at) + ") runs past the item's " +
                        std::to_string(item.size()) + " bytes");
    }
    Field f;
    f.name = config.leaf_names[i];
    Status s = DecodeLitDataLeaf(config.data_format[i], item.substr(at, size), &f);
    if (!s.ok()) return s.WithContext("leaf '" + f.name + "'");
    fields->push_back(std::move(f));
    at += size;
  }
  return Status::OK();
}

}  // namespace stoker
