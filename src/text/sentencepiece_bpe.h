// SentencePiece BPE `.model` files encoded by stoker's own BPE engine (BpeTokenizer), with the ids
// and decode of SentencePieceProcessor.
//
// SentencePiece's BPE (bpe_model.cc) merges, among adjacent symbols, the pair whose concatenation
// is a piece of the highest score (the leftmost on a tie), starting from characters; user-defined
// pieces are cut out first and never merge; an unknown character becomes its bytes' pieces (byte
// fallback) or unk, a run of unks one. That is BpeModel in character mode with the pair (L, R) ->
// L+R ranked by the dense rank of L+R's score, so the merge core, the "▁" word cut and the piece
// cache are shared with tokenizer.json. A Unigram model is encoded by text/sentencepiece_unigram.h.
// A BPE model this does not reproduce exactly is left to libsentencepiece
// (SentencePieceTokenizer), as are the WORD and CHAR types: a normalizer charsmap, a
// denormalizer, whitespace as suffix, unused pieces, a reserved piece of one character, a piece
// that merges could form from a character that is not a piece, duplicate pieces.
// Pure functions; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "text/bpe_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"

namespace stoker {

// The tokenizer for the model `bytes` (read from `path`), or null with *why set to the reason
// the library must encode it. kInvalidArgument for bytes that are not a model, or options naming
// pieces it does not have (the library's messages).
Result<std::unique_ptr<BpeTokenizer>> OpenSentencePieceBpe(std::string_view bytes,
                                                           const std::string& path,
                                                           const SentencePieceOptions& options,
                                                           std::string* why);

}  // namespace stoker
