// Nested Arrow values (structs, lists of structs or strings, maps) as JSON, so that a column such
// as Hugging Face's `messages` (list<struct<role: string, content: string>>) reaches a chat
// record as the JSON a JSONL line would hold. Pure functions: thread-safe.
#pragma once

#include <arrow/array.h>

#include <nlohmann/json.hpp>

namespace stoker {

// Whether a column of `type` is read as JSON: a struct, a map, or a list of anything but numbers.
bool IsJsonColumnType(const arrow::DataType& type);

// The value at `row` of `array` as JSON: null, booleans, numbers, strings (binary as its bytes,
// which must then be UTF-8 to be used), lists and structs (keys in field order); a map with string
// keys is an object, any other map a list of [key, value] pairs.
nlohmann::ordered_json ArrowValueToJson(const arrow::Array& array, int64_t row);

}  // namespace stoker
