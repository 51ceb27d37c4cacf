#include "text/padded_json.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace stoker {
namespace {

constexpr size_t kKeepCapacity = 16 << 20;

}  // namespace

struct PaddedJsonParser::State {
  simdjson::dom::parser parser;
  std::vector<char> buffer;  // the text, then simdjson's padding
};

PaddedJsonParser::PaddedJsonParser() : state_(std::make_unique<State>()) {}
PaddedJsonParser::~PaddedJsonParser() = default;

simdjson::error_code PaddedJsonParser::Parse(std::string_view text, simdjson::dom::element* root) {
  State& s = *state_;
  if (text.size() <= kKeepCapacity && s.parser.capacity() > kKeepCapacity) {
    s.parser = simdjson::dom::parser();
    std::vector<char>().swap(s.buffer);
  }
  const size_t need = text.size() + simdjson::SIMDJSON_PADDING;
  if (s.buffer.size() < need) s.buffer.resize(std::max(need, s.buffer.size() * 2));
  std::memcpy(s.buffer.data(), text.data(), text.size());
  std::memset(s.buffer.data() + text.size(), 0, simdjson::SIMDJSON_PADDING);
  return s.parser.parse(s.buffer.data(), text.size(), false).get(*root);
}

}  // namespace stoker
