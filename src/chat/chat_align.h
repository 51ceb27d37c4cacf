// AlignTokens: where each token of an encoding lies in the text it was encoded from, by the bytes
// each token stands for (Tokenizer::TokenText). A token matches the text where its bytes are, with
// exactly the edits a tokenizer makes to the text and nothing else:
//  - the dummy prefix: a token whose bytes begin with a space that the text does not have, at the
//    start of the text or right after an added token (SentencePiece's "▁" before each run of text,
//    tokenizers' Prepend normalizer and Metaspace pre-tokenizer); the token covers its other bytes.
//    Where the token matches both with and without it ("▁" before " x"), the reading the next
//    token follows is taken, the dummy prefix where both are;
//  - whitespace taken by an added token: the run of whitespace after an added token with rstrip,
//    and before one with lstrip, belongs to that token, as in tokenizers' offsets;
//  - an added token that the model also produces (`piece`: Gemma's "▁▁" from two spaces, which
//    its Replace normalizer turns into "▁▁"): its added text where that is in the text, else its
//    piece's bytes, as a token of the text;
//  - Unicode normalization (tokenizers' NFC, NFKC): where the text as it is does not align, its
//    NFC and then NFKC form is tried (text/unicode_nfc.h's NormalizeWithOffsets), and each token
//    covers the original bytes of the characters it covers in that form (a token of part of a
//    composed character covers the whole decomposed one, as tokenizers' offsets do).
//  - the meta symbol: where the text holds "▁" itself, a tokenizer that writes spaces as "▁"
//    (Replace, Metaspace) reads it as one of them, so a token's space may stand for it; the text
//    of an added token made of "▁" (Gemma's "▁▁", matched on the raw text) is tried as that
//    token first.
//  - whitespace stripped off the ends of a run of text (tokenizers' Strip normalizer; `strip`
//    says which ends, as EncodeChat probes the tokenizer): where no token matches it, whitespace
//    at the start of a run of text (the text's start, or after an added token) belongs to the
//    run's first token, and at its end (before an added token, or the text's end) to the run's
//    last token: a token covers the stripped whitespace of its own run. A run of only whitespace
//    belongs to the added token before it (at the text's start, to the first token). So a
//    message's stripped whitespace is covered by that message's tokens, never by a header or
//    end-of-turn token of another message, except a run of only whitespace after an added token.
// Runs of spaces become runs of "▁" that merge into one token: that token's bytes are the spaces.
// Byte-fallback pieces are their byte. Anything else is refused in plain words (kInvalidArgument,
// no offsets: a conversation's error, which --on-error skip counts): a token is never placed
// where its bytes are not. Thread-safe (pure function).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "stoker/status.h"
#include "stoker/tokenizer.h"

namespace stoker {

struct AlignedToken {
  std::string_view bytes;  // Tokenizer::TokenText
  TokenTextFlags flags;
  std::string_view piece;  // Tokenizer::ModelPieceText of an added token; empty where none
};

struct TokenRange {
  size_t begin = 0, end = 0;  // bytes of the text; empty for a token of no text ("▁" alone)
  bool operator==(const TokenRange&) const = default;
};

// Which ends of each run of text between added tokens the tokenizer strips of whitespace.
struct StrippedEnds {
  bool left = false, right = false;
};

// The range of each of `tokens` in `text`, which they must cover whole, in order;
// kInvalidArgument where they do not.
Result<std::vector<TokenRange>> AlignTokens(std::string_view text,
                                            std::span<const AlignedToken> tokens,
                                            StrippedEnds strip = {});

}  // namespace stoker
