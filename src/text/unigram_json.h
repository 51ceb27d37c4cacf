// A tokenizer.json `model` of type "Unigram" (T5, mT5, XLM-R, ALBERT, Pegasus), encoded as
// tokenizers' Unigram does (models/unigram/model.rs): each pre-token on its own, Viterbi in f64
// over the [piece, score] vocabulary (text/unigram_model.h), each score the f64 tokenizers' JSON
// reader makes of its text (serde_json's two roundings, not strtod's one: they decide ties on
// T5's published file), a run of unknown characters fused
// into one piece, which is its id if it is a piece, else its bytes' "<0xXX>" pieces when
// byte_fallback is on and all of them exist, else unk_id.
// Immutable after ParseUnigramModel; thread-safe.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "text/bpe_tokenizer.h"
#include "text/tokenizer_json_vocab.h"
#include "text/unigram_model.h"

namespace stoker {

class UnigramWords {
 public:
  // Appends the ids of one pre-token to *ids.
  void EncodeWord(std::string_view word, std::vector<int32_t>* ids) const;

 private:
  friend Status ParseUnigramModel(const nlohmann::json& model, const JsonFields& f,
                                  BpeTokenizer::Config* c, uint64_t* model_size, JsonVocab* vocab);
  std::vector<std::string> pieces_;  // id -> piece (the trie's keys view these)
  UnigramModel model_;
  std::vector<int32_t> byte_ids_;  // byte -> "<0xXX>"'s id (-1 missing); empty: no fallback
  int32_t unk_id_ = 0;
};

// Reads `model` (type "Unigram") into c->model (the pieces, for decode and lookups), c->unigram
// and *vocab; *model_size = the number of pieces. kInvalidArgument naming the field otherwise.
Status ParseUnigramModel(const nlohmann::json& model, const JsonFields& f, BpeTokenizer::Config* c,
                         uint64_t* model_size, JsonVocab* vocab);

}  // namespace stoker
