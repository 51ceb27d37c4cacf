// Strict standard base64 (tiktoken rank files, tokenizers' Precompiled charsmap).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace stoker {

// Strict standard base64 with padding, appended to *out; false on any other character or a bad
// length (*out may then hold part of it).
bool DecodeBase64(std::string_view in, std::string* out);

}  // namespace stoker
