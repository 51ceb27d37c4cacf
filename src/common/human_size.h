// Human-readable byte sizes: "128MiB" <-> 134217728. Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

// Parses a size such as "4096", "128MiB", "1.5GiB", "64k", "100MB" (case-insensitive; spaces
// between number and unit allowed). K/Ki/KiB, M/Mi/MiB, ... are powers of 1024; KB, MB, GB, TB
// are powers of 1000. kInvalidArgument names the text on failure (also for overflow).
Result<uint64_t> ParseSize(std::string_view text);

// "0 B", "512 B", "1.5 KiB", "128.0 MiB", "2.00 GiB": three significant digits, binary units.
std::string FormatSize(uint64_t size_bytes);

// "12.3 MB/s" (decimal units, as disk and network rates are usually quoted).
std::string FormatRate(double bytes_per_s);

// "0:07", "1:02:03" for a number of seconds (rounded).
std::string FormatDuration(double seconds);

}  // namespace stoker
