// RangedSource: a ByteSource for a remote object of known size, whose ReadAt is cut into parts of
// at most `part_bytes` (8 MiB by default; S3 and CDNs serve such ranges at full speed), each
// fetched by one call of `fetch`, which must fill exactly the bytes it is asked for or fail.
// ReadAt clamps to the object's end and returns fewer bytes only there. Thread-safe if `fetch` is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "storage/byte_source.h"

namespace stoker::storage {

inline constexpr size_t kDefaultPartBytes = size_t{8} << 20;

// fetch(offset, n, out): exactly n bytes at offset, or an error.
using RangeFetch = std::function<Status(uint64_t offset, size_t n, char* out)>;

std::unique_ptr<ByteSource> NewRangedSource(std::string uri, uint64_t size_bytes, size_t part_bytes,
                                            RangeFetch fetch);

}  // namespace stoker::storage
