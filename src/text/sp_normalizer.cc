#include "text/sp_normalizer.h"

#include "text/sp_text.h"
#include "text/unigram_model.h"

namespace stoker {
namespace {

constexpr std::string_view kSpReplacementChar = "\xEF\xBF\xBD";

// SentencePiece's IsValidDecodeUTF8 for the character at the start of `s`: its length, or 0 if
// it is malformed (a bad lead or continuation byte, an overlong form, a surrogate, > U+10FFFF).
size_t SpValidCharLength(std::string_view s) {
  const uint8_t c = static_cast<uint8_t>(s[0]);
  if (c < 0x80) return 1;
  const size_t len = SpCharLength(c);
  if (len == 1 || len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<uint8_t>(s[k]) & 0xC0) != 0x80) return 0;
  }
  const uint8_t c1 = static_cast<uint8_t>(s[1]);
  if (len == 2) return c >= 0xC2 ? 2 : 0;
  if (len == 3) {
    if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
    if (c == 0xED && c1 >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c > 0xF4 || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) return 0;
  return 4;
}

}  // namespace

std::string_view SpNormalizer::Prefix(std::string_view in, size_t* consumed) const {
  if (!user_defined.empty()) {
    const size_t n = user_defined.LongestPrefix(in);
    if (n > 0) {
      *consumed = n;
      return in.substr(0, n);
    }
  }
  if (!charsmap.empty()) {
    size_t n;
    const std::string_view replacement = charsmap.Longest(in, &n);
    if (n > 0) {
      *consumed = n;
      return replacement;
    }
  }
  const size_t n = SpValidCharLength(in);
  if (n == 0) {
    *consumed = 1;
    return kSpReplacementChar;
  }
  *consumed = n;
  return in.substr(0, n);
}

void SpNormalizer::Finish() {
  auto is_key = [&](std::string_view k) {
    size_t n = 0;
    if (!charsmap.empty()) charsmap.Longest(k, &n);
    return n == k.size() || user_defined.LongestPrefix(k) == k.size();
  };
  auto starts_key = [&](std::string_view k) {
    return charsmap.HasKeyStartingWith(k) || user_defined.HasKeyStartingWith(k);
  };
  for (int c = 0; c < 128; ++c) {
    const char one[2] = {static_cast<char>(c), 0};
    const bool alone = !is_key(std::string_view(one, 1));
    plain_[c][128] = alone;
    for (int d = 0; d < 128; ++d) {
      const char two[2] = {static_cast<char>(c), static_cast<char>(d)};
      plain_[c][d] = alone && !starts_key(std::string_view(two, 2));
    }
  }
}

void SpNormalizer::Normalize(std::string_view in, std::string* out) const {
  out->clear();
  size_t consumed = 0;
  if (remove_extra_whitespaces) {
    while (!in.empty() && Prefix(in, &consumed) == " ") in.remove_prefix(consumed);
  }
  if (in.empty()) return;
  out->reserve(in.size() * 3 / 2 + 8);
  const std::string_view space = escape_whitespaces ? kMetaSymbol : std::string_view(" ");
  if (!treat_whitespace_as_suffix && add_dummy_prefix) out->append(space);
  bool prev_space = remove_extra_whitespaces;
  while (!in.empty()) {
    // Fast path: an ASCII byte that is itself before the next one (plain_) is copied, a space
    // is `space` unless it follows one (what Prefix and the general step below would give).
    const auto c = static_cast<uint8_t>(in[0]);
    const size_t d = in.size() > 1 ? static_cast<uint8_t>(in[1]) : 128;
    if (c < 128 && (d < 128 || in.size() == 1) && plain_[c][d]) {
      if (c == ' ') {
        if (!prev_space) out->append(space);
        prev_space = remove_extra_whitespaces;
        in.remove_prefix(1);
        continue;
      }
      // The run of such bytes up to a space, a non-ASCII byte or one that starts a rule.
      size_t run = 1;
      while (run + 1 < in.size()) {
        const auto a = static_cast<uint8_t>(in[run]);
        const auto b = static_cast<uint8_t>(in[run + 1]);
        if (a == ' ' || a >= 128 || b >= 128 || !plain_[a][b]) break;
        ++run;
      }
      out->append(in.data(), run);
      prev_space = false;
      in.remove_prefix(run);
      continue;
    }
    std::string_view sp = Prefix(in, &consumed);
    if (prev_space) {
      while (!sp.empty() && sp.front() == ' ') sp.remove_prefix(1);
    }
    if (!sp.empty()) {
      if (escape_whitespaces && sp.find(' ') != std::string_view::npos) {
        ReplaceAll(sp, " ", kMetaSymbol, out);
      } else {
        out->append(sp);
      }
      prev_space = sp.back() == ' ';
    }
    in.remove_prefix(consumed);
    if (!remove_extra_whitespaces) prev_space = false;
  }
  if (remove_extra_whitespaces) {
    while (std::string_view(*out).ends_with(space)) out->resize(out->size() - space.size());
  }
  if (treat_whitespace_as_suffix && add_dummy_prefix) out->append(space);
}

}  // namespace stoker
