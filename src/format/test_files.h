// Builders for small token files in tests (format tests, CLI tests): raw bytes of Megatron
// indexes, .npy files and llm.c shards, so a test can damage exactly one field.
// Header-only; free functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "format/megatron_index.h"

namespace stoker::testing {

template <typename T>
void AppendLE(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// An .idx image: header, lengths, pointers, document indices (given as is, so tests can break
// them), dtype code as a raw byte.
inline std::string IdxBytes(uint8_t dtype_code, const std::vector<int32_t>& lengths,
                            const std::vector<int64_t>& pointers,
                            const std::vector<int64_t>& doc_indices) {
  std::string out(kMegatronMagic, sizeof(kMegatronMagic));
  AppendLE<uint64_t>(out, 1);
  AppendLE<uint8_t>(out, dtype_code);
  AppendLE<uint64_t>(out, lengths.size());
  AppendLE<uint64_t>(out, doc_indices.size());
  for (int32_t v : lengths) AppendLE(out, v);
  for (int64_t v : pointers) AppendLE(out, v);
  for (int64_t v : doc_indices) AppendLE(out, v);
  return out;
}

// A consistent .idx for one sequence per document with `item`-byte tokens.
inline std::string IdxBytesFor(uint8_t dtype_code, size_t item,
                               const std::vector<int32_t>& lengths) {
  std::vector<int64_t> pointers, docs{0};
  int64_t p = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    pointers.push_back(p);
    p += lengths[i] * static_cast<int64_t>(item);
    docs.push_back(static_cast<int64_t>(i + 1));
  }
  return IdxBytes(dtype_code, lengths, pointers, docs);
}

// A .npy image with header dict text `dict` (padded as NumPy does) followed by `data`.
inline std::string NpyBytes(const std::string& dict, const std::string& data, int major = 1) {
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  size_t len_bytes = major == 1 ? 2 : 4;
  std::string text = dict;
  while ((6 + 2 + len_bytes + text.size() + 1) % 64 != 0) text.push_back(' ');
  text.push_back('\n');
  if (major == 1) {
    AppendLE<uint16_t>(out, static_cast<uint16_t>(text.size()));
  } else {
    AppendLE<uint32_t>(out, static_cast<uint32_t>(text.size()));
  }
  return out + text + data;
}

// Little-endian bytes of `values` stored as T.
template <typename T>
std::string ArrayBytes(const std::vector<T>& values) {
  std::string out;
  for (T v : values) AppendLE(out, v);
  return out;
}

// An llm.c shard: 256-int32 header (magic, version, count) then the token bytes.
inline std::string LlmcBytes(int32_t magic, int32_t version, int32_t count,
                             const std::string& tokens) {
  std::vector<int32_t> header(256, 0);
  header[0] = magic;
  header[1] = version;
  header[2] = count;
  return ArrayBytes(header) + tokens;
}

}  // namespace stoker::testing
