#include "text/unigram_model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "text/long_piece_cache.h"
#include "text/piece_cache.h"

namespace stoker {
namespace {

// One cell of the lattice: the best path ending at this byte.
template <typename Score>
struct UnigramBest {
  Score score;
  int32_t start;  // -1: no path yet
  int32_t id;
};

// The lattice cell of a word that may be cached: also the best score among the candidates that
// lost (lowest(): none).
struct UnigramBestMargin {
  float score;
  int32_t start;
  int32_t id;
  float second;
};

// Per-thread lattice, reused across calls (one per arithmetic).
template <typename Cell>
std::vector<Cell>& UnigramLattice() {
  thread_local std::vector<Cell> lattice;
  return lattice;
}

// PyPI sentencepiece 0.2.3 keeps the float scores small on long texts: once the path to a
// character start leaves [-1e5, 1e5], it subtracts that score (in float) from every reached cell
// from there to the furthest one reached.
constexpr float kScoreResetThreshold = 100000.0f;

// Owners of the per-thread word caches: the top bit keeps them apart from BpeTokenizer's.
std::atomic<uint64_t> unigram_next_owner{1};

// The rounding a word's scores can carry: a cell's float score is at most one addition per
// character (at most one per byte) from the word's start, each rounded by at most half an ulp,
// 2^-8 below 2^17 (> 1e5 plus a word). Run from two starting scores, two compared scores move by
// at most 2 * 2 * (bytes + 1) * 2^-8 against each other: a comparison decided by more than this
// (and a little for the rounding of the difference) is decided the same way from any start.
float WordMargin(size_t bytes) { return static_cast<float>(4 * bytes + 8) / 256.0f; }

bool IsSpaceMark(std::string_view text, size_t i) {  // "▁" (U+2581) at byte i
  return text[i] == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x96' && text[i + 2] == '\x81';
}

}  // namespace

UnigramModel UnigramModel::Build(const std::vector<Piece>& pieces, int32_t unk_id, double min_score,
                                 Arithmetic arithmetic) {
  UnigramModel m;
  m.unk_id_ = unk_id;
  m.arithmetic_ = arithmetic;
  // SentencePiece: `min_score() - kUnkPenalty` in float; tokenizers: in f64.
  m.unk_score_ = arithmetic == Arithmetic::kSentencePiece
                     ? static_cast<double>(static_cast<float>(min_score) - 10.0f)
                     : min_score - 10.0;
  m.score_.resize(pieces.size());
  m.length_.resize(pieces.size());
  m.words_ = arithmetic == Arithmetic::kSentencePiece;
  std::vector<std::pair<std::string_view, int32_t>> keys;
  keys.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    m.length_[i] = static_cast<uint32_t>(p.text.size());
    if (p.kind == Kind::kSkip || p.text.empty()) continue;
    keys.emplace_back(p.text, static_cast<int32_t>(i));
    if (p.text.find("\xE2\x96\x81", 1) != std::string_view::npos) m.words_ = false;
    if (p.kind == Kind::kUserDefined) {
      // GetUserDefinedScore in PyPI sentencepiece 0.2.3: `0.1 * (length - 1)` in double,
      // returned as float (length in bytes).
      m.score_[i] = static_cast<double>(
          static_cast<float>(0.1 * static_cast<double>(static_cast<int>(p.text.size()) - 1)));
    } else {
      m.score_[i] = static_cast<double>(p.score);
    }
  }
  m.max_abs_score_ = std::fabs(static_cast<float>(m.unk_score_));
  for (const auto& [text, id] : keys) {
    m.max_piece_bytes_ = std::max(m.max_piece_bytes_, text.size());
    const float s = std::fabs(static_cast<float>(m.score_[static_cast<size_t>(id)]));
    m.max_abs_score_ = std::max(m.max_abs_score_, s);
  }
  m.score_f_.assign(m.score_.begin(), m.score_.end());  // exact for a `.model`'s float scores
  m.trie_ = PieceTrie::Build(std::move(keys));
  m.cache_owner_ = (uint64_t{1} << 63) | unigram_next_owner.fetch_add(1);
  return m;
}

