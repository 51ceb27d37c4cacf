#include "records/mds_columns.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace stoker {
namespace {

// A numeric element type of MDS scalars and ndarrays.
struct DTypeInfo {
  std::string_view name;
  PackedType dtype;
  uint8_t code;  // the ndarray dtype byte
};
constexpr DTypeInfo kDTypes[] = {
    {"uint8", {1, false, false}, 8},   {"int8", {1, false, true}, 9},
    {"uint16", {2, false, false}, 16}, {"int16", {2, false, true}, 17},
    {"float16", {2, true, true}, 18},  {"uint32", {4, false, false}, 32},
    {"int32", {4, false, true}, 33},   {"float32", {4, true, true}, 34},
    {"uint64", {8, false, false}, 64}, {"int64", {8, false, true}, 65},
    {"float64", {8, true, true}, 66},
};

const DTypeInfo* ByName(std::string_view name) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}
const DTypeInfo* ByCode(uint8_t code) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

Result<MdsColumn> ParseColumn(std::string name, std::string encoding,
                              std::optional<uint32_t> size) {
  MdsColumn c;
  c.name = std::move(name);
  c.encoding = std::move(encoding);
  c.size = size;
  std::string_view e = c.encoding;
  using K = MdsColumn::Kind;
  if (e == "str") {
    c.kind = K::kStr;
  } else if (e == "bytes" || e == "json" || e == "pkl" || e == "jpeg" || e == "png" || e == "pil" ||
             e == "jpeg_array" || e == "jpegarray" || e == "list[pil]" || e == "list[jpeg]" ||
             e == "list[png]") {
    c.kind = K::kBytes;
  } else if (e == "int") {
    c.kind = K::kScalar;
    c.dtype = {8, false, true};
  } else if (const DTypeInfo* d = ByName(e)) {
    c.kind = K::kScalar;
    c.dtype = d->dtype;
  } else if (e == "str_int") {
    c.kind = K::kStrInt;
  } else if (e == "str_float") {
    c.kind = K::kStrFloat;
  } else if (e == "str_decimal") {
    c.kind = K::kStrDecimal;
  } else if (e == "ndarray" || e.starts_with("ndarray:")) {
    c.kind = K::kNdarray;
    if (e.size() > 8) {
      std::string_view rest = e.substr(8);
      size_t colon = rest.find(':');
      const DTypeInfo* d = ByName(rest.substr(0, colon));
      if (d == nullptr)
        return Unimplemented("unknown ndarray dtype in encoding '" + c.encoding + "'");
      c.dtype = d->dtype;
      if (colon != std::string_view::npos) {
        c.shape_fixed = true;
        c.elements = 1;
        std::string_view dims = rest.substr(colon + 1);
        while (!dims.empty()) {
          size_t comma = dims.find(',');
          std::string_view dim = dims.substr(0, comma);
          uint64_t v = 0;
          auto [p, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), v);
          if (ec != std::errc() || p != dim.data() + dim.size() || v == 0 || v > (1u << 31)) {
            return Corruption("bad ndarray shape in encoding '" + c.encoding + "'");
          }
          c.elements *= v;
          if (c.elements > (uint64_t{1} << 32))
            return Corruption("ndarray shape too large in '" + c.encoding + "'");
          dims = comma == std::string_view::npos ? std::string_view() : dims.substr(comma + 1);
        }
      }
    }
  } else {
    return Unimplemented("MDS column '" + c.name + "' has encoding '" + c.encoding +
                         "', which stoker does not read");
  }
  return c;
}

Status DecodeNdarray(std::string_view v, const MdsColumn& c, Field* f) {
  size_t pos = 0;
  auto need = [&](size_t n) { return v.size() - pos >= n; };
  PackedType dtype = c.dtype;
  if (dtype.size == 0) {
    if (!need(1)) return Corruption("ndarray without its dtype byte");
    const DTypeInfo* d = ByCode(static_cast<uint8_t>(v[pos++]));
    if (d == nullptr)
      return Corruption("unknown ndarray dtype code " +
                        std::to_string(static_cast<uint8_t>(v[pos - 1])));
    dtype = d->dtype;
  }
  uint64_t elements = c.elements;
  if (!c.shape_fixed) {
    if (!need(1)) return Corruption("ndarray without its shape byte");
    uint8_t b = static_cast<uint8_t>(v[pos++]);
    uint32_t ndim = b >> 2, dim_bytes = 1u << (b & 3);
    elements = 1;
    for (uint32_t i = 0; i < ndim; ++i) {
      if (!need(dim_bytes)) return Corruption("ndarray shape past the end of the value");
      uint64_t dim = 0;
      std::memcpy(&dim, v.data() + pos, dim_bytes);
      pos += dim_bytes;
      if (dim != 0 && elements > UINT64_MAX / dim) return Corruption("ndarray shape overflows");
      elements *= dim;
    }
  }
  uint32_t item = dtype.size;
  if (elements > (v.size() - pos) / item || (v.size() - pos) != elements * item) {
    return Corruption("ndarray of " + std::to_string(elements) + " elements does not fill its " +
                      std::to_string(v.size()) + "-byte value");
  }
  f->type = dtype.is_float ? FieldType::kFloat : FieldType::kTokens;
  AppendPacked(v.data() + pos, elements, dtype, f);
  return Status::OK();
}

