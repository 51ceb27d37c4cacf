#include "text/bpe_model.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <queue>
#include <thread>

#include "common/env.h"

namespace stoker {
namespace {

constexpr uint32_t kNoRank = UINT32_MAX;

uint64_t HashBytes(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

uint64_t HashPair(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key;
}

// A pair's key in the pair table (0 is the empty slot).
uint64_t PairKey(int32_t left, int32_t right) {
  return ((static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
          static_cast<uint32_t>(right)) +
         1;
}

uint64_t TableSize(size_t entries) {
  uint64_t n = 16;
  while (n < entries * 2) n <<= 1;
  return n;
}

// TokenBytes holds 32-bit offsets.
Status CheckTotalBytes(const std::vector<std::string>& tokens) {
  uint64_t total = 0;
  for (const std::string& t : tokens) total += t.size();
  if (total > UINT32_MAX) {
    return InvalidArgument("the vocabulary's tokens add up to " + std::to_string(total) +
                           " bytes, more than 4 GiB");
  }
  return Status::OK();
}

}  // namespace

void RunParts(size_t parts, FunctionRef<void(size_t)> fn) {
  std::vector<std::thread> helpers;
  for (size_t p = 1; p < parts; ++p) helpers.emplace_back([fn, p] { fn(p); });
  fn(0);
  for (auto& h : helpers) h.join();
}

bool BpeModel::BuildIndex(size_t parts) {
  const uint64_t n = TableSize(tokens_.size());
  slots_ = ZeroedArray<uint64_t>(n);
  slot_mask_ = n - 1;
  std::vector<std::vector<int32_t>> bytes(parts, std::vector<int32_t>(256, -1));
  std::vector<size_t> unique(parts, 0);
  const size_t size = tokens_.size();
  RunParts(parts, [&](size_t p) {
    unique[p] = IndexRange(size * p / parts, size * (p + 1) / parts, bytes[p].data());
  });
  for (int b = 0; b < 256; ++b) {  // the lowest id of each byte: the first part that has one
    for (size_t p = 0; p < parts && byte_ids_[b] < 0; ++p) byte_ids_[b] = bytes[p][b];
  }
  size_t non_empty = 0, slots_taken = 0;
  for (size_t id = 0; id < size; ++id) non_empty += tokens_[id].empty() ? 0 : 1;
  for (size_t u : unique) slots_taken += u;
  return slots_taken != non_empty;
}

// Slots are claimed by compare-and-swap, also on one thread. A token's bytes always probe the
// same sequence of slots and a slot never loses its bytes, so two equal tokens meet in one slot,
// where the lower id wins (a duplicate keeps the first id, as with one thread). The first access
// to a slot is the swap, a write: a read first would map the kernel's shared zero page for a
// fresh page of the table and then copy it on the write, with a TLB flush on every core the
// process runs on (measured: a fifth of loading cl100k went to such faults).
size_t BpeModel::IndexRange(size_t first, size_t last, int32_t* byte_ids) {
  size_t taken = 0;  // empty slots this call filled
  for (size_t id = first; id < last; ++id) {
    const std::string_view t = tokens_[id];
    if (t.empty()) continue;
    if (t.size() == 1 && byte_ids[static_cast<uint8_t>(t[0])] < 0) {
      byte_ids[static_cast<uint8_t>(t[0])] = static_cast<int32_t>(id);
    }
    const uint64_t h = HashBytes(t);
    const uint64_t mine = (h & kTagMask) | (id + 1);
    for (uint64_t at = h & slot_mask_;; at = (at + 1) & slot_mask_) {
      std::atomic_ref<uint64_t> slot(slots_[at]);
      uint64_t cur = 0;  // the likely case: an empty slot
      bool placed = false, next = false;
      while (!placed && !next) {
        const bool same = cur != 0 && (cur & kTagMask) == (h & kTagMask) &&
                          tokens_[static_cast<uint32_t>(cur) - 1] == t;
        if (cur != 0 && !same) {
          next = true;
        } else if (same && static_cast<uint32_t>(cur) - 1 < id) {
          placed = true;  // the same bytes with a lower id
        } else {          // empty, or the same bytes with a higher id: take it unless it changed
          const bool was_empty = cur == 0;
          placed = slot.compare_exchange_weak(cur, mine, std::memory_order_relaxed);
          taken += placed && was_empty ? 1 : 0;
        }
      }
      if (placed) break;
    }
  }
  return taken;
}

// The slot holds the hash's high 32 bits beside the id, so a probe past another token (or a
// piece that is not a token at all) is decided without reading that token's bytes.
int32_t BpeModel::Find(std::string_view piece) const { return FindHashed(piece, HashBytes(piece)); }

int32_t BpeModel::FindHashed(std::string_view piece, uint64_t h) const {
  for (uint64_t at = h & slot_mask_;; at = (at + 1) & slot_mask_) {
    uint64_t slot = slots_[at];
    if (slot == 0) return -1;
    if ((slot & kTagMask) == (h & kTagMask)) {
      int32_t id = static_cast<int32_t>(static_cast<uint32_t>(slot) - 1);
      if (tokens_[static_cast<size_t>(id)] == piece) return id;
    }
  }
}

bool BpeModel::MarkerCutIsExact(std::string_view marker) const {
  if (marker.empty() || Find(marker) < 0) return false;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string_view t = tokens_[id];
    for (size_t at = t.find(marker, 1); at != std::string_view::npos; at = t.find(marker, at + 1)) {
      if (at < marker.size() || t.substr(at - marker.size(), marker.size()) != marker) {
        return false;
      }
    }
  }
  return true;
}

// Claims an empty slot's key by compare-and-swap (a write first, as in IndexRange); rank and
// merged are read only after the threads are joined. A key already there is a merge listed twice
// (tokenizer.json, one thread): the first line wins. Concurrent callers never share a key.
void BpeModel::InsertPair(int32_t left, int32_t right, uint32_t rank, int32_t merged) {
  const uint64_t key = PairKey(left, right);
  for (uint64_t h = HashPair(key) & pair_mask_;; h = (h + 1) & pair_mask_) {
    uint64_t expected = 0;
    if (std::atomic_ref<uint64_t>(pairs_[h].key)
            .compare_exchange_strong(expected, key, std::memory_order_relaxed)) {
      pairs_[h].rank = rank;
      pairs_[h].merged = merged;
      return;
    }
    if (expected == key) {
      if (rank < pairs_[h].rank) pairs_[h] = {key, rank, merged};
      return;
    }
  }
}

bool BpeModel::FindPair(int32_t left, int32_t right, uint32_t* rank, int32_t* merged) const {
  const uint64_t key = PairKey(left, right);
  uint64_t h = HashPair(key) & pair_mask_;
  while (true) {
    const PairSlot& s = pairs_[h];
    if (s.key == key) {
      *rank = s.rank;
      *merged = s.merged;
      return true;
    }
    if (s.key == 0) return false;
    h = (h + 1) & pair_mask_;
  }
}

Result<BpeModel> BpeModel::Build(const std::vector<std::string>& tokens,
                                 const std::vector<Merge>& merges) {
  STOKER_RETURN_IF_ERROR(CheckTotalBytes(tokens));
  BpeModel m;
  m.tokens_ = TokenBytes(tokens);
  m.BuildIndex(1);
  uint64_t n = TableSize(merges.size());
  m.pairs_ = ZeroedArray<PairSlot>(n);
  m.pair_mask_ = n - 1;
  const int64_t size = static_cast<int64_t>(m.tokens_.size());
  for (const Merge& g : merges) {
    if (g.left < 0 || g.right < 0 || g.merged < 0 || g.left >= size || g.right >= size ||
        g.merged >= size) {
      return InvalidArgument("merge " + std::to_string(g.rank) + " names an id out of range");
    }
    const std::string_view merged = m.tokens_[g.merged], left = m.tokens_[g.left];
    if (merged.size() != left.size() + m.tokens_[g.right].size() || !merged.starts_with(left) ||
        !merged.ends_with(m.tokens_[g.right])) {
      return InvalidArgument("merge " + std::to_string(g.rank) +
                             ": the merged token's bytes are not the pair's bytes");
    }
  }
  m.InsertPairs(merges);
  return m;
}

// Every split of every token into two tokens. The lookups are memory-bound (a miss into the
// slot table each), so they go in windows: the hashes of the prefixes and suffixes of a run of
// tokens are computed and their slots prefetched, then the window is probed, its first slots
// now in the cache. Loading cl100k took 20-30% longer with one lookup at a time, and about 15%
// longer with a window of one token. With `duplicates` (two ids with the same bytes), only the
// id that Find returns splits; without, that check is skipped.
void BpeModel::FindRankMerges(size_t first_id, size_t last_id, bool duplicates,
                              std::vector<Merge>* merges) const {
  struct Split {
    uint64_t prefix_hash, suffix_hash;
    uint32_t id, at;  // tokens_[id] split before byte `at`
  };
  constexpr size_t kWindow = 96;  // splits: about 16 tokens of cl100k
  std::vector<Split> window;
  window.reserve(2 * kWindow);
  for (size_t id = first_id; id < last_id;) {
    window.clear();
    for (; id < last_id && window.size() < kWindow; ++id) {
      const std::string_view t = tokens_[id];
      if (t.size() < 2 || (duplicates && Find(t) != static_cast<int32_t>(id))) continue;
      for (size_t k = 1; k < t.size(); ++k) {
        const uint64_t ph = HashBytes(t.substr(0, k)), sh = HashBytes(t.substr(k));
        __builtin_prefetch(&slots_[ph & slot_mask_]);
        __builtin_prefetch(&slots_[sh & slot_mask_]);
        window.push_back({ph, sh, static_cast<uint32_t>(id), static_cast<uint32_t>(k)});
      }
    }
    for (const Split& s : window) {
      const std::string_view t = tokens_[s.id];
      const int32_t l = FindHashed(t.substr(0, s.at), s.prefix_hash);
      const int32_t r = l >= 0 ? FindHashed(t.substr(s.at), s.suffix_hash) : -1;
      if (r >= 0) merges->push_back({l, r, s.id, static_cast<int32_t>(s.id)});
    }
  }
}

// Three steps, each over `parts` ranges of ids on as many threads: index the tokens, find every
// pair, file the pairs. A pair's key is unique here (its bytes make one token, and a token's
// split point fixes the pair), so the threads filing pairs never race for one key.
Result<BpeModel> BpeModel::BuildFromRanks(const std::vector<std::string>& tokens, int threads) {
  STOKER_RETURN_IF_ERROR(CheckTotalBytes(tokens));
  return BuildFromRanks(TokenBytes(tokens), threads);
}

Result<BpeModel> BpeModel::BuildFromRanks(TokenBytes tokens, int threads) {
  size_t parts = static_cast<size_t>(threads > 0 ? threads : DefaultThreadsPerRank());
  parts = std::min<size_t>({parts, 16, std::max<size_t>(1, tokens.size() / 4096)});
  BpeModel m;
  m.tokens_ = std::move(tokens);
  const bool duplicates = m.BuildIndex(parts);
  for (int b = 0; b < 256; ++b) {
    if (m.byte_ids_[b] < 0) {
      return InvalidArgument("the vocabulary has no token for the single byte " +
                             std::to_string(b) + " (every byte must be a token)");
    }
  }
  const size_t n = m.tokens_.size();
  std::vector<std::vector<Merge>> merges(parts);
  RunParts(parts, [&](size_t p) {
    merges[p].reserve((n / parts) * 4);
    m.FindRankMerges(n * p / parts, n * (p + 1) / parts, duplicates, &merges[p]);
  });
  size_t total = 0;
  for (const auto& part : merges) total += part.size();
  const uint64_t slots = TableSize(total);
  m.pairs_ = ZeroedArray<PairSlot>(slots);
  m.pair_mask_ = slots - 1;
  RunParts(parts, [&](size_t p) { m.InsertPairs(merges[p]); });
  return m;
}

// The inserts miss the cache (a random slot each): the slot 16 merges ahead is prefetched.
void BpeModel::InsertPairs(std::span<const Merge> merges) {
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < merges.size(); ++i) {
    if (i + kAhead < merges.size()) {
      const Merge& a = merges[i + kAhead];
      __builtin_prefetch(&pairs_[HashPair(PairKey(a.left, a.right)) & pair_mask_], 1);
    }
    const Merge& g = merges[i];
    InsertPair(g.left, g.right, g.rank, g.merged);
  }
}

// A merge joins two symbols into a token that holds both, so a character that no merged token
// holds is never joined to anything. The unk rule must not see the cut either: the character is
// its own token (which ends an unk run), or byte fallback covers every byte (no character is
// ever unk).
void BpeModel::FindIsolated() {
  has_isolated_ = false;
  std::fill(std::begin(isolated_), std::end(isolated_), false);
  if (!char_symbols_) return;
  bool merged[128] = {};
  for (uint64_t h = 0; pair_mask_ != 0 && h <= pair_mask_; ++h) {  // mask 0: no table yet
    if (pairs_[h].key == 0) continue;
    for (char b : tokens_[static_cast<size_t>(pairs_[h].merged)]) {
      if (static_cast<uint8_t>(b) < 0x80) merged[static_cast<uint8_t>(b)] = true;
    }
  }
  bool full_fallback = fallback_ids_.size() == 256;
  for (int32_t id : fallback_ids_) full_fallback = full_fallback && id >= 0;
  for (int c = 0; c < 128; ++c) {
    isolated_[c] = !merged[c] && (byte_ids_[static_cast<size_t>(c)] >= 0 || full_fallback);
    has_isolated_ = has_isolated_ || isolated_[c];
  }
}

// tokenizers' BPE::merge_word: a character's token, else its bytes' tokens (byte_fallback, when
// every one exists), else unk, a run of them fused into one with fuse_unk. (SentencePiece's BPE
// does the same: an unknown character becomes its bytes, or one unk per run of them.)
void BpeModel::CharSymbols(std::string_view piece, std::vector<int32_t>* syms) const {
  bool last_unk = false;
  for (size_t i = 0; i < piece.size();) {
    const uint8_t c = static_cast<uint8_t>(piece[i]);
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    const std::string_view ch = piece.substr(i, len);
    i += len;
    const int32_t id = len == 1 ? byte_ids_[c] : Find(ch);
    if (id >= 0) {
      syms->push_back(id);
      last_unk = false;
      continue;
    }
    if (!fallback_ids_.empty()) {
      bool all = true;
      for (char b : ch) all = all && fallback_ids_[static_cast<uint8_t>(b)] >= 0;
      if (all) {
        for (char b : ch) syms->push_back(fallback_ids_[static_cast<uint8_t>(b)]);
        continue;  // as tokenizers: a pending unk run is not ended by fallback bytes
      }
    }
    if (unk_id_ >= 0 && !(fuse_unk_ && last_unk)) syms->push_back(unk_id_);
    last_unk = unk_id_ >= 0;
  }
}

void BpeModel::EncodePiece(std::string_view piece, std::vector<int32_t>* ids) const {
  if (piece.empty()) return;
  thread_local std::vector<int32_t> syms;
  syms.clear();
  bool last_unk = false;
  if (char_symbols_) {
    CharSymbols(piece, &syms);
    piece = {};
  }
  for (char c : piece) {
    int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id < 0) {
      if (unk_id_ >= 0 && !(fuse_unk_ && last_unk)) syms.push_back(unk_id_);
      last_unk = true;
      continue;
    }
    last_unk = false;
    syms.push_back(id);
  }
  if (syms.size() <= 1) {
    ids->insert(ids->end(), syms.begin(), syms.end());
  } else if (syms.size() <= kSmallPiece) {
    MergeSmall(syms, ids);
  } else {
    MergeLarge(syms, ids);
  }
}

