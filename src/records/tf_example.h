// tf.train.Example: decoding from (and encoding to) the protobuf wire format by hand — no
// protobuf dependency. Features become Record fields: bytes_list -> kBytes, int64_list -> kInt,
// float_list -> kFloat. Plain functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "records/record.h"
#include "stoker/status.h"

namespace stoker {

// Decodes a serialized Example into *fields (replacing them), one per feature in order of first
// appearance (a repeated key: the last value wins, as protobuf merges maps). Packed and unpacked
// int64/float lists are both accepted; unknown fields are skipped. kCorruption (saying what is
// malformed and at which byte of the message) for truncated or malformed wire data.
Status DecodeTfExample(std::string_view message, std::vector<Field>* fields);

// Serializes `fields` as an Example (kBytes/kString -> bytes_list, kInt/kTokens -> packed
// int64_list, kFloat -> packed float_list), features in the given order.
std::string EncodeTfExample(const std::vector<Field>& fields);

}  // namespace stoker
