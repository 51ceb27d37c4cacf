// XXH3-64 checksums as stoker writes them in manifests: 16 lowercase hex digits.
//
// Xxh3Hasher is a streaming hasher. Not thread-safe: one user at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

class Xxh3Hasher {
 public:
  Xxh3Hasher();
  ~Xxh3Hasher();
  Xxh3Hasher(const Xxh3Hasher&) = delete;
  Xxh3Hasher& operator=(const Xxh3Hasher&) = delete;

  void Update(const void* data, size_t size_bytes);
  // Hash of everything passed to Update so far; Update may continue afterwards.
  uint64_t Digest() const;
  std::string HexDigest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// 16 lowercase hex digits, most significant first (the canonical XXH3 rendering).
std::string Xxh3Hex(uint64_t hash);
// XXH3-64 (seed 0) of a buffer.
uint64_t Xxh3(const void* data, size_t size_bytes);
// XXH3-64 of a whole file, as hex; reads it through a read-only mapping.
Result<std::string> Xxh3HexOfFile(const std::string& path);
// True if `s` looks like an Xxh3Hex result.
bool IsXxh3Hex(std::string_view s);

}  // namespace stoker