// tiktoken's loop: a rank per adjacent pair; merge the lowest (leftmost on ties); update the two
// neighbours. O(n^2) but n is small and everything is in one cache line or two.
void BpeModel::MergeSmall(std::vector<int32_t>& syms, std::vector<int32_t>* ids) const {
  size_t n = syms.size();
  uint32_t ranks[kSmallPiece];
  int32_t merged[kSmallPiece];
  for (size_t i = 0; i + 1 < n; ++i) {
    if (!FindPair(syms[i], syms[i + 1], &ranks[i], &merged[i])) ranks[i] = kNoRank;
  }
  while (n > 1) {
    uint32_t best = kNoRank;
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
      if (ranks[i] < best) {
        best = ranks[i];
        at = i;
      }
    }
    if (best == kNoRank) break;
    syms[at] = merged[at];
    for (size_t i = at + 1; i + 1 < n; ++i) {
      syms[i] = syms[i + 1];
      ranks[i] = ranks[i + 1];
      merged[i] = merged[i + 1];
    }
    --n;
    if (at + 1 < n && !FindPair(syms[at], syms[at + 1], &ranks[at], &merged[at])) {
      ranks[at] = kNoRank;
    }
    if (at > 0 && !FindPair(syms[at - 1], syms[at], &ranks[at - 1], &merged[at - 1])) {
      ranks[at - 1] = kNoRank;
    }
  }
  ids->insert(ids->end(), syms.begin(), syms.begin() + static_cast<ptrdiff_t>(n));
}

