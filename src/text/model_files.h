// How a --tokenizer path is recognised as models ship their tokenizers: a file's format from its
// first bytes (Llama 3's tiktoken-format `original/tokenizer.model` is not a SentencePiece model),
// a model directory's tokenizer file, and the EOS/BOS of the `tokenizer_config.json` beside it
// (DeepSeek-V3's `<｜end▁of▁sentence｜>` is named only there).
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

enum class TokenizerFormat { kUnknown, kTokenizerJson, kTiktoken, kSentencePiece };

// The format of a tokenizer file from its first bytes (any number; 4 KiB is plenty): a JSON
// object, tiktoken's "BASE64 RANK" lines, or a SentencePiece ModelProto (protobuf whose first
// field is a `pieces` entry). kUnknown when it looks like none of them (e.g. an empty file).
TokenizerFormat SniffTokenizerFormat(std::string_view head);

// The fields of a Hugging Face `tokenizer_config.json` that change ids. A token is given either
// as a string or as an AddedToken object ({"content": ...}); null or absent = unset.
struct TokenizerConfig {
  std::optional<std::string> eos_token;
  std::optional<std::string> bos_token;
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  // What transformers reads to rebuild a SentencePiece-style pipeline (LlamaTokenizer).
  std::optional<std::string> tokenizer_class;
  std::optional<bool> legacy;
  std::optional<bool> add_prefix_space;
};

// Whether transformers 5 (AutoTokenizer) encodes the model with the dummy prefix "▁" only at the
// start of the text, not after each added token: its LlamaTokenizer replaces tokenizer.json's
// normalizer and pre-tokenizer with Metaspace(prepend_scheme="first") unless `legacy` is true or
// `add_prefix_space` false.
bool DummyPrefixAtStartOnly(const TokenizerConfig& config);

// Parses a tokenizer_config.json; `origin` names it in errors (kInvalidArgument naming the field).
Result<TokenizerConfig> ParseTokenizerConfig(std::string_view json, std::string_view origin);

// The tokenizer_config.json beside `tokenizer_path` (in its directory), if there is one; an
// empty config if not.
Result<TokenizerConfig> ReadTokenizerConfigBeside(const std::string& tokenizer_path);

// A model directory's tokenizer file: its tokenizer.json, else its tokenizer.model; empty when
// it holds neither.
std::string TokenizerFileInDirectory(const std::string& dir);

}  // namespace stoker
