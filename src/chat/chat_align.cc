#include "chat/chat_align.h"

#include <array>
#include <string>

#include "text/added_tokens.h"
#include "text/sp_text.h"
#include "text/unicode_nfc.h"
#include "text/utf8.h"

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

// How a token is read at `at`: its added text (after the whitespace its lstrip takes, or that a
// Strip normalizer took: `stripped`) where that is there, else the model piece it also is, as a
// token of the text.
AlignedToken ReadingAt(std::string_view text, size_t at, const AlignedToken& t,
                       bool stripped = false) {
  if (t.piece.empty()) return t;
  const size_t from = t.flags.lstrip || stripped ? WhiteSpaceAfter(text, at) : at;
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

// The ranges of `tokens` in `text` as it is into *out; false where they do not align. Whitespace
// that `strip` says the tokenizer strips off the edge of a run of text, where no token matches
// it, is skipped: it belongs to the token of text beside it in its run (chat_align.h).
bool AlignAsIs(std::string_view text, std::span<const AlignedToken> tokens, StrippedEnds strip,
               std::vector<TokenRange>* out) {
  const bool any = strip.left || strip.right;
  out->clear();
  out->reserve(tokens.size());
  if (tokens.empty() && any) return WhiteSpaceAfter(text, 0) == text.size();  // all stripped
  size_t at = 0;
  TokenTextFlags prev;  // how the previous token was read
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (k > 0 && prev.rstrip) at = out->back().end = WhiteSpaceAfter(text, at);
    const AlignedToken t = ReadingAt(text, at, tokens[k], any);
    const bool after_added = k > 0 && prev.added;
    size_t begin = at;  // with the whitespace an lstrip token takes
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
    const bool run_start = k == 0 || prev.added;  // whitespace here: the left end of a run
    if (end == kNoMatch &&
        (t.flags.added ? (run_start ? any : strip.right) : run_start && strip.left)) {
      // The fewest whitespace characters after which the token matches (an added token may be
      // whitespace itself: Gemma's tabs).
      size_t skip = at, len = 0;
      while (end == kNoMatch && WhiteSpaceAfter(text, skip) > skip) {
        DecodeUtf8At(text, skip, &len);
        skip += len;
        end = MatchEnd(text, skip, t.bytes, false);
        if (end == kNoMatch && !t.flags.added) end = MatchEnd(text, skip, t.bytes, true);
      }
      if (end == kNoMatch) return false;
      // A text token covers the whitespace stripped off the start of its run; an added token does
      // not: what is before it is the previous token's (the end of its run, or a run of only
      // whitespace), or its own at the text's start.
      if (t.flags.added && k > 0) out->back().end = begin = skip;
      at = skip;
    }
    if (end == kNoMatch) return false;
    out->push_back(TokenRange{begin, end});
    at = end;
    prev = t.flags;
  }
  if (!tokens.empty() && (prev.rstrip || (prev.added ? any : strip.right))) {
    at = out->back().end = WhiteSpaceAfter(text, at);
  }
  return at == text.size();
}

// AlignAsIs with no whitespace skipped, else with what `strip` says is stripped.
bool AlignWithStrip(std::string_view text, std::span<const AlignedToken> tokens, StrippedEnds strip,
                    std::vector<TokenRange>* out) {
  return AlignAsIs(text, tokens, {}, out) ||
         ((strip.left || strip.right) && AlignAsIs(text, tokens, strip, out));
}

}  // namespace

Result<std::vector<TokenRange>> AlignTokens(std::string_view text,
                                            std::span<const AlignedToken> tokens,
                                            StrippedEnds strip) {
  std::vector<TokenRange> out;
  if (AlignWithStrip(text, tokens, strip, &out)) return out;
  // A normalizer that composes characters: the tokens spell the text's NFC (or NFKC) form.
  for (UnicodeForm form : std::array{UnicodeForm::kNfc, UnicodeForm::kNfkc}) {
    NormalizedText n;
    if (!NormalizeWithOffsets(text, form, &n).ok() || n.text == text) continue;
    if (!AlignWithStrip(n.text, tokens, strip, &out)) continue;
    for (TokenRange& r : out) r = TokenRange{n.lo[r.begin], n.hi[r.end]};
    return out;
  }
  // Text that holds the meta symbol "▁" itself, under a normalizer that writes spaces as "▁"
  // (Replace, Metaspace): its tokens' "▁" reads as a space like the others. First with the text of
  // added tokens made of "▁" kept as it is (Gemma's "▁▁", matched on the raw text), then without.
  if (text.find(kMetaSymbol) != std::string_view::npos) {
    std::vector<std::string_view> literal;
    for (const AlignedToken& t : tokens) {
      if (t.flags.added && t.bytes.find(kMetaSymbol) != std::string_view::npos) {
        literal.push_back(t.bytes);
      }
    }
    for (const bool keep : {true, false}) {
      if (keep && literal.empty()) continue;
      NormalizedText n;
      for (size_t p = 0; p < text.size();) {
        size_t kept = 0;  // the longest added token's text at p
        for (std::string_view l : keep ? literal : std::vector<std::string_view>{}) {
          if (l.size() > kept && text.substr(p).starts_with(l)) kept = l.size();
        }
        for (size_t i = 0; i < kept; ++i) {
          n.text += text[p + i];
          n.lo.push_back(uint32_t(p + i));
          n.hi.push_back(uint32_t(p + i));
        }
        if (kept > 0) {
          p += kept;
          continue;
        }
        const bool meta = text.substr(p, kMetaSymbol.size()) == kMetaSymbol;
        n.text += meta ? ' ' : text[p];
        n.lo.push_back(uint32_t(p));
        n.hi.push_back(uint32_t(p));
        p += meta ? kMetaSymbol.size() : 1;
      }
      n.lo.push_back(uint32_t(text.size()));
      n.hi.push_back(uint32_t(text.size()));
      if (AlignWithStrip(n.text, tokens, strip, &out)) {
        for (TokenRange& r : out) r = TokenRange{n.lo[r.begin], n.hi[r.end]};
        return out;
      }
    }
  }
  return InvalidArgument(
      "stoker cannot place the tokens of this conversation in its text (the tokenizer changes the "
      "text in a way stoker does not follow), so it cannot compute its loss mask");
}

}  // namespace stoker
