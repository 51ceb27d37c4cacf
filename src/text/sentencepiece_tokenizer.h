// SentencePieceTokenizer: a SentencePiece `.model` file through libsentencepiece.
//
// Thread-safe: one instance is shared by all pack threads. SentencePieceProcessor::Encode is const
// and its maintainers state it may be called from many threads at once (google/sentencepiece#207,
// #657); we never call the sampling or option-setting methods after Open.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace stoker {

// What a model's tokenizer_config.json (or --eos) changes. Plain data.
struct SentencePieceOptions {
  std::string eos;       // the EOS piece or a decimal id; empty = the model's eos_id
  std::string bos;       // the BOS piece; empty = the model's bos_id
  bool add_bos = false;  // put BOS before every document (tokenizer_config's add_bos_token)
};

// The EOS id, and the BOS id to put before each document (-1: none), of a SentencePiece model.
struct SentencePieceSpecialIds {
  int32_t eos_id = -1;
  int32_t bos_id = -1;
};

// Applies `options` to a model (read from `path`) of `vocab_size` pieces whose own EOS and BOS
// ids are `model_eos` and `model_bos` (-1: none); `find` gives a piece's id by its text, or -1.
// kInvalidArgument (naming `path`) if the model has no EOS and none is given, or `options` name
// a piece it does not have. Shared by both SentencePiece engines.
Result<SentencePieceSpecialIds> ResolveSentencePieceSpecials(
    const SentencePieceOptions& options, const std::string& path, int64_t vocab_size,
    int32_t model_eos, int32_t model_bos, const std::function<int32_t(const std::string&)>& find);

class SentencePieceTokenizer final : public Tokenizer {
 public:
  using Options = SentencePieceOptions;
  // Loads the model at `path`. kNotFound if missing; kInvalidArgument if it does not parse, has
  // no EOS piece (train with --eos_id >= 0) or `options` name a piece it does not have.
  static Result<std::unique_ptr<SentencePieceTokenizer>> Open(const std::string& path,
                                                              const Options& options = {});
  ~SentencePieceTokenizer() override;

  Status Encode(std::string_view utf8, std::vector<int32_t>* ids) const override;
  Status Decode(std::span<const int32_t> ids, std::string* out) const override;
  uint64_t vocab_size() const override { return vocab_size_; }
  int32_t eos_id() const override { return eos_id_; }
  const TokenizerIdentity& identity() const override { return identity_; }

 private:
  SentencePieceTokenizer() = default;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  uint64_t vocab_size_ = 0;
  int32_t eos_id_ = -1;
  int32_t bos_id_ = -1;  // put before each document; -1 = none
  TokenizerIdentity identity_;
};

}  // namespace stoker
