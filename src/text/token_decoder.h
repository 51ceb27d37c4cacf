// TokenDecoder: ids' strings back to text, as the reference library of each format decodes.
//
//  - kBytes: the tokens' bytes, concatenated (byte-level BPE: the vocabulary already holds raw
//    bytes; tiktoken).
//  - kChain: a tokenizer.json `decoder` of the SentencePiece family, step by step as `tokenizers`'
//    decode_chain: Replace, ByteFallback, Fuse, Strip and Metaspace.
//  - kSentencePiece: SentencePieceProcessor::Decode (sentencepiece_processor.cc): control pieces
//    vanish, unk is its surface (" ⁇ "), runs of byte pieces become their bytes (U+FFFD per
//    invalid byte), "▁" is a space, and the first piece loses one leading "▁" when the model adds
//    a dummy prefix.
// Thread-safe after construction: Decode is const.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

class TokenDecoder {
 public:
  struct Step {
    enum class Kind { kReplace, kByteFallback, kFuse, kStrip, kMetaspace };
    Kind kind = Kind::kFuse;
    std::string from = {}, to = {};  // kReplace; kMetaspace: `from` is the replacement
    size_t start = 0, stop = 0;      // kStrip: characters equal to `from` cut at each end
    bool strip_first = true;         // kMetaspace: prepend_scheme is not "never"
  };
  // kSentencePiece: what each id is.
  enum class PieceKind : uint8_t { kNormal, kControl, kUnknown, kByte };

  enum class Kind { kBytes, kChain, kSentencePiece };

  TokenDecoder() = default;
  static TokenDecoder Chain(std::vector<Step> steps);
  static TokenDecoder SentencePiece(std::vector<PieceKind> kinds, std::string unk_surface,
                                    bool strip_dummy_prefix, bool remove_extra_whitespaces);

  Kind kind() const { return kind_; }
  // Appends the text of `tokens` (each id's string: its vocabulary bytes, or an added token's
  // content) to *out. `ids` are the same tokens' ids (kSentencePiece reads their kinds).
  void Decode(std::span<const std::string_view> tokens, std::span<const int32_t> ids,
              std::string* out) const;
  // The bytes one token stands for in the text it was encoded from: the per-token steps only
  // ("▁" a space, "<0xAB>" its byte), none of the steps over the whole sequence (Fuse, Strip, the
  // dummy prefix's removal). `id` is the token's id (kSentencePiece reads its kind).
  std::string Surface(std::string_view token, int32_t id) const;

 private:
  void DecodeChain(std::span<const std::string_view> tokens, std::string* out) const;
  void DecodeSentencePiece(std::span<const std::string_view> tokens, std::span<const int32_t> ids,
                           std::string* out) const;

  Kind kind_ = Kind::kBytes;
  std::vector<Step> steps_;
  std::vector<PieceKind> kinds_;
  std::string unk_surface_;
  bool strip_dummy_prefix_ = false;
  bool remove_extra_whitespaces_ = false;
};

// The byte of a "<0xAB>" token as tokenizers' ByteFallback reads it, or -1.
int ByteFallbackValue(std::string_view token);

}  // namespace stoker
