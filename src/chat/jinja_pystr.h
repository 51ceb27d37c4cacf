// Python's str methods on UTF-8 text, as chat templates call them: strip, split, replace, case
// mapping (Python's full mappings: utf8proc's and jinja_casing.h's), character classes,
// splitlines. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::jinja {

// str.strip/lstrip/rstrip(chars): `chars` absent strips whitespace (str.isspace).
std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left,
                    bool right);
// str.split(sep, maxsplit) (sep absent: runs of whitespace, no empty items); maxsplit < 0: all.
std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep,
                                 long maxsplit);
// str.rsplit(sep, maxsplit).
std::vector<std::string> PyRSplit(std::string_view s, const std::optional<std::string>& sep,
                                  long maxsplit);
// str.replace(old, new, count); count < 0: all.
std::string PyReplace(std::string_view s, std::string_view old, std::string_view repl, long count);
std::string PyUpper(std::string_view s);
std::string PyLower(std::string_view s);
std::string PyTitle(std::string_view s);       // str.title()
std::string PyCapitalize(std::string_view s);  // str.capitalize()
std::string JinjaTitle(std::string_view s);    // the |title filter (jinja2's own rule)
std::vector<std::string> PySplitLines(std::string_view s);
// str.isalpha(), isdigit() and isalnum() of one code point.
bool PyIsAlpha(char32_t c);
bool PyIsDigit(char32_t c);
bool PyIsAlnum(char32_t c);

}  // namespace stoker::jinja
