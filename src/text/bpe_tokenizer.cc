#include "text/bpe_tokenizer.h"

#include <atomic>

#include "text/long_piece_cache.h"
#include "text/unicode_nfc.h"
#include "text/unigram_json.h"
#include "text/utf8.h"

namespace stoker {

namespace {

// Never 0 (the id of an empty cache) and never reused, so a thread's cache cannot outlive its
// tokenizer and be taken for another one at the same address.
std::atomic<uint64_t> next_instance{1};

}  // namespace

BpeTokenizer::BpeTokenizer(Config config)
    : c_(std::move(config)), instance_(next_instance.fetch_add(1)) {}

void BpeTokenizer::UseDummyPrefixAtStartOnly(Config* c) {
  c->dummy_prefix_at_start_only = true;
  for (Stage& s : c->stages) {
    if (s.metaspace && s.metaspace->prepend == MetaspaceStep::Prepend::kAlways) {
      s.metaspace->prepend = MetaspaceStep::Prepend::kFirst;
    }
  }
}

void BpeTokenizer::EncodePiece(std::string_view piece, PieceCache* cache,
                               std::vector<int32_t>* ids) const {
  if (piece.size() <= PieceCache::kMaxBytes && cache->Lookup(piece, ids)) return;
  EncodeMissedPiece(piece, cache, ids);
}

void BpeTokenizer::EncodeMissedPiece(std::string_view piece, PieceCache* cache,
                                     std::vector<int32_t>* ids) const {
  LongPieceCache* long_cache = nullptr;
  if (piece.size() <= LongPieceCache::kMaxBytes) {
    // SentencePiece-style words are long in bytes (see long_piece_cache.h). Byte-level BPE's
    // pre-tokens rarely are (1% of o200k's on prose and code), but each costs 20+ pair lookups
    // to merge: caching them took o200k from 3.2x to 3.5x tiktoken (bench/RESULTS.md, session 36).
    // Short pieces of more than PieceCache::kMaxIds ids ("/libgbafpc", " JURISDICTIONS", CJK)
    // are kept here too (session 37): before, they were merged again at every occurrence.
    long_cache = LongPieceCache::ForThread(instance_);
    if (long_cache->Lookup(piece, ids)) return;
  }
  size_t start = ids->size();
  int32_t id = c_.whole_piece_first ? c_.model.Find(piece) : -1;
  if (id >= 0) {
    ids->push_back(id);
  } else if (c_.unigram) {
    c_.unigram->EncodeWord(piece, ids);
  } else if (!EncodeAroundIsolated(piece, cache, ids)) {
    c_.model.EncodePiece(piece, ids);
  }
  const size_t count = ids->size() - start;
  if (piece.size() <= PieceCache::kMaxBytes && count <= PieceCache::kMaxIds) {
    cache->Insert(piece, ids->data() + start, count);
  } else if (long_cache != nullptr) {
    long_cache->Insert(piece, ids->data() + start, count);
  }
}

// Llama 2's "\n" or digits end a SentencePiece-style word for the merges (BpeModel::isolated):
// "):\n\n▁▁▁▁return" is "):", "\n", "\n" and "▁▁▁▁return", each found in the caches (the
// parts of code and CJK lines repeat where the whole rarely does), and a long piece merges in
// short parts. Not with ignore_merges, which looks the whole piece up first.
bool BpeTokenizer::EncodeAroundIsolated(std::string_view piece, PieceCache* cache,
                                        std::vector<int32_t>* ids) const {
  if (!c_.model.has_isolated() || c_.whole_piece_first || piece.size() < 2) return false;
  size_t at = 0;
  while (at < piece.size() && !c_.model.isolated(static_cast<uint8_t>(piece[at]))) ++at;
  if (at == piece.size()) return false;
  size_t start = 0;
  for (; at < piece.size(); ++at) {
    if (!c_.model.isolated(static_cast<uint8_t>(piece[at]))) continue;
    if (at > start) EncodePiece(piece.substr(start, at - start), cache, ids);
    c_.model.EncodePiece(piece.substr(at, 1), ids);
    start = at + 1;
  }
  if (start < piece.size()) EncodePiece(piece.substr(start), cache, ids);
  return true;
}

Status BpeTokenizer::RunStages(std::string_view piece, size_t stage, bool at_start,
                               std::vector<int32_t>* ids) const {
  PieceCache* cache = PieceCache::ForThread(instance_);
  if (stage == c_.stages.size()) {
    EncodePiece(piece, cache, ids);
    return Status::OK();
  }
  const Stage& s = c_.stages[stage];
  if (s.metaspace) {
    std::string edited;
    ApplyMetaspace(*s.metaspace, piece, at_start, &edited);
    return RunStages(edited, stage + 1, at_start, ids);
  }
  if (!s.marker.empty()) {
    Status st;
    const bool last = stage + 1 == c_.stages.size();
    CutBeforeMarker(piece, s.marker, s.every, [&](std::string_view p) {
      if (last) {
        EncodePiece(p, cache, ids);
      } else if (st.ok()) {
        st = RunStages(p, stage + 1, at_start && p.data() == piece.data(), ids);
      }
    });
    return st;
  }
  if (!s.split) {  // byte-level add_prefix_space: every piece reaching it starts with a space
    if (!piece.empty() && piece.front() == ' ') return RunStages(piece, stage + 1, at_start, ids);
    std::string spaced;
    spaced.reserve(piece.size() + 1);
    spaced += ' ';
    spaced += piece;
    return RunStages(spaced, stage + 1, at_start, ids);
  }
  if (stage + 1 == c_.stages.size()) {  // the common case: no recursion per piece
    // The short cache's hits (most pieces) inline: no call per piece (o200k: -3% instructions).
    return s.split->Split(piece, [&](std::string_view p) {
      if (p.size() <= PieceCache::kMaxBytes && cache->Lookup(p, ids)) return;
      EncodeMissedPiece(p, cache, ids);
    });
  }
  Status st;
  STOKER_RETURN_IF_ERROR(s.split->Split(piece, [&](std::string_view p) {
    if (st.ok()) st = RunStages(p, stage + 1, at_start && p.data() == piece.data(), ids);
  }));
  return st;
}

Status BpeTokenizer::EncodeNormalized(std::string_view text, bool at_start,
                                      std::vector<int32_t>* ids) const {
  size_t pos = 0;
  while (!c_.added_normalized.empty()) {
    AddedTokens::Match m = c_.added_normalized.Find(text, pos);
    if (m.pos == std::string_view::npos) break;
    if (m.pos > pos) {
      STOKER_RETURN_IF_ERROR(
          RunStages(text.substr(pos, m.pos - pos), 0, at_start && pos == 0, ids));
    }
    ids->push_back(m.id);
    pos = m.pos + m.len;
  }
  if (pos < text.size()) return RunStages(text.substr(pos), 0, at_start && pos == 0, ids);
  return Status::OK();
}

Status BpeTokenizer::EncodeSegment(std::string_view segment, bool at_start,
                                   std::vector<int32_t>* ids) const {
  if (segment.empty()) return Status::OK();
  if (!c_.nfc && c_.edits.empty()) return EncodeNormalized(segment, at_start, ids);
  std::string normalized, edited;
  if (c_.nfc) {
    STOKER_RETURN_IF_ERROR(NormalizeNfc(segment, &normalized));
  } else {
    normalized.assign(segment);
  }
  for (const TextEdit& e : c_.edits) {
    if (e.kind == TextEdit::Kind::kPrepend && c_.dummy_prefix_at_start_only &&
        (!at_start || normalized.starts_with(' ') || normalized.starts_with(e.to))) {
      continue;
    }
    ApplyTextEdit(e, normalized, &edited);
    normalized.swap(edited);
  }
  return EncodeNormalized(normalized, at_start, ids);
}

Status BpeTokenizer::Encode(std::string_view utf8, std::vector<int32_t>* ids) const {
  size_t bad = FindInvalidUtf8(utf8);
  if (bad != std::string_view::npos) {
    return InvalidArgument(c_.identity.name + ": text to encode is not valid UTF-8 at byte " +
                           std::to_string(bad));
  }
  ids->insert(ids->end(), c_.prefix_ids.begin(), c_.prefix_ids.end());
  size_t pos = 0;
  while (!c_.added.empty()) {
    AddedTokens::Match m = c_.added.Find(utf8, pos);
    if (m.pos == std::string_view::npos) break;
    STOKER_RETURN_IF_ERROR(EncodeSegment(utf8.substr(pos, m.pos - pos), pos == 0, ids));
    ids->push_back(m.id);
    pos = m.pos + m.len;
  }
  STOKER_RETURN_IF_ERROR(EncodeSegment(utf8.substr(pos), pos == 0, ids));
  ids->insert(ids->end(), c_.suffix_ids.begin(), c_.suffix_ids.end());
  return Status::OK();
}

Status BpeTokenizer::TokenString(int32_t id, std::string_view* token, bool* added) const {
  if (id < 0 || static_cast<uint64_t>(id) >= c_.vocab_size) {
    return OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                      std::to_string(c_.vocab_size) + ")");
  }
  const size_t i = static_cast<size_t>(id);
  *added = i < c_.added_content.size() && !c_.added_content[i].empty();
  if (*added) {
    *token = c_.added_content[i];
  } else if (i < c_.model.size()) {
    *token = c_.model.token_bytes(id);
  } else {
    *token = {};
  }
  return Status::OK();
}

