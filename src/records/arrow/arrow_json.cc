#include "records/arrow/arrow_json.h"

#include <arrow/type.h>
#include <arrow/util/float16.h>

#include <string>

namespace stoker {
namespace {

using Json = nlohmann::ordered_json;

template <typename L>
Json ListToJson(const arrow::Array& array, int64_t row) {
  const auto& list = static_cast<const L&>(array);
  Json out = Json::array();
  const int64_t begin = list.value_offset(row), end = begin + list.value_length(row);
  for (int64_t i = begin; i < end; ++i) out.push_back(ArrowValueToJson(*list.values(), i));
  return out;
}

Json MapToJson(const arrow::MapArray& map, int64_t row) {
  const int64_t begin = map.value_offset(row), end = begin + map.value_length(row);
  const arrow::Array& keys = *map.keys();
  const bool string_keys =
      keys.type_id() == arrow::Type::STRING || keys.type_id() == arrow::Type::LARGE_STRING;
  Json out = string_keys ? Json::object() : Json::array();
  for (int64_t i = begin; i < end; ++i) {
    Json key = ArrowValueToJson(keys, i), value = ArrowValueToJson(*map.items(), i);
    if (string_keys) {
      out[key.get<std::string>()] = std::move(value);
    } else {
      out.push_back(Json::array({std::move(key), std::move(value)}));
    }
  }
  return out;
}

}  // namespace

bool IsJsonColumnType(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRUCT:
    case arrow::Type::MAP:
      return true;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST: {
      const arrow::Type::type child = type.field(0)->type()->id();
      return !arrow::is_integer(child) && !arrow::is_floating(child) && child != arrow::Type::BOOL;
    }
    default:
      return false;
  }
}

Json ArrowValueToJson(const arrow::Array& a, int64_t row) {
  if (a.IsNull(row)) return nullptr;
  switch (a.type_id()) {
    case arrow::Type::BOOL:
      return static_cast<const arrow::BooleanArray&>(a).Value(row);
    case arrow::Type::INT8:
      return static_cast<const arrow::Int8Array&>(a).Value(row);
    case arrow::Type::INT16:
      return static_cast<const arrow::Int16Array&>(a).Value(row);
    case arrow::Type::INT32:
      return static_cast<const arrow::Int32Array&>(a).Value(row);
    case arrow::Type::INT64:
      return static_cast<const arrow::Int64Array&>(a).Value(row);
    case arrow::Type::UINT8:
      return static_cast<const arrow::UInt8Array&>(a).Value(row);
    case arrow::Type::UINT16:
      return static_cast<const arrow::UInt16Array&>(a).Value(row);
    case arrow::Type::UINT32:
      return static_cast<const arrow::UInt32Array&>(a).Value(row);
    case arrow::Type::UINT64:
      return static_cast<const arrow::UInt64Array&>(a).Value(row);
    case arrow::Type::HALF_FLOAT:
      return arrow::util::Float16::FromBits(static_cast<const arrow::HalfFloatArray&>(a).Value(row))
          .ToDouble();
    case arrow::Type::FLOAT:
      return static_cast<const arrow::FloatArray&>(a).Value(row);
    case arrow::Type::DOUBLE:
      return static_cast<const arrow::DoubleArray&>(a).Value(row);
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return std::string(static_cast<const arrow::BinaryArray&>(a).GetView(row));
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return std::string(static_cast<const arrow::LargeBinaryArray&>(a).GetView(row));
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY_VIEW:
      return std::string(static_cast<const arrow::BinaryViewArray&>(a).GetView(row));
    case arrow::Type::LIST:
      return ListToJson<arrow::ListArray>(a, row);
    case arrow::Type::LARGE_LIST:
      return ListToJson<arrow::LargeListArray>(a, row);
    case arrow::Type::FIXED_SIZE_LIST:
      return ListToJson<arrow::FixedSizeListArray>(a, row);
    case arrow::Type::MAP:
      return MapToJson(static_cast<const arrow::MapArray&>(a), row);
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(a);
      Json out = Json::object();
      for (int f = 0; f < s.num_fields(); ++f) {
        out[s.type()->field(f)->name()] = ArrowValueToJson(*s.field(f), row);
      }
      return out;
    }
    default:
      return nullptr;  // dictionaries, dates, decimals...: not part of a conversation
  }
}

}  // namespace stoker