template <typename Score, bool kMargin>
Score UnigramModel::Viterbi(std::string_view text, uint32_t offset, Score base,
                            std::vector<Span>* out, float* margin) const {
  const size_t n = text.size();
  using Cell = std::conditional_t<kMargin, UnigramBestMargin, UnigramBest<Score>>;
  std::vector<Cell>& best = UnigramLattice<Cell>();
  if constexpr (kMargin) {
    best.assign(n + 1, Cell{0, -1, -1, std::numeric_limits<float>::lowest()});
  } else {
    best.assign(n + 1, Cell{0, -1, -1});
  }
  best[0].score = base;
  const Score unk_score = static_cast<Score>(unk_score_);
  const Score* score = nullptr;
  if constexpr (std::is_same_v<Score, float>) {
    score = score_f_.data();
  } else {
    score = score_.data();
  }
  auto offer = [&](Cell& target, Score candidate, size_t start, int32_t id) {
    if (target.start < 0 || candidate > target.score) {
      if constexpr (kMargin) {
        if (target.start >= 0) target.second = std::max(target.second, target.score);
      }
      target.score = candidate;
      target.start = static_cast<int32_t>(start);
      target.id = id;
    } else if constexpr (kMargin) {
      target.second = std::max(target.second, candidate);
    }
  };
  // No path reaches past start + reach (the longest piece, or an unknown character).
  const size_t reach = std::max<size_t>(max_piece_bytes_, 4);
  size_t start = 0;
  while (start < n) {
    Score here = best[start].score;
    if constexpr (std::is_same_v<Score, float>) {
      // The rebasing (kScoreResetThreshold): cells past start + reach are unreached, so stopping
      // there visits the same ones. The rounding this changes decides ties on long texts.
      if (here < -kScoreResetThreshold || here > kScoreResetThreshold) {
        const float shift = here;
        const size_t last = std::min(n, start + reach);
        for (size_t i = start; i <= last; ++i) {
          if (i == start || best[i].start >= 0) best[i].score -= shift;
        }
        here = 0.0f;
      }
    }
    const size_t mblen = std::min(SpCharLength(static_cast<uint8_t>(text[start])), n - start);
    bool has_single = false;
    trie_.ForEachPrefix(text.substr(start), [&](size_t length, int32_t id) {
      // In Score's arithmetic (float for SentencePiece: a score is a float).
      offer(best[start + length], score[id] + here, start, id);
      has_single |= length == mblen;
    });
    if (!has_single) offer(best[start + mblen], unk_score + here, start, unk_id_);
    start += mblen;
  }
  size_t count = 0;
  for (size_t end = n; end > 0; end = static_cast<size_t>(best[end].start)) ++count;
  const size_t first = out->size();
  out->resize(first + count);
  Span* span = out->data() + first + count;
  for (size_t end = n; end > 0;) {
    const Cell& node = best[end];
    if constexpr (kMargin) {
      // Only the cells of the path decide the ids (any cell's score is within the rounding of
      // its exact value whichever candidate won it): how far each path cell's winner is ahead.
      *margin = std::min(*margin, node.score - node.second);
    }
    *--span = {static_cast<uint32_t>(node.start) + offset, static_cast<uint32_t>(end) + offset,
               node.id};
    end = static_cast<size_t>(node.start);
  }
  return best[n].score;
}

void UnigramModel::EncodeWords(std::string_view text, std::vector<Span>* out) const {
  PieceCache* cache = PieceCache::ForThread(cache_owner_);
  LongPieceCache* long_cache = nullptr;
  thread_local std::vector<int32_t> ids;
  const float unk_score = static_cast<float>(unk_score_);
  const size_t n = text.size();
  float here = 0.0f;
  size_t p = 0;
  while (p < n) {
    // The word: from p to the next "▁" at a character start (the starts Viterbi visits).
    size_t q = p + SpCharLength(static_cast<uint8_t>(text[p]));
    while (q < n && !IsSpaceMark(text, q)) q += SpCharLength(static_cast<uint8_t>(text[q]));
    q = std::min(q, n);
    const std::string_view word = text.substr(p, q - p);
    // No cell past p is reached yet: rebasing at p resets the path's score alone.
    if (here < -kScoreResetThreshold || here > kScoreResetThreshold) here = 0.0f;
    // Whether no cell of the word can leave [-1e5, 1e5] (so none is rebased), and the word is
    // short enough to cache.
    const bool cacheable = word.size() <= LongPieceCache::kMaxBytes &&
                           std::fabs(here) + static_cast<float>(word.size()) * max_abs_score_ <
                               0.99f * kScoreResetThreshold;
    ids.clear();
    if (cacheable) {
      bool hit = word.size() <= PieceCache::kMaxBytes && cache->Lookup(word, &ids);
      if (!hit) {
        if (long_cache == nullptr) long_cache = LongPieceCache::ForThread(cache_owner_);
        hit = long_cache->Lookup(word, &ids);
      }
      if (hit) {
        uint32_t at = static_cast<uint32_t>(p);
        for (const int32_t id : ids) {
          const bool unk = id == unk_id_;
          const uint32_t length = unk ? static_cast<uint32_t>(std::min(
                                            SpCharLength(static_cast<uint8_t>(text[at])), q - at))
                                      : length_[static_cast<size_t>(id)];
          out->push_back({at, at + length, id});
          here = (unk ? unk_score : score_f_[static_cast<size_t>(id)]) + here;
          at += length;
        }
        p = q;
        continue;
      }
    }
    const size_t first = out->size();
    float margin = std::numeric_limits<float>::max();
    here = Viterbi<float, true>(word, static_cast<uint32_t>(p), here, out, &margin);
    if (cacheable && margin > WordMargin(word.size())) {
      for (size_t k = first; k < out->size(); ++k) ids.push_back((*out)[k].id);
      if (word.size() <= PieceCache::kMaxBytes && ids.size() <= PieceCache::kMaxIds) {
        cache->Insert(word, ids.data(), ids.size());
      } else {
        if (long_cache == nullptr) long_cache = LongPieceCache::ForThread(cache_owner_);
        long_cache->Insert(word, ids.data(), ids.size());
      }
    }
    p = q;
  }
}

void UnigramModel::Encode(std::string_view text, std::vector<Span>* out) const {
  out->clear();
  if (arithmetic_ == Arithmetic::kTokenizers) {
    Viterbi<double, false>(text, 0, 0.0, out, nullptr);
  } else if (!words_) {
    Viterbi<float, false>(text, 0, 0.0f, out, nullptr);
  } else {
    EncodeWords(text, out);
  }
}

}  // namespace stoker
