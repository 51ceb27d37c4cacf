#include "chat/json_record.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "text/padded_json.h"

namespace stoker {
namespace {

using ojson = nlohmann::ordered_json;

// Whether `text` may hold the number -0 (a `-0` followed by a delimiter; also inside a string,
// which only costs a second parse).
bool MayHoldMinusZero(std::string_view text) {
  for (size_t i = text.find("-0"); i != std::string_view::npos; i = text.find("-0", i + 1)) {
    if (i + 2 == text.size() ||
        std::string_view(",}] \t\r\n").find(text[i + 2]) != std::string_view::npos)
      return true;
  }
  return false;
}

// Builds *out from `e`; false where nlohmann would read the value differently (then the caller
// parses the record with nlohmann). `text` is the record.
bool Convert(simdjson::dom::element e, std::string_view text, ojson* out) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::OBJECT: {
      *out = ojson::object();
      for (simdjson::dom::key_value_pair kv : simdjson::dom::object(e)) {
        // operator[]: a duplicate key keeps its first position and takes the last value.
        if (!Convert(kv.value, text, &(*out)[std::string(kv.key)])) return false;
      }
      return true;
    }
    case T::ARRAY: {
      *out = ojson::array();
      for (simdjson::dom::element child : simdjson::dom::array(e)) {
        out->push_back(nullptr);
        if (!Convert(child, text, &out->back())) return false;
      }
      return true;
    }
    case T::STRING:
      *out = std::string(std::string_view(e));
      return true;
    case T::INT64: {
      const int64_t v = int64_t(e);
      // `-0` is a signed 0 to nlohmann, and simdjson's 0 does not say which it read.
      if (v == 0 && MayHoldMinusZero(text)) return false;
      if (v >= 0) {
        *out = uint64_t(v);  // nlohmann keeps a number without a sign as unsigned
      } else {
        *out = v;
      }
      return true;
    }
    case T::UINT64:
      *out = uint64_t(e);
      return true;
    case T::DOUBLE:
      *out = double(e);
      return true;
    case T::BOOL:
      *out = bool(e);
      return true;
    case T::NULL_VALUE:
      *out = nullptr;
      return true;
  }
  return false;
}

bool ParseWithSimdjson(std::string_view text, ojson* out) {
  thread_local PaddedJsonParser parser;
  simdjson::dom::element root;
  if (parser.Parse(text, &root) != simdjson::SUCCESS) return false;
  return Convert(root, text, out);
}

}  // namespace

Status CheckJsonDepth(const ojson& j) {
  std::vector<std::pair<const ojson*, int>> stack{{&j, 1}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->is_structured() || v->empty()) continue;
    if (depth >= kMaxJsonDepth) {
      return InvalidArgument("the record nests lists and objects more than " +
                             std::to_string(kMaxJsonDepth) + " levels deep");
    }
    for (const ojson& child : *v) stack.emplace_back(&child, depth + 1);
  }
  return Status::OK();
}

bool ParseJsonRecord(std::string_view text, ojson* out) {
  // A byte-order mark is skipped by nlohmann; it is rare enough to leave to it.
  if (!(text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) &&
      ParseWithSimdjson(text, out)) {
    return true;
  }
  *out = ojson::parse(text, nullptr, false);
  return !out->is_discarded();
}

}  // namespace stoker
