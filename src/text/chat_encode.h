// EncodeChat: the token ids of a rendered conversation and their loss mask. The template's own
// control tokens are control tokens; control-token text that came from the conversation's
// strings (marked by ChatTemplate::RenderMarkedControlTokens) is ordinary text, as
// transformers' apply_chat_template(..., sanitize_control_tokens=True) encodes it. No
// post-processor (BOS) is added: the template writes its own. Thread-safe (pure function).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "stoker/status.h"
#include "stoker/tokenizer.h"

namespace stoker {

struct ChatIds {
  std::vector<int32_t> ids;
  std::vector<uint8_t> mask;  // 1 where the token is trained (it overlaps a trained byte range)
};

// `control` encodes special-token text as the special ids and `plain` as text (the same model
// opened with and without allow_special, both without a post-processor). `marked` is the marked
// rendering; `trained` are byte ranges of the text with the marks removed, which must equal
// `text`. `token_bytes` (may be empty) holds TokenBytes(control): a token's byte length is read
// there instead of decoding it.
Result<ChatIds> EncodeChat(const Tokenizer& control, const Tokenizer& plain,
                           const std::string& marked, const std::string& text,
                           const std::vector<std::pair<size_t, size_t>>& trained,
                           std::span<const int32_t> token_bytes = {});

// Per id of `tokenizer`'s vocabulary: the length of the id decoded alone, or -1 where it does
// not decode.
std::vector<int32_t> TokenBytes(const Tokenizer& tokenizer);

}  // namespace stoker
