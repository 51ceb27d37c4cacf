#include "text/sp_text.h"

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

// The length of `c` if it is one White_Space character (Rust's char::is_whitespace), else 0.
size_t WhiteSpaceLength(std::string_view c) {
  static constexpr std::string_view kWide[] = {
      "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81",
      "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86",
      "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89", "\xE2\x80\x8A", "\xE2\x80\xA8",
      "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"};
  if (c.size() == 1) return (c[0] == ' ' || (c[0] >= '\t' && c[0] <= '\r')) ? 1 : 0;
  for (std::string_view w : kWide) {
    if (c == w) return w.size();
  }
  return 0;
}

// `in` without White_Space characters at its start (left) and/or its end (right).
std::string_view StripWhiteSpace(std::string_view in, bool left, bool right) {
  auto first_length = [](std::string_view s) {  // the UTF-8 length of the first character
    const auto b = static_cast<uint8_t>(s[0]);
    const size_t n = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return std::min(n, s.size());
  };
  while (left && !in.empty()) {
    const size_t n = WhiteSpaceLength(in.substr(0, first_length(in)));
    if (n == 0) break;
    in.remove_prefix(n);
  }
  while (right && !in.empty()) {
    size_t start = in.size() - 1;  // the last character's first byte
    while (start > 0 && (static_cast<uint8_t>(in[start]) & 0xC0) == 0x80) --start;
    const size_t n = WhiteSpaceLength(in.substr(start));
    if (n == 0) break;
    in.remove_suffix(n);
  }
  return in;
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
    case TextEdit::Kind::kStrip:
      out->append(StripWhiteSpace(in, edit.strip_left, edit.strip_right));
      return;
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
