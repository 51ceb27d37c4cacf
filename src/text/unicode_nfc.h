// Unicode NFC normalization through utf8proc (its tables come from the Unicode data files).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

// Writes the NFC form of `utf8` (valid UTF-8) to *out. ASCII text is copied as is.
Status NormalizeNfc(std::string_view utf8, std::string* out);

}  // namespace stoker
