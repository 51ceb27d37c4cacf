// PieceCache: a small direct-mapped cache of short pre-tokens -> their ids, one per thread and
// tokenizer, so the frequent pieces of a text (Zipf: a few thousand cover most of it) skip the
// vocabulary and merge tables, whose size (tens of MB) makes every lookup a cache miss.
// Not thread-safe: each thread owns its cache (BpeTokenizer keeps them thread_local).
// Sized by measurement: 32768 entries hit more often than 8192 on mixed prose and code, and
// 65536 (2 MiB) 5-10% faster again than 32768 on bench/tokenizer_vs_peers.py (session 36).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace stoker {

class PieceCache {
 public:
  static constexpr size_t kMaxBytes = 16;
  static constexpr size_t kMaxIds = 3;
  static constexpr int kSlotBits = 16;
  static constexpr size_t kEntries = size_t{1} << kSlotBits;  // 32 bytes each: 2 MiB

  // The cache of the calling thread for the tokenizer `owner` (emptied when the owner changes).
  static PieceCache* ForThread(uint64_t owner) {
    thread_local std::unique_ptr<PieceCache> cache;
    if (!cache) cache = std::make_unique<PieceCache>();
    if (cache->owner_ != owner) {
      cache->Clear();
      cache->owner_ = owner;
    }
    return cache.get();
  }

  PieceCache() : entries_(kEntries) {}

  // Appends the cached ids of `piece` to *ids and returns true, or returns false.
  bool Lookup(std::string_view piece, std::vector<int32_t>* ids) const {
    if (piece.size() > kMaxBytes) return false;
    uint64_t a, b;
    Load(piece, &a, &b);
    const Entry& e = entries_[Slot(a, b, piece.size())];
    if (e.len != piece.size() || e.a != a || e.b != b || e.count == 0) return false;
    if (e.count == 1) {  // most pieces: a push_back, not a call to memmove for 4 bytes
      ids->push_back(e.ids[0]);
    } else {
      ids->insert(ids->end(), e.ids, e.ids + e.count);
    }
    return true;
  }

  void Insert(std::string_view piece, const int32_t* id, size_t count) {
    if (piece.size() > kMaxBytes || count == 0 || count > kMaxIds) return;
    uint64_t a, b;
    Load(piece, &a, &b);
    Entry& e = entries_[Slot(a, b, piece.size())];
    e.a = a;
    e.b = b;
    e.len = static_cast<uint8_t>(piece.size());
    e.count = static_cast<uint8_t>(count);
    std::memcpy(e.ids, id, count * sizeof(int32_t));
  }

 private:
  struct Entry {
    uint64_t a = 0, b = 0;
    int32_t ids[kMaxIds];
    uint8_t len = 0;
    uint8_t count = 0;
  };

  // The key of a piece of up to kMaxBytes: with its length, (a, b) determine every byte. Loads
  // of a fixed size that overlap (the first and the last 8, or 4, bytes) rather than a copy into
  // a zeroed buffer: a variable-length memcpy was a call and a store-to-load stall on every
  // piece (a fifth of the lookup's time in perf), and the piece's bytes are never read past its
  // end.
  static void Load(std::string_view piece, uint64_t* a, uint64_t* b) {
    const char* p = piece.data();
    const size_t n = piece.size();
    if (n > 8) {
      std::memcpy(a, p, 8);
      std::memcpy(b, p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      *a = lo | (static_cast<uint64_t>(hi) << 32);
      *b = 0;
    } else {
      // 0 to 3 bytes: the first, the middle and the last (zero for an empty piece).
      *a = n == 0 ? 0
                  : static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
                        static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
                        static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16;
      *b = 0;
    }
  }
  static size_t Slot(uint64_t a, uint64_t b, size_t len) {
    uint64_t h = (a ^ (b * 0x9E3779B97F4A7C15ULL) ^ len) * 0xff51afd7ed558ccdULL;
    return static_cast<size_t>(h >> (64 - kSlotBits));
  }
  void Clear() {
    for (Entry& e : entries_) e.count = 0;
  }

  std::vector<Entry> entries_;
  uint64_t owner_ = 0;
};

}  // namespace stoker
