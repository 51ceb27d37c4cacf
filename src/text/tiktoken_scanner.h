// TiktokenScanner: hand-written pre-tokenizers for tiktoken's cl100k and o200k patterns and Meta's
// Llama 3 pattern, several times faster than running the patterns on PCRE2, and identical to it:
// their character classes (\p{L}, \p{N}, White_Space, and o200k's cased letter sets with \p{M})
// are read out of PCRE2 itself, 256 code points at a time when first met, and
// tiktoken_scanner_test.cc / fuzz/bpe_encode_fuzzer.cc compare their pieces with the PCRE2 path on
// random text. The patterns are below; a scanner runs only for exactly that text in the tiktoken
// dialect (RegexSplitter).
//
// Thread-safe: const after construction (the process's class table fills its blocks under a
// mutex; a filled block is read without one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace stoker {

// tiktoken's cl100k_base pattern (tiktoken 0.14).
inline constexpr std::string_view kCl100kPattern =
    R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s)";
// tiktoken's o200k_base pattern (GPT-4o; Llama 4 uses it too).
inline constexpr std::string_view kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Meta's Llama 3 tokenizer (llama3/tokenizer.py).
inline constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

class TiktokenScanner {
 public:
  enum class Pattern { kCl100k, kLlama3, kO200k };

  // The scanner's pattern if `pattern` is exactly one of the texts above, else nullopt.
  static std::optional<Pattern> For(std::string_view pattern);

  explicit TiktokenScanner(Pattern pattern);

  // The end of the pre-token that starts at `pos` (< text.size()) of valid UTF-8 `text`.
  size_t Match(std::string_view text, size_t pos) const;

  // o200k's pieces that start in ASCII are tried inline first (most of its pieces in prose and
  // code: words inline, and numbers, punctuation and whitespace straight to MatchTail).
  template <typename Fn>
  void Split(std::string_view text, Fn&& fn) const {
    const bool o200k = pattern_ == Pattern::kO200k;
    for (size_t pos = 0; pos < text.size();) {
      size_t end = o200k ? MatchO200kAscii(text, pos) : pos;
      if (end == pos) end = Match(text, pos);
      fn(text.substr(pos, end - pos));
      pos = end;
    }
  }

  // A code point's class: the sets the patterns name, one bit each (a mark is in kUpper and
  // kLower, as o200k's two letter sets both hold \p{M}, but not in kLetter).
  enum Bits : uint8_t {
    kLetter = 1,  // \p{L}
    kNumber = 2,  // \p{N}
    kSpace = 4,   // \s (White_Space, U+0085 included)
    kUpper = 8,   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    kLower = 16,  // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
  };

