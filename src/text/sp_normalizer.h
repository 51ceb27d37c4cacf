// SpNormalizer: SentencePiece's Normalizer::Normalize (normalizer.cc) for `.model` files: at each
// position the longest user-defined piece is kept whole, else the longest rule of the compiled
// charsmap (nmt_nfkc, nfkc, ..., or none for identity) replaces its match, else the character is
// itself (an invalid byte becomes U+FFFD); spaces become "▁" (escape_whitespaces); the dummy
// "▁" goes first (or last, treat_whitespace_as_suffix); remove_extra_whitespaces drops leading,
// repeated and trailing spaces, judged on the normalized text.
// Immutable after construction; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "text/piece_trie.h"
#include "text/precompiled_charsmap.h"

namespace stoker {

struct SpNormalizer {
  PrecompiledCharsmap charsmap;
  PieceTrie user_defined;  // SentencePiece's PrefixMatcher
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
  bool treat_whitespace_as_suffix = false;

  // Call once the fields above are set, before Normalize: finds the ASCII bytes that are
  // themselves when the next byte is a given ASCII byte or the end (no rule and no user-defined
  // piece is that byte or starts with the two), so that Normalize needs no trie walk for them.
  void Finish();

  // Appends the normalized `in` to *out (cleared first).
  void Normalize(std::string_view in, std::string* out) const;

 private:
  // [c][d]: ASCII byte c followed by ASCII byte d (128: by the end) is itself.
  bool plain_[128][129] = {};

  // NormalizePrefix: the normalized form of the start of `in`, and the bytes it consumes.
  std::string_view Prefix(std::string_view in, size_t* consumed) const;
};

}  // namespace stoker
