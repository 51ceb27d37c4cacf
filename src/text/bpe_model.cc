#include "text/bpe_model.h"

#include <xxhash.h>

#include <algorithm>
#include <queue>
#include <thread>

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

uint64_t TableSize(size_t entries) {
  uint64_t n = 16;
  while (n < entries * 2) n <<= 1;
  return n;
}

}  // namespace

void BpeModel::BuildIndex() {
  uint64_t n = TableSize(tokens_.size());
  slots_.assign(n, kEmptySlot);
  slot_mask_ = n - 1;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& t = tokens_[id];
    if (t.empty()) continue;
    if (t.size() == 1) {
      int32_t& b = byte_ids_[static_cast<uint8_t>(t[0])];
      if (b < 0) b = static_cast<int32_t>(id);
    }
    if (Find(t) >= 0) continue;  // a duplicate keeps the first (lowest) id
    uint64_t h = HashBytes(t);
    uint64_t at = h & slot_mask_;
    while (slots_[at] != kEmptySlot) at = (at + 1) & slot_mask_;
    slots_[at] = (h & kTagMask) | static_cast<uint32_t>(id);
  }
}

// The slot holds the hash's high 32 bits beside the id, so a probe past another token (or a
// piece that is not a token at all) is decided without reading that token's bytes.
int32_t BpeModel::Find(std::string_view piece) const { return FindHashed(piece, HashBytes(piece)); }

int32_t BpeModel::FindHashed(std::string_view piece, uint64_t h) const {
  for (uint64_t at = h & slot_mask_;; at = (at + 1) & slot_mask_) {
    uint64_t slot = slots_[at];
    if (slot == kEmptySlot) return -1;
    if ((slot & kTagMask) == (h & kTagMask)) {
      int32_t id = static_cast<int32_t>(static_cast<uint32_t>(slot));
      if (tokens_[static_cast<size_t>(id)] == piece) return id;
    }
  }
}

void BpeModel::InsertPair(int32_t left, int32_t right, uint32_t rank, int32_t merged) {
  uint64_t key =
      ((static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right)) +
      1;
  uint64_t h = HashPair(key) & pair_mask_;
  while (pairs_[h].key != 0) {
    if (pairs_[h].key == key) {
      if (rank < pairs_[h].rank) pairs_[h] = {key, rank, merged};  // the first merge line wins
      return;
    }
    h = (h + 1) & pair_mask_;
  }
  pairs_[h] = {key, rank, merged};
}

bool BpeModel::FindPair(int32_t left, int32_t right, uint32_t* rank, int32_t* merged) const {
  uint64_t key =
      ((static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right)) +
      1;
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

Result<BpeModel> BpeModel::Build(std::vector<std::string> tokens,
                                 const std::vector<Merge>& merges) {
  BpeModel m;
  m.tokens_ = std::move(tokens);
  m.BuildIndex();
  uint64_t n = TableSize(merges.size());
  m.pairs_.assign(n, PairSlot{});
  m.pair_mask_ = n - 1;
  const int64_t size = static_cast<int64_t>(m.tokens_.size());
  for (const Merge& g : merges) {
    if (g.left < 0 || g.right < 0 || g.merged < 0 || g.left >= size || g.right >= size ||
        g.merged >= size) {
      return InvalidArgument("merge " + std::to_string(g.rank) + " names an id out of range");
    }
    if (m.tokens_[g.merged] != m.tokens_[g.left] + m.tokens_[g.right]) {
      return InvalidArgument("merge " + std::to_string(g.rank) +
                             ": the merged token's bytes are not the pair's bytes");
    }
    m.InsertPair(g.left, g.right, g.rank, g.merged);
  }
  return m;
}

// Every split of every token into two tokens. The lookups are memory-bound (a miss into the
// slot table each), so the hashes of a token's prefixes and suffixes are computed and their
// slots prefetched before any is probed: loading cl100k took 20-30% longer with one lookup at a
// time.
void BpeModel::FindRankMerges(size_t first_id, size_t last_id, std::vector<Merge>* merges) const {
  constexpr size_t kBatch = 64;
  uint64_t prefix_hash[kBatch], suffix_hash[kBatch];
  for (size_t id = first_id; id < last_id; ++id) {
    const std::string_view t = tokens_[id];
    if (t.size() < 2 || Find(t) != static_cast<int32_t>(id)) continue;
    for (size_t first = 1; first < t.size(); first += kBatch) {
      const size_t last = std::min(t.size(), first + kBatch);
      for (size_t k = first; k < last; ++k) {
        prefix_hash[k - first] = HashBytes(t.substr(0, k));
        suffix_hash[k - first] = HashBytes(t.substr(k));
        __builtin_prefetch(&slots_[prefix_hash[k - first] & slot_mask_]);
        __builtin_prefetch(&slots_[suffix_hash[k - first] & slot_mask_]);
      }
      for (size_t k = first; k < last; ++k) {
        int32_t l = FindHashed(t.substr(0, k), prefix_hash[k - first]);
        int32_t r = l >= 0 ? FindHashed(t.substr(k), suffix_hash[k - first]) : -1;
        if (r >= 0) merges->push_back({l, r, static_cast<uint32_t>(id), static_cast<int32_t>(id)});
      }
    }
  }
}

Result<BpeModel> BpeModel::BuildFromRanks(std::vector<std::string> tokens, int threads) {
  BpeModel m;
  m.tokens_ = std::move(tokens);
  m.BuildIndex();
  for (int b = 0; b < 256; ++b) {
    if (m.byte_ids_[b] < 0) {
      return InvalidArgument("the vocabulary has no token for the single byte " +
                             std::to_string(b) + " (every byte must be a token)");
    }
  }
  // The ids in `parts` ranges, one per thread (the calling thread takes the first); the pair
  // table is then filled on this thread (the order of merges does not matter: the lowest rank
  // wins a slot).
  size_t parts = threads > 0 ? static_cast<size_t>(threads)
                             : std::max<size_t>(1, std::thread::hardware_concurrency());
  parts = std::min<size_t>({parts, 16, std::max<size_t>(1, m.tokens_.size() / 4096)});
  std::vector<std::vector<Merge>> merges(parts);
  {
    const size_t n = m.tokens_.size();
    std::vector<std::thread> helpers;
    for (size_t p = 1; p < parts; ++p) {
      helpers.emplace_back([&m, &merges, p, parts, n] {
        m.FindRankMerges(n * p / parts, n * (p + 1) / parts, &merges[p]);
      });
    }
    merges[0].reserve(n * 4 / parts);
    m.FindRankMerges(0, n / parts, &merges[0]);
    for (auto& h : helpers) h.join();
  }
  size_t total = 0;
  for (const auto& part : merges) total += part.size();
  uint64_t n = TableSize(total);
  m.pairs_.assign(n, PairSlot{});
  m.pair_mask_ = n - 1;
  for (const auto& part : merges) {
    for (const Merge& g : part) m.InsertPair(g.left, g.right, g.rank, g.merged);
  }
  return m;
}

void BpeModel::EncodePiece(std::string_view piece, std::vector<int32_t>* ids) const {
  if (piece.empty()) return;
  thread_local std::vector<int32_t> syms;
  syms.clear();
  bool last_unk = false;
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
