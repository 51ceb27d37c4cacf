// UTF-8 validation and repair for text on its way into a tokenizer; decoding of valid text.
//
// Invalid input is handled by a policy: replace each maximal invalid subsequence with U+FFFD (the
// Unicode-recommended "maximal subpart" practice, the same as Python's errors="replace"), skip the
// document, or fail. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/escape.h"  // AppendUtf8
#include "stoker/status.h"
#include "stoker/tokenizer.h"  // Utf8Policy

namespace stoker {

// Parses "replace", "skip" or "fail".
Result<Utf8Policy> ParseUtf8Policy(std::string_view name);
std::string_view Utf8PolicyName(Utf8Policy policy);

// Returns the byte offset of the first invalid sequence in `text`, or std::string_view::npos when
// `text` is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
size_t FindInvalidUtf8(std::string_view text);

// Appends `text` to *out with every maximal invalid subsequence replaced by U+FFFD (EF BF BD).
// Returns the number of replacements made (0 when `text` was valid).
size_t AppendReplacingInvalidUtf8(std::string_view text, std::string* out);

// The length of the UTF-8 sequence that `lead` starts, from the lead byte alone (1 to 4; for
// text known to be valid: a continuation byte counts 2, 0xF8..0xFF count 4).
inline size_t Utf8SequenceLength(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// The code point of the UTF-8 sequence at t[p] of valid text `t`; *len its length.
inline char32_t DecodeUtf8At(std::string_view t, size_t p, size_t* len) {
  unsigned char c = static_cast<unsigned char>(t[p]);
  auto cont = [&](size_t k) { return static_cast<char32_t>(t[p + k] & 0x3F); };
  if (c < 0x80) return *len = 1, c;
  if (c < 0xE0) return *len = 2, ((c & 0x1Fu) << 6) | cont(1);
  if (c < 0xF0) return *len = 3, ((c & 0x0Fu) << 12) | (cont(1) << 6) | cont(2);
  return *len = 4, ((c & 0x07u) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
}

}  // namespace stoker
