#include "text/sentencepiece_bpe.h"

#include <algorithm>
#include <unordered_map>

#include "common/file_util.h"
#include "common/hash.h"
#include "text/sentencepiece_model.h"
#include "text/sp_text.h"
#include "text/utf8.h"

namespace stoker {
namespace {

using Type = SentencePieceModel::PieceType;

// SentencePiece's pieces_ (normal, user-defined, unused): the strings merges may form.
bool IsMergeable(Type t) { return t == Type::kNormal || t == Type::kUserDefined; }

// Why the model needs the library, or "".
std::string Unsupported(const SentencePieceModel& m) {
  if (m.model_type != 2) return "not a BPE model";
  if (!m.precompiled_charsmap.empty()) return "its normalizer has a charsmap";
  if (m.has_denormalizer) return "it has a denormalizer";
  if (m.treat_whitespace_as_suffix) return "treat_whitespace_as_suffix";
  if (!m.escape_whitespaces) return "escape_whitespaces is off";
  if (m.unk_id < 0 || static_cast<size_t>(m.unk_id) >= m.pieces.size() ||
      m.pieces[static_cast<size_t>(m.unk_id)].type != Type::kUnknown) {
    return "no unknown piece at unk_id";
  }
  std::unordered_map<std::string_view, int32_t> seen;
  int byte_pieces = 0;
  for (size_t i = 0; i < m.pieces.size(); ++i) {
    const SentencePieceModel::Piece& p = m.pieces[i];
    if (p.piece.empty() || p.type == Type::kUnused) return "empty or unused pieces";
    if (!seen.emplace(p.piece, static_cast<int32_t>(i)).second) return "a duplicate piece";
    if (p.type == Type::kUnknown && i != static_cast<size_t>(m.unk_id)) return "two unk pieces";
    if (p.type == Type::kByte) ++byte_pieces;
    // SentencePiece's normalizer keeps a user-defined piece whole, so it would not collapse the
    // spaces inside one as stoker's normalizer does.
    if (p.type == Type::kUserDefined && m.remove_extra_whitespaces &&
        p.piece.find(' ') != std::string::npos) {
      return "a user-defined piece with a space, and remove_extra_whitespaces";
    }
    if (!IsMergeable(p.type) &&
        p.piece.size() == Utf8SequenceLength(static_cast<uint8_t>(p.piece[0]))) {
      return "a reserved piece of one character";
    }
  }
  if (m.byte_fallback != (byte_pieces == 256)) return "byte_fallback without 256 byte pieces";
  // No merge may take a character outside the vocabulary (an unknown symbol): SentencePiece
  // merges by strings, so a piece L+R where L or R is such a character and the other half a
  // possible symbol (a piece, or one character) would merge there, and stoker's pair table,
  // built from pieces, would not. (User-defined "[X]" whose "[" is no piece is fine: "[X" and
  // "X]" are no symbols.)
  for (const SentencePieceModel::Piece& p : m.pieces) {
    if (!IsMergeable(p.type)) continue;
    const std::string_view s = p.piece;
    auto symbol = [&](std::string_view half, bool* piece) {
      auto it = seen.find(half);
      *piece = it != seen.end() && IsMergeable(m.pieces[static_cast<size_t>(it->second)].type);
      return *piece || half.size() == Utf8SequenceLength(static_cast<uint8_t>(half[0]));
    };
    for (size_t at = Utf8SequenceLength(static_cast<uint8_t>(s[0])); at < s.size();
         at += Utf8SequenceLength(static_cast<uint8_t>(s[at]))) {
      bool left_piece, right_piece;
      if (symbol(s.substr(0, at), &left_piece) && symbol(s.substr(at), &right_piece) &&
          !(left_piece && right_piece)) {
        return "a piece can form from a character that is not a piece";
      }
    }
  }
  return "";
}

}  // namespace

Result<std::unique_ptr<BpeTokenizer>> OpenSentencePieceBpe(std::string_view bytes,
                                                           const std::string& path,
                                                           const SentencePieceOptions& options,
                                                           std::string* why) {
  STOKER_ASSIGN_OR_RETURN(SentencePieceModel m, ParseSentencePieceModel(bytes, path));
  *why = Unsupported(m);
  if (!why->empty()) return std::unique_ptr<BpeTokenizer>();
  const size_t n = m.pieces.size();
  if (n >= static_cast<size_t>(INT32_MAX)) {
    *why = "too many pieces";
    return std::unique_ptr<BpeTokenizer>();
  }

  // Pairs: every split of a mergeable piece at a character boundary into two mergeable pieces,
  // ranked by the piece's score, highest first (equal scores share a rank: the leftmost wins).
  std::unordered_map<std::string_view, int32_t> mergeable;
  std::vector<float> scores;
  for (size_t i = 0; i < n; ++i) {
    if (!IsMergeable(m.pieces[i].type)) continue;
    mergeable.emplace(m.pieces[i].piece, static_cast<int32_t>(i));
    scores.push_back(m.pieces[i].score);
  }
  std::sort(scores.begin(), scores.end(), std::greater<float>());
  scores.erase(std::unique(scores.begin(), scores.end()), scores.end());
  auto rank_of = [&](float score) {
    return static_cast<uint32_t>(
        std::lower_bound(scores.begin(), scores.end(), score, std::greater<float>()) -
        scores.begin());
  };
  std::vector<BpeModel::Merge> merges;
  std::vector<std::string> tokens(n);
  std::vector<TokenDecoder::PieceKind> kinds(n, TokenDecoder::PieceKind::kNormal);
  std::vector<int32_t> fallback(m.byte_fallback ? 256 : 0, -1);
  std::vector<AddedTokens::Token> user_defined;
  for (size_t i = 0; i < n; ++i) {
    const SentencePieceModel::Piece& p = m.pieces[i];
    tokens[i] = p.piece;
    switch (p.type) {
      case Type::kControl:
        kinds[i] = TokenDecoder::PieceKind::kControl;
        break;
      case Type::kUnknown:
        kinds[i] = TokenDecoder::PieceKind::kUnknown;
        break;
      case Type::kByte: {
        kinds[i] = TokenDecoder::PieceKind::kByte;
        const int b = ByteFallbackValue(p.piece);
        if (b < 0 || fallback[static_cast<size_t>(b)] >= 0) {
          *why = "a malformed byte piece";
          return std::unique_ptr<BpeTokenizer>();
        }
        fallback[static_cast<size_t>(b)] = static_cast<int32_t>(i);
        break;
      }
      default:
        break;
    }
    if (p.type == Type::kUserDefined) user_defined.push_back({p.piece, static_cast<int32_t>(i)});
    if (!IsMergeable(p.type)) continue;
    const std::string_view s = p.piece;
    for (size_t at = Utf8SequenceLength(static_cast<uint8_t>(s[0])); at < s.size();
         at += Utf8SequenceLength(static_cast<uint8_t>(s[at]))) {
      auto l = mergeable.find(s.substr(0, at));
      if (l == mergeable.end()) continue;
      auto r = mergeable.find(s.substr(at));
      if (r == mergeable.end()) continue;
      merges.push_back({l->second, r->second, rank_of(p.score), static_cast<int32_t>(i)});
    }
  }

  BpeTokenizer::Config c;
  Result<BpeModel> model = BpeModel::Build(tokens, merges);
  if (!model.ok()) return InvalidArgument(path + ": " + std::string(model.status().message()));
  c.model = std::move(model).value();
  c.model.set_unk(m.unk_id, /*fuse_unk=*/true);
  c.model.set_char_symbols(std::move(fallback));
  TextEdit normalize;
  normalize.kind = TextEdit::Kind::kSentencePiece;
  normalize.add_dummy_prefix = m.add_dummy_prefix;
  normalize.remove_extra_whitespaces = m.remove_extra_whitespaces;
  c.edits.push_back(normalize);
  c.added_normalized = AddedTokens(std::move(user_defined));
  if (c.model.MarkerCutIsExact(kMetaSymbol)) {
    c.stages.push_back({nullptr, std::nullopt, std::string(kMetaSymbol), false});
  }
  c.decoder = TokenDecoder::SentencePiece(std::move(kinds), m.unk_surface, m.add_dummy_prefix,
                                          m.remove_extra_whitespaces);
  c.vocab_size = n;
  auto in_vocab = [&](int32_t id) { return id >= 0 && static_cast<size_t>(id) < n ? id : -1; };
  auto find = [&](const std::string& text) {
    for (size_t i = 0; i < n; ++i) {
      if (m.pieces[i].piece == text) return static_cast<int32_t>(i);
    }
    return int32_t{-1};
  };
  STOKER_ASSIGN_OR_RETURN(
      SentencePieceSpecialIds ids,
      ResolveSentencePieceSpecials(options, path, static_cast<int64_t>(n), in_vocab(m.eos_id),
                                   in_vocab(m.bos_id), find));
  c.eos_id = ids.eos_id;
  if (ids.bos_id >= 0) c.prefix_ids.push_back(ids.bos_id);
  // The same identity as the library's tokenizer: a dataset's manifest does not change with
  // the engine that produced the (identical) ids.
  c.identity = {"sentencepiece", BaseName(path) + (options.add_bos ? " add-bos" : ""),
                Xxh3Hex(Xxh3(bytes.data(), bytes.size()))};
  return std::make_unique<BpeTokenizer>(std::move(c));
}

}  // namespace stoker
