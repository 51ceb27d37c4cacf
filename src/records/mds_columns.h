// MDS shard internals: the shard header (sample count, offsets, config JSON) and the column
// encodings of a sample (docs/formats-reference.md §2.3 to §2.5). Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/half_float.h"
#include "records/record.h"
#include "stoker/status.h"

namespace stoker {

struct MdsColumn {
  std::string name;
  std::string encoding;          // as written, e.g. "ndarray:uint16"
  std::optional<uint32_t> size;  // fixed size in bytes, or nullopt (variable)
  enum class Kind { kStr, kBytes, kScalar, kStrInt, kStrFloat, kStrDecimal, kNdarray } kind;
  PackedType dtype;          // kScalar; kNdarray when the encoding fixes it (else size 0)
  bool shape_fixed = false;  // kNdarray: "ndarray:dtype:d0,d1,..."
  uint64_t elements = 0;     // kNdarray with a fixed shape: product of the dims
};

struct MdsShardLayout {
  uint32_t samples = 0;
  std::vector<MdsColumn> columns;
};

// Checks the header of a decompressed shard (offsets in order and inside `data`) and parses its
// config JSON. kCorruption naming `uri` and the byte offset; kUnimplemented for an unknown
// column encoding.
Result<MdsShardLayout> ParseMdsShardLayout(std::string_view data, const std::string& uri);

// Decodes one sample's bytes into *fields (replacing them), one per column in column order.
// kCorruption (naming the column) when sizes and data disagree.
Status DecodeMdsSample(std::string_view sample, const std::vector<MdsColumn>& columns,
                       std::vector<Field>* fields);

}  // namespace stoker
