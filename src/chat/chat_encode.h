// EncodeChat: the token ids of a rendered conversation and their loss mask. The template's own
// control tokens are control tokens; control-token text that came from the conversation's
// strings (marked by ChatTemplate::RenderMarkedControlTokens) is ordinary text, as
// transformers' apply_chat_template(..., sanitize_control_tokens=True) encodes it. No
// post-processor (BOS) is added: the template writes its own. Thread-safe (pure function).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chat/chat_align.h"
#include "stoker/status.h"
#include "stoker/tokenizer.h"
#include "text/token_bytes.h"

namespace stoker {

struct ChatIds {
  std::vector<int32_t> ids;
  std::vector<uint8_t> mask;  // 1 where the token is trained (it overlaps a trained byte range)
};

// Tokenizer::TokenText of every id of a vocabulary, read once per encoder.
struct TokenTexts {
  TokenBytes bytes;            // by id; empty where `known` is 0
  std::vector<uint8_t> known;  // 1: TokenText succeeded
  std::vector<TokenTextFlags> flags;
  std::unordered_map<int32_t, std::string> pieces;  // Tokenizer::ModelPieceText, where there is one
  bool probed = false;                              // `strip` was probed (ReadTokenTexts)
  StrippedEnds strip;                               // ProbeStrippedEnds
};

// Which ends of a run of text `tokenizer` strips of whitespace (tokenizers' Strip normalizer):
// the left where "\ta", "\na" or " a" encodes as "a" does, the right where "a\t", "a\n" or
// "a " does.
StrippedEnds ProbeStrippedEnds(const Tokenizer& tokenizer);

// `control` encodes special-token text as the special ids and `plain` as text (the same model
// opened with and without allow_special, both without a post-processor). `marked` is the marked
// rendering; `trained` are byte ranges of the text with the marks removed, which must equal
// `text`. Each token's bytes in the text are found by AlignTokens (chat_align.h) from its
// TokenText, read in `texts` (may be empty) or asked of `control`; a token is trained when they
// overlap a trained range (an empty one: when it lies inside one); an error when the tokens
// do not align with the text (kInvalidArgument, in plain words).
Result<ChatIds> EncodeChat(const Tokenizer& control, const Tokenizer& plain,
                           const std::string& marked, const std::string& text,
                           const std::vector<std::pair<size_t, size_t>>& trained,
                           const TokenTexts& texts = {});

// The text of a marked rendering: the marks (kChatMarkStart, kChatMarkEnd) removed.
std::string StripChatMarks(const std::string& marked);

// TokenText of every id of `tokenizer`.
TokenTexts ReadTokenTexts(const Tokenizer& tokenizer);

}  // namespace stoker
