// SentencePieceModel: the fields of a SentencePiece `.model` file (a serialized ModelProto) that
// decide how it encodes, read with a small protobuf wire-format reader of our own.
//
// Why not libprotobuf: stoker links libsentencepiece (and its protobuf-lite) only for the models
// it does not encode itself, and reading a model must neither depend on that library's protobuf
// ABI nor run its generated code on untrusted bytes. The reader knows the five wire types, skips
// every field it does not need, and checks every length against the bytes left, so any input is
// either a model or one error (fuzz/sentencepiece_model_fuzzer.cc).
// Pure data and a pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

struct SentencePieceModel {
  enum class PieceType : uint8_t {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,
    kUserDefined = 4,
    kUnused = 5,
    kByte = 6
  };
  struct Piece {
    std::string piece;
    float score = 0;
    PieceType type = PieceType::kNormal;
  };
  std::vector<Piece> pieces;
  // TrainerSpec (the proto's defaults where a field is absent).
  int32_t model_type = 1;  // 1 unigram, 2 BPE, 3 word, 4 char
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  std::string unk_surface = " \xE2\x81\x87 ";
  // NormalizerSpec.
  std::string normalizer_name;
  std::string precompiled_charsmap;
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
  // A denormalizer_spec with a charsmap (changes decode).
  bool has_denormalizer = false;
};

// Parses a ModelProto. kInvalidArgument (naming `origin`) for bytes that are not a well-formed
// protobuf of that shape; the model's meaning (ids in range, piece types) is checked by its user.
Result<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes, std::string_view origin);

}  // namespace stoker
