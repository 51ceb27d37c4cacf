// TokenizerJsonScan: the fast reader of tokenizer.json. simdjson's On-Demand parser streams
// model.vocab and model.merges (nearly all of a file's bytes: 100k keys and 100k merges for cl100k)
// into a JsonVocab; every other field goes, as the text it is written in, to nlohmann, whose DOM
// the pipeline code reads as before. It takes only what it reads exactly as nlohmann's DOM would:
// on invalid JSON, a key given twice where it looks, or a vocab or merge entry that is odd (not an
// unsigned id, a duplicate, not "a b" or ["a", "b"]) Scan returns null, and the caller reads the
// file with nlohmann alone, which gives the same result, or error message, as it always did.
// Not thread-safe: one user at a time.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "text/tokenizer_json_vocab.h"

namespace stoker {

class TokenizerJsonScan {
 public:
  using MergeText = JsonVocab::MergeText;

  // simdjson reads up to this many bytes past the end of its input.
  static constexpr size_t kPadding = 64;

  // Reads `json`; `origin` (the path, kept by reference) names the file in the vocab's errors.
  // `readable_past_end`: the bytes after json that may be read (at least kPadding: json is read
  // where it is; else it is copied). Null when the file needs nlohmann's reader (see above).
  static std::unique_ptr<TokenizerJsonScan> Scan(std::string_view json, std::string_view origin,
                                                 size_t readable_past_end = 0);
  ~TokenizerJsonScan();

  // The document with {} in place of model.vocab and [] in place of model.merges.
  const nlohmann::json& skeleton() const { return skeleton_; }
  // model.vocab, every entry added.
  JsonVocab& vocab() { return vocab_; }
  // model.merges as (a, b), in order (views into this object's buffers).
  const std::vector<MergeText>& merges() const { return merges_; }

 private:
  struct Buffers;
  explicit TokenizerJsonScan(std::string_view origin);

  std::unique_ptr<Buffers> buffers_;  // the simdjson parser that holds the unescaped strings
  JsonVocab vocab_;
  std::vector<MergeText> merges_;
  nlohmann::json skeleton_;
};

}  // namespace stoker
