#include "text/sp_text.h"

#include <algorithm>
#include <cstring>

#include "text/added_tokens.h"

namespace stoker {
namespace {

// SentencePiece's Normalizer::Normalize (normalizer.cc) for a model without a charsmap: each
// character is itself; ' ' becomes "▁"; the dummy prefix "▁" goes first; with
// remove_extra_whitespaces, leading and repeated spaces are dropped and trailing "▁" (also a "▁"
// that was in the text) removed.
void SentencePieceNormalize(const TextEdit& e, std::string_view in, std::string* out) {
  if (e.remove_extra_whitespaces) {
    while (!in.empty() && in.front() == ' ') in.remove_prefix(1);
  }
  if (in.empty()) return;
  if (e.add_dummy_prefix) out->append(kMetaSymbol);
  bool prev_space = e.remove_extra_whitespaces;
  for (char c : in) {
    if (c == ' ') {
      if (!prev_space) out->append(kMetaSymbol);
      prev_space = e.remove_extra_whitespaces;
    } else {
      out->push_back(c);
      prev_space = false;
    }
  }
  if (e.remove_extra_whitespaces) {
    while (out->size() >= kMetaSymbol.size() &&
           std::string_view(*out).substr(out->size() - kMetaSymbol.size()) == kMetaSymbol) {
      out->resize(out->size() - kMetaSymbol.size());
    }
  }
}

}  // namespace

void ReplaceAll(std::string_view in, std::string_view from, std::string_view to, std::string* out) {
  if (from.empty()) {
    out->append(in);
    return;
  }
  if (from.size() == 1 && !to.empty()) {
    // The normalizers' " " -> "▁": one pass writing into the final size. A find and two appends
    // per space cost ~60 instructions a byte of prose and code, a fifth of Phi-3's encode.
    const char f = from[0];
    const size_t hits = static_cast<size_t>(std::count(in.begin(), in.end(), f));
    const size_t old = out->size();
    out->resize(old + in.size() + hits * (to.size() - 1));
    char* w = out->data() + old;
    for (char c : in) {
      if (c == f) {
        std::memcpy(w, to.data(), to.size());
        w += to.size();
      } else {
        *w++ = c;
      }
    }
    return;
  }
  size_t pos = 0, at;
  while ((at = in.find(from, pos)) != std::string_view::npos) {
    out->append(in.substr(pos, at - pos));
    out->append(to);
    pos = at + from.size();
  }
  out->append(in.substr(pos));
}

namespace {

// Each run of two or more spaces becomes `to` (the Regex " {2,}" matches them leftmost, longest).
void ReplaceSpaceRuns(std::string_view in, std::string_view to, std::string* out) {
  size_t pos = 0;
  while (pos < in.size()) {
    const size_t at = in.find("  ", pos);
    if (at == std::string_view::npos) break;
    size_t end = at + 2;
    while (end < in.size() && in[end] == ' ') ++end;
    out->append(in.substr(pos, at - pos));
    out->append(to);
    pos = end;
  }
  out->append(in.substr(pos));
}

}  // namespace

void ApplyTextEdit(const TextEdit& edit, std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size() + in.size() / 2 + 8);
  switch (edit.kind) {
    case TextEdit::Kind::kPrepend:
      if (!in.empty()) out->append(edit.to);
      out->append(in);
      return;
    case TextEdit::Kind::kReplace:
      ReplaceAll(in, edit.from, edit.to, out);
      return;
    case TextEdit::Kind::kSentencePiece:
      SentencePieceNormalize(edit, in, out);
      return;
    case TextEdit::Kind::kPrecompiled:
      edit.charsmap->NormalizeGraphemes(in, out);
      return;
    case TextEdit::Kind::kSpaceRuns:
      ReplaceSpaceRuns(in, edit.to, out);
      return;
    case TextEdit::Kind::kStrip: {  // NormalizedString::lstrip / rstrip: char::is_whitespace
      const size_t begin = edit.strip_left ? WhiteSpaceAfter(in, 0) : 0;
      const size_t end = edit.strip_right ? WhiteSpaceBefore(in, in.size(), begin) : in.size();
      out->append(in.substr(begin, end - begin));
      return;
    }
  }
}

void ApplyMetaspace(const MetaspaceStep& m, std::string_view piece, bool at_start,
                    std::string* out) {
  out->clear();
  ReplaceAll(piece, " ", m.replacement, out);
  const bool starts = std::string_view(*out).starts_with(m.replacement);
  if (!starts && (m.prepend == MetaspaceStep::Prepend::kAlways ||
                  (m.prepend == MetaspaceStep::Prepend::kFirst && at_start))) {
    out->insert(0, m.replacement);
  }
}

}  // namespace stoker
