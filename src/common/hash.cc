#include "common/hash.h"

#include <xxhash.h>

#include <cstdio>

#include "common/mapped_file.h"

namespace stoker {

struct Xxh3Hasher::State {
  XXH3_state_t* xxh = nullptr;
};

Xxh3Hasher::Xxh3Hasher() : state_(std::make_unique<State>()) {
  state_->xxh = XXH3_createState();
  XXH3_64bits_reset(state_->xxh);
}

Xxh3Hasher::~Xxh3Hasher() { XXH3_freeState(state_->xxh); }

void Xxh3Hasher::Update(const void* data, size_t size_bytes) {
  if (size_bytes > 0) XXH3_64bits_update(state_->xxh, data, size_bytes);
}

uint64_t Xxh3Hasher::Digest() const { return XXH3_64bits_digest(state_->xxh); }

std::string Xxh3Hasher::HexDigest() const { return Xxh3Hex(Digest()); }

std::string Xxh3Hex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return std::string(buf, 16);
}

uint64_t Xxh3(const void* data, size_t size_bytes) { return XXH3_64bits(data, size_bytes); }

Result<std::string> Xxh3HexOfFile(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  return Xxh3Hex(Xxh3(file->data(), file->size()));
}

bool IsXxh3Hex(std::string_view s) {
  return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace stoker
