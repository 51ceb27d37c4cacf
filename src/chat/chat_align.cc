#include "chat/chat_align.h"

#include <algorithm>
#include <string>

#include "text/added_tokens.h"
#include "text/utf8.h"

namespace stoker {
namespace {

// Where `token` ends when it is matched at `at` (dummy: without its dummy prefix space), or npos.
size_t MatchEnd(std::string_view text, size_t at, std::string_view token, bool dummy) {
  if (dummy && !token.starts_with(' ')) return std::string_view::npos;
  if (dummy) token.remove_prefix(1);
  return text.substr(at).starts_with(token) ? at + token.size() : std::string_view::npos;
}

// The first 40 bytes of `s` or so (not cutting a character: errors reach Python as str), quoted.
std::string Quoted(std::string_view s) {
  size_t n = std::min<size_t>(s.size(), 40);
  while (n < s.size() && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  const bool valid = FindInvalidUtf8(s.substr(0, n)) == std::string_view::npos;
  std::string out = "\"";
  for (char c : s.substr(0, n)) {
    if (c == '\n') {
      out += "\\n";
    } else if (!valid && static_cast<unsigned char>(c) >= 0x80) {  // a byte-fallback piece
      static const char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[(c >> 4) & 0xF] + kHex[c & 0xF];
    } else {
      out += c;
    }
  }
  return out + (n < s.size() ? "...\"" : "\"");
}

// Whether tokens[k] can start at `at` (after whitespace its lstrip takes); true past the end
// when `at` is the text's end.
bool MatchesAt(std::string_view text, size_t at, std::span<const AlignedToken> tokens, size_t k) {
  if (k == tokens.size()) return at == text.size();
  if (tokens[k].flags.lstrip) at = WhiteSpaceAfter(text, at);
  return MatchEnd(text, at, tokens[k].bytes, false) != std::string_view::npos;
}

}  // namespace

Result<std::vector<TokenRange>> AlignTokens(std::string_view text,
                                            std::span<const AlignedToken> tokens) {
  std::vector<TokenRange> out;
  out.reserve(tokens.size());
  size_t at = 0;
  for (size_t k = 0; k < tokens.size(); ++k) {
    const AlignedToken& t = tokens[k];
    const bool after_added = k > 0 && tokens[k - 1].flags.added;
    if (k > 0 && tokens[k - 1].flags.rstrip) at = out.back().end = WhiteSpaceAfter(text, at);
    const size_t begin = at;  // with the whitespace an lstrip token takes
    if (t.flags.lstrip) at = WhiteSpaceAfter(text, at);
    // Its bytes as they are, or without a dummy prefix at the start of a run of text. Where both
    // match ("▁" alone before " x"), the one the next token follows; the dummy prefix if both.
    size_t end = MatchEnd(text, at, t.bytes, false);
    if (!t.flags.added && (k == 0 || after_added)) {
      const size_t dummy = MatchEnd(text, at, t.bytes, true);
      if (dummy != std::string_view::npos &&
          (end == std::string_view::npos || MatchesAt(text, dummy, tokens, k + 1) ||
           !MatchesAt(text, end, tokens, k + 1))) {
        end = dummy;
      }
    }
    if (end == std::string_view::npos) {
      return Unimplemented("the tokens of a chat cannot be aligned with its text: token " +
                           std::to_string(k) + " (" + Quoted(t.bytes) + ") is not at byte " +
                           std::to_string(at) + " (" + Quoted(text.substr(at)) + ")");
    }
    out.push_back(TokenRange{begin, end});
    at = end;
  }
  if (!tokens.empty() && tokens.back().flags.rstrip)
    at = out.back().end = WhiteSpaceAfter(text, at);
  if (at != text.size()) {
    return Unimplemented(
        "the tokens of a chat cannot be aligned with its text: " + Quoted(text.substr(at)) +
        " at byte " + std::to_string(at) + " has no token");
  }
  return out;
}

}  // namespace stoker