 private:
  // The class of the code point at `pos`, *len its length. ASCII is read straight from the table,
  // inline: most of prose and code is ASCII, and the call and the UTF-8 decoding were 15% of the
  // samples of a cl100k pack in perf.
  uint8_t ClassAt(std::string_view text, size_t pos, size_t* len) const {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) {
      *len = 1;
      return classes_[c];
    }
    return ClassAtNonAscii(text, pos, len);
  }
  uint8_t ClassAtNonAscii(std::string_view text, size_t pos, size_t* len) const;
  size_t MatchCl100k(std::string_view text, size_t pos) const;  // cl100k and Llama 3
  size_t MatchO200k(std::string_view text, size_t pos) const;
  // A piece that starts in ASCII at `i`. An ASCII word (with an optional ASCII prefix), most of
  // o200k's pieces in prose and code: [A-Z]*[a-z]* after the prefix, at least one letter, then
  // an ASCII byte or the end. In ASCII, U is [A-Z] and W is [a-z] (no Lm, Lo or M), so both word
  // alternatives end where the lower-case run ends (U*W+ when there is one, else U+W* over the
  // upper-case run), with the contraction after it. An ASCII non-letter that no ASCII letter
  // follows starts no word (the prefix needs a letter after it; digits, \r and \n are no
  // prefix): numbers, punctuation and whitespace, a third of the pieces, go straight to MatchTail
  // instead of through MatchO200k's four word attempts. Returns `i` where a non-ASCII byte may
  // decide (the general code does then). Inlined into Split (a call per piece: +1.4% instructions).
  [[gnu::always_inline]] size_t MatchO200kAscii(std::string_view t, size_t i) const {
    const size_t n = t.size();
    auto upper = [](unsigned char c) { return static_cast<unsigned>(c - 'A') < 26u; };
    auto lower = [](unsigned char c) { return static_cast<unsigned>(c - 'a') < 26u; };
    size_t p = i;
    const auto c0 = static_cast<unsigned char>(t[p]);
    if (c0 >= 0x80) return i;
    if (!upper(c0) && !lower(c0)) {  // the prefix [^\r\n\p{L}\p{N}], or no word at all
      if ((classes_[c0] & kNumber) || c0 == '\r' || c0 == '\n' || ++p == n) {
        return AsciiTail(t, i);
      }
      const auto c1 = static_cast<unsigned char>(t[p]);
      if (c1 >= 0x80) return i;  // perhaps a letter: the general code
      if (!upper(c1) && !lower(c1)) return AsciiTail(t, i);
    }
    while (p < n && upper(static_cast<unsigned char>(t[p]))) ++p;
    while (p < n && lower(static_cast<unsigned char>(t[p]))) ++p;
    if (p < n && static_cast<unsigned char>(t[p]) >= 0x80) return i;  // the word may go on
    return p < n && t[p] == '\'' ? Contraction(t, p) : p;
  }
  // o200k's MatchTail for a piece at `i` that starts with an ASCII non-letter, inline, while
  // every byte that decides it is ASCII (a non-ASCII byte may be a digit, punctuation or a space:
  // then MatchTail decides the whole piece). Numbers, punctuation and whitespace are a third of
  // o200k's pieces in prose and code; the call to MatchTail and its ClassAt per code point were
  // about 100 instructions a piece (bench/RESULTS.md, "o200k: instructions", issue 44).
  [[gnu::always_inline]] size_t AsciiTail(std::string_view t, size_t i) const {
    const size_t n = t.size();
    const auto c0 = static_cast<unsigned char>(t[i]);
    auto cls = [&](size_t p) { return classes_[static_cast<unsigned char>(t[p])]; };
    auto ascii = [&](size_t p) { return static_cast<unsigned char>(t[p]) < 0x80; };
    if (classes_[c0] & kNumber) {  // \p{N}{1,3}
      size_t p = i + 1;
      for (int k = 1; k < 3 && p < n; ++k, ++p) {
        if (!ascii(p)) return MatchTail(t, i, classes_[c0], 1);
        if (!(cls(p) & kNumber)) break;
      }
      return p;
    }
    size_t p = c0 == ' ' ? i + 1 : i;
    if (p < n && !ascii(p)) return MatchTail(t, i, classes_[c0], 1);
    if (p < n && !(cls(p) & (kLetter | kNumber | kSpace))) {  // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
      for (++p; p < n; ++p) {
        if (!ascii(p)) return MatchTail(t, i, classes_[c0], 1);
        if (cls(p) & (kLetter | kNumber | kSpace)) break;
      }
      while (p < n && (t[p] == '\r' || t[p] == '\n' || t[p] == '/')) ++p;
      return p;
    }
    // c0 is whitespace: \s*[\r\n]+|\s+(?!\S)|\s+, as MatchTail's end.
    size_t end = i, last_newline = std::string_view::npos;
    for (; end < n; ++end) {
      if (!ascii(end)) return MatchTail(t, i, classes_[c0], 1);
      if (!(cls(end) & kSpace)) break;
      if (t[end] == '\r' || t[end] == '\n') last_newline = end;
    }
    if (last_newline != std::string_view::npos) return last_newline + 1;
    if (end == n) return n;
    return end - 1 > i ? end - 1 : i + 1;
  }
  // (?i:'s|'t|'re|'ve|'m|'ll|'d) at `p`: its end, or `p` when there is none.
  static size_t Contraction(std::string_view t, size_t p);
  // Numbers, punctuation and whitespace at `pos`, whose class is `c0` and length `len0`.
  size_t MatchTail(std::string_view text, size_t pos, uint8_t c0, size_t len0) const;

  Pattern pattern_;
  const uint8_t* classes_;  // one class per code point, U+0000..U+10FFFF
};

}  // namespace stoker
