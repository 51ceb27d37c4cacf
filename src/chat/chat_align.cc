#include "chat/chat_align.h"

#include <array>
#include <string>

#include "text/added_tokens.h"
#include "text/sp_text.h"
#include "text/unicode_nfc.h"

namespace stoker {
namespace {

constexpr size_t kNoMatch = std::string_view::npos;

// Where `token` ends when it is matched at `at` (dummy: without its dummy prefix space), or
// kNoMatch.
size_t MatchEnd(std::string_view text, size_t at, std::string_view token, bool dummy) {
  if (dummy && !token.starts_with(' ')) return kNoMatch;
  if (dummy) token.remove_prefix(1);
  return text.substr(at).starts_with(token) ? at + token.size() : kNoMatch;
}

// How a token is read at `at`: its added text (after the whitespace its lstrip takes) where that
// is there, else the model piece it also is, as a token of the text.
AlignedToken ReadingAt(std::string_view text, size_t at, const AlignedToken& t) {
  if (t.piece.empty()) return t;
  const size_t from = t.flags.lstrip ? WhiteSpaceAfter(text, at) : at;
  if (MatchEnd(text, from, t.bytes, false) != kNoMatch) return t;
  return AlignedToken{t.piece, TokenTextFlags{}, {}};
}

// Whether tokens[k] can start at `at` (after whitespace its lstrip takes); true past the end
// when `at` is the text's end.
bool MatchesAt(std::string_view text, size_t at, std::span<const AlignedToken> tokens, size_t k) {
  if (k == tokens.size()) return at == text.size();
  const AlignedToken t = ReadingAt(text, at, tokens[k]);
  if (t.flags.lstrip) at = WhiteSpaceAfter(text, at);
  return MatchEnd(text, at, t.bytes, false) != kNoMatch;
}

// The ranges of `tokens` in `text` as it is into *out; false where they do not align.
bool AlignAsIs(std::string_view text, std::span<const AlignedToken> tokens,
               std::vector<TokenRange>* out) {
  out->clear();
  out->reserve(tokens.size());
  size_t at = 0;
  TokenTextFlags prev;  // how the previous token was read
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (k > 0 && prev.rstrip) at = out->back().end = WhiteSpaceAfter(text, at);
    const AlignedToken t = ReadingAt(text, at, tokens[k]);
    const bool after_added = k > 0 && prev.added;
    const size_t begin = at;  // with the whitespace an lstrip token takes
    if (t.flags.lstrip) at = WhiteSpaceAfter(text, at);
    // Its bytes as they are, or without a dummy prefix at the start of a run of text. Where both
    // match ("▁" alone before " x"), the one the next token follows; the dummy prefix if both.
    size_t end = MatchEnd(text, at, t.bytes, false);
    if (!t.flags.added && (k == 0 || after_added)) {
      const size_t dummy = MatchEnd(text, at, t.bytes, true);
      if (dummy != kNoMatch && (end == kNoMatch || MatchesAt(text, dummy, tokens, k + 1) ||
                                !MatchesAt(text, end, tokens, k + 1))) {
        end = dummy;
      }
    }
    if (end == kNoMatch) return false;
    out->push_back(TokenRange{begin, end});
    at = end;
    prev = t.flags;
  }
  if (!tokens.empty() && prev.rstrip) at = out->back().end = WhiteSpaceAfter(text, at);
  return at == text.size();
}

}  // namespace

Result<std::vector<TokenRange>> AlignTokens(std::string_view text,
                                            std::span<const AlignedToken> tokens) {
  std::vector<TokenRange> out;
  if (AlignAsIs(text, tokens, &out)) return out;
  // A normalizer that composes characters: the tokens spell the text's NFC (or NFKC) form.
  for (UnicodeForm form : std::array{UnicodeForm::kNfc, UnicodeForm::kNfkc}) {
    NormalizedText n;
    if (!NormalizeWithOffsets(text, form, &n).ok() || n.text == text) continue;
    if (!AlignAsIs(n.text, tokens, &out)) continue;
    for (TokenRange& r : out) r = TokenRange{n.lo[r.begin], n.hi[r.end]};
    return out;
  }
  // Text that holds the meta symbol "▁" itself, under a normalizer that writes spaces as "▁"
  // (Replace, Metaspace): its tokens' "▁" reads as a space like the others.
  if (text.find(kMetaSymbol) != std::string_view::npos) {
    NormalizedText n;
    for (size_t p = 0; p < text.size();) {
      const bool meta = text.substr(p, kMetaSymbol.size()) == kMetaSymbol;
      n.text += meta ? ' ' : text[p];
      n.lo.push_back(uint32_t(p));
      n.hi.push_back(uint32_t(p));
      p += meta ? kMetaSymbol.size() : 1;
    }
    n.lo.push_back(uint32_t(text.size()));
    n.hi.push_back(uint32_t(text.size()));
    if (AlignAsIs(n.text, tokens, &out)) {
      for (TokenRange& r : out) r = TokenRange{n.lo[r.begin], n.hi[r.end]};
      return out;
    }
  }
  return InvalidArgument(
      "stoker cannot place the tokens of this conversation in its text (the tokenizer changes the "
      "text in a way stoker does not follow), so it cannot compute its loss mask");
}

}  // namespace stoker
