// BytesTokenizer: the UTF-8 bytes of the text are the token ids (0-255); EOS is 256.
// Zero configuration and lossless; the default of `stoker pack`. Thread-safe.
#pragma once

#include "text/tokenizer.h"

namespace stoker {

class BytesTokenizer final : public Tokenizer {
 public:
  static constexpr int32_t kEosId = 256;
  static constexpr uint64_t kVocabSize = 257;

  BytesTokenizer();

  Status Encode(std::string_view utf8, std::vector<int32_t>* ids) const override;
  Status Decode(std::span<const int32_t> ids, std::string* out) const override;
  uint64_t vocab_size() const override { return kVocabSize; }
  int32_t eos_id() const override { return kEosId; }
  const TokenizerIdentity& identity() const override { return identity_; }

 private:
  TokenizerIdentity identity_;
};

}  // namespace stoker
