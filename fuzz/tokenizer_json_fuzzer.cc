// libFuzzer target: the tokenizer.json reader (JSON, model, pipeline, regexes from the file).
// Whatever it accepts must encode and decode a fixed text without crashing, within its vocabulary.
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
  if (!t.ok()) return 0;
  std::vector<int32_t> ids;
  if (!(*t)->Encode("Hello, world! 12345 \xe4\xb8\x80 <|endoftext|>\r\n", &ids).ok()) return 0;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<uint64_t>(id) >= (*t)->vocab_size()) __builtin_trap();
  }
  std::string back;
  (void)(*t)->Decode(ids, &back);
  return 0;
}
