// Python's full case mappings and str.isdigit() where they go beyond utf8proc's per-code-point
// mapping and categories: the code points whose upper, lower or title case is several code points
// ("ß".upper() == "SS"), and the digits outside category Nd ("²"). Tables generated from
// Python 3.11's str methods by scripts/gen-jinja-casing. Pure functions; thread-safe.
#pragma once

namespace stoker::jinja {

// The UTF-8 of cp's full upper (lower, title) case mapping when it is more than one code point;
// null when it is one (then utf8proc's simple mapping is Python's).
const char* FullUpper(char32_t cp);
const char* FullLower(char32_t cp);
const char* FullTitle(char32_t cp);
// Python's str.isdigit() for a code point outside category Nd.
bool IsExtraDigit(char32_t cp);

}  // namespace stoker::jinja
