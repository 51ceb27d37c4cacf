// PrecompiledCharsmap: SentencePiece's compiled normalization rules (NormalizerSpec's
// precompiled_charsmap, and tokenizers' `Precompiled` normalizer, which holds the same bytes in
// base64): a darts-clone double-array trie over the UTF-8 of the strings to replace, and a blob of
// NUL-terminated replacements its leaves point into.
//
// Layout (sentencepiece normalizer.cc, DecodePrecompiledCharsMap): a little-endian uint32 N, N
// bytes of trie units (uint32 each), then the replacements. A unit holds: bit 8 has_leaf; bits
// 0-7 and 31 the label; the offset is (unit >> 10) << ((unit & 512) >> 6); a leaf's unit holds
// the value (unit & 0x7FFFFFFF), the replacement's offset. Every index is checked against the
// array, so a corrupt blob matches less, never reads outside it.
// Immutable after Parse; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

class PrecompiledCharsmap {
 public:
  // kInvalidArgument naming `origin` for a blob that is not of that layout (an empty blob is a
  // valid map with no rules).
  static Result<PrecompiledCharsmap> Parse(std::string_view blob, std::string_view origin);

  // Whether some rule's key starts with `prefix` (or is it).
  bool HasKeyStartingWith(std::string_view prefix) const;
  bool empty() const { return units_.empty(); }

  // The longest rule matching a prefix of `text` (SentencePiece's NormalizePrefix): its length
  // in *matched and its replacement; *matched = 0 when none does.
  std::string_view Longest(std::string_view text, size_t* matched) const;
  // The shortest (the first found, as tokenizers' spm_precompiled reads it) rule matching a
  // prefix of `text`: its replacement, and whether there is one.
  bool Shortest(std::string_view text, std::string_view* replacement) const;

  // tokenizers' `Precompiled` normalizer (spm_precompiled): per extended grapheme cluster, one of
  // fewer than 6 bytes that a rule's key starts is replaced whole by the shortest such rule;
  // otherwise each character by its own rule, or kept. Appends to *out (cleared first). `in`
  // must be valid UTF-8.
  void NormalizeGraphemes(std::string_view in, std::string* out) const;

 private:
  template <typename Fn>
  void Walk(std::string_view text, const Fn& on_leaf) const;
  std::string_view ReplacementAt(uint32_t value) const;

  std::vector<uint32_t> units_;
  std::string normalized_;  // NUL-terminated replacements
};

}  // namespace stoker
