// Helpers shared by the BPE loaders (tokenizer.json and tiktoken): --special and --eos parsing.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stoker/status.h"
#include "text/added_tokens.h"

namespace stoker {

// Parses "NAME=ID,NAME=ID" (the last '=' splits, so a name may contain '=').
Result<std::vector<AddedTokens::Token>> ParseSpecialTokens(std::string_view spec);

// The EOS id: `requested` (a token's text or a decimal id below vocab_size) if set, else the
// first of <|endoftext|>, <|end_of_text|>, </s>, <eos> found among `named` (text -> id).
// kInvalidArgument naming `origin` when there is none.
Result<int32_t> ResolveEos(std::string_view requested, const std::vector<AddedTokens::Token>& named,
                           uint64_t vocab_size, std::string_view origin);

}  // namespace stoker
