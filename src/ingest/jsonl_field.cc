#include "ingest/jsonl_field.h"

#include <simdjson.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "text/padded_json.h"

namespace stoker {
namespace {

// nlohmann's names for the types (the messages users saw before simdjson).
const char* TypeName(simdjson::dom::element_type t) {
  using T = simdjson::dom::element_type;
  switch (t) {
    case T::ARRAY:
      return "array";
    case T::OBJECT:
      return "object";
    case T::INT64:
    case T::UINT64:
    case T::DOUBLE:
      return "number";
    case T::STRING:
      return "string";
    case T::BOOL:
      return "boolean";
    case T::NULL_VALUE:
      return "null";
  }
  return "value";
}

// nlohmann messages start with "[json.exception.parse_error.101] "; the rest is the useful part.
std::string NlohmannMessage(const char* what) {
  const char* close = std::strstr(what, "] ");
  return close ? close + 2 : what;
}

}  // namespace

struct JsonlFieldReader::State {
  PaddedJsonParser parser;
  std::string fallback_text;  // the field, when nlohmann parsed the line
};

// simdjson refuses some valid JSON that nlohmann took: integers past 64 bits (an id field, say)
// and nesting deeper than 1024. A line simdjson refuses is parsed again by nlohmann, so that
// every line reads as it did before; bad lines are rare, and so is this second parse.
JsonlFieldReader::Outcome JsonlFieldReader::ReadSlowly(std::string_view line,
                                                       std::string_view field,
                                                       std::string_view* text, std::string* why) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    *why = NlohmannMessage(e.what());
    return Outcome::kInvalidJson;
  }
  if (!j.is_object()) return Outcome::kNotObject;
  auto it = j.find(field);
  if (it == j.end()) return Outcome::kMissing;
  if (!it->is_string()) {
    *why = it->type_name();
    return Outcome::kNotString;
  }
  state_->fallback_text = std::move(it->get_ref<std::string&>());
  *text = state_->fallback_text;
  return Outcome::kFound;
}

JsonlFieldReader::JsonlFieldReader() : state_(std::make_unique<State>()) {}
JsonlFieldReader::~JsonlFieldReader() = default;

JsonlFieldReader& JsonlFieldReader::ForThread() {
  thread_local JsonlFieldReader reader;
  return reader;
}

JsonlFieldReader::Outcome JsonlFieldReader::Read(std::string_view line, std::string_view field,
                                                 std::string_view* text, std::string* why) {
  State& s = *state_;
  simdjson::dom::element root;
  if (s.parser.Parse(line, &root) != simdjson::SUCCESS) {
    return ReadSlowly(line, field, text, why);
  }
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) return Outcome::kNotObject;
  simdjson::dom::element value;
  bool found = false;
  for (simdjson::dom::key_value_pair kv : object) {
    if (kv.key == field) {  // no break: with duplicate keys the last one wins
      value = kv.value;
      found = true;
    }
  }
  if (!found) return Outcome::kMissing;
  if (value.get(*text) != simdjson::SUCCESS) {
    *why = TypeName(value.type());
    return Outcome::kNotString;
  }
  return Outcome::kFound;
}

}  // namespace stoker
