// UnigramModel: the best segmentation of a normalized text under a unigram language model
// (Viterbi over the pieces' scores), as SentencePiece's Model::EncodeOptimized
// (unigram_model.cc) and tokenizers' Unigram::encode_optimized compute it, ties included.
//
// At each character start s, in order, every piece that is a prefix of text[s..] offers the path
// best[s] + score to its end; a path replaces the one stored there only if strictly better, so on
// a tie the piece that starts first (the longest last piece) wins. Where no piece is exactly the
// character at s, an unknown node of that one character scores min_score - 10.
// The two references differ only in arithmetic, and that decides ties (kSentencePiece: float
// throughout, as PyPI sentencepiece 0.2.3's EncodeOptimized computes it, a user-defined piece
// scoring float(0.1 * (length - 1)), and the path rebased to 0 where its score leaves
// [-1e5, 1e5] (the float subtraction rounds the cells ahead, which decides ties on long texts);
// kTokenizers: f64 throughout, never rebased). Checked against both on texts full of ties
// (tests/python/test_unigram_sentencepiece.py, test_unigram_tokenizer_json.py).
// Hot path: a double-array trie (text/piece_trie.h), one pass over the text, and per-thread
// buffers reused across calls, so encoding allocates nothing per character.
// Words (kSentencePiece): where no matched piece has "▁" past its first byte, no piece crosses a
// "▁", so the best path passes through every "▁" and the text is segmented word by word, each
// word from the float score the path reached there (the same cells, the same comparisons, the
// same rebasing as over the whole text). A word whose path won every one of its cells by more
// than the rounding any starting score in [-1e5, 1e5] can change (unigram_model.cc, WordMargin) is
// remembered in the thread's PieceCache / LongPieceCache (text/piece_cache.h) and later taken from
// there, its float path score replayed piece by piece; a word with a near-tie is always computed.
// Immutable after Build; thread-safe (the word caches are per thread).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "text/piece_trie.h"

namespace stoker {

class UnigramModel {
 public:
  enum class Arithmetic { kSentencePiece, kTokenizers };
  enum class Kind : uint8_t { kNormal, kUserDefined, kSkip };  // kSkip: never matched
  struct Piece {
    std::string_view text;
    double score = 0;  // a `.model`'s float, or a tokenizer.json's f64
    Kind kind = Kind::kNormal;
  };
  // One piece of a segmentation: text[begin, end) is piece `id` (unk_id for an unknown
  // character).
  struct Span {
    uint32_t begin, end;
    int32_t id;
  };

  UnigramModel() = default;
  // `pieces`: id -> piece (kSkip for ids the text never matches: control, unknown, byte and
  // unused pieces of a `.model`). `min_score` is the unknown node's base.
  static UnigramModel Build(const std::vector<Piece>& pieces, int32_t unk_id, double min_score,
                            Arithmetic arithmetic);

  // The best segmentation of `text` into *out (cleared first), in order.
  void Encode(std::string_view text, std::vector<Span>* out) const;
  // The id of the piece (not skipped) that is exactly `text`, or -1.
  int32_t Find(std::string_view text) const {
    int32_t found = -1;
    trie_.ForEachPrefix(text, [&](size_t length, int32_t id) {
      if (length == text.size()) found = id;
    });
    return found;
  }

 private:
  // Viterbi over `text`, the path reaching its first byte with score `base`; appends its spans,
  // shifted by `offset`, to *out and returns the path's score at the end. With kMargin, *margin is
  // lowered to the smallest lead of a path cell's winner over the other candidates there.
  template <typename Score, bool kMargin>
  Score Viterbi(std::string_view text, uint32_t offset, Score base, std::vector<Span>* out,
                float* margin) const;
  // kSentencePiece word by word, through the thread's word caches (see the top of this file).
  void EncodeWords(std::string_view text, std::vector<Span>* out) const;

  PieceTrie trie_;
  std::vector<double> score_;     // id -> the score a candidate adds (user-defined bonus included)
  std::vector<float> score_f_;    // the same in float (kSentencePiece)
  std::vector<uint32_t> length_;  // id -> its piece's bytes
  size_t max_piece_bytes_ = 0;
  float max_abs_score_ = 0;   // the largest |score| a node adds (unknown nodes included)
  bool words_ = false;        // kSentencePiece, and no matched piece has "▁" past its first byte
  uint64_t cache_owner_ = 0;  // names this model's entries in the per-thread word caches
  int32_t unk_id_ = 0;
  double unk_score_ = 0;
  Arithmetic arithmetic_ = Arithmetic::kSentencePiece;
};

// SentencePiece's OneCharLen: the length of the UTF-8 sequence `lead` starts (1 for a
// continuation byte).
inline size_t SpCharLength(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

}  // namespace stoker
