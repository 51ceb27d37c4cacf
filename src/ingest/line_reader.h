// LineReader: splits a ByteStream into '\n'-terminated lines of any length, tracking each line's
// number and byte offset for error messages. Not thread-safe: one user at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ingest/byte_stream.h"

namespace stoker {

class LineReader {
 public:
  explicit LineReader(std::unique_ptr<ByteStream> stream);

  // Sets *line to the next line without its '\n' and returns true, or returns false at the end.
  // A last line without '\n' is still a line; an empty file has no lines.
  Result<bool> Next(std::string* line);
  // 1-based number of the line last returned.
  uint64_t line_number() const { return line_number_; }
  // Byte offset (in the decompressed data) where that line starts.
  uint64_t line_offset_bytes() const { return line_offset_; }

 private:
  Status Refill();

  std::unique_ptr<ByteStream> stream_;
  std::vector<char> buf_;
  size_t pos_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t consumed_ = 0;  // decompressed bytes before buf_[pos_]
  uint64_t line_number_ = 0;
  uint64_t line_offset_ = 0;
};

}  // namespace stoker
