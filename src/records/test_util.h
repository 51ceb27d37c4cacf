// Helpers for the records tests: compress a buffer in memory, write a file. Test-only.
#pragma once

#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <string>
#include <vector>

#include "records/record_source.h"

namespace stoker::testing_util {

// gzip (window_bits 15 + 16) or zlib (window_bits 15) compression of `data`.
inline std::string Deflate(const std::string& data, int window_bits = 15 + 16) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}
inline std::string Gzip(const std::string& data) { return Deflate(data, 15 + 16); }
inline std::string Zlib(const std::string& data) { return Deflate(data, 15); }

inline std::string Zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Every record `source` has left, or its first error.
inline Result<std::vector<Record>> ReadAllRecords(RecordSource& source) {
  std::vector<Record> out;
  while (true) {
    STOKER_ASSIGN_OR_RETURN(std::optional<Record> r, source.Next());
    if (!r) return out;
    out.push_back(std::move(*r));
  }
}

}  // namespace stoker::testing_util
