// LongPieceCache: PieceCache's companion for pre-tokens of 17 to 64 bytes, which
// SentencePiece-style BPE has many of: "▁" takes 3 bytes, a word cut before "▁" keeps its newlines
// and the run of spaces before it ("▁▁▁▁▁▁▁▁return" is 30 bytes), and half the bytes of prose plus
// code were in such words (measured on bench/tokenizer_vs_peers.py's text). Each entry keeps the
// piece's bytes, compared in full on a lookup, so a hash collision is a miss, never wrong ids. Two
// ways per set, the newer piece first: direct-mapped, o200k's warm pass over the bench text
// merged about 900 pieces again that had only been pushed out by another of their slot (4,995 ->
// 4,102 merges a pass with two ways; bench/RESULTS.md, issue 44). Not thread-safe: each thread
// owns its cache (BpeTokenizer keeps them thread_local).
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace stoker {

class LongPieceCache {
 public:
  static constexpr size_t kMaxBytes = 64;
  static constexpr size_t kMaxIds = 14;
  // 32768 entries of 128 bytes (16384 sets of 2): 4 MiB. o200k on the bench text has 7,000
  // distinct pieces for this cache (17-64 bytes, or up to 16 bytes of more than
  // PieceCache::kMaxIds ids); at 8192 entries they evicted each other (warm pass 72 ms -> 60 ms at
  // 32768, 62-65 ms at 16384; session 37).
  static constexpr int kSetBits = 14;
  static constexpr size_t kWays = 2;

  // The cache of the calling thread for the tokenizer `owner` (emptied when the owner changes).
  static LongPieceCache* ForThread(uint64_t owner) {
    thread_local std::unique_ptr<LongPieceCache> cache;
    if (!cache) cache = std::make_unique<LongPieceCache>();
    if (cache->owner_ != owner) {
      for (Entry& e : cache->entries_) e.len = 0;
      cache->owner_ = owner;
    }
    return cache.get();
  }

  LongPieceCache() : entries_(kWays << kSetBits) {}

  bool Lookup(std::string_view piece, std::vector<int32_t>* ids) const {
    if (piece.size() > kMaxBytes) return false;
    const Entry* set = &entries_[Set(piece) * kWays];
    for (size_t w = 0; w < kWays; ++w) {
      const Entry& e = set[w];
      if (e.len == piece.size() && std::memcmp(e.bytes, piece.data(), piece.size()) == 0) {
        ids->insert(ids->end(), e.ids, e.ids + e.count);
        return true;
      }
    }
    return false;
  }
  // Keeps `piece` first in its set; the set's older pieces move down a way, the oldest is dropped.
  void Insert(std::string_view piece, const int32_t* id, size_t count) {
    if (piece.size() > kMaxBytes || piece.empty() || count == 0 || count > kMaxIds) return;
    Entry* set = &entries_[Set(piece) * kWays];
    for (size_t w = kWays - 1; w > 0; --w) set[w] = set[w - 1];
    Entry& e = set[0];
    e.len = static_cast<uint8_t>(piece.size());
    e.count = static_cast<uint8_t>(count);
    std::memcpy(e.bytes, piece.data(), piece.size());
    std::memcpy(e.ids, id, count * sizeof(int32_t));
  }

  // The set that `piece` goes to (public for the tests).
  static size_t Set(std::string_view piece) {
    return static_cast<size_t>(XXH3_64bits(piece.data(), piece.size()) >> (64 - kSetBits));
  }

 private:
  struct Entry {
    uint8_t len = 0;  // 0 = empty
    uint8_t count = 0;
    char bytes[kMaxBytes];
    int32_t ids[kMaxIds];
  };

  std::vector<Entry> entries_;
  uint64_t owner_ = 0;
};

}  // namespace stoker
