// NpyHeader: the parsed header of a NumPy `.npy` file (versions 1.0, 2.0 and 3.0,
// docs/formats-reference.md §6.2).
//
// Only what token data needs is accepted: little-endian (or 1-byte) integer and float arrays of 0,
// 1 or 2 dimensions, in C or Fortran order. Object arrays (pickles), structured dtypes, big-endian
// data and headers over kNpyMaxHeaderBytes are refused with kCorruption (or kUnimplemented for
// valid but unsupported arrays), naming the file and byte offset. Plain value; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

// NumPy itself refuses headers over 10,000 bytes unless told otherwise; version 2.0 exists for
// headers over 64 KiB, so stoker allows up to 1 MiB and no more (a header is a few dozen bytes).
inline constexpr uint64_t kNpyMaxHeaderBytes = 1 << 20;

struct NpyHeader {
  int major_version = 1;
  TokenDType dtype = TokenDType::kUint16;
  std::vector<uint64_t> shape;  // empty for a 0-d array
  bool fortran_order = false;
  uint64_t data_offset = 0;   // where the array data starts
  uint64_t num_elements = 1;  // product of shape
};

// Parses the header at the start of `data` (`size` bytes of the file `path`) and checks that the
// file holds exactly the array it announces.
Result<NpyHeader> ParseNpyHeader(const uint8_t* data, uint64_t size, const std::string& path);

}  // namespace stoker
