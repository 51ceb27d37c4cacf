// Tokenizer: turns UTF-8 text into token ids for `stoker pack` and online tokenization (the
// stream, stoker/stream.h), with the options that choose one and the policy for invalid UTF-8.
//
// Implementations: "bytes" (the UTF-8 bytes themselves, EOS = 256), SentencePiece `.model`
// files, and byte-level BPE from tokenizer.json or tiktoken files (src/text/bpe_tokenizer.h).
// Thread-safe: Encode is const and is called from many pack threads on one shared instance.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

// Invalid UTF-8 in a document (src/text/utf8.h): replace each maximal invalid subsequence with
// U+FFFD, skip the document, or fail.
enum class Utf8Policy { kReplace, kSkip, kFail };

// What Tokenizer::TokenText says of an id besides its bytes.
struct TokenTextFlags {
  bool added = false;   // an added token, matched on the text whole
  bool lstrip = false;  // an added token that takes the whitespace before it
  bool rstrip = false;  // an added token that takes the whitespace after it
};

// What a dataset manifest records about the tokenizer that produced it.
struct TokenizerIdentity {
  std::string kind;      // "bytes", "sentencepiece", "tokenizer.json", "tiktoken"
  std::string name;      // "bytes", or the model file's base name (and options that matter)
  std::string checksum;  // XXH3-64 hex of the model file; empty for "bytes"
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Appends the ids of `utf8` (which must be valid UTF-8; see text/utf8.h) to *ids, without EOS.
  virtual Status Encode(std::string_view utf8, std::vector<int32_t>* ids) const = 0;
  // Appends the UTF-8 bytes of `ids` to *out (special tokens as their text). kOutOfRange for an
  // id outside the vocabulary; kUnimplemented where a tokenizer cannot decode.
  virtual Status Decode(std::span<const int32_t> ids, std::string* out) const;
  // The bytes `id` stands for in the text it was encoded from, to align tokens with that text
  // (chat loss masks): a byte-level token's bytes; a SentencePiece-style piece with "▁" as a
  // space and "<0xAB>" as its byte (with the dummy prefix space, where the piece has one); an
  // added token's text, and *flags whether it is one and takes the whitespace beside it.
  // Default: the id decoded alone, not an added token.
  virtual Status TokenText(int32_t id, std::string* out, TokenTextFlags* flags) const;
  // For an added token that the model also produces from normalized text (a non-special added
  // token whose content is a piece of the vocabulary, as Gemma's runs of "▁"): appends the bytes
  // it stands for when the model produced it (its piece decoded: "  ") and returns true; false
  // for any other id. Default: false.
  virtual bool ModelPieceText(int32_t id, std::string* out) const;

  // Every id Encode produces, and eos_id(), is in [0, vocab_size()).
  virtual uint64_t vocab_size() const = 0;
  // The end-of-document id appended after every document.
  virtual int32_t eos_id() const = 0;
  virtual const TokenizerIdentity& identity() const = 0;
};

// Options of the byte-level BPE tokenizers (ignored by "bytes" and SentencePiece).
struct TokenizerOptions {
  // tiktoken files: r50k | p50k | cl100k | o200k, or a regex. Required for .tiktoken.
  std::string pattern;
  // tiktoken files: "NAME=ID,NAME=ID"; empty = the named pattern's own set (none for a regex).
  std::string special;
  // Special tokens written in the text become their ids (tiktoken's allowed_special="all",
  // tokenizers' default). Off: their text is ordinary text (tiktoken's encode_ordinary,
  // tokenizers' encode_special_tokens=True), so training data cannot smuggle control tokens.
  bool allow_special = false;
  // Off: no added token is read in the text, special or not (transformers'
  // _encode_without_added_tokens): chat encoding's text of a control token that came from the
  // conversation (a user's "<tool_call>" is "<", "tool", "_call", ">").
  bool match_added_tokens = true;
  // The EOS token, by name or id; empty = the file's end-of-text token.
  std::string eos;
  // tokenizer.json: apply its post_processor (e.g. a BOS template) as tokenizers' encode does.
  bool post_processor = true;
  // tokenizer.json of the SentencePiece family: the dummy prefix "▁" (a Prepend normalizer, a
  // Metaspace pre-tokenizer that prepends always) only at the start of the text, not again after
  // each added token: Metaspace's prepend_scheme "first", as transformers 5's LlamaTokenizer
  // encodes (chat encoding sets it where tokenizer_config.json names that class).
  bool dummy_prefix_at_start_only = false;
  // Threads that build the tokenizer's tables while it is opened (tiktoken files); 0 = all
  // cores. `stoker pack` passes its --num-workers, so a pack's serial first step is shorter.
  int load_threads = 0;
};

// Opens the tokenizer named by a --tokenizer value:
//  - "bytes": UTF-8 bytes 0-255, EOS 256, vocabulary 257;
//  - a directory: its tokenizer.json, else its tokenizer.model;
//  - a file, by its content (src/text/model_files.h; by its name only when that tells nothing):
//    a SentencePiece model (must define an EOS piece), a tokenizer.json (Hugging Face BPE) or a
//    tiktoken rank file (with options.pattern; Llama 3's original/tokenizer.model is one).
// A tokenizer_config.json beside the file gives the EOS (unless options.eos) and, for
// SentencePiece, add_bos_token/bos_token (unless !options.post_processor).
// Errors name the file: kNotFound if it is missing, kInvalidArgument if it is not a valid model.
Result<std::unique_ptr<Tokenizer>> OpenTokenizer(std::string_view spec,
                                                 const TokenizerOptions& options = {});

}  // namespace stoker
