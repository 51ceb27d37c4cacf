#include "text/unigram_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace stoker {
namespace {

// The best path ending at a byte of the text: its last piece starts at the low 32 bits and is
// the id in the high 32 bits (one 64-bit word, so that a relaxation selects it without a branch).
using UnigramLink = uint64_t;
inline UnigramLink MakeUnigramLink(size_t start, int32_t id) {
  return static_cast<uint32_t>(start) | static_cast<uint64_t>(static_cast<uint32_t>(id)) << 32;
}

// The path to `end` becomes `candidate` through `l` if strictly better (on a tie the path whose
// last piece starts first stays), with selects rather than a branch: which path wins is data,
// and a mispredicted branch here waited for the node, score and cell loads to resolve.
template <typename Score>
inline void RelaxUnigram(Score* best, UnigramLink* link, size_t end, Score candidate,
                         UnigramLink l) {
  const Score old = best[end];
  const bool better = candidate > old;
  const uint64_t mask = uint64_t{0} - static_cast<uint64_t>(better);
  best[end] = better ? candidate : old;
  link[end] = (l & mask) | (link[end] & ~mask);
}

// Per-thread lattice, reused across calls (one per arithmetic): the best path's score ending at
// each byte (-infinity: none yet) and its last piece, in two flat arrays.
template <typename Score>
struct UnigramLattice {
  std::vector<Score> score;
  std::vector<UnigramLink> link;
};

template <typename Score>
UnigramLattice<Score>& ThreadUnigramLattice() {
  thread_local UnigramLattice<Score> lattice;
  return lattice;
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
  std::vector<std::pair<std::string_view, int32_t>> keys;
  keys.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    if (p.kind == Kind::kSkip || p.text.empty()) continue;
    keys.emplace_back(p.text, static_cast<int32_t>(i));
    if (p.kind == Kind::kUserDefined) {
      // GetUserDefinedScore in PyPI sentencepiece 0.2.3: `0.1 * (length - 1)` in double,
      // returned as float (length in bytes).
      m.score_[i] = static_cast<double>(
          static_cast<float>(0.1 * static_cast<double>(static_cast<int>(p.text.size()) - 1)));
    } else {
      m.score_[i] = static_cast<double>(p.score);
    }
  }
  for (const auto& [text, id] : keys)
    m.max_piece_bytes_ = std::max(m.max_piece_bytes_, text.size());
  m.score_f_.assign(m.score_.begin(), m.score_.end());  // exact for a `.model`'s float scores
  m.trie_ = PieceTrie::Build(std::move(keys));
  return m;
}

template <typename Score>
void UnigramModel::Viterbi(std::string_view text, std::vector<Span>* out) const {
  const size_t n = text.size();
  out->clear();
  if (n == 0) return;
  UnigramLattice<Score>& lattice = ThreadUnigramLattice<Score>();
  if (lattice.score.size() < n + 1) {
    lattice.score.resize(n + 1);
    lattice.link.resize(n + 1);
  }
  // A cell no path reached scores -infinity, so "strictly better" needs no "reached yet" test
  // (a candidate is always finite); the rebasing below leaves it -infinity.
  Score* const best = lattice.score.data();
  UnigramLink* const link = lattice.link.data();
  std::fill(best, best + n + 1, -std::numeric_limits<Score>::infinity());
  best[0] = 0;
  const Score unk_score = static_cast<Score>(unk_score_);
  const Score* score = nullptr;
  if constexpr (std::is_same_v<Score, float>) {
    score = score_f_.data();
  } else {
    score = score_.data();
  }
  // No path reaches past start + reach (the longest piece, or an unknown character).
  const size_t reach = std::max<size_t>(max_piece_bytes_, 4);
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  size_t start = 0;
  while (start < n) {
    Score here = best[start];
    if constexpr (std::is_same_v<Score, float>) {
      // PyPI sentencepiece 0.2.3 keeps the float scores small on long texts: once the path to
      // here leaves [-1e5, 1e5], it subtracts it (in float) from every reached cell from here
      // to the furthest one reached (its max_frontier; cells past that are unreached, so
      // stopping at start + reach visits the same ones). The rounding this changes decides ties
      // on long texts.
      constexpr float kScoreResetThreshold = 100000.0f;
      if (std::fabs(here) > kScoreResetThreshold) [[unlikely]] {
        const float offset = here;
        const size_t last = std::min(n, start + reach);
        for (size_t i = start; i <= last; ++i) best[i] -= offset;  // -infinity stays
        here = 0.0f;
      }
    }
    const size_t mblen = std::min(SpCharLength(bytes[start]), n - start);
    bool has_single = false;
    trie_.ForEachPrefix(text.substr(start), [&](size_t length, int32_t id) {
      // In Score's arithmetic (float for SentencePiece: a score is a float).
      RelaxUnigram(best, link, start + length, score[id] + here, MakeUnigramLink(start, id));
      has_single |= length == mblen;
    });
    if (!has_single) {
      RelaxUnigram(best, link, start + mblen, unk_score + here, MakeUnigramLink(start, unk_id_));
    }
    start += mblen;
  }
  // Backtrack once, from the end, then put the spans in order.
  for (size_t end = n; end > 0;) {
    const UnigramLink node = link[end];
    const auto from = static_cast<uint32_t>(node);
    out->push_back({from, static_cast<uint32_t>(end), static_cast<int32_t>(node >> 32)});
    end = from;
  }
  std::reverse(out->begin(), out->end());
}

void UnigramModel::Encode(std::string_view text, std::vector<Span>* out) const {
  if (arithmetic_ == Arithmetic::kSentencePiece) {
    Viterbi<float>(text, out);
  } else {
    Viterbi<double>(text, out);
  }
}

}  // namespace stoker
