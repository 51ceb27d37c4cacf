// UTF-8 validation and repair for text on its way into a tokenizer.
//
// Invalid input is handled by a policy: replace each maximal invalid subsequence with U+FFFD (the
// Unicode-recommended "maximal subpart" practice, the same as Python's errors="replace"), skip the
// document, or fail. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

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

// Appends the UTF-8 encoding of code point `cp` (at most U+10FFFF; surrogates are encoded as
// they are, for tests that need them) to *out.
void AppendUtf8(char32_t cp, std::string* out);

}  // namespace stoker
