// libFuzzer target: how a --tokenizer file is recognised (text/model_files.h): the format sniffer
// on any first bytes, and the tokenizer_config.json reader. The reader must return a config or an
// error naming the file, never crash; a config it accepts must read the same from its own JSON
// written back (the fields it keeps are exactly those it reads).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "text/model_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  stoker::TokenizerFormat f = stoker::SniffTokenizerFormat(bytes);
  if (f == stoker::TokenizerFormat::kTokenizerJson && bytes.find('{') == std::string_view::npos) {
    __builtin_trap();
  }
  auto c = stoker::ParseTokenizerConfig(bytes, "fuzz/tokenizer_config.json");
  if (!c.ok()) {
    if (c.status().message().find("fuzz/tokenizer_config.json") == std::string::npos) {
      __builtin_trap();
    }
    return 0;
  }
  nlohmann::json j = nlohmann::json::object();
  if (c->eos_token) j["eos_token"] = *c->eos_token;
  if (c->bos_token) j["bos_token"] = nlohmann::json{{"content", *c->bos_token}};
  if (c->add_bos_token) j["add_bos_token"] = *c->add_bos_token;
  if (c->add_eos_token) j["add_eos_token"] = *c->add_eos_token;
  std::string again;
  try {
    again = j.dump();
  } catch (const nlohmann::json::exception&) {
    return 0;  // a token that is not valid UTF-8 cannot be written back
  }
  auto d = stoker::ParseTokenizerConfig(again, "again");
  if (!d.ok() || d->eos_token != c->eos_token || d->bos_token != c->bos_token ||
      d->add_bos_token != c->add_bos_token || d->add_eos_token != c->add_eos_token) {
    __builtin_trap();
  }
  return 0;
}
