#include "text/sentencepiece_unigram.h"

#include <cfloat>
#include <unordered_map>

#include "common/file_util.h"
#include "common/hash.h"

namespace stoker {
namespace {

using SpType = SentencePieceModel::PieceType;

}  // namespace

Result<std::unique_ptr<SentencePieceUnigram>> SentencePieceUnigram::Open(
    const SentencePieceModel& m, std::string_view bytes, const std::string& path,
    const SentencePieceOptions& options) {
  auto refuse = [&](const std::string& what) {
    return InvalidArgument(path + ": " + what +
                           " (stoker encodes this SentencePiece model "
                           "itself and does not reproduce that)");
  };
  if (m.model_type != 1) {
    return refuse("trainer_spec.model_type " + std::to_string(m.model_type) +
                  " is not Unigram (1)");
  }
  if (m.has_denormalizer) return refuse("denormalizer_spec.precompiled_charsmap is set");
  const size_t n = m.pieces.size();
  if (n >= static_cast<size_t>(INT32_MAX)) return refuse("too many pieces");
  std::unique_ptr<SentencePieceUnigram> t(new SentencePieceUnigram());
  STOKER_ASSIGN_OR_RETURN(
      t->normalizer_.charsmap,
      PrecompiledCharsmap::Parse(m.precompiled_charsmap, path + ": normalizer_spec"));
  t->normalizer_.add_dummy_prefix = m.add_dummy_prefix;
  t->normalizer_.remove_extra_whitespaces = m.remove_extra_whitespaces;
  t->normalizer_.escape_whitespaces = m.escape_whitespaces;
  t->normalizer_.treat_whitespace_as_suffix = m.treat_whitespace_as_suffix;

  // model_interface.cc InitializePieces: normal, user-defined and unused pieces are matched in
  // the text (unused ones skipped by Viterbi); control, unknown and byte pieces are reserved.
  std::vector<UnigramModel::Piece> pieces(n);
  std::vector<TokenDecoder::PieceKind> kinds(n, TokenDecoder::PieceKind::kNormal);
  std::vector<std::pair<std::string_view, int32_t>> user_defined;
  std::unordered_map<std::string_view, int32_t> matched, reserved;
  float min_score = FLT_MAX;  // over normal pieces, as unigram_model.cc
  int32_t unk = -1;
  t->pieces_.resize(n);
  if (m.byte_fallback) t->byte_ids_.assign(256, -1);
  for (size_t i = 0; i < n; ++i) {
    const SentencePieceModel::Piece& p = m.pieces[i];
    const int32_t id = static_cast<int32_t>(i);
    t->pieces_[i] = p.piece;
    if (p.piece.empty()) return refuse("pieces[" + std::to_string(i) + "] is empty");
    const bool is_matched =
        p.type == SpType::kNormal || p.type == SpType::kUserDefined || p.type == SpType::kUnused;
    if (!(is_matched ? matched : reserved).emplace(p.piece, id).second) {
      return refuse("pieces[" + std::to_string(i) + "] '" + p.piece + "' is already defined");
    }
    pieces[i] = {t->pieces_[i], p.score, UnigramModel::Kind::kSkip};
    switch (p.type) {
      case SpType::kNormal:
        pieces[i].kind = UnigramModel::Kind::kNormal;
        min_score = std::min(min_score, p.score);
        break;
      case SpType::kUserDefined:
        pieces[i].kind = UnigramModel::Kind::kUserDefined;
        user_defined.emplace_back(t->pieces_[i], id);
        break;
      case SpType::kUnknown:
        if (unk >= 0) return refuse("pieces[" + std::to_string(i) + "]: a second unknown piece");
        unk = id;
        kinds[i] = TokenDecoder::PieceKind::kUnknown;
        break;
      case SpType::kControl:
        kinds[i] = TokenDecoder::PieceKind::kControl;
        break;
      case SpType::kByte: {
        const int b = ByteFallbackValue(p.piece);
        if (!m.byte_fallback || b < 0) {
          return refuse("pieces[" + std::to_string(i) + "] '" + p.piece +
                        "' is a byte piece but trainer_spec.byte_fallback is off or the piece "
                        "is not <0xXX>");
        }
        kinds[i] = TokenDecoder::PieceKind::kByte;
        if (t->byte_ids_[static_cast<size_t>(b)] < 0) t->byte_ids_[static_cast<size_t>(b)] = id;
        break;
      }
      case SpType::kUnused:
        break;
    }
  }
  if (unk < 0) return refuse("no piece is of type UNKNOWN");
  t->unk_id_ = unk;
  for (int32_t& id : t->byte_ids_) {
    if (id < 0) id = unk;  // PieceToId of a missing piece is unk_id
  }
  t->normalizer_.user_defined = PieceTrie::Build(std::move(user_defined));
  t->normalizer_.Finish();
  t->model_ = UnigramModel::Build(pieces, unk, min_score, UnigramModel::Arithmetic::kSentencePiece);
  t->decoder_ = TokenDecoder::SentencePiece(std::move(kinds), m.unk_surface, m.add_dummy_prefix,
                                            m.remove_extra_whitespaces);
  auto in_vocab = [&](int32_t id) { return id >= 0 && static_cast<size_t>(id) < n ? id : -1; };
  auto find = [&](const std::string& text) {
    auto it = matched.find(text);
    if (it != matched.end()) return it->second;
    it = reserved.find(text);
    return it != reserved.end() ? it->second : int32_t{-1};
  };
  STOKER_ASSIGN_OR_RETURN(
      SentencePieceSpecialIds ids,
      ResolveSentencePieceSpecials(options, path, static_cast<int64_t>(n), in_vocab(m.eos_id),
                                   in_vocab(m.bos_id), find));
  t->eos_id_ = ids.eos_id;
  t->bos_id_ = ids.bos_id;
  // The same identity as libsentencepiece's tokenizer had: a dataset's manifest does not change
  // with the engine that produced the (identical) ids.
  t->identity_ = {"sentencepiece", BaseName(path) + (options.add_bos ? " add-bos" : ""),
                  Xxh3Hex(Xxh3(bytes.data(), bytes.size()))};
  return t;
}

Status SentencePieceUnigram::Encode(std::string_view utf8, std::vector<int32_t>* ids) const {
  thread_local std::string normalized;
  thread_local std::vector<UnigramModel::Span> spans;
  if (bos_id_ >= 0) ids->push_back(bos_id_);
  normalizer_.Normalize(utf8, &normalized);
  model_.Encode(normalized, &spans);
  ids->reserve(ids->size() + spans.size());  // one id per span but for byte fallback
  // PopulateSentencePieceText: an unknown piece becomes its bytes' pieces, else a run of unknown
  // pieces is one.
  bool prev_unk = false;
  for (const UnigramModel::Span& s : spans) {
    const bool is_unk = s.id == unk_id_;
    if (is_unk && !byte_ids_.empty()) {
      for (uint32_t k = s.begin; k < s.end; ++k) {
        ids->push_back(byte_ids_[static_cast<uint8_t>(normalized[k])]);
      }
    } else if (!(is_unk && prev_unk)) {
      ids->push_back(s.id);
    }
    prev_unk = is_unk;
  }
  return Status::OK();
}

Status SentencePieceUnigram::CheckIds(std::span<const int32_t> ids) const {
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= pieces_.size()) {
      return OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(pieces_.size()) + ")");
    }
  }
  return Status::OK();
}

Status SentencePieceUnigram::Decode(std::span<const int32_t> ids, std::string* out) const {
  STOKER_RETURN_IF_ERROR(CheckIds(ids));
  std::vector<std::string_view> tokens(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) tokens[k] = pieces_[static_cast<size_t>(ids[k])];
  decoder_.Decode(tokens, ids, out);
  return Status::OK();
}

Status SentencePieceUnigram::TokenText(int32_t id, std::string* out, TokenTextFlags* flags) const {
  *flags = TokenTextFlags{};
  STOKER_RETURN_IF_ERROR(CheckIds(std::span<const int32_t>(&id, 1)));
  out->append(decoder_.Surface(pieces_[static_cast<size_t>(id)], id));
  return Status::OK();
}

}  // namespace stoker
