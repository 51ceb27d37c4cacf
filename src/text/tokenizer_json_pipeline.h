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

// NFC, Prepend, Strip and Replace (a String pattern, or the Regex " {2,}"), alone or in a
// Sequence.
Status ParseNormalizer(const nlohmann::json& j, std::string_view origin, BpeTokenizer::Config* c);
// Whether a pre_tokenizer tree has a ByteLevel step (byte-level BPE); without one the file is
// SentencePiece-style (`sp_style`: Metaspace or null, the vocabulary's text taken as it is).
bool HasByteLevel(const nlohmann::json& pre_tokenizer);
// `sp_style`: a Metaspace step (or none) instead of ByteLevel; when nothing else splits the text
// and the vocabulary allows it (BpeModel::MarkerCutIsExact), a cut before "▁" is added so that
// words merge (and are cached) one by one with the same ids. A String Split whose character the
// normalizer replaced everywhere (transformers 5's Gemma layout) splits nothing and is dropped.
Status ParsePreTokenizer(const nlohmann::json& j, std::string_view origin, bool sp_style,
                         BpeTokenizer::Config* c);
// The decoder of a SentencePiece-style file (Replace, ByteFallback, Fuse, Strip, Metaspace, or a
// Sequence of them) into c->decoder; another one sets c->decode_error naming it (encoding works).
void ParseDecoder(const nlohmann::json& j, std::string_view origin, BpeTokenizer::Config* c);
// Sets c->prefix_ids / suffix_ids from the single-sequence template.
Status ParsePostProcessor(const nlohmann::json& j, std::string_view origin,
                          BpeTokenizer::Config* c);

}  // namespace stoker
