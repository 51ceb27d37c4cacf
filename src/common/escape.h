// Escaping text for markup: the reports' HTML (diag/) and S3's XML request bodies (storage/).
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace stoker {

// `text` with & < > " replaced by their entities: safe in element text and in double-quoted
// attribute values of HTML and XML.
std::string EscapeMarkup(std::string_view text);

}  // namespace stoker