Status DecodeColumn(std::string_view v, const MdsColumn& c, Field* f) {
  using K = MdsColumn::Kind;
  switch (c.kind) {
    case K::kStr:
    case K::kStrDecimal:
      f->type = FieldType::kString;
      f->bytes.assign(v);
      return Status::OK();
    case K::kBytes:
      f->type = FieldType::kBytes;
      f->bytes.assign(v);
      return Status::OK();
    case K::kScalar: {
      if (v.size() != static_cast<uint32_t>(c.dtype.size)) {
        return Corruption(std::to_string(v.size()) + " bytes for a " + c.encoding + " scalar");
      }
      f->type = c.dtype.is_float ? FieldType::kFloat : FieldType::kInt;
      AppendPacked(v.data(), 1, c.dtype, f);
      return Status::OK();
    }
    case K::kStrInt: {
      int64_t x = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (ec != std::errc() || p != v.data() + v.size()) return Corruption("bad str_int value");
      f->type = FieldType::kInt;
      f->ints.push_back(x);
      return Status::OK();
    }
    case K::kStrFloat: {
      std::string s(v);
      char* end = nullptr;
      double x = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) return Corruption("bad str_float value");
      f->type = FieldType::kFloat;
      f->floats.push_back(x);
      return Status::OK();
    }
    case K::kNdarray:
      return DecodeNdarray(v, c, f);
  }
  return Status::OK();
}

}  // namespace

Result<MdsShardLayout> ParseMdsShardLayout(std::string_view data, const std::string& uri) {
  auto corrupt = [&](uint64_t offset, const std::string& what) {
    return Corruption(uri + ": " + what + " at byte offset " + std::to_string(offset));
  };
  if (data.size() < 8) return corrupt(0, "truncated MDS shard header");
  const uint32_t n = LoadAs<uint32_t>(data.data());
  uint64_t header = 4 + 4 * (uint64_t{n} + 1);
  if (header > data.size()) {
    return corrupt(4, "MDS offsets table of " + std::to_string(n) + " samples past the end (" +
                          std::to_string(data.size()) + " bytes)");
  }
  uint32_t prev = 0;
  for (uint64_t i = 0; i <= n; ++i) {
    const uint32_t off = LoadAs<uint32_t>(data.data() + 4 + 4 * i);
    if ((i == 0 && off < header) || off < prev || off > data.size()) {
      return corrupt(4 + 4 * i,
                     "MDS sample offset " + std::to_string(off) +
                         (off > data.size() ? " past the end of the shard" : " out of order"));
    }
    prev = off;
  }
  const uint32_t first = LoadAs<uint32_t>(data.data() + 4);
  MdsShardLayout layout;
  layout.samples = n;
  try {
    nlohmann::json config = nlohmann::json::parse(data.substr(header, first - header));
    const auto& names = config.at("column_names");
    const auto& encodings = config.at("column_encodings");
    const auto& sizes = config.at("column_sizes");
    if (!names.is_array() || names.size() != encodings.size() || names.size() != sizes.size()) {
      return corrupt(header, "MDS config columns of different lengths");
    }
    for (size_t i = 0; i < names.size(); ++i) {
      std::optional<uint32_t> size;
      if (!sizes[i].is_null()) size = sizes[i].get<uint32_t>();
      if (size && *size == 0) size.reset();  // the reference reader tests `if size:`
      Result<MdsColumn> col =
          ParseColumn(names[i].get<std::string>(), encodings[i].get<std::string>(), size);
      if (!col.ok()) return col.status().WithContext(uri);
      layout.columns.push_back(std::move(*col));
    }
  } catch (const nlohmann::json::exception& e) {
    return corrupt(header, std::string("malformed MDS config JSON: ") + e.what());
  }
  return layout;
}

Status DecodeMdsSample(std::string_view sample, const std::vector<MdsColumn>& columns,
                       std::vector<Field>* fields) {
  fields->clear();
  size_t pos = 0;
  std::vector<uint32_t> sizes(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].size) {
      sizes[i] = *columns[i].size;
      continue;
    }
    if (sample.size() - pos < 4) return Corruption("MDS sample too short for its column sizes");
    std::memcpy(&sizes[i], sample.data() + pos, 4);
    pos += 4;
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    if (sizes[i] > sample.size() - pos) {
      return Corruption("MDS column '" + columns[i].name + "' (" + std::to_string(sizes[i]) +
                        " bytes) runs past the end of the sample");
    }
    Field f;
    f.name = columns[i].name;
    Status st = DecodeColumn(sample.substr(pos, sizes[i]), columns[i], &f);
    if (!st.ok()) return st.WithContext("MDS column '" + columns[i].name + "'");
    pos += sizes[i];
    fields->push_back(std::move(f));
  }
  return Status::OK();
}

}  // namespace stoker
