// ParseJsonRecord: one JSON record (a chat record's JSONL line) into nlohmann::ordered_json, as
// `nlohmann::ordered_json::parse(text, nullptr, false)` gives it, at simdjson's speed. A chat pack
// spent 15% of its CPU in nlohmann's lexer (a byte at a time, a push_back per string byte);
// simdjson validates the record at GB/s and the tree is built from its DOM.
//
// The result is nlohmann's, value for value: key order kept, with duplicate keys the first
// position and the last value (nlohmann's parse), non-negative integers unsigned, negative ones
// signed. What simdjson refuses or could read differently is parsed again by nlohmann, so a record
// is accepted or refused exactly as before: integers past 64 bits, nesting past 1024 levels, a
// leading byte-order mark, and `-0` (nlohmann's signed 0; simdjson's 0 does not say which).
//
// Thread contract: thread-safe (each thread parses with its own simdjson parser).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

// How deeply a chat record's arrays and objects may nest: every walk of a record (the template's
// values, JSON dumps, copies) recurses, and Python's json module itself gives up near 1,000.
inline constexpr int kMaxJsonDepth = 1000;
// An error, naming the bound, when `j` nests deeper than kMaxJsonDepth; walks `j` without
// recursion.
Status CheckJsonDepth(const nlohmann::ordered_json& j);

// Returns false (and leaves *out discarded) where nlohmann's parse fails.
bool ParseJsonRecord(std::string_view text, nlohmann::ordered_json* out);

}  // namespace stoker
