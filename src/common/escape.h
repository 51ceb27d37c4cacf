// Escaping text for markup: the reports' HTML (diag/) and S3's XML request bodies (storage/);
// and encoding a code point as UTF-8 (text/, and S3's XML entities). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace stoker {

// `text` with & < > " replaced by their entities: safe in element text and in double-quoted
// attribute values of HTML and XML.
std::string EscapeMarkup(std::string_view text);

// Appends the UTF-8 encoding of code point `cp` (at most U+10FFFF; surrogates are encoded as
// they are, for tests that need them) to *out.
void AppendUtf8(char32_t cp, std::string* out);

}  // namespace stoker
