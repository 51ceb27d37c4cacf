// SentencePiece-style text steps of a BPE pipeline: the normalizers that turn spaces into the
// meta symbol "▁" (tokenizers' Prepend and Replace, SentencePiece's own normalizer without a
// charsmap) or strip the ends of a text (tokenizers' Strip), the Metaspace pre-tokenizer, and the
// chunking of normalized text at "▁" that lets a pipeline without a pre-tokenizer (Llama 2, Mistral
// 7B) merge, and cache, word by word. Pure functions and plain data; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "text/precompiled_charsmap.h"

namespace stoker {

inline constexpr std::string_view kMetaSymbol = "\xE2\x96\x81";  // U+2581 "▁"

// Appends `in` to *out with each `from` replaced by `to` (`in` as it is if `from` is empty).
void ReplaceAll(std::string_view in, std::string_view from, std::string_view to, std::string* out);
// The same, returned.
inline std::string ReplaceAll(std::string_view in, std::string_view from, std::string_view to) {
  std::string out;
  ReplaceAll(in, from, to, &out);
  return out;
}

// One normalization step, applied to a whole segment (the text between added tokens).
struct TextEdit {
  enum class Kind {
    kPrepend,        // tokenizers' Prepend: `to` before a non-empty text
    kReplace,        // tokenizers' Replace with a String pattern: every `from` becomes `to`
    kSentencePiece,  // SentencePiece's Normalizer without a charsmap (escape_whitespaces on)
    kPrecompiled,    // tokenizers' Precompiled: `charsmap`, grapheme by grapheme
    kSpaceRuns,      // tokenizers' Replace with the Regex " {2,}": each run of 2+ spaces is `to`
    kStrip,          // tokenizers' Strip: White_Space characters off the start and/or the end
  };
  Kind kind = Kind::kReplace;
  std::string from, to;
  bool add_dummy_prefix = true;                                   // kSentencePiece
  bool remove_extra_whitespaces = false;                          // kSentencePiece
  std::shared_ptr<const PrecompiledCharsmap> charsmap = nullptr;  // kPrecompiled
  bool strip_left = false, strip_right = false;                   // kStrip
};

// Appends the edited `in` to *out (cleared first).
void ApplyTextEdit(const TextEdit& edit, std::string_view in, std::string* out);

// tokenizers' Metaspace pre-tokenizer.
struct MetaspaceStep {
  enum class Prepend { kAlways, kFirst, kNever };
  std::string replacement = std::string(kMetaSymbol);
  Prepend prepend = Prepend::kAlways;
  bool split = true;
};

// Replaces ' ' with the replacement and prepends it as the scheme says (`at_start`: the piece
// begins at byte 0 of the text being encoded, for kFirst); into *out.
void ApplyMetaspace(const MetaspaceStep& m, std::string_view piece, bool at_start,
                    std::string* out);

// Calls fn(chunk) for the pieces of `text` cut before each `marker`: every one when `every`
// (Metaspace's split, MergedWithNext), else only a marker that follows a character other than the
// marker (so a run of markers stays with the word after it).
template <typename Fn>
void CutBeforeMarker(std::string_view text, std::string_view marker, bool every, const Fn& fn) {
  size_t start = 0, at = 0;
  while ((at = text.find(marker, at)) != std::string_view::npos) {
    const bool after_marker =
        at >= marker.size() && text.substr(at - marker.size(), marker.size()) == marker;
    if (at > start && (every || !after_marker)) {
      fn(text.substr(start, at - start));
      start = at;
    }
    at += marker.size();
  }
  if (start < text.size()) fn(text.substr(start));
}

}  // namespace stoker
