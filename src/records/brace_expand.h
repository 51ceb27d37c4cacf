// Brace expansion of shard lists, as WebDataset does it (trendels/braceexpand, bash-like):
// "shard-{000000..000009}.tar" -> ten names. Plain functions; thread-safe.
//
// {a,b,c} alternatives (nestable; leftmost group varies slowest), {N..M[..S]} integer ranges
// (ascending or descending; zero-padded to the longer endpoint when either starts with 0),
// {a..e[..S]} letter ranges over A-Za-z. A group with no comma and no range stays literal
// ({x} -> {x}); a backslash escapes the next character; "::" separates independent patterns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

// kInvalidArgument (naming the pattern) for unbalanced braces or more than `max_results` names.
Result<std::vector<std::string>> ExpandBraces(std::string_view pattern,
                                              size_t max_results = 1'000'000);

// True if `s` holds an unescaped '{' (so it is a pattern rather than a plain path).
bool HasBracePattern(std::string_view s);

}  // namespace stoker
