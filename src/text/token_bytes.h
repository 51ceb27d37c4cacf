// TokenBytes: the byte strings of a vocabulary, by id, in one buffer (id i is
// bytes[offsets[i], offsets[i + 1])). One buffer instead of a std::string per id: the lookups of
// BpeModel compare a candidate's bytes, and with a std::string per id each comparison was a cache
// miss on a 32-byte object in a 3 MB array (cl100k) before the bytes themselves; here the offsets
// (4 bytes an id) and the bytes together are about a third of that.
// Not thread-safe while being built; const methods may be called from any thread afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

class TokenBytes {
 public:
  TokenBytes() = default;
  explicit TokenBytes(const std::vector<std::string>& tokens) {
    for (const std::string& t : tokens) Add(t);
  }

  // Appends the next id's bytes (empty: an id without bytes).
  void Add(std::string_view t) {
    bytes_.append(t);
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  }

  size_t size() const { return offsets_.size() - 1; }
  bool empty() const { return size() == 0; }
  size_t total_bytes() const { return bytes_.size(); }
  std::string_view operator[](size_t id) const {
    return std::string_view(bytes_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }

  // For builders that place the bytes themselves: offsets.size() - 1 ids.
  static TokenBytes FromParts(std::string bytes, std::vector<uint32_t> offsets) {
    TokenBytes t;
    t.bytes_ = std::move(bytes);
    t.offsets_ = std::move(offsets);
    return t;
  }

 private:
  std::string bytes_;
  std::vector<uint32_t> offsets_ = {0};
};

}  // namespace stoker
