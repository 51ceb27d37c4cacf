// The pipeline parts of tokenizer.json around the BPE model: normalizer, pre_tokenizer and
// post_processor, each read into a BpeTokenizer::Config. Errors name `origin` and the JSON field.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "text/bpe_tokenizer.h"

namespace stoker {

// GPT-2's pre-tokenizer regex, used by tokenizers' ByteLevel(use_regex=true).
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

Status ParseNormalizer(const nlohmann::json& j, std::string_view origin, BpeTokenizer::Config* c);
Status ParsePreTokenizer(const nlohmann::json& j, std::string_view origin, BpeTokenizer::Config* c);
// Sets c->prefix_ids / suffix_ids from the single-sequence template.
Status ParsePostProcessor(const nlohmann::json& j, std::string_view origin,
                          BpeTokenizer::Config* c);

}  // namespace stoker
