#include "text/vocab_index.h"

#include <xxhash.h>

#include <cstring>

namespace stoker {

uint64_t VocabIndex::Hash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

bool VocabIndex::Insert(std::string_view key, int32_t id) {
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  const uint64_t h = Hash(key);
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t at = Home(h);; at = (at + 1) & mask) {
    Slot& s = slots_[at];
    if (s.id_plus_1 == 0) {
      s = {Tag(h), static_cast<uint32_t>(id) + 1, static_cast<uint32_t>(keys_.size()),
           static_cast<uint32_t>(key.size())};
      keys_.append(key);
      ++size_;
      return true;
    }
    if (s.tag == Tag(h) && std::string_view(keys_.data() + s.offset, s.size) == key) return false;
  }
}

// The tag is all a slot needs to find its new home: no key is hashed again.
void VocabIndex::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() < 1024 ? 1024 : old.size() * 2, Slot{});
  const uint64_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id_plus_1 == 0) continue;
    uint64_t at = s.tag & mask;
    while (slots_[at].id_plus_1 != 0) at = (at + 1) & mask;
    slots_[at] = s;
  }
}

int32_t VocabIndex::FindHashed(std::string_view key, uint64_t h) const {
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t at = Home(h);; at = (at + 1) & mask) {
    const Slot& s = slots_[at];
    if (s.id_plus_1 == 0) return -1;
    if (s.tag == Tag(h) && s.size == key.size() &&
        (key.empty() || std::memcmp(keys_.data() + s.offset, key.data(), key.size()) == 0)) {
      return static_cast<int32_t>(s.id_plus_1 - 1);
    }
  }
}

}  // namespace stoker
