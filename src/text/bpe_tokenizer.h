// BpeTokenizer: byte-level BPE behind the Tokenizer interface, for tokenizer.json and tiktoken
// files (the loaders in tokenizer_json.h and tiktoken_file.h fill its Config).
//
// Encode runs the reference pipeline: added tokens are cut out first (special ones only when
// allowed), each remaining segment is normalized (NFC, then the text edits: SentencePiece-style
// "▁" for spaces), cut into pre-tokens by the stages in order (a regex split, the byte-level
// prefix space, Metaspace, a cut before "▁"), and each pre-token is merged by the BpeModel
// (through a per-thread PieceCache); the post-processor's ids go around the whole. The same class
// serves SentencePiece BPE `.model` files (text/sentencepiece_bpe.h) and tokenizer.json Unigram
// models (text/unigram_json.h: Viterbi in place of the merges).
// Thread-safe: Encode and Decode are const; per-thread state is thread_local.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "text/added_tokens.h"
#include "text/bpe_model.h"
#include "text/piece_cache.h"
#include "text/regex_splitter.h"
#include "text/sp_text.h"
#include "text/token_decoder.h"
#include "text/tokenizer.h"

namespace stoker {

class UnigramWords;  // text/unigram_json.h

class BpeTokenizer final : public Tokenizer {
 public:
  // A regex split; else Metaspace's edit; else a cut before each `marker` (all of them when
  // `every`); else (all empty) the byte-level prefix space.
  struct Stage {
    std::unique_ptr<RegexSplitter> split;
    std::optional<MetaspaceStep> metaspace = std::nullopt;
    std::string marker = {};
    bool every = false;
  };
  // Config::added_strips; kModelPiece: a non-special added token whose id is a model piece too.
  static constexpr uint8_t kLstrip = 1, kRstrip = 2, kModelPiece = 4;
  struct Config {
    BpeModel model;
    // Set: a tokenizer.json Unigram model encodes each pre-token instead of the merges (`model`
    // then holds its pieces, without merges, for decode and lookups).
    std::shared_ptr<const UnigramWords> unigram;
    std::vector<Stage> stages;
    bool nfc = false;
    std::vector<TextEdit> edits;     // after NFC, in order
    bool whole_piece_first = false;  // tiktoken, and tokenizer.json's ignore_merges
    // Prepend edits only at the start of the text (UseDummyPrefixAtStartOnly).
    bool dummy_prefix_at_start_only = false;
    // Added tokens, cut out before pre-tokenizing (special ones only when allowed): first those
    // matched on the raw text, then, in each segment after normalization, the normalized ones.
    AddedTokens added;
    AddedTokens added_normalized;
    std::vector<std::string> added_content;  // id -> content for decode, for added/special ids
    std::vector<uint8_t> added_strips;       // id -> kLstrip | kRstrip | kModelPiece
    std::vector<int32_t> prefix_ids;         // post-processor template around the document
    std::vector<int32_t> suffix_ids;
    TokenDecoder decoder;      // kBytes for byte-level BPE
    std::string decode_error;  // set: Decode fails with it (a decoder stoker does not know)
    int32_t eos_id = -1;
    uint64_t vocab_size = 0;
    TokenizerIdentity identity;
  };

  explicit BpeTokenizer(Config config);
  // TokenizerOptions::dummy_prefix_at_start_only: Metaspace stages that prepend always prepend
  // at the start of the text only, and so do Prepend edits (and not before a space there).
  static void UseDummyPrefixAtStartOnly(Config* c);

  Status Encode(std::string_view utf8, std::vector<int32_t>* ids) const override;
  Status Decode(std::span<const int32_t> ids, std::string* out) const override;
  Status TokenText(int32_t id, std::string* out, TokenTextFlags* flags) const override;
  bool ModelPieceText(int32_t id, std::string* out) const override;
  uint64_t vocab_size() const override { return c_.vocab_size; }
  int32_t eos_id() const override { return c_.eos_id; }
  const TokenizerIdentity& identity() const override { return c_.identity; }

 private:
  // `at_start`: the text begins at byte 0 of the document (Metaspace's prepend_scheme "first").
  Status EncodeSegment(std::string_view segment, bool at_start, std::vector<int32_t>* ids) const;
  Status EncodeNormalized(std::string_view segment, bool at_start, std::vector<int32_t>* ids) const;
  Status RunStages(std::string_view piece, size_t stage, bool at_start,
                   std::vector<int32_t>* ids) const;
  void EncodePiece(std::string_view piece, PieceCache* cache, std::vector<int32_t>* ids) const;
  // EncodePiece after `piece` missed the short cache (or is too long for it).
  void EncodeMissedPiece(std::string_view piece, PieceCache* cache,
                         std::vector<int32_t>* ids) const;
  // Encodes `piece` cut around the model's isolated characters, each part through the caches;
  // false (nothing appended) when it has none.
  bool EncodeAroundIsolated(std::string_view piece, PieceCache* cache,
                            std::vector<int32_t>* ids) const;
  // The string of `id` (an added token's content, else its vocabulary bytes); kOutOfRange
  // outside the vocabulary.
  Status TokenString(int32_t id, std::string_view* token, bool* added) const;

  Config c_;
  uint64_t instance_;  // names this tokenizer's per-thread piece caches
};

}  // namespace stoker
