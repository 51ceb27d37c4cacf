#include "text/precompiled_charsmap.h"

#include <utf8proc.h>

#include <cstring>

#include "text/utf8.h"

namespace stoker {
namespace {

inline bool CharsmapHasLeaf(uint32_t u) { return (u >> 8) & 1; }
inline uint32_t CharsmapValue(uint32_t u) { return u & 0x7FFFFFFFu; }
inline uint32_t CharsmapLabel(uint32_t u) { return u & (0x80000000u | 0xFFu); }
inline uint32_t CharsmapOffset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

}  // namespace

Result<PrecompiledCharsmap> PrecompiledCharsmap::Parse(std::string_view blob,
                                                       std::string_view origin) {
  PrecompiledCharsmap m;
  if (blob.empty()) return m;
  uint32_t trie_size = 0;
  if (blob.size() < 4) {
    return InvalidArgument(std::string(origin) + ": precompiled_charsmap is truncated");
  }
  std::memcpy(&trie_size, blob.data(), 4);  // little-endian, as every stoker platform
  if (trie_size % 4 != 0 || trie_size == 0 || trie_size > blob.size() - 4) {
    return InvalidArgument(std::string(origin) +
                           ": precompiled_charsmap's trie size does not fit the blob");
  }
  m.units_.resize(trie_size / 4);
  std::memcpy(m.units_.data(), blob.data() + 4, trie_size);
  m.normalized_.assign(blob.substr(4 + trie_size));
  m.normalized_.push_back('\0');  // every replacement ends at a NUL, even a corrupt last one
  return m;
}

std::string_view PrecompiledCharsmap::ReplacementAt(uint32_t value) const {
  if (value >= normalized_.size()) return {};
  return std::string_view(normalized_.data() + value);  // up to its NUL
}

// darts-clone's commonPrefixSearch, walking the units byte by byte: on_leaf(value, length) for
// each leaf, shortest first.
template <typename Fn>
void PrecompiledCharsmap::Walk(std::string_view text, const Fn& on_leaf) const {
  const size_t n_units = units_.size();
  if (n_units == 0) return;
  size_t pos = CharsmapOffset(units_[0]);
  for (size_t i = 0; i < text.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(text[i]);
    pos ^= c;
    if (pos >= n_units) return;
    const uint32_t unit = units_[pos];
    if (CharsmapLabel(unit) != c) return;
    pos ^= CharsmapOffset(unit);
    if (CharsmapHasLeaf(unit)) {
      if (pos >= n_units) return;
      on_leaf(CharsmapValue(units_[pos]), i + 1);
    }
  }
}

bool PrecompiledCharsmap::HasKeyStartingWith(std::string_view prefix) const {
  if (units_.empty()) return false;
  size_t pos = CharsmapOffset(units_[0]);
  for (char ch : prefix) {  // Walk's steps, without the leaves
    const auto c = static_cast<uint8_t>(ch);
    pos ^= c;
    if (pos >= units_.size() || CharsmapLabel(units_[pos]) != c) return false;
    pos ^= CharsmapOffset(units_[pos]);
  }
  return true;
}

std::string_view PrecompiledCharsmap::Longest(std::string_view text, size_t* matched) const {
  *matched = 0;
  uint32_t best = 0;
  auto on_leaf = [&](uint32_t value, size_t length) {
    *matched = length;
    best = value;
  };
  Walk(text, on_leaf);
  return *matched ? ReplacementAt(best) : std::string_view();
}

bool PrecompiledCharsmap::Shortest(std::string_view text, std::string_view* replacement) const {
  bool found = false;
  auto on_leaf = [&](uint32_t value, size_t) {
    if (!found) *replacement = ReplacementAt(value);
    found = true;
  };
  // spm_precompiled stops at a NUL byte of the key.
  const size_t nul = text.find('\0');
  Walk(text.substr(0, nul), on_leaf);
  return found;
}

void PrecompiledCharsmap::NormalizeGraphemes(std::string_view in, std::string* out) const {
  out->clear();
  if (units_.empty()) {
    out->append(in);
    return;
  }
  out->reserve(in.size() + in.size() / 4 + 8);
  // Per character, in the order they come: the grapheme's whole rule, else each character's own.
  auto emit_grapheme = [&](std::string_view g) {
    std::string_view replacement;
    if (g.size() < 6 && Shortest(g, &replacement)) {
      out->append(replacement);
      return;
    }
    size_t len;
    for (size_t at = 0; at < g.size(); at += len) {
      len = Utf8SequenceLength(static_cast<uint8_t>(g[at]));
      const std::string_view ch = g.substr(at, len);
      if (Shortest(ch, &replacement)) {
        out->append(replacement);
      } else {
        out->append(ch);
      }
    }
  };
  // Extended grapheme clusters (UAX #29) through utf8proc's stateful break rule; an ASCII
  // character followed by an ASCII character is always a cluster of its own (GB3-GB999 never join
  // two ASCII characters but "\r\n"), the fast path for most text.
  size_t start = 0, at = 0, len = 0;
  utf8proc_int32_t state = 0, prev = -1;
  while (at < in.size()) {
    const uint8_t lead = static_cast<uint8_t>(in[at]);
    const char32_t c = DecodeUtf8At(in, at, &len);
    if (prev >= 0) {
      const bool ascii_pair = lead < 0x80 && prev < 0x80 && !(prev == '\r' && c == '\n');
      if (ascii_pair ||
          utf8proc_grapheme_break_stateful(prev, static_cast<utf8proc_int32_t>(c), &state)) {
        if (ascii_pair) state = 0;
        emit_grapheme(in.substr(start, at - start));
        start = at;
      }
    }
    prev = static_cast<utf8proc_int32_t>(c);
    at += len;
  }
  if (start < in.size()) emit_grapheme(in.substr(start));
}

}  // namespace stoker