Status BpeTokenizer::Decode(std::span<const int32_t> ids, std::string* out) const {
  std::vector<std::string_view> tokens(ids.size());
  bool added = false;
  for (size_t k = 0; k < ids.size(); ++k) {
    STOKER_RETURN_IF_ERROR(TokenString(ids[k], &tokens[k], &added));
  }
  if (!c_.decode_error.empty()) return Unimplemented(c_.decode_error);
  c_.decoder.Decode(tokens, ids, out);
  return Status::OK();
}

Status BpeTokenizer::TokenText(int32_t id, std::string* out, TokenTextFlags* flags) const {
  std::string_view token;
  *flags = TokenTextFlags{};
  STOKER_RETURN_IF_ERROR(TokenString(id, &token, &flags->added));
  if (!c_.decode_error.empty()) return Unimplemented(c_.decode_error);
  const size_t i = static_cast<size_t>(id);
  const uint8_t strips = i < c_.added_strips.size() ? c_.added_strips[i] : 0;
  flags->lstrip = strips & kLstrip;
  flags->rstrip = strips & kRstrip;
  out->append(flags->added ? std::string(token) : c_.decoder.Surface(token, id));
  return Status::OK();
}

bool BpeTokenizer::ModelPieceText(int32_t id, std::string* out) const {
  const size_t i = static_cast<size_t>(id);
  if (id < 0 || i >= c_.added_strips.size() || !(c_.added_strips[i] & kModelPiece)) return false;
  if (i >= c_.model.size() || !c_.decode_error.empty()) return false;
  const std::string surface = c_.decoder.Surface(c_.model.token_bytes(id), id);
  if (surface.empty() || surface == c_.added_content[i]) return false;
  out->append(surface);
  return true;
}

}  // namespace stoker
