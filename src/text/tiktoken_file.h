// tiktoken rank files (`cl100k_base.tiktoken`: one "BASE64-TOKEN RANK" per line) as a BPE
// tokenizer, with the pre-tokenizer pattern and special tokens given as options.
// Pure functions; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "text/bpe_tokenizer.h"

namespace stoker {

// The regex of a tiktoken encoding named r50k, p50k, cl100k, o200k (with or without "_base"),
// llama3 or llama4 (Meta's; llama4's is o200k's); empty for any other name.
std::string_view KnownTiktokenPattern(std::string_view name);

// Opens `path`. kNotFound if missing; kInvalidArgument naming the file and line for a bad line
// (bad base64, missing or duplicate rank, duplicate token), a missing or bad pattern, a special
// token that collides with a rank, or a vocabulary that does not fit int32.
Result<std::unique_ptr<BpeTokenizer>> OpenTiktokenFile(const std::string& path,
                                                       const TokenizerOptions& options);

}  // namespace stoker
