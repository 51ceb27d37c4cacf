// tokenizer.json (the Hugging Face `tokenizers` format) as a byte-level BPE tokenizer.
//
// Supported, exactly as `tokenizers` encodes: model BPE (vocab, merges as "a b" or ["a", "b"],
// ignore_merges, unk_token/fuse_unk); normalizer null, NFC or a Sequence of those; pre_tokenizer
// ByteLevel (use_regex, add_prefix_space) alone or at the end of a Sequence after Split(Regex or
// String, any behavior, invert) stages; added_tokens (non-special ones always cut out, special ones
// only with allow_special); post_processor null, ByteLevel, TemplateProcessing, RobertaProcessing,
// BertProcessing or a Sequence of those. Anything else is kInvalidArgument naming the file and the
// JSON field, never a silently different tokenization.
// Pure functions; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "text/bpe_tokenizer.h"
#include "text/tokenizer_json_name.h"

namespace stoker {

// Parses `json` (the file's bytes); `origin` (the path) names the file in errors. Reads with
// simdjson where it can (TokenizerJsonScan), else with ParseTokenizerJsonWithDom.
Result<std::unique_ptr<BpeTokenizer>> ParseTokenizerJson(std::string_view json,
                                                         std::string_view origin,
                                                         const TokenizerOptions& options);
// The same from nlohmann's DOM of the whole file: the reader of every file the fast one does not
// take (its errors are the messages users see: "not valid JSON at byte N", the JSON field).
// Public for the tests and the fuzzer, which check that both readers agree.
Result<std::unique_ptr<BpeTokenizer>> ParseTokenizerJsonWithDom(std::string_view json,
                                                                std::string_view origin,
                                                                const TokenizerOptions& options);

// Reads and parses `path`. kNotFound if it is missing.
Result<std::unique_ptr<BpeTokenizer>> OpenTokenizerJson(const std::string& path,
                                                        const TokenizerOptions& options);

// GPT-2's byte-to-unicode map (the printable-character alphabet of byte-level vocabularies):
// the code point that stands for byte b.
char32_t ByteLevelChar(uint8_t b);

}  // namespace stoker
