// Tokenizer: turns UTF-8 text into token ids for `stoker pack` and online tokenization.
//
// Implementations: "bytes" (the UTF-8 bytes themselves, EOS = 256) and SentencePiece `.model`
// files. A byte-level BPE (tokenizer.json / tiktoken) plugs in behind the same interface.
// Thread-safe: Encode is const and is called from many pack threads on one shared instance.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

// What a dataset manifest records about the tokenizer that produced it.
struct TokenizerIdentity {
  std::string kind;      // "bytes", "sentencepiece"
  std::string name;      // "bytes", or the model file's base name
  std::string checksum;  // XXH3-64 hex of the model file; empty for "bytes"
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Appends the ids of `utf8` (which must be valid UTF-8; see text/utf8.h) to *ids, without EOS.
  virtual Status Encode(std::string_view utf8, std::vector<int32_t>* ids) const = 0;

  // Every id Encode produces, and eos_id(), is in [0, vocab_size()).
  virtual uint64_t vocab_size() const = 0;
  // The end-of-document id appended after every document.
  virtual int32_t eos_id() const = 0;
  virtual const TokenizerIdentity& identity() const = 0;
};

// Opens the tokenizer named by a --tokenizer value:
//  - "bytes": UTF-8 bytes 0-255, EOS 256, vocabulary 257;
//  - "PATH.model": a SentencePiece model (must define an EOS piece);
//  - "PATH/tokenizer.json" or a ".tiktoken" file: kUnimplemented for now.
// Errors name the file: kNotFound if it is missing, kInvalidArgument if it is not a valid model.
Result<std::unique_ptr<Tokenizer>> OpenTokenizer(std::string_view spec);

}  // namespace stoker
