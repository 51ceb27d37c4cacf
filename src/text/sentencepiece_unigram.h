// SentencePieceUnigram: a SentencePiece Unigram `.model` file encoded by stoker's own code, with
// the ids and decode of PyPI sentencepiece 0.2 (SentencePieceProcessor::Encode / Decode).
//
// Encode: the whole text is normalized (text/sp_normalizer.h: user-defined pieces, the model's
// compiled charsmap, spaces as "▁", the dummy prefix or suffix, extra whitespace), segmented by
// Viterbi in SentencePiece's float arithmetic (text/unigram_model.h) without cutting it into
// words (a float path score depends on everything before it, and so do its ties), then each
// unknown character becomes its bytes' pieces (byte_fallback) or a run of them one unk. Control,
// unknown and byte pieces are never matched in the text; unused ones neither.
// A model field this does not reproduce is refused by name (a denormalizer), never encoded
// differently.
// Immutable after Open; thread-safe (per-thread buffers are thread_local).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/sentencepiece_model.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/sp_normalizer.h"
#include "text/token_decoder.h"
#include "text/tokenizer.h"
#include "text/unigram_model.h"

namespace stoker {

class SentencePieceUnigram final : public Tokenizer {
 public:
  // The tokenizer of the parsed model `m` (its file's bytes `bytes`, read from `path`).
  // kInvalidArgument naming `path` and the field for a model it cannot encode exactly, or
  // options naming pieces it does not have.
  static Result<std::unique_ptr<SentencePieceUnigram>> Open(const SentencePieceModel& m,
                                                            std::string_view bytes,
                                                            const std::string& path,
                                                            const SentencePieceOptions& options);

  Status Encode(std::string_view utf8, std::vector<int32_t>* ids) const override;
  Status Decode(std::span<const int32_t> ids, std::string* out) const override;
  Status TokenText(int32_t id, std::string* out, TokenTextFlags* flags) const override;
  uint64_t vocab_size() const override { return pieces_.size(); }
  int32_t eos_id() const override { return eos_id_; }
  const TokenizerIdentity& identity() const override { return identity_; }

 private:
  SentencePieceUnigram() = default;
  Status CheckIds(std::span<const int32_t> ids) const;

  SpNormalizer normalizer_;
  UnigramModel model_;
  std::vector<std::string> pieces_;
  std::vector<int32_t> byte_ids_;  // byte -> its piece (unk where missing); empty: no fallback
  int32_t unk_id_ = 0;
  TokenDecoder decoder_;
  int32_t eos_id_ = -1;
  int32_t bos_id_ = -1;  // put before each document; -1 = none
  TokenizerIdentity identity_;
};

}  // namespace stoker