// A doubly linked list of symbols and a min-heap of (rank, position) candidates. A popped
// candidate is stale when its left symbol was merged away or its pair no longer yields the same
// token; the order of valid pops is exactly the flat scan's (lowest rank, then leftmost).
void BpeModel::MergeLarge(std::vector<int32_t>& syms, std::vector<int32_t>* ids) const {
  struct Cand {
    uint32_t rank;
    uint32_t pos;
    int32_t merged;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  const uint32_t n = static_cast<uint32_t>(syms.size());
  std::vector<uint32_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  std::vector<Cand> heap_storage;
  heap_storage.reserve(n);
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap(std::greater<Cand>(),
                                                                        std::move(heap_storage));
  for (uint32_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = i == 0 ? UINT32_MAX : i - 1;
  }
  auto push = [&](uint32_t i) {
    if (i == UINT32_MAX || next[i] >= n) return;
    uint32_t rank;
    int32_t m;
    if (FindPair(syms[i], syms[next[i]], &rank, &m)) heap.push({rank, i, m});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    if (!alive[c.pos] || next[c.pos] >= n) continue;
    uint32_t rank;
    int32_t m;
    if (!FindPair(syms[c.pos], syms[next[c.pos]], &rank, &m) || rank != c.rank || m != c.merged) {
      continue;
    }
    uint32_t right = next[c.pos];
    syms[c.pos] = m;
    alive[right] = false;
    next[c.pos] = next[right];
    if (next[right] < n) prev[next[right]] = c.pos;
    push(prev[c.pos]);
    push(c.pos);
  }
  for (uint32_t i = 0; i < n; i = next[i]) ids->push_back(syms[i]);
}

}  // namespace stoker
