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
// Immutable after Build; thread-safe.
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
  template <typename Score>
  void Viterbi(std::string_view text, std::vector<Span>* out) const;

  PieceTrie trie_;
  std::vector<double> score_;   // id -> the score a candidate adds (user-defined bonus included)
  std::vector<float> score_f_;  // the same in float (kSentencePiece)
  size_t max_piece_bytes_ = 0;
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
