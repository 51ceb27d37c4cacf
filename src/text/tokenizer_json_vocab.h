// JsonVocab: model.vocab and model.merges of a tokenizer.json turned into a BpeModel, fed entry by
// entry by whichever JSON reader parsed the file (simdjson's fast scan or nlohmann's DOM), so both
// readers check and build the same way and fail with the same messages (the file, the JSON field,
// the merge index). Not thread-safe: one user at a time.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stoker/status.h"
#include "text/bpe_model.h"
#include "text/vocab_index.h"

namespace stoker {

// The errors of one file's JSON fields: kInvalidArgument "origin: field: message".
struct JsonFields {
  std::string_view origin;  // the path
  Status Fail(std::string_view field, std::string_view message) const;
};

// Inverse of ByteLevelChar over UTF-8: a vocabulary string's raw bytes, or false if it holds a
// character outside the byte-level alphabet.
class ByteLevelDecoder {
 public:
  ByteLevelDecoder();
  bool Decode(std::string_view s, std::string* out) const;

 private:
  std::array<int, 512> reverse_;
};

class JsonVocab {
 public:
  // A merge's two tokens, as written in the file (unescaped).
  using MergeText = std::pair<std::string_view, std::string_view>;

  // `origin` (the path) names the file in errors; it must outlive this.
  explicit JsonVocab(std::string_view origin) : file_{origin} {}

  // model.vocab[key] = id, `key` unescaped. `id` is the JSON value, or UINT64_MAX for one that is
  // not an unsigned integer. Fails on an id that does not fit int32, an id given twice, or a key
  // given twice (nlohmann's DOM never passes one).
  Status Add(std::string_view key, uint64_t id);
  // model.merges[first_index + i] = merges[i]: both tokens and their concatenation must be
  // vocabulary keys (after every Add). Fails naming the first merge that is not.
  Status AddMerges(std::span<const MergeText> merges, size_t first_index);
  // After the vocab, before the merges: the tokens are the keys' own UTF-8 bytes, not byte-level
  // characters (SentencePiece-style vocabularies, "▁the", "<0x0A>").
  void UseRawKeys();
  // After the vocab and merges: the model.
  Result<BpeModel> Build();

  const VocabIndex& index() const { return index_; }
  // The highest id + 1.
  uint64_t model_size() const { return tokens_.size(); }

 private:
  JsonFields file_;  // names the file in errors
  ByteLevelDecoder bytes_of_;
  VocabIndex index_;
  std::vector<std::string> tokens_;  // by id: the bytes, or empty (not byte-level, or no key)
  // By id: 0 no key yet, 1 a key, 2 a byte-level key (read for every merge: a byte each, where
  // tokens_[id].empty() read a random 32-byte std::string, a third of the merges' time).
  std::vector<uint8_t> state_;
  std::vector<BpeModel::Merge> merges_;
  std::string raw_;
};

}  // namespace stoker
