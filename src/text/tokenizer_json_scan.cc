#include "text/tokenizer_json_scan.h"

#include <simdjson.h>

namespace stoker {
namespace {

namespace sj = simdjson::ondemand;
using Json = nlohmann::json;

}  // namespace

static_assert(TokenizerJsonScan::kPadding >= simdjson::SIMDJSON_PADDING);

struct TokenizerJsonScan::Buffers {
  simdjson::padded_string copy;  // of a text without the padding
  sj::parser parser;
  sj::document doc;
};

namespace {

// The text of `v` as written, parsed by nlohmann (false if either parser refuses it).
bool ToNlohmann(sj::value v, Json* out) {
  sj::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return false;
  std::string_view raw;
  if (type == sj::json_type::object) {
    sj::object o;
    if (v.get_object().get(o) != simdjson::SUCCESS || o.raw_json().get(raw) != simdjson::SUCCESS) {
      return false;
    }
  } else if (type == sj::json_type::array) {
    sj::array a;
    if (v.get_array().get(a) != simdjson::SUCCESS || a.raw_json().get(raw) != simdjson::SUCCESS) {
      return false;
    }
  } else {  // read the scalar: a skipped value is not checked (`{"a": "b": 1}` went through)
    raw = v.raw_json_token();
    std::string_view text;
    double number;
    bool flag;
    simdjson::error_code read = simdjson::INCORRECT_TYPE;
    if (type == sj::json_type::string) read = v.get_string().get(text);
    if (type == sj::json_type::number) read = v.get_double().get(number);
    if (type == sj::json_type::boolean) read = v.get_bool().get(flag);
    if (type == sj::json_type::null) read = v.is_null().get(flag);
    if (read != simdjson::SUCCESS || (type == sj::json_type::null && !flag)) return false;
  }
  try {
    *out = Json::parse(raw);
  } catch (const Json::exception&) {
    return false;
  }
  return true;
}

// An id at or above `id_limit` (the file's size: no real vocabulary is that sparse) goes to
// nlohmann's reader, which first checks the whole file: Add sizes a table by the id, and the scan
// could reach a huge id of a file that is not even JSON (the fuzzer found one).
bool ScanVocab(sj::value v, uint64_t id_limit, JsonVocab* vocab) {
  sj::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  for (auto field : o) {
    std::string_view key;
    uint64_t id;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS ||
        field.value().get_uint64().get(id) != simdjson::SUCCESS || id >= id_limit ||
        !vocab->Add(key, id).ok()) {
      return false;
    }
  }
  return true;
}

// simdjson refuses what nlohmann refuses in a string: bad escapes, lone surrogates, control
// characters, invalid UTF-8 (tokenizer_json_scan_test checks).
bool ScanString(sj::value v, std::string_view* s) {
  return v.get_string().get(*s) == simdjson::SUCCESS;
}

bool ScanMerges(sj::value v, std::vector<TokenizerJsonScan::MergeText>* merges) {
  sj::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return false;
  for (auto element : a) {
    sj::value m;
    sj::json_type type;
    if (element.get(m) != simdjson::SUCCESS || m.type().get(type) != simdjson::SUCCESS) {
      return false;
    }
    std::string_view s;
    if (type == sj::json_type::string) {  // "a b"
      if (!ScanString(m, &s)) return false;
      const size_t sp = s.find(' ');
      if (sp == std::string_view::npos || s.find(' ', sp + 1) != std::string_view::npos) {
        return false;
      }
      merges->emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (type == sj::json_type::array) {  // ["a", "b"]
      sj::array pair;
      std::string_view halves[2];
      size_t n = 0;
      if (m.get_array().get(pair) != simdjson::SUCCESS) return false;
      for (auto half : pair) {
        sj::value h;
        if (n == 2 || half.get(h) != simdjson::SUCCESS || !ScanString(h, &halves[n++])) {
          return false;
        }
      }
      if (n != 2) return false;
      merges->emplace_back(halves[0], halves[1]);
    } else {
      return false;
    }
  }
  return true;
}

// An object's field: its unescaped key and its value.
bool KeyAndValue(simdjson::simdjson_result<sj::field>& field, std::string_view* key,
                 sj::value* value) {
  return field.unescaped_key().get(*key) == simdjson::SUCCESS &&
         field.value().get(*value) == simdjson::SUCCESS;
}

// model: vocab and merges into `vocab` and `merges`, the other fields into `skeleton`.
bool ScanModel(sj::value v, uint64_t id_limit, JsonVocab* vocab,
               std::vector<TokenizerJsonScan::MergeText>* merges, Json* skeleton) {
  sj::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  *skeleton = Json::object();
  bool seen_vocab = false, seen_merges = false;
  for (auto field : o) {
    std::string_view key;
    sj::value value;
    if (!KeyAndValue(field, &key, &value)) return false;
    if (key == "vocab") {
      if (seen_vocab || !ScanVocab(value, id_limit, vocab)) return false;
      seen_vocab = true;
      (*skeleton)["vocab"] = Json::object();
    } else if (key == "merges") {
      if (seen_merges || !ScanMerges(value, merges)) return false;
      seen_merges = true;
      (*skeleton)["merges"] = Json::array();
    } else if (!ToNlohmann(value, &(*skeleton)[std::string(key)])) {
      return false;  // a key given twice keeps its last value, as in nlohmann's DOM
    }
  }
  return true;
}

}  // namespace

TokenizerJsonScan::TokenizerJsonScan(std::string_view origin)
    : buffers_(std::make_unique<Buffers>()), vocab_(origin) {}

TokenizerJsonScan::~TokenizerJsonScan() = default;

std::unique_ptr<TokenizerJsonScan> TokenizerJsonScan::Scan(std::string_view json,
                                                           std::string_view origin,
                                                           size_t readable_past_end) {
  std::unique_ptr<TokenizerJsonScan> scan(new TokenizerJsonScan(origin));
  Buffers& b = *scan->buffers_;
  simdjson::padded_string_view text(json.data(), json.size(), json.size() + readable_past_end);
  if (readable_past_end < kPadding) {
    b.copy = simdjson::padded_string(json);
    text = b.copy;
  }
  sj::object top;
  if (b.parser.iterate(text).get(b.doc) != simdjson::SUCCESS ||
      b.doc.get_object().get(top) != simdjson::SUCCESS) {
    return nullptr;
  }
  scan->skeleton_ = Json::object();
  bool seen_model = false;
  for (auto field : top) {
    std::string_view key;
    sj::value value;
    if (!KeyAndValue(field, &key, &value)) return nullptr;
    if (key == "model") {
      if (seen_model || !ScanModel(value, json.size(), &scan->vocab_, &scan->merges_,
                                   &scan->skeleton_["model"])) {
        return nullptr;
      }
      seen_model = true;
    } else if (!ToNlohmann(value, &scan->skeleton_[std::string(key)])) {
      return nullptr;
    }
  }
  const char* trailing;  // anything after the top-level object is a location in the document
  if (b.doc.current_location().get(trailing) == simdjson::SUCCESS) return nullptr;
  return scan;
}

}  // namespace stoker
