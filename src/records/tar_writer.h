// Tar archive bytes as Python's tarfile writes them in PAX format (what webdataset's TarWriter
// produces): a ustar header per member, preceded by a pax extended header when the name does
// not fit the 100-byte field or is not ASCII, or when the size needs more than 11 octal digits;
// the end is two zero blocks padded to a 10240-byte record. Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker {

// One 512-byte ustar header block (checksum filled in). `name` must fit in 100 bytes.
std::string TarHeaderBlock(std::string_view name, uint64_t size, char typeflag,
                           uint64_t mtime = 0);

// The header(s) of a regular-file member `name` of `size` bytes (mode 0444, owner bigdata).
std::string TarMemberHeader(std::string_view name, uint64_t size, uint64_t mtime = 0);
// Zero bytes that pad a member's `size` bytes of data to the block boundary.
std::string TarPadding(uint64_t size);
// The end-of-archive blocks for an archive of `archive_bytes` so far, padded to 10240 bytes.
std::string TarEnd(uint64_t archive_bytes);

}  // namespace stoker
