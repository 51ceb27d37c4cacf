// Record: one sample of a record source — a key and named fields, in the order the shard holds
// them. Every record format maps onto this: a WebDataset sample (one field per extension), a
// tf.train.Example (one field per feature), an MDS sample (one field per column).
// Plain values; not thread-safe (one user at a time).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

enum class FieldType {
  kBytes,   // raw bytes (WebDataset members, TFRecord bytes_list, MDS bytes/json/pkl...)
  kString,  // UTF-8 text (MDS str)
  kInt,     // integers (MDS int scalars, TFRecord int64_list)
  kFloat,   // floating point (MDS float scalars, TFRecord float_list)
  kTokens,  // an integer array of token ids (MDS ndarray of an integer dtype)
  kJson,    // a nested value as JSON text in `bytes` (Arrow structs, lists of structs, maps)
};

// "bytes", "string", "int", "float", "tokens", "json".
std::string_view FieldTypeName(FieldType type);

struct Field {
  std::string name;
  FieldType type = FieldType::kBytes;
  std::string bytes;           // kBytes, kString, kJson
  std::vector<int64_t> ints;   // kInt, kTokens
  std::vector<double> floats;  // kFloat
  // kBytes: how many byte strings the field holds. 1 for every format but TFRecord, whose
  // bytes_list may hold 0 (then `bytes` is empty) or several (`bytes` is the first, `more_bytes`
  // the others).
  uint32_t byte_values = 1;
  std::vector<std::string> more_bytes;
};

struct Record {
  std::string key;            // WebDataset __key__, a TFRecord/MDS "<shard>:<index>" or key field
  std::string source;         // the shard it came from (path or URI)
  uint64_t index = 0;         // 0-based position in its shard
  uint64_t offset_bytes = 0;  // where it starts in the shard (decompressed stream for .gz/.zst)
  // "{}" lets a designated initializer leave it out without a -Wextra warning.
  std::vector<Field> fields{};

  // The field called `name`, or nullptr.
  const Field* Find(std::string_view name) const;
  // "<source> record <index> (key '<key>', byte offset <offset>)": the location for errors.
  std::string Where() const;
};

}  // namespace stoker
