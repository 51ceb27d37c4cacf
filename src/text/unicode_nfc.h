// Unicode NFC normalization through utf8proc (its tables come from the Unicode data files).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

// Writes the NFC form of `utf8` (valid UTF-8) to *out. ASCII text is copied as is.
Status NormalizeNfc(std::string_view utf8, std::string* out);

enum class UnicodeForm { kNfc, kNfkc };

// Normalized text with the map back to the text it came from, as tokenizers' NormalizedString
// keeps it: each grapheme cluster is normalized alone; a cluster the form leaves as it is maps byte
// for byte, and every position inside one it changes maps to that cluster's whole range.
struct NormalizedText {
  std::string text;
  // For each byte position p of `text`, 0 to text.size(): the original range [lo[p], hi[p]] it
  // stands for (lo == hi except inside a changed cluster: its original start and end).
  std::vector<uint32_t> lo, hi;
};

// `utf8` (valid UTF-8, under 4 GiB) in `form`, with its map.
Status NormalizeWithOffsets(std::string_view utf8, UnicodeForm form, NormalizedText* out);

}  // namespace stoker
