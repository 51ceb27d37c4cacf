// TarReader: a streaming reader of tar archives (POSIX ustar, pax extended and global headers,
// old GNU headers with 'L' long names and base-256 sizes), as Python's tarfile reads them in
// stream mode ("r|*"), which is what WebDataset uses. It hands out the regular-file members with
// their data, in archive order; everything else is skipped the way tarfile skips it.
// Not thread-safe: one user at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "records/byte_stream.h"
#include "stoker/status.h"

namespace stoker {

struct TarMember {
  std::string name;             // the full name (pax path, GNU long name, or prefix/name)
  std::string data;             // the member's bytes
  uint64_t header_offset = 0;   // byte offset of its (first) header in the (decompressed) archive
};

class TarReader {
 public:
  // Reads the archive from `stream`; `uri` names it in errors.
  TarReader(std::unique_ptr<ByteStream> stream, std::string uri);

  // The next regular-file member, or std::nullopt at the end of the archive (the first zero block,
  // or the end of the data at a block boundary). kCorruption naming the uri and byte offset for a
  // short block, a bad header checksum, a malformed number or pax record, and for a member name
  // that is absolute or contains a ".." component (never used as a path, but refused).
  Result<std::optional<TarMember>> Next();

 private:
  Status Corrupt(uint64_t offset, const std::string& what) const;
  // Reads `n` bytes into *out plus the padding to the next 512-byte boundary; kCorruption if
  // the data ends first.
  Status ReadPadded(uint64_t n, std::string* out, const char* what);
  Status ParsePax(const std::string& data, uint64_t offset,
                  std::map<std::string, std::string>* records) const;

  std::unique_ptr<ByteStream> stream_;
  std::string uri_;
  uint64_t offset_ = 0;  // bytes consumed from the (decompressed) stream
  bool done_ = false;
  std::map<std::string, std::string> global_pax_;
};

// True if `name` is absolute or has a ".." path component.
bool IsUnsafeMemberName(std::string_view name);

}  // namespace stoker
