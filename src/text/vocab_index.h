// VocabIndex: a tokenizer.json vocabulary's text -> id. The keys are copied into one buffer, and
// each slot of the open-addressing table holds a key's hash tag, id, offset and length, so a
// lookup reads one slot (a cache line, prefetched by batched callers) and the key's bytes: no
// std::string per key or per lookup (the std::unordered_map<std::string, int32_t> it replaces was
// a fifth of opening cl100k, malloc aside).
// Not thread-safe while being filled; const methods may be called from any thread afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

class VocabIndex {
 public:
  // Files key -> id (0 <= id < INT32_MAX; all keys together below 4 GiB: see key_bytes). False
  // (and nothing changes) if the key is there.
  bool Insert(std::string_view key, int32_t id);
  // The id of `key`, or -1.
  int32_t Find(std::string_view key) const { return FindHashed(key, Hash(key)); }
  // The number of keys, and their bytes.
  size_t size() const { return size_; }
  size_t key_bytes() const { return keys_.size(); }

  // Batched lookups: Hash each key and Prefetch its slot, then PrefetchKey each (that reads the
  // slot, now in the cache, and prefetches the bytes of the key there), then FindHashed each.
  static uint64_t Hash(std::string_view key);
  void Prefetch(uint64_t hash) const { PrefetchLine(slots_.data() + Home(hash)); }
  void PrefetchKey(uint64_t hash) const {
    PrefetchLine(keys_.data() + slots_.data()[Home(hash)].offset);
  }
  int32_t FindHashed(std::string_view key, uint64_t hash) const;
  // Calls fn(key, id) for every key, in no particular order.
  template <typename Fn>
  void ForEach(const Fn& fn) const {
    for (const Slot& s : slots_) {
      if (s.id_plus_1 != 0) {
        fn(std::string_view(keys_).substr(s.offset, s.size), static_cast<int32_t>(s.id_plus_1 - 1));
      }
    }
  }

 private:
  struct Slot {          // all zero: empty
    uint32_t tag;        // the hash's high 32 bits, which also choose the home slot
    uint32_t id_plus_1;  // 0: empty
    uint32_t offset;     // the key is keys_[offset, offset + size)
    uint32_t size;
  };
  // GCC 12 dropped the __builtin_prefetch of both methods above once they were inlined into the
  // loop of JsonVocab::AddMerges (no prefetch instruction was left); an asm statement stays.
  static void PrefetchLine(const void* p) {
#if defined(__x86_64__)
    asm volatile("prefetcht0 (%0)" : : "r"(p));
#else
    __builtin_prefetch(p);
#endif
  }
  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  uint64_t Home(uint64_t hash) const { return Tag(hash) & (slots_.size() - 1); }
  void Grow();

  std::string keys_;
  std::vector<Slot> slots_ = std::vector<Slot>(16);  // a power of two, at most half full
  size_t size_ = 0;
};

}  // namespace stoker
