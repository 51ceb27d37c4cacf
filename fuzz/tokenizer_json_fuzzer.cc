// libFuzzer target: the tokenizer.json reader (JSON, model, pipeline, regexes from the file).
// Whatever it accepts must encode and decode a fixed text without crashing, within its vocabulary.
// The fast reader (simdjson) and nlohmann's DOM reader must agree: the same error message, or the
// same ids for the text.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "text/tokenizer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  stoker::TokenizerOptions options;
  options.eos = "0";
  auto t = stoker::ParseTokenizerJson(json, "fuzz/tokenizer.json", options);
  auto dom = stoker::ParseTokenizerJsonWithDom(json, "fuzz/tokenizer.json", options);
  if (t.ok() != dom.ok()) __builtin_trap();
  if (!t.ok()) {
    if (t.status().ToString() != dom.status().ToString()) __builtin_trap();
    return 0;
  }
  const std::string_view text = "Hello, world! 12345 \xe4\xb8\x80 <|endoftext|>\r\n";
  std::vector<int32_t> ids, dom_ids;
  bool encoded = (*t)->Encode(text, &ids).ok();
  if (encoded != (*dom)->Encode(text, &dom_ids).ok() || ids != dom_ids) __builtin_trap();
  if (!encoded) return 0;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<uint64_t>(id) >= (*t)->vocab_size()) __builtin_trap();
  }
  std::string back;
  (void)(*t)->Decode(ids, &back);
  return 0;
}
